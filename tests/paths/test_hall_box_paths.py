"""A hall box along the path its operator and the director take, each a process of its own:
`timekeeper run … --hall` against a private Mosquitto, `timekeeper ctl …` at the table,
`timekeeper hall …` at the desk, and the desk's pairing pushed on the bus as the desk pushes
it. A box killed with SIGKILL and started again with its usual command goes on with the match
its pairing switched it to; a goal entered after the end changes the result sent home; a
knock-out match decided in regulation ends by itself; `hall finish` ends a table's match; a
pairing held during a match is taken by the reset after it."""

from __future__ import annotations

import json
import signal
import subprocess
import threading

import paho.mqtt.client as mqtt
import pytest
from helpers import HALL_WAIT, wait_for

from timekeeper.hall.bus.pairing import Pairing, pairing_topic

pytestmark = pytest.mark.slow

PROFILES = {
    # a minute's match: long enough to be killed in the middle of
    "minute": "title: a minute\nprestart: 0\nperiod: {length: 60, marks: none}\n",
    # two seconds, over at their end
    "two": "title: two seconds\nprestart: 0\nperiod: {length: 2, marks: none}\n",
    # two seconds, then (on a draw, for NEXT) an untimed sudden death
    "quick": (
        "title: two seconds + sudden death\nprestart: 0\nperiod: {length: 2, marks: none}\n"
        "overtime:\n  - untimed: true\n"
    ),
}


@pytest.fixture
def hall(broker, table_box) -> dict:
    """A box's folders (short: an AF_UNIX path), its profiles, the environment of every
    command, and `run()` to start `timekeeper run` as its operator does."""
    table = table_box(PROFILES, "tk-hb-")
    (table.folder / "state").mkdir()
    # the box's usual command, as its operator types it every time
    usual = ("--profile", "ithf", "--sync", "local", "--hall", broker["url"], "--table", "1")
    return {
        "run": lambda: table.run(*usual),
        "ctl": table.ctl,
        "tk": table.tk,
        "status": table.status,
        "log": table.log,
        "folder": table.folder,
        "url": broker["url"],
        "port": broker["port"],
    }


def paired(hall: dict, pairing: Pairing, *goals: str) -> subprocess.Popen:
    """The box started and `pairing` sent to it by the desk; once the box has taken it,
    START and the `goals` (home, away) entered at the table."""
    proc = hall["run"]()
    push(hall["port"], pairing)
    wait_for(
        lambda: hall["status"](proc)["profile"] == pairing.profile, "the pairing taken", HALL_WAIT
    )
    hall["ctl"]("start")
    for side in goals:
        hall["ctl"]("goal", side)
    return proc


def shows(hall: dict, proc: subprocess.Popen, what: str, **fields: object) -> dict:
    """The box's status once it shows `fields` (state="idle", names={…}, …)."""
    return wait_for(
        lambda: (s := hall["status"](proc)) and all(s[k] == v for k, v in fields.items()) and s,
        what,
        HALL_WAIT,
    )


def client(port: int) -> mqtt.Client:
    bus = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="", clean_session=True)
    bus.connect("127.0.0.1", port)
    bus.loop_start()
    return bus


def push(port: int, pairing: Pairing | bytes) -> None:
    """The desk's pairing for table 1, retained, as `hall round` pushes it."""
    bus = client(port)
    try:
        payload = pairing if isinstance(pairing, bytes) else pairing.to_json()
        bus.publish(pairing_topic("hall", "1"), payload, qos=1, retain=True).wait_for_publish(10)
    finally:
        bus.loop_stop()
        bus.disconnect()


def retained_result(port: int) -> dict:
    """Table 1's result as the broker holds it for the desk (retained)."""
    got: list[bytes] = []
    seen = threading.Event()

    def message(_c, _u, msg) -> None:
        got.append(msg.payload)
        seen.set()

    bus = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="", clean_session=True)
    bus.on_message = message
    bus.connect("127.0.0.1", port)
    bus.subscribe("timekeeper/hall/1/result", 1)
    bus.loop_start()
    try:
        assert seen.wait(10), "no result retained for table 1"
    finally:
        bus.loop_stop()
        bus.disconnect()
    return json.loads(got[-1])


