"""The box plays a series in virtual time (one process, the runner on a clock of its own):
the games counted as they end, the next game begun with START (its pre-start) and the same
players, the won series taking no further game, the series' file bringing back the same game,
and a drawn game going on to its sudden death. (The user's path, processes and a real broker:
test_series_paths.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import Clock, sudden_death

from timekeeper.box.runner import Runner
from timekeeper.box.series import LOCAL, SeriesPlay
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine
from timekeeper.rules.series import Series

GAME = sudden_death(2, "two seconds + sudden death")
# a best of 7 after game 1, won by the away side
AWAY_WON_GAME_1 = {
    "best_of": 7,
    "game": 2,
    "home_wins": 0,
    "away_wins": 1,
    "winner": None,
    "match": "",
    "games": [{"number": 1, "home": 0, "away": 1, "decided": "sudden_death", "winner": "away"}],
}


@pytest.fixture
def box(write_profile, tmp_path: Path):
    clock = Clock()
    runner = Runner(Engine(profile.load(str(write_profile("game", GAME)))), [], clock=clock)
    play = SeriesPlay(tmp_path, runner.submit)
    play.local = True
    runner.series = play
    play.begin(Series(7), LOCAL)
    runner.engine.name_sides("Novák", "Svoboda")

    def press(action: Action, **kw) -> None:
        runner.step(Command(action, **kw))

    def play_out(until: float) -> None:
        """Let the clock run to `until`, every turn the runner would take on the way."""
        while (wake := runner.wake_at()) is not None and wake <= until:
            clock.now = max(clock.now, wake)
            runner.step()
        clock.now = until
        runner.step()
        while not runner._queue.empty():  # (what the series itself submitted: FINISH)
            command, future, given, by = runner._queue.get()
            runner.step(command, given, future, by)

    return {"runner": runner, "play": play, "clock": clock, "press": press, "run": play_out}


def game(box, winner: str) -> dict:
    """A game: START, a goal for `winner`, regulation played out; the status after it."""
    runner, clock = box["runner"], box["clock"]
    box["press"](Action.START)
    assert runner.status().state == "prestart"  # (every game begins with its pre-start)
    box["run"](clock.now + 1.5)
    box["press"](Action.GOAL, team=winner)
    box["run"](clock.now + 3)
    return runner.status().to_dict()


def test_games_counted_the_next_begun_with_start_and_a_won_series_takes_no_further_game(
    box,
) -> None:
    runner, play = box["runner"], box["play"]
    first = game(box, "home")  # decided at the end of regulation: over (the box's FINISH)
    assert first["state"] == "finished" and first["decided"] == "regulation"
    assert first["match_series"] == {
        "best_of": 7,
        "game": 2,
        "home_wins": 1,
        "away_wins": 0,
        "winner": None,
        "match": "",
        "games": [won(1, "home")],
    }
    assert play.game_played() == 1  # (the result the table holds is game 1's)
    for winner in ("home", "away", "home"):
        s = game(box, winner)
        assert s["names"] == {"home": "Novák", "away": "Svoboda"}  # the same players
    assert s["match_series"]["game"] == 5 and s["match_series"]["home_wins"] == 3
    last = game(box, "home")
    assert last["match_series"] == {
        "best_of": 7,
        "game": 5,
        "home_wins": 4,
        "away_wins": 1,
        "winner": "home",
        "match": "",
        "games": [won(n, w) for n, w in enumerate(("home", "home", "away", "home", "home"), 1)],
    }
    with pytest.raises(Refused, match="the series is over: Novák won it 4:1"):
        _refused(box, Action.START)
    assert runner.status().state == "finished"
    with pytest.raises(Refused, match="the series is over"):
        _refused(box, Action.GO)  # (the START/NEXT button: the same)
    box["press"](Action.RESET)  # a local series: the next of the evening
    assert runner.status().to_dict()["match_series"]["game"] == 1
    assert runner.status().to_dict()["match_series"]["home_wins"] == 0


def won(number: int, winner: str) -> dict:
    """Game `number` on the record, won 1:0 in regulation by `winner`."""
    home = winner == "home"
    return {"number": number, "home": int(home), "away": int(not home)} | {
        "decided": "regulation",
        "winner": winner,
    }


def _refused(box, action: Action) -> None:
    from concurrent.futures import Future

    future: Future = Future()
    box["runner"].step(Command(action), None, future)
    raise future.exception()  # type: ignore[misc]


def test_a_drawn_game_goes_to_sudden_death_and_its_goal_wins_it(box) -> None:
    runner = box["runner"]
    box["press"](Action.START)
    box["run"](box["clock"].now + 4)
    s = runner.status()
    assert s.state == "waiting" and s.waiting_for == "next: overtime"  # not over: no winner
    box["press"](Action.NEXT)
    box["run"](box["clock"].now + 30)  # (untimed: it lasts until the goal)
    box["press"](Action.GOAL, team="away")
    s = runner.status()
    assert s.state == "finished" and s.decided == "sudden_death"
    assert s.match_series == AWAY_WON_GAME_1


def test_a_goal_entered_after_the_end_takes_the_count_back_until_it_ends_again(box) -> None:
    runner = box["runner"]
    game(box, "home")
    box["press"](Action.GOAL, team="away")  # (a goal the operator missed: 1:1, not over)
    s = runner.status()
    assert s.state == "waiting" and s.match_series["game"] == 1  # type: ignore[index]
    assert s.match_series["home_wins"] == 0  # type: ignore[index]
    box["press"](Action.NEXT)
    box["press"](Action.GOAL, team="away")
    twice = {"number": 1, "home": 1, "away": 2, "decided": "sudden_death", "winner": "away"}
    assert runner.status().match_series == {**AWAY_WON_GAME_1, "games": [twice]}


def test_the_series_file_brings_back_the_same_game(box, tmp_path: Path) -> None:
    game(box, "home")
    game(box, "away")
    box["press"](Action.START)  # game 3 under way when the box is killed
    again = SeriesPlay(tmp_path, box["runner"].submit)
    assert again.id == LOCAL and again.series == box["play"].series
    assert again.series is not None and again.series.games[1].winner == "away"
    assert again.shown()["game"] == 3 and again.text() == "game 3, 1:1"  # type: ignore[index]
    assert again.game_played() == 3


def test_the_status_line_says_the_series_in_the_boxs_language(box) -> None:
    from timekeeper.show import language
    from timekeeper.show.status import columns, status_text

    game(box, "home")
    box["press"](Action.START)
    s = box["runner"].status()
    assert "game 2 · Novák leads 1:0" in status_text(s, 120)
    assert "zápas 2 · Novák vede 1:0" in status_text(s, 120, words=language.words("cs"))
    assert columns(status_text(s, 40)) <= 40  # (a narrow terminal: the series makes way)
    box["play"].match = "QF2"
    for _ in range(3):
        game(box, "home")
    finished = box["runner"].status()
    assert "QF2 · Novák wins the series 4:0" in status_text(finished, 120)


def test_a_box_out_of_its_hall_leaves_the_halls_series_and_run_best_of_resumes_its_own(
    box, tmp_path: Path
) -> None:
    import argparse

    from timekeeper.box.live import _series

    runner = box["runner"]
    folder = tmp_path / "next"
    folder.mkdir()
    hall = SeriesPlay(folder, runner.submit)
    hall.begin(Series.called(7, 3, 2, 0), "QF2-c1", "QF2")  # (yesterday's hall series)
    cfg = argparse.Namespace(hall=None)
    args = argparse.Namespace(best_of=None, hall=None, fresh=False)
    alone = _series(args, cfg, runner, runner.engine.profile, folder, None)
    assert alone.series is None and runner.status().match_series is None
    args.best_of = 5
    local = _series(args, cfg, runner, runner.engine.profile, folder, None)
    assert local.series == Series(5)
    local.series = Series.called(5, 3, 1, 1)
    local._save()
    again = _series(args, cfg, runner, runner.engine.profile, folder, None)  # the same command
    assert again.series == Series.called(5, 3, 1, 1)
    args.fresh = True
    assert _series(args, cfg, runner, runner.engine.profile, folder, None).series == Series(5)


def test_the_desks_older_word_on_a_game_the_box_counted_is_passed(box) -> None:
    from timekeeper.hall.bus.pairing import Pairing

    play = box["play"]
    call = Pairing("F-c1", 2, "F", "final", "Novák", "Svoboda", "game", 1.0, True, 3, 3, 1, 1)
    assert play.take(call) and play.shown()["game"] == 3  # type: ignore[index]
    game(box, "home")  # the deciding game, counted
    won = {"best_of": 3, "game": 3, "home_wins": 2, "away_wins": 1, "winner": "home"}
    third = {"number": 3, "home": 1, "away": 0, "decided": "regulation", "winner": "home"}
    assert play.shown() == {**won, "match": "F", "games": [third]}
    assert not play.take(call)  # (its retained call of game 3, delivered again)
    assert play.shown() == {**won, "match": "F", "games": [third]}


def test_the_reply_to_the_goal_that_ends_a_game_shows_the_series_with_that_game(box) -> None:
    from concurrent.futures import Future

    runner = box["runner"]
    box["press"](Action.START)
    box["run"](box["clock"].now + 4)
    box["press"](Action.NEXT)  # the sudden death
    reply: Future = Future()
    runner.step(Command(Action.GOAL, team="away"), None, reply)
    assert reply.result().state == "finished"
    assert reply.result().match_series == AWAY_WON_GAME_1  # counted, not `game 1, 0:0`


def test_the_sudden_death_is_no_count_of_regulations_parts_on_ctl_status(box) -> None:
    from timekeeper.show.status import status_block

    box["press"](Action.START)
    box["run"](box["clock"].now + 4)
    box["press"](Action.NEXT)
    shown = status_block(box["runner"].status().to_dict())
    assert "state      RUNNING, overtime\n" in shown and "of 1)" not in shown


def test_a_won_series_offers_no_start_in_the_status_line_or_the_prompts(box) -> None:
    from timekeeper.show.prompts import resumed_text, what_now
    from timekeeper.show.status import status_text

    for _ in range(4):
        game(box, "home")
    s = box["runner"].status()
    assert s.match_series["winner"] == "home" and s.waiting_for == ""  # type: ignore[index]
    assert "[start]" not in status_text(s) and "Novák wins the series 4:0" in status_text(s)
    assert what_now(s) == (
        "the series is won: RESET (r r, ctl reset, or hold START/NEXT) begins a new series"
    )
    assert resumed_text(s) == f"no match under way: {what_now(s)}"
    box["press"](Action.RESET)  # the next series: START begins its game 1
    assert box["runner"].status().waiting_for == "start"


def test_the_log_names_the_players_of_a_game_counted(box, caplog) -> None:
    import logging

    with caplog.at_level(logging.INFO):
        game(box, "away")
    said = caplog.text
    assert "series Novák – Svoboda: game 1 won by Svoboda 1:0; game 2, 0:1" in said, said


def test_the_sheet_names_a_line_that_is_no_series_and_prints_the_others(
    box, tmp_path: Path, capsys
) -> None:
    import json

    from timekeeper import cli

    for winner in ("home", "away", "home", "home", "home"):
        game(box, winner)
    box["press"](Action.RESET)  # the won series is left: on record in series-played.jsonl
    played = tmp_path / "series-played.jsonl"
    good = played.read_text(encoding="utf-8")
    bad = json.loads(good) | {"games": [{"number": 1, "home": 2, "away": 2}]}
    played.write_text(good + json.dumps(bad) + "\n", encoding="utf-8")
    assert cli.main(["series", "show", "--state-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("series 1 · best of 7 · Novák – Svoboda · Novák wins 4:1")
    assert f"{played}:2: field 'games[0].decided' is one of regulation" in err
    assert played.read_text(encoding="utf-8").count("\n") == 2  # (left as it is)
    assert cli.main(["series", "show", "--state-dir", str(tmp_path / "none")]) == 1
    assert "no series played in" in capsys.readouterr().err
