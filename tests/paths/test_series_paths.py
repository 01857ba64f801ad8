"""A series on a box along the path its operator and the desk take, each a process of its own:
`timekeeper run --best-of 7 …` with no desk, and a box in a hall whose desk pushes a series'
pairing on a real Mosquitto; driven with `timekeeper ctl …` as at the table. Each game begins
with START (its pre-start) and the same players, a drawn one goes to its sudden death (ITHF
4.8), each game's result goes home with its `game`, a box killed with SIGKILL comes back with
the same command in the same game of the same series, and a won series takes no further game."""

from __future__ import annotations

import json
import signal
import threading

import paho.mqtt.client as mqtt
import pytest
from helpers import HALL_WAIT, QUICK, wait_for

from timekeeper.hall.bus.pairing import Pairing, pairing_topic

pytestmark = pytest.mark.slow

NOVAK = {"home": "Novák", "away": "Svoboda"}


@pytest.fixture
def box(table_box) -> dict:
    """A box's folders (short: an AF_UNIX path), its profile, and `run(*more)` to start
    `timekeeper run` as its operator types it, `ctl(*args)` as at the table."""
    table = table_box({"quick": QUICK}, "tk-se-")
    return {
        "run": lambda *more: table.run("--profile", "quick", *more),
        "ctl": table.ctl,
        "tk": table.tk,
        "state": table.state,
        "status": table.status,
        "begin": table.begin,
        "play_out": table.play_out,
        "log": table.log,
        "folder": table.folder,
        "sock": table.sock,
    }


def begin(box: dict) -> None:
    """START: the game's pre-start, then its clock runs."""
    box["begin"]()


def end(box: dict, winner: str, sudden: bool) -> dict:
    """The running game won by `winner`: in regulation, or drawn and won in the sudden
    death (running.TableBox.play_out)."""
    return box["play_out"](winner, sudden)


def series(game: int, home: int, away: int, winner: str | None = None, match: str = "") -> dict:
    return {
        "best_of": 7,
        "game": game,
        "home_wins": home,
        "away_wins": away,
        "winner": winner,
        "match": match,
    }


def counted(shown: dict | None) -> dict | None:
    """A status's series without its record of games (asserted where the test plays them)."""
    return None if shown is None else {k: v for k, v in shown.items() if k != "games"}


def test_a_local_best_of_seven_is_played_game_by_game_and_survives_a_kill(box: dict) -> None:
    proc = box["run"]("--best-of", "7")
    ctl = box["ctl"]
    ctl("names", "Novák", "Svoboda")
    assert counted(ctl("status")["match_series"]) == series(1, 0, 0)
    begin(box)
    first = end(box, "home", sudden=False)
    assert first["decided"] == "regulation" and counted(first["match_series"]) == series(2, 1, 0)
    begin(box)
    second = end(box, "home", sudden=True)
    assert second["decided"] == "sudden_death" and counted(second["match_series"]) == series(
        3, 2, 0
    )
    shown = box["tk"]("ctl", "status", "--control", str(box["sock"])).stdout
    assert "next: game 3 · Novák leads 2:0" in shown, shown
    begin(box)
    ctl("goal", "away")
    ctl("pause")
    wait_for(
        lambda: (
            json.loads((box["folder"] / "state" / "match.json").read_text())["state"] == "stopped"
        ),
        "the stopped game journaled",
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    box["run"]("--best-of", "7")  # the same command
    again = ctl("status")
    assert again["state"] == "stopped" and again["score"] == {"home": 0, "away": 1}
    assert counted(again["match_series"]) == series(3, 2, 0) and again["names"] == NOVAK
    ctl("set", "0:00")
    ctl("resume")
    assert counted(box["state"]("finished")["match_series"]) == series(4, 2, 1)
    for game in (4, 5):
        assert ctl("status")["match_series"]["game"] == game
        begin(box)
        done = end(box, "home", sudden=False)
        assert done["names"] == NOVAK
    assert counted(done["match_series"]) == series(5, 4, 1, "home")
    shown = box["tk"]("ctl", "status", "--control", str(box["sock"])).stdout
    assert "Novák wins the series 4:1" in shown, shown
    refused = box["tk"]("ctl", "start", "--control", str(box["sock"]))
    assert refused.returncode != 0 and "the series is over" in refused.stderr + refused.stdout
    assert ctl("status")["state"] == "finished"
    ctl("reset")
    assert counted(ctl("status")["match_series"]) == series(1, 0, 0)  # the evening's next series


def test_the_docs_series_command_starts_a_series_of_ithf_playoff_games(box: dict) -> None:
    box["run"]("--best-of", "7", "--profile", "ithf-playoff")  # (docs/box.md, as typed)
    box["ctl"]("names", "Jan Novák", "Svoboda")
    s = box["ctl"]("status")
    assert s["profile"] == "ithf-playoff" and counted(s["match_series"]) == series(1, 0, 0)
    assert box["ctl"]("start")["state"] == "prestart"  # (its 20-s pre-start: ITHF 4.4)


def test_best_of_refuses_a_profile_that_ends_a_game_drawn(box: dict) -> None:
    done = box["tk"]("run", "--best-of", "7", "--profile", "ithf", "--no-gpio", "--no-keyboard")
    assert done.returncode == 2, done.stderr
    assert "--best-of" in done.stderr and "ithf-playoff" in done.stderr


# ------------------------------------------------------------------------- a hall's series


def push(port: int, pairing: Pairing) -> None:
    """The desk's pairing for table 1, retained, as the desk pushes it."""
    bus = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="", clean_session=True)
    bus.connect("127.0.0.1", port)
    bus.loop_start()
    try:
        topic = pairing_topic("hall", "1")
        bus.publish(topic, pairing.to_json(), qos=1, retain=True).wait_for_publish(10)
    finally:
        bus.loop_stop()
        bus.disconnect()