def test_a_box_killed_mid_match_goes_on_with_its_pairings_profile_after_the_usual_command(
    hall: dict,
) -> None:
    proc = hall["run"]()
    assert hall["status"](proc)["profile"] == "ithf"
    # the round's pairing switches the box (started on ITHF) to its match's profile
    push(hall["port"], Pairing("A.1.1.k4", 1, "A.1", "group A", "Novák", "Veselý", "minute", 1.0))
    wait_for(
        lambda: (
            (s := hall["status"](proc))["profile"] == "minute"
            and s["names"] == {"home": "Novák", "away": "Veselý"}
        ),
        "the pairing's profile and names on the box",
        HALL_WAIT,
    )
    hall["ctl"]("start")
    hall["ctl"]("goal", "home", "7")
    hall["ctl"]("pause")
    before = hall["status"](proc)
    assert before["state"] == "stopped" and before["score"] == {"home": 1, "away": 0}
    wait_for(  # (the journal has it: saved on every change)
        lambda: (
            json.loads((hall["folder"] / "state" / "match.json").read_text())["state"] == "stopped"
        ),
        "the stopped match journaled",
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    again = hall["run"]()  # the same command: --profile ithf
    after = hall["status"](again)
    for key in ("profile", "state", "names", "score", "goals", "play_time", "remaining"):
        assert after[key] == before[key], (key, after[key], before[key], hall["log"]())
    assert not list((hall["folder"] / "state").glob("match.json.*.bad")), hall["log"]()
    # the desk sees the same pairing on the table (its id, its names), not set aside
    desk = hall["tk"]("hall", "status", "--json", "--broker", hall["url"])
    table = json.loads(desk.stdout)["1"]
    assert table["pairing"]["id"] == "A.1.1.k4" and table["status"]["profile"] == "minute"
    # and the match goes on to its end, its result home with the pairing's id
    hall["ctl"]("resume")
    hall["ctl"]("goal", "away")
    assert hall["ctl"]("status")["score"] == {"home": 1, "away": 1}


def test_a_goal_entered_after_the_end_changes_the_result_sent_home_until_it_is_confirmed(
    hall: dict,
) -> None:
    pairing = Pairing("A.2.1.g9", 1, "A.2", "group A", "Novák", "Veselý", "two", 1.0)
    proc = paired(hall, pairing, "home")
    wait_for(lambda: hall["status"](proc)["state"] == "finished", "the end")
    wait_for(lambda: retained_result(hall["port"])["score"] == [1, 0], "1:0 home", HALL_WAIT)
    # docs/commands.md: a goal entered after the end counts
    assert hall["ctl"]("goal", "away", "12")["score"] == {"home": 1, "away": 1}
    shown = hall["ctl"]("result")
    assert shown["score"] == [1, 1] and shown["confirmed"] is False, shown
    wait_for(lambda: retained_result(hall["port"])["score"] == [1, 1], "1:1 home", HALL_WAIT)
    confirmed = hall["ctl"]("result", "confirm")
    assert confirmed["score"] == [1, 1] and confirmed["confirmed"] is True, confirmed
    home = wait_for(
        lambda: (r := retained_result(hall["port"]))["confirmed"] and r, "the confirmed result"
    )
    assert home["score"] == [1, 1] and home["pairing"]["id"] == "A.2.1.g9"
    assert home["goals"][-1] == {"team": "away", "period": 1, "play_time": 2.0, "player": "12"}


def test_a_knockout_match_decided_in_regulation_ends_by_itself_and_hall_finish_ends_one(
    hall: dict,
) -> None:
    proc = hall["run"]()

    def pair(ident: str, match: str, knockout: bool) -> None:
        stage = "semi-final 1" if knockout else "group A"
        pairing = Pairing(ident, 4, match, stage, "Novák", "Veselý", "quick", 1.0, knockout)
        push(hall["port"], pairing)
        wait_for(
            lambda: hall["tk"]("hall", "status", "--json", "--broker", hall["url"]).stdout.count(
                ident
            ),
            f"the pairing {ident} taken",
            HALL_WAIT,
        )

    pair("SF1.4.a1", "SF1", knockout=True)
    hall["ctl"]("start")
    hall["ctl"]("goal", "home")
    # the end of regulation with a decided score: over, without the operator's f
    wait_for(lambda: hall["status"](proc)["state"] == "finished", "the match over by itself")
    home = wait_for(lambda: retained_result(hall["port"]), "the result home")
    assert home["score"] == [1, 0] and home["decided"] == "regulation"
    assert home["pairing"]["id"] == "SF1.4.a1"
    # a drawn one goes to its overtime as the profile says (NEXT starts its sudden death)
    hall["ctl"]("reset")
    pair("SF2.4.b2", "SF2", knockout=True)
    hall["ctl"]("start")
    waiting = wait_for(
        lambda: (s := hall["status"](proc))["state"] == "waiting" and s, "the end of regulation"
    )
    assert "overtime" in waiting["waiting_for"], waiting
    hall["ctl"]("next")
    hall["ctl"]("goal", "away")
    home = wait_for(
        lambda: (r := retained_result(hall["port"]))["pairing"]["id"] == "SF2.4.b2" and r,
        "the sudden death's result home",
    )
    assert home["score"] == [0, 1] and home["decided"] == "sudden_death"
    # a group match decided in regulation waits for its operator's f; he is away: the desk
    hall["ctl"]("reset")
    pair("A.3.4.c3", "A.3", knockout=False)
    hall["ctl"]("start")
    hall["ctl"]("goal", "home")
    wait_for(lambda: hall["status"](proc)["state"] == "waiting", "the end of regulation")
    done = hall["tk"]("hall", "finish", "--table", "1", "--broker", hall["url"])
    assert done.returncode == 0 and "table 1: ok" in done.stdout, (done.stdout, done.stderr)
    assert hall["status"](proc)["state"] == "finished"
    home = wait_for(
        lambda: (r := retained_result(hall["port"]))["pairing"]["id"] == "A.3.4.c3" and r,
        "the group match's result home",
    )
    assert home["score"] == [1, 0] and home["decided"] == "regulation"


def test_a_finished_match_keeps_its_names_and_the_next_pairing_waits_shown_as_next(
    hall: dict,
) -> None:
    pairing = Pairing("A.1.1.n1", 1, "A.1", "group A", "Novák", "Veselý", "quick", 1.0)
    proc = paired(hall, pairing, "home", "home")
    wait_for(lambda: hall["status"](proc)["state"] == "waiting", "the end of regulation")
    hall["ctl"]("finish")
    # the next round is called: its pairing comes while Novák's 2:0 is on the table
    push(hall["port"], Pairing("A.3.2.n2", 2, "A.3", "group A", "Petr", "Svoboda", "quick", 2.0))
    shown = wait_for(
        lambda: (s := hall["status"](proc))["next_pairing"] and s, "the next pairing shown"
    )
    assert shown["next_pairing"] == {"match": "A.3", "home": "Petr", "away": "Svoboda"}
    assert shown["state"] == "finished" and shown["score"] == {"home": 2, "away": 0}
    assert shown["names"] == {"home": "Novák", "away": "Veselý"}  # the winner stays credited
    person = hall["tk"]("ctl", "status", "--control", str(hall["folder"] / "c.sock"))
    assert "next match A.3 Petr – Svoboda" in person.stdout, person.stdout
    assert hall["ctl"]("result")["score"] == [2, 0]
    hall["ctl"]("result", "confirm")  # confirmed: the table made ready for the next match
    names = {"home": "Petr", "away": "Svoboda"}
    ready = shows(hall, proc, "the next pairing taken", state="idle", names=names)
    assert ready["next_pairing"] is None


@pytest.mark.parametrize("reset", ["ctl", "hall"])
def test_a_pairing_held_during_a_halls_match_is_taken_by_the_reset_after_it(
    hall: dict, reset: str
) -> None:
    """docs/hall.md: a pairing that comes during a match waits until the operator resets
    after it — also on a box that took no pairing yet, its ITHF match begun by the desk:
    stopped, then `ctl reset` (as the newcomer did); in its start's countdown, `hall reset`."""
    proc = hall["run"]()
    begun = hall["tk"]("hall", "start", "--profile", "ithf", "--broker", hall["url"])
    assert begun.returncode == 0 and "table 1: ok" in begun.stdout, (begun.stdout, begun.stderr)
    state = "stopped" if reset == "ctl" else "prestart"
    if reset == "ctl":  # (ITHF's countdown is 20 s)
        wait_for(lambda: hall["status"](proc)["state"] == "running", "the start signal", 40)
        hall["ctl"]("pause")
    push(hall["port"], Pairing("A.1.1.r1", 1, "A.1", "group A", "Adam", "Cyril", "quick", 1.0))
    held = wait_for(
        lambda: (s := hall["status"](proc))["next_pairing"] and s, "the pairing held", HALL_WAIT
    )
    assert held["state"] == state and held["profile"] == "ithf"
    person = hall["tk"]("ctl", "status", "--control", str(hall["folder"] / "c.sock"))
    assert "next match A.1 Adam – Cyril" in person.stdout, person.stdout
    if reset == "ctl":
        hall["ctl"]("reset")
    else:
        done = hall["tk"]("hall", "reset", "--table", "1", "--broker", hall["url"])
        assert done.returncode == 0 and "table 1: ok" in done.stdout, (done.stdout, done.stderr)
    names = {"home": "Adam", "away": "Cyril"}
    ready = shows(hall, proc, "the held pairing taken", profile="quick", names=names)
    assert ready["state"] == "idle" and ready["next_pairing"] is None, ready
    # the hall's next start plays the pairing's match, named
    begun = hall["tk"]("hall", "start", "--profile", "quick", "--broker", hall["url"])
    assert begun.returncode == 0 and "table 1: ok" in begun.stdout, (begun.stdout, begun.stderr)
    playing = wait_for(
        lambda: (s := hall["status"](proc))["state"] != "idle" and s, "the next match begun"
    )
    assert playing["profile"] == "quick" and playing["names"] == {"home": "Adam", "away": "Cyril"}
