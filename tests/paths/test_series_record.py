"""The record a series leaves on a box with no desk, along its operator's path: `timekeeper
run --best-of 5` played to its end with a game won in sudden death, driven by `timekeeper ctl`
as at the table; the games on `ctl status`, in the events log and the box's log as they are
counted, and after the series (the box stopped) `timekeeper series show` prints the sheet and
`series export` writes it as CSV and JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest
from helpers import QUICK
from running import stop

pytestmark = pytest.mark.slow

# the series played: (the winner, won in sudden death)
GAMES = (("home", False), ("away", True), ("home", False), ("home", False))


def test_a_best_of_five_leaves_its_games_on_record_and_the_sheet_prints_after_it(
    table_box,
) -> None:
    box = table_box({"quick": QUICK}, "tk-sr-")
    events = box.folder / "ev.jsonl"
    state = box.folder / "state"
    proc = box.run(
        "--profile", "quick", "--best-of", "5", "--audio", "silent", "--events", str(events)
    )

    def shown() -> str:  # `ctl status` as a person reads it
        done = box.tk("ctl", "status", "--control", str(box.sock))
        assert done.returncode == 0, done.stderr
        return done.stdout

    box.ctl("names", "Novák", "Svoboda")
    assert "sound      off: SILENT" in shown()  # (not "on": no cue is heard)
    for number, (winner, sudden) in enumerate(GAMES, 1):
        box.begin()
        box.ctl("pause")
        if not sudden:
            box.ctl("goal", winner)
        box.ctl("set", "0:00")
        box.ctl("resume")
        if sudden:
            box.state("waiting")
            box.ctl("next")
            assert "RUNNING, overtime\n" in shown()  # (not "overtime (2 of 1)")
            reply = box.ctl("goal", winner)  # the goal that ends the game: its reply
            assert reply["state"] == "finished" and reply["decided"] == "sudden_death"
            assert len(reply["match_series"]["games"]) == number  # counted in the reply
        done = box.state("finished")
        assert [g["number"] for g in done["match_series"]["games"]] == list(range(1, number + 1))
    won = box.status()
    assert won["match_series"]["winner"] == "home" and won["waiting_for"] == ""  # no [start]
    text = shown()
    assert "Novák wins the series 3:1" in text
    assert "game 2     0:1 Svoboda, in sudden death" in text
    assert "game 4     1:0 Novák, in regulation" in text
    assert "next " not in text  # START offers no further game
    log = box.log()
    assert "series Novák – Svoboda: game 2 won by Svoboda 1:0 in sudden death" in log, log
    assert "series: finish" in log and "operator: finish" not in log  # the box's own FINISH
    counted = [json.loads(line) for line in events.read_text().splitlines()]
    counted = [line for line in counted if "series" in line]
    assert [line["counted"]["decided"] for line in counted] == [
        "regulation",
        "sudden_death",
        "regulation",
        "regulation",
    ]
    assert counted[-1]["winner"] == "home" and counted[-1]["names"]["home"] == "Novák"
    box.ctl("reset")  # the evening's next series: the won one goes on the record
    assert box.status()["match_series"]["games"] == []
    stop(proc)

    sheet = box.tk("series", "show", "--state-dir", str(state))
    assert sheet.returncode == 0, sheet.stderr
    lines = sheet.stdout.splitlines()
    assert lines[0].startswith("series 1 · best of 5 · Novák – Svoboda · Novák wins 3:1 · ")
    assert lines[1:] == [
        "  game 1  1:0 Novák, in regulation",
        "  game 2  0:1 Svoboda, in sudden death",
        "  game 3  1:0 Novák, in regulation",
        "  game 4  1:0 Novák, in regulation",
    ]
    exported = box.tk("series", "export", "--state-dir", str(state))
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [(r["game"], r["home_goals"], r["away_goals"], r["decided"]) for r in rows] == [
        ("1", "1", "0", "regulation"),
        ("2", "0", "1", "sudden_death"),
        ("3", "1", "0", "regulation"),
        ("4", "1", "0", "regulation"),
    ]
    assert rows[1]["game_winner"] == "Svoboda" and rows[3]["series_winner"] == "Novák"
    assert (rows[3]["home_wins"], rows[3]["away_wins"]) == ("3", "1")
    out = box.folder / "sheet.json"
    written = box.tk(
        "series", "export", "--format", "json", "-o", str(out), "--state-dir", str(state)
    )
    assert written.returncode == 0, written.stderr
    (series,) = json.loads(out.read_text(encoding="utf-8"))["series"]
    assert series["names"] == {"home": "Novák", "away": "Svoboda"} and series["winner"] == "home"
    assert [g["decided"] for g in series["games"]][1] == "sudden_death"
