"""The hall's bus under attack and fault, on a real Mosquitto with real boxes:
scheduled commands seen and called off, a poisoned retained status, a replayed id, client
ids tied to users, an anonymous broker, tables that do not answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import HALL_PROFILE, HALL_WAIT, wait_for
from running import hall
from webbox import browser, have_browser

from timekeeper.box.controls.socket_client import send
from timekeeper.box.runner import MAX_SCHEDULED
from timekeeper.hall.desk.link import summary
from timekeeper.hall.practice import Mosquitto, box_command


def hall_in_background(url: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "timekeeper", "hall", *args, "--broker", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def pending(boxes, table: str = "1") -> list[dict]:
    return boxes["tables"]()[table]["status"]["scheduled"]


@pytest.mark.slow
def test_a_scheduled_start_is_shown_everywhere_and_a_reset_calls_it_off(boxes, tmp_path) -> None:
    url = boxes["broker"]["url"]
    boxes["start"]("1")
    wait_for(lambda: boxes["tables"]().get("1"), "box 1 joined", HALL_WAIT)
    start = hall_in_background(url, "start", "--in", "12s")
    waiting = wait_for(lambda: pending(boxes), "the desk sees the pending start", HALL_WAIT)
    assert waiting[0]["command"] == "start" and 0 < waiting[0]["in"] <= 12
    assert "PENDING start in" in summary(boxes["tables"]()["1"])  # `hall status`, the page
    mine = send(tmp_path / "box1" / "c.sock", "status")["status"]  # ctl status
    assert mine["scheduled"][0]["command"] == "start"
    reset = hall(url, "reset")
    assert "table 1: ok" in reset.stdout, reset.stdout
    out, _ = start.communicate(timeout=30)  # its answer: called off, at once
    assert "REFUSED" in out and "called off" in out and start.returncode == 1, out
    wait_for(lambda: not pending(boxes), "nothing pending any more", HALL_WAIT)
    instant = time.time() + 12.5
    wait_for(lambda: time.time() > instant, "the start's instant gone by", 20)
    assert boxes["events"]("1") == []  # the table never started
    assert boxes["tables"]()["1"]["status"]["state"] == "idle"


@pytest.mark.slow
def test_hall_cancel_and_the_tables_operator_call_off_what_is_pending(boxes, tmp_path) -> None:
    url = boxes["broker"]["url"]
    boxes["start"]("1", "2")
    wait_for(lambda: len(boxes["tables"]()) == 2, "boxes joined", HALL_WAIT)
    start = hall_in_background(url, "start", "--in", "30s")
    wait_for(lambda: pending(boxes, "1") and pending(boxes, "2"), "both pending", HALL_WAIT)
    send(tmp_path / "box2" / "c.sock", "start")  # table 2's operator starts it by hand
    wait_for(lambda: not pending(boxes, "2"), "table 2's operator called it off", HALL_WAIT)
    assert pending(boxes, "1")
    cancel = hall(url, "cancel")
    assert cancel.returncode == 0 and "table 1: ok" in cancel.stdout, cancel.stdout
    wait_for(lambda: not pending(boxes, "1"), "hall cancel called it off", HALL_WAIT)
    out, _ = start.communicate(timeout=30)
    assert out.count("called off") == 2, out


@pytest.mark.slow
def test_only_a_few_commands_are_held_and_the_rest_refused_with_the_reason(boxes) -> None:
    import paho.mqtt.publish as publish

    boxes["start"]("1")
    wait_for(lambda: boxes["tables"]().get("1"), "box 1 joined", HALL_WAIT)
    now = time.time()
    for n in range(MAX_SCHEDULED + 3):
        body = {"id": f"add-{n}", "kind": "add", "sent": now, "at": now + 600, "seconds": 5}
        publish.single(
            "timekeeper/hall/1/command",
            json.dumps(body),
            qos=1,
            hostname="127.0.0.1",
            port=boxes["broker"]["port"],
        )
    table = wait_for(
        lambda: (
            (t := boxes["tables"]()["1"])
            and "already holds" in t["error"]
            and len(t["status"]["scheduled"]) == MAX_SCHEDULED
            and t
        ),
        "the refusal of the fifth, the first four held",
        HALL_WAIT,
    )
    assert f"already holds {MAX_SCHEDULED} scheduled commands" in table["error"]


@pytest.mark.slow
def test_a_poisoned_retained_status_is_refused_alone_and_the_desk_goes_on(boxes) -> None:
    import paho.mqtt.publish as publish

    url, port = boxes["broker"]["url"], boxes["broker"]["port"]
    boxes["start"]("1")
    wait_for(lambda: boxes["tables"]().get("1", {}).get("online"), "box 1 joined", HALL_WAIT)
    deep = b"[" * 1000 + b"]" * 1000  # 2 KB, passes the broker's 4-KB limit
    for table, payload in (
        ("8", deep),
        ("9", json.dumps({"online": True, "status": {"state": 5}}).encode()),
    ):
        publish.single(
            f"timekeeper/hall/{table}/status",
            payload,
            qos=1,
            retain=True,
            hostname="127.0.0.1",
            port=port,
        )
    tables = wait_for(
        lambda: (t := boxes["tables"]()) and {"8", "9"} <= set(t) and t,
        "the desk read both",
        HALL_WAIT,
    )
    assert "nested deeper" in tables["8"]["bad"] and "state" in tables["9"]["bad"]
    assert summary(tables["9"]).startswith("BAD STATUS")
    stop = hall(url, "stop")  # the desk's MQTT thread lives: table 1 answers
    assert (
        "table 1: REFUSED" in stop.stdout and "no answer" not in stop.stdout.split("table 8")[0]
    ), stop.stdout  # (idle: refused by the table itself, with its reason)
    assert "table 8: REFUSED  no answer (its status is bad" in stop.stdout, stop.stdout
    assert "did not answer: tables 8, 9" in stop.stdout and stop.returncode == 1
    assert "Traceback" not in stop.stdout + stop.stderr
    status = json.loads(hall(url, "status", "--json").stdout)
    assert status["1"]["online"] and "bad" in status["9"]


@pytest.mark.slow
def test_tables_that_do_not_answer_are_named_and_the_desk_exits_non_zero(boxes) -> None:
    url = boxes["broker"]["url"]
    boxes["start"]("1", "2")
    wait_for(lambda: len(boxes["tables"]()) == 2, "boxes joined", HALL_WAIT)
    boxes["log"]("2")  # table 2 leaves (its status: offline)
    wait_for(lambda: boxes["tables"]()["2"]["online"] is False, "table 2 offline", HALL_WAIT)
    done = hall(url, "start", "--in", "2s")
    assert "table 1: ok" in done.stdout and "table 2: REFUSED  no answer: OFFLINE" in done.stdout, (
        done.stdout
    )
    assert "did not answer: table 2" in done.stdout and done.returncode == 1


@pytest.mark.slow
def test_an_anonymous_broker_is_warned_of_loudly(boxes) -> None:
    status = hall(boxes["broker"]["url"], "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout) == {}
    # (on this machine's loopback, as a practice hall's: a note; elsewhere the warning)
    assert "lets anonymous clients in: fine for a practice hall" in status.stderr


def test_an_anonymous_broker_off_this_machine_gets_the_warning(monkeypatch) -> None:
    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.desk import link as desk

    monkeypatch.setattr(desk, "anonymous_allowed", lambda broker: True)
    assert desk.anonymous_warning(Broker("hall-pi.local")) == desk.ANONYMOUS_WARNING
    assert desk.anonymous_warning(Broker("::1", 1884)).startswith("note: the broker at ::1:1884")
    monkeypatch.setattr(desk, "anonymous_allowed", lambda broker: False)
    assert desk.anonymous_warning(Broker("hall-pi.local")) is None


@pytest.mark.slow
def test_the_broker_lost_and_back_is_said_once_each(boxes) -> None:
    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.desk.link import Desk

    mosquitto = boxes["broker"]
    boxes["start"]("1")
    wait_for(lambda: boxes["tables"]().get("1"), "box 1 joined", HALL_WAIT)
    desk = Desk(Broker.parse(mosquitto["url"]), "hall")  # (the overview's `on_bus`)
    assert desk.on_bus
    mosquitto["down"]()
    wait_for(lambda: "lost the broker" in boxes["output"]("1"), "the loss said", HALL_WAIT)
    wait_for(lambda: desk.on_bus is False, "the desk knows it lost the broker", HALL_WAIT)
    mosquitto["up"]()
    wait_for(lambda: "the broker is back" in boxes["output"]("1"), "its return said", 30)
    wait_for(lambda: desk.on_bus, "the desk back on the bus", 30)
    desk.close()
    out = boxes["log"]("1")
    assert out.count("lost the broker") == 1 and out.count("the broker is back") == 1, out


@pytest.mark.slow
def test_another_boxs_credentials_cannot_take_a_box_off_the_bus(
    tmp_path: Path, write_profile
) -> None:
    """The shipped config and ACL on a real broker: box 1 joins as user 1; someone with box
    2's credentials connects again and again with the ids box 1 could have used: box 1 stays
    on the bus (its id is its own, unguessable) and the desk (a user of its own) hears it."""
    import paho.mqtt.client as mqtt

    users = {user: f"pw-{user}" for user in ("desk", "1", "2")}
    # the ACL as `install-pi.sh --hall-user 1 … 2` leaves it
    server = Mosquitto(tmp_path / "broker", users=users, tables=("1", "2")).start()
    port = server.port
    prof = write_profile("hall", HALL_PROFILE)
    folder = tmp_path / "box1"
    folder.mkdir()
    box = None
    try:
        with open(folder / "out.log", "w") as out:
            box = subprocess.Popen(
                box_command(
                    f"mqtt://1:pw-1@127.0.0.1:{port}",
                    "1",
                    folder,
                    *("--profile", str(prof), "--fresh"),
                    control=folder / "c.sock",
                ),
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, SDL_AUDIODRIVER="dummy", PYTHONUNBUFFERED="1"),
            )
        url = f"mqtt://desk:pw-desk@127.0.0.1:{port}"
        wait_for(lambda: "connected to" in (folder / "out.log").read_text(), "box 1 on", 30)
        for n in range(28):  # the takeover attempts, with the predictable ids
            c = mqtt.Client(
                mqtt.CallbackAPIVersion.VERSION2,
                client_id="timekeeper-hall-1" if n % 2 else "timekeeper-hall-2",
            )
            c.username_pw_set("2", "pw-2")
            c.connect("127.0.0.1", port)
            c.loop(0.05)
            c.disconnect()
        done = hall(url, "start", "--in", "2s")
        assert "table 1: ok" in done.stdout and done.returncode == 0, done.stdout
        assert "WARNING" not in done.stderr + hall(url, "status").stderr  # anonymous refused
        assert "lost the broker" not in (folder / "out.log").read_text()
    finally:
        if box is not None:
            box.send_signal(signal.SIGTERM)
            box.wait(10)
        server.stop()


def test_a_replayed_id_is_refused_however_many_ids_came_between(write_profile) -> None:
    """The link remembers ids by time (as long as a copy could pass the stale check), not
    by count: 1,001 other ids do not make it forget."""
    import threading

    from timekeeper.box.runner import Runner
    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.table.link import HallLink
    from timekeeper.rules import profile
    from timekeeper.rules.commands import Action, Command
    from timekeeper.rules.engine import Engine

    runner = Runner(Engine(profile.load(str(write_profile("hall", HALL_PROFILE)))), [])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()

    class Unplugged:  # paho's client, never connected (what the link publishes is dropped)
        def __init__(self, *_a) -> None:
            import paho.mqtt.client as mqtt

            self.real = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="t")

        def __getattr__(self, name: str):
            return getattr(self.real, name)

    link = HallLink(
        runner, Broker("127.0.0.1"), "hall", "1", "hall", client_factory=lambda *a: Unplugged(*a)
    )
    refused: list[str] = []
    link._refuse = lambda ident, why: refused.append(f"{ident}: {why}")  # type: ignore
    now = time.time()
    for n in range(1002):
        link._handle(json.dumps({"id": f"c{n}", "kind": "add", "sent": now, "seconds": 5}).encode())
    link._handle(json.dumps({"id": "c0", "kind": "add", "sent": now, "seconds": 5}).encode())
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    assert len(link._seen) == 1002  # every one remembered: none was let through again


@pytest.mark.parametrize("payload", [b"[" * 1000 + b"]" * 1000, b'{"a":' * 30 + b"1" + b"}" * 30])
def test_deep_json_on_the_bus_is_a_bad_message_not_a_recursion_error(payload: bytes) -> None:
    from timekeeper.hall.bus import tablestatus
    from timekeeper.hall.bus.messages import BadMessage, parse_command

    with pytest.raises(BadMessage, match="nested deeper"):
        parse_command(payload[:2000], time.time())
    with pytest.raises(tablestatus.BadStatus, match="nested deeper"):
        tablestatus.parse(payload)


@pytest.mark.slow
@pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver")
def test_the_overview_page_marks_a_bad_table_and_draws_the_others(overview) -> None:
    """A table whose status the page cannot read (`"state": 5`, a list for a score) is
    marked BAD on its own tile; the others are drawn, with what they hold pending."""
    url, _, desk = overview
    desk.statuses["3"] = {"table": "3", "online": True, "synced": True, "status": {"state": 5}}
    desk.statuses["4"] = {
        "table": "4",
        "online": True,
        "synced": True,
        "status": {"state": "idle", "score": [1, 2]},
    }
    desk.statuses["5"] = {"table": "5", "online": None, "bad": "status.state must be text"}
    desk.statuses["6"] = {
        "table": "6",
        "online": True,
        "synced": True,
        "sent": time.time(),
        "status": {"state": "idle", "scheduled": [{"command": "start", "in": 42.0}]},
    }
    with browser(1280, 800) as page:
        page.get(f"{url}/hall")
        tile = "return [...document.querySelectorAll('.table')].map(t => t.textContent)"
        texts = wait_for(
            lambda: (t := page.execute_script(tile)) and len(t) == 6 and t, "every table drawn", 10
        )
        assert "RUNNING" in texts[0] and "PRE-START" in texts[1]
        assert all("BAD STATUS" in t for t in texts[2:5]), texts
        assert "state is not text" in texts[2] and "score" in texts[3]
        assert "pending: start in 42 s" in texts[5]
