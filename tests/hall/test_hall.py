"""The hall: boxes that start on one signal over a real Mosquitto broker, messages checked
before they are believed, and a box that goes on whatever the bus does."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from helpers import (
    HALL_PROFILE,
    HALL_WAIT,
    LENGTH,
    RecordingOutput,
    free_port,
    hall_serve,
    wait_for,
)
from running import hall

from timekeeper.box.runner import Runner
from timekeeper.hall.bus import timesync
from timekeeper.hall.bus.messages import BadMessage, parse_command
from timekeeper.hall.practice import Mosquitto
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine

NOW = 1_800_000_000.0


def command(**fields) -> bytes:
    body = {"id": "c1", "kind": "start", "sent": NOW, "at": NOW + 3} | fields
    return json.dumps({k: v for k, v in body.items() if v is not None}).encode()


@pytest.mark.parametrize(
    "payload, why",
    [
        (b"{not json", "not a JSON object"),
        (b"[1, 2]", "not a JSON object"),
        (b"\xff\xfe", "not a JSON object"),
        (b"[" * 2000, "not a JSON object"),
        (b"x" * 5000, "payload of 5000 bytes"),
        (command(kind="explode"), "unknown command kind"),
        (command(id="a/b#"), "id must be"),
        (command(sent=NOW - 120), "stale"),
        (command(at=None), "needs at"),
        (command(at=NOW + 10**6), "allowed: up to"),
        (command(kind="add", at=None), "add needs seconds"),
        (command(kind="add", at=None, seconds=float("inf")), "Infinity is not a number"),
        (b'{"id": "c1", "kind": "add", "sent": 1e400}', "sent must be a number"),
        (command(kind="add", at=None, seconds=1e6), "add needs seconds"),
        (command(extra=1), "unknown field"),
    ],
)
def test_bad_messages_are_refused_with_a_reason(payload: bytes, why: str) -> None:
    with pytest.raises(BadMessage, match=why):
        parse_command(payload, NOW)


def test_a_good_command_parses() -> None:
    parsed = parse_command(command(profile="ithf"), NOW)
    assert (parsed.kind, parsed.at, parsed.profile) == ("start", NOW + 3, "ithf")


def test_chrony_tracking_decides_synced() -> None:
    line = "C0A80001,desk,3,1800000000.1,{off},0.0,0.0,-1.2,0.0,0.0,0.001,0.001,64.0,{leap}"
    assert timesync.parse_tracking(line.format(off="0.000150", leap="Normal")).synced
    far = timesync.parse_tracking(line.format(off="-0.004", leap="Normal"))
    assert not far.synced and "-4.0 ms off" in far.why
    lost = timesync.parse_tracking(line.format(off="0.0", leap="Not synchronised"))
    assert not lost.synced and "not synchronised" in lost.why


def test_a_wall_clock_instant_maps_once_onto_the_runners_clock() -> None:
    ticks = iter(range(100))
    clock = lambda: 50.0 + next(ticks) * 1e-6  # noqa: E731
    at = timesync.to_clock(NOW + 2.5, clock, wall=lambda: NOW)
    assert abs(at - 52.5) < 1e-3


def test_a_scheduled_command_is_applied_at_its_instant(write_profile) -> None:
    """A hall start given for an instant: its pre-start cue is due at that very instant, not
    when the command arrived (the runner looks ahead for it like any deadline)."""
    chosen = profile.load(str(write_profile("hall", HALL_PROFILE)))
    out = RecordingOutput()
    runner = Runner(Engine(chosen), [out])
    import threading

    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    at = runner.clock() + 0.3
    done = runner.submit(Command(Action.START), at=at)
    assert done.result(timeout=5).state == "prestart"
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    assert out.played[0].name == "prestart" and out.played[0].due == at


@pytest.mark.slow
def test_a_hall_start_sounds_every_box_at_one_instant_and_a_skewed_box_refuses(boxes) -> None:
    url = boxes["broker"]["url"]
    boxes["start"]("1", "2")
    boxes["start"]("3", skew=0.005)  # 5 ms off: not synced
    wait_for(lambda: len(boxes["tables"]()) == 3, "boxes joined", HALL_WAIT)
    done = hall(url, "start", "--in", "2s")
    assert "table 1: ok" in done.stdout and "table 2: ok" in done.stdout, done.stdout
    assert "table 3: REFUSED" in done.stdout and "NOT SYNCED" in done.stdout, done.stdout
    assert done.returncode == 1  # one table refused: the desk is told
    ends = [
        wait_for(
            lambda t=t: [e for e in boxes["events"](t) if e["cue"] == "end"],
            f"table {t} ended",
            HALL_WAIT,
        )
        for t in ("1", "2")
    ]
    firsts = [boxes["events"](t)[0] for t in ("1", "2")]
    assert all(f["cue"] == "prestart" for f in firsts)
    # one machine, one monotonic clock: the boxes' instants are directly comparable
    assert abs(firsts[0]["due"] - firsts[1]["due"]) < 0.002
    assert abs(ends[0][0]["due"] - ends[1][0]["due"]) < 0.002
    assert boxes["events"]("3") == []  # the skewed box did not start silently
    status = json.loads(hall(url, "status", "--json").stdout)  # (the desk's command line)
    assert status["3"]["synced"] is False and "NOT SYNCED" in status["3"]["error"]


@pytest.mark.slow
def test_bad_input_on_the_bus_is_refused_and_the_box_goes_on(boxes) -> None:
    import paho.mqtt.publish as publish

    port = boxes["broker"]["port"]
    boxes["start"]("1")
    wait_for(lambda: boxes["tables"]().get("1"), "box 1 joined", HALL_WAIT)
    old = {"id": "once", "kind": "add", "sent": time.time(), "seconds": 5}
    for payload in (
        b"{oops",
        json.dumps({"id": "e", "kind": "explode"}).encode(),
        b"\xff" * 100,
        json.dumps(old).encode(),
        json.dumps(old).encode(),
    ):
        publish.single("timekeeper/hall/all/command", payload, hostname="127.0.0.1", port=port)
    publish.single(
        "timekeeper/hall/7/command",
        json.dumps(old | {"id": "x"}).encode(),
        hostname="127.0.0.1",
        port=port,
    )
    wait_for(
        lambda: all(
            line in boxes["output"]("1")
            for line in (
                "not a JSON object",
                "unknown command kind",
                "command once refused",
                "was carried out already",
            )
        ),
        "the box to have read every message",
        HALL_WAIT,
    )
    out = boxes["log"]("1")
    assert out.count("hall: command") >= 3 and "Traceback" not in out, out
    assert "not a JSON object" in out and "unknown command kind" in out
    # the add of `once` was refused by the engine (no match under way), once, not twice
    assert out.count("command once refused") == 1, out
    assert "was carried out already" in out


@pytest.mark.slow
def test_the_broker_dies_mid_match_and_every_box_goes_on(boxes) -> None:
    broker = boxes["broker"]
    url = broker["url"]
    boxes["start"]("1")
    wait_for(lambda: boxes["tables"]().get("1"), "box 1 joined", HALL_WAIT)
    assert "table 1: ok" in hall(url, "start", "--in", "2s").stdout
    wait_for(lambda: [e for e in boxes["events"]("1") if e["cue"] == "start"], "the start", 15)
    broker["down"]()  # mid-match
    end = wait_for(
        lambda: [e for e in boxes["events"]("1") if e["cue"] == "end"],
        "the match ended without the broker",
        HALL_WAIT,
    )
    start = next(e for e in boxes["events"]("1") if e["cue"] == "start")
    assert abs(end[0]["due"] - start["due"] - LENGTH) < 1e-6  # its cues, unchanged
    broker["up"]()
    status = wait_for(
        lambda: (
            (s := json.loads(hall(url, "status", "--json").stdout or "{}").get("1"))
            and s["status"]["state"] == "finished"
            and s
        ),
        "the box republished its status after the outage",
        30,
    )
    assert status["online"] and status["status"]["state"] == "finished"


@pytest.mark.slow
def test_the_shipped_acls_keep_each_box_to_its_own_topics(tmp_path: Path) -> None:
    """systemd/mosquitto-hall.acl on a real broker: box `1` reads its own and the hall's
    commands and writes its own status; it cannot forge table 2's status or read its
    commands. The desk sees everything."""
    import paho.mqtt.client as mqtt

    users = {user: f"pw-{user}" for user in ("desk", "1", "2")}
    # the ACL as `install-pi.sh --hall-user 1` leaves it
    with Mosquitto(tmp_path / "broker", users=users, tables=("1",)) as broker:
        port = broker.port
        seen: list[str] = []
        subscribed: list[str] = []

        def client(user: str) -> mqtt.Client:
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"t-{user}")
            c.username_pw_set(user, f"pw-{user}")
            c.on_message = lambda _c, _u, m, who=user: seen.append(f"{who} got {m.topic}")
            c.on_subscribe = lambda *_a, who=user: subscribed.append(who)
            c.connect("127.0.0.1", port)
            c.loop_start()
            return c

        desk, box1 = client("desk"), client("1")
        desk.subscribe("timekeeper/#", qos=1)
        box1.subscribe(
            [
                ("timekeeper/+/1/command", 1),
                ("timekeeper/+/all/command", 1),
                ("timekeeper/+/2/command", 1),
            ]
        )
        wait_for(lambda: len(subscribed) == 2, "both subscriptions granted", 5)
        # what must not arrive is sent first: one sender's messages come in order, so once
        # the allowed one that follows has arrived, the forbidden one would have too
        box1.publish("timekeeper/h/2/status", b"forged", qos=1)
        box1.publish("timekeeper/h/1/status", b"mine", qos=1)
        desk.publish("timekeeper/h/2/command", b"two", qos=1)
        desk.publish("timekeeper/h/all/command", b"all", qos=1)
        desk.publish("timekeeper/h/1/command", b"one", qos=1)
        wait_for(
            lambda: (
                "desk got timekeeper/h/1/status" in seen and "1 got timekeeper/h/1/command" in seen
            ),
            "the allowed messages",
            5,
        )
        for c in (desk, box1):
            c.loop_stop()
            c.disconnect()
    assert "desk got timekeeper/h/1/status" in seen
    assert "desk got timekeeper/h/2/status" not in seen  # box 1 could not forge it
    assert "1 got timekeeper/h/all/command" in seen and "1 got timekeeper/h/1/command" in seen
    assert "1 got timekeeper/h/2/command" not in seen


def test_the_config_joins_a_hall_and_sets_the_speakers_latency(tmp_path: Path) -> None:
    from timekeeper.box import config
    from timekeeper.rules.yamldoc import ConfigError

    file = tmp_path / "config.yaml"
    file.write_text(
        "hall: {broker: mqtt://desk:1883, hall: bigcup, table: 7}\naudio: {latency: -12.5}\n"
    )
    cfg = config.load(file)
    assert cfg.hall == config.HallConfig("mqtt://desk:1883", "bigcup", "7")
    assert cfg.audio_offset == -0.0125
    for text, field in (
        ("hall: {broker: 'mqtt://desk/#'}\n", "hall.broker"),
        ("hall: {broker: desk, sync: local}\n", "hall.sync"),
        ("hall: {broker: desk, table: 'a/b'}\n", "hall.table"),
        ("audio: {latency: 900}\n", "audio.latency"),
    ):
        file.write_text(text)
        with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
            config.load(file)


@pytest.mark.slow
def test_a_table_stopped_on_its_own_is_shown_off_the_halls_time(boxes, tmp_path: Path) -> None:
    """The desk sees a local stop at once (within 0.5 s), already off the hall's time: the
    box publishes its status after the command has taken it off, not at its next tick."""
    from timekeeper.box.controls.socket_client import send

    url = boxes["broker"]["url"]
    boxes["start"]("1", "2")
    wait_for(lambda: len(boxes["tables"]()) == 2, "boxes joined", HALL_WAIT)
    assert hall(url, "start", "--in", "2s").returncode == 0
    wait_for(
        lambda: all(
            t["status"]["state"] == "running" and t["in_step"] for t in boxes["tables"]().values()
        ),
        "both tables running",
        15,
    )
    assert send(tmp_path / "box2" / "c.sock", "pause")["ok"]  # table 2's own stop
    status = wait_for(
        lambda: (s := boxes["tables"]())["2"]["in_step"] is False and s,
        "table 2 shown off the hall's time within 0.5 s",
        0.5,
    )
    assert status["1"]["in_step"] is True and status["2"]["status"]["state"] == "stopped"
    assert status["2"]["status"]["muted"] is False  # (the one status: `ctl status`'s fields)
    resumed = hall(url, "resume", "--in", "2s")  # a hall resume brings it back in step
    assert "table 2: ok" in resumed.stdout and "table 1: REFUSED" in resumed.stdout
    # the refusal names what the desk can do (table 1 runs, or its short match is over),
    # not the table's keys
    assert (
        "from the desk, stop stops the clock" in resumed.stdout
        or "from the desk, reset makes the table ready" in resumed.stdout
    ), resumed.stdout
    assert "SPACE" not in resumed.stdout and "ctl resume" not in resumed.stdout
    status = wait_for(
        lambda: (s := boxes["tables"]())["2"]["in_step"] and s, "table 2 back in step", 15
    )
    assert status["2"]["status"]["state"] in ("running", "finished")  # (a short match)


@pytest.mark.slow
def test_the_overview_page_shows_every_table_and_starts_the_hall_with_the_token(
    boxes, tmp_path: Path
) -> None:
    """`hall serve`: /api/hall and the page show every table; commands need the desk's
    token (401 without it); with it, the page's buttons start the hall."""
    import urllib.error
    import urllib.request

    from webbox import browser, have_browser

    url = boxes["broker"]["url"]
    boxes["start"]("1")
    boxes["start"]("2", skew=0.005)  # NOT SYNCED
    port = free_port()
    state = tmp_path / "desk"
    server = subprocess.Popen(
        hall_serve(url, port, state),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def tables() -> dict:
            try:
                with urllib.request.urlopen(f"{base}/api/hall", timeout=5) as answer:
                    return json.loads(answer.read())["tables"]
            except OSError:  # (not listening yet)
                return {}

        wait_for(lambda: len(tables()) == 2, "both tables on the overview", HALL_WAIT)
        token = (state / "hall" / "web-token").read_text().strip()
        post = urllib.request.Request(
            f"{base}/api/hall/command",
            method="POST",
            data=json.dumps({"command": "start", "in": 3}).encode(),
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post, timeout=10)
        assert refused.value.code == 401
        if have_browser():
            with browser(1280, 800) as driver:
                driver.get(f"{base}/hall")  # read-only: no desk buttons without the token
                wait_for(
                    lambda: "table 1" in driver.find_element("tag name", "body").text,
                    "the read-only page shows the tables",
                    HALL_WAIT,
                )
                assert not driver.find_element("id", "desk").is_displayed()
                driver.get("about:blank")  # (a new load: a changed #fragment alone is none)
                driver.get(f"{base}/hall#token={token}")
                wait_for(
                    lambda: "NOT SYNCED" in driver.find_element("tag name", "body").text,
                    "the page shows the unsynced table",
                    HALL_WAIT,
                )
                driver.find_element("css selector", "button[data-command=start]").click()
                wait_for(
                    lambda: "table 1: ok" in driver.find_element("id", "answer").text,
                    "the page's start answered",
                    20,
                )
                assert "table 2: REFUSED" in driver.find_element("id", "answer").text
                wait_for(
                    lambda: "RUNNING" in driver.find_element("tag name", "body").text,
                    "table 1 running on the page",
                    20,
                )
        else:  # the same through the API
            post.add_header("Authorization", f"Bearer {token}")
            with urllib.request.urlopen(post, timeout=20) as answer:
                assert json.loads(answer.read())["answers"]["1"]["ok"]
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=10)
    assert "Traceback" not in out, out
    assert f"/hall#token={token}" in out


@pytest.mark.slow
def test_the_desk_reads_every_retained_status_once_the_broker_handed_them_over(broker) -> None:
    """`hall status` returns once the broker has handed over the retained statuses (our own
    echo comes back behind them), not after a fixed pause; and none is missing."""
    import paho.mqtt.publish as publish

    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.desk.link import Desk

    retained = [
        {
            "topic": f"timekeeper/hall/{t}/status",
            "retain": True,
            "qos": 1,
            "payload": json.dumps({"table": str(t), "online": True}),
        }
        for t in range(1, 41)
    ]
    publish.multiple(retained, hostname="127.0.0.1", port=broker["port"])
    desk = Desk(Broker.parse(broker["url"]), "hall")
    try:
        tables = desk.read_statuses(wait=HALL_WAIT)
        assert desk._settled, "the echo never came back: the wait ran out"
        assert list(tables) == [str(t) for t in range(1, 41)]
    finally:
        desk.close()