class Results:
    """The desk's side of table 1's results: every one received, in order."""

    def __init__(self, port: int) -> None:
        self.got: list[dict] = []
        self._lock = threading.Lock()
        self.bus = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="", clean_session=True)
        self.bus.on_message = self._message
        self.bus.connect("127.0.0.1", port)
        self.bus.subscribe("timekeeper/hall/1/result", 1)
        self.bus.loop_start()

    def _message(self, _c, _u, msg) -> None:
        with self._lock:
            self.got.append(json.loads(msg.payload))

    def of_game(self, game: int) -> dict:
        def found() -> dict | None:
            with self._lock:
                return next((r for r in self.got if r.get("game") == game), None)

        return wait_for(found, f"the result of game {game}", HALL_WAIT)

    def close(self) -> None:
        self.bus.loop_stop()
        self.bus.disconnect()


def test_a_desks_series_pairing_is_played_on_the_box_and_each_games_result_goes_home(
    box: dict, broker
) -> None:
    hall = ("--hall", broker["url"], "--table", "1", "--sync", "local")
    proc = box["run"](*hall)
    results = Results(broker["port"])
    try:
        call = Pairing("QF2-c1", 5, "QF2", "quarter-final 2", "Novák", "Svoboda", "quick", 1.0)
        game_1 = Pairing(**{**call.__dict__, "knockout": True, "best_of": 7, "game": 1})
        push(broker["port"], game_1)
        wait_for(
            lambda: counted(box["status"]()["match_series"]) == series(1, 0, 0, match="QF2"),
            "the series on the box",
            HALL_WAIT,
        )
        begin(box)
        end(box, "home", sudden=False)  # (the knock-out's: ended by the box at regulation)
        one = results.of_game(1)
        assert one["score"] == [1, 0] and one["pairing"]["id"] == "QF2-c1"
        # the desk records game 1 and calls game 2: the same id, retained
        push(broker["port"], Pairing(**{**game_1.__dict__, "game": 2, "home_wins": 1}))
        begin(box)
        assert box["ctl"]("status")["names"] == NOVAK
        end(box, "away", sudden=True)
        two = results.of_game(2)
        assert two["score"] == [0, 1] and two["decided"] == "sudden_death"
        assert counted(box["ctl"]("status")["match_series"]) == series(3, 1, 1, match="QF2")
        # killed between games, before the desk's word on game 3: back in game 3
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        box["run"](*hall)
        assert counted(box["ctl"]("status")["match_series"]) == series(3, 1, 1, match="QF2")
        push(
            broker["port"],
            Pairing(**{**game_1.__dict__, "game": 3, "home_wins": 1, "away_wins": 1}),
        )
        begin(box)
        end(box, "home", sudden=False)
        assert results.of_game(3)["score"] == [1, 0]
        wait_for(  # the desk's view of the table: its retained status (sent within seconds)
            lambda: (
                counted(
                    json.loads(
                        box["tk"]("hall", "status", "--json", "--broker", broker["url"]).stdout
                    )["1"]["status"]["match_series"]
                )
                == series(4, 2, 1, match="QF2")
            ),
            "the series on the desk's view of the table",
            HALL_WAIT,
        )
    finally:
        results.close()
