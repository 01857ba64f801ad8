"""How a match was decided comes home as the engine knows it — regulation, overtime, sudden
death, shoot-out — from the profile's typed parts (never a part's name), and the desk's
result check takes each kind for a knock-out match."""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

import pytest
from helpers import HallLinkSide

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.bus.result import parse_result
from timekeeper.hall.table.tablematch import MatchLink
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.decision import Decisions
from timekeeper.rules.engine import Engine, Status
from timekeeper.tournament import results
from timekeeper.tournament.rulesets import RADEGAST

# one regulation period, an overtime played in full, a sudden-death one, then the shoot-out
KNOCKOUT = """\
title: knock-out test
prestart: 0
period:
  length: 20
overtime:
  - length: 10
    sudden_death: false
  - length: 10
    sudden_death: true
shootout:
  first: 1
  then: 1
  shot: none
"""
START, NEXT, FINISH = Command(Action.START), Command(Action.NEXT), Command(Action.FINISH)


def goal(team: str) -> Command:
    return Command(Action.GOAL, team=team)


def attempt(team: str, scored: bool) -> Command:
    return Command(Action.ATTEMPT, team=team, scored=scored)


class Box:
    """A box as the MatchLink sees it: its status, and what is submitted to it."""

    def __init__(self, status: Status) -> None:
        self.state = status

    def status(self) -> Status:
        return self.state

    def submit(self, command: Command, at: float | None = None) -> Future:
        done: Future = Future()
        done.set_result(self.state)
        return done


def played(file: Path, script: list[tuple[float, Command]]) -> Status:
    """The engine's status once the script (seconds after the last step, command) is played."""
    engine, now = Engine(profile.load(str(file))), 0.0
    for after, command in script:
        now += after
        engine.handle(command, now)
    return engine.status(now)


@pytest.mark.parametrize(
    ("script", "kind", "score"),
    [
        ([(0, START), (1, goal("home")), (30, FINISH)], "regulation", (1, 0)),
        ([(0, START), (30, NEXT), (1, goal("away")), (30, FINISH)], "overtime", (0, 1)),
        ([(0, START), (30, NEXT), (30, NEXT), (1, goal("away"))], "sudden_death", (0, 1)),
        (
            [
                *[(0, START), (30, NEXT), (30, NEXT), (30, NEXT), (1, NEXT)],
                *[(1, attempt("home", True)), (1, attempt("away", False))],
            ],
            "shootout",
            (1, 0),
        ),
    ],
    ids=["regulation", "overtime", "sudden_death", "shootout"],
)
def test_each_way_a_match_is_decided_comes_home_as_what_it_was(
    tmp_path: Path, script: list, kind: str, score: tuple[int, int]
) -> None:
    file = tmp_path / "ko.yaml"
    file.write_text(KNOCKOUT, encoding="utf-8")
    ended = played(file, script)
    assert ended.state == "finished" and ended.decided == kind  # the engine's own fact
    box = Box(played(file, []))
    link = HallLinkSide(box)
    match = MatchLink(link, None, wall=lambda: 5.0)
    match.handle(Pairing("SF1.1.x", 3, "SF1", "semi-final 1", "A", "B", "ko", 1.0).to_json())
    match.match_changed(played(file, [(0, START)]), 0.0)  # (its match has begun)
    box.state = ended
    match.match_changed(ended, 0.0)
    sent = [p for t, p, retain in link.client.published if t.endswith("/result") and retain]
    home = parse_result(sent[-1])  # what the desk reads off the bus
    assert home.decided == kind and home.score == score
    # and the desk's result check takes it for a knock-out match (clerk.result's)
    made = results.make(
        RADEGAST,
        True,
        home.score_text,
        home.decided,
        decisions=Decisions.of(profile.load(str(file))),
    )
    assert (made.home, made.away, made.decided) == (*score, kind)
    assert json.loads(sent[-1])["decided"] == kind


def test_a_goal_entered_after_a_decided_end_that_makes_a_draw_goes_to_the_overtime(
    tmp_path: Path,
) -> None:
    """A knock-out match ends by itself at the end of regulation when decided (its box gives
    FINISH); a last-second equaliser entered just after it makes it a draw again: the match
    waits for its overtime, as a drawn one does, and is decided there."""
    file = tmp_path / "ko.yaml"
    file.write_text(KNOCKOUT, encoding="utf-8")
    engine = Engine(profile.load(str(file)))
    engine.handle(START, 0.0)
    engine.handle(goal("home"), 1.0)
    engine.handle(FINISH, 21.0)  # (the box's, at the end of regulation: 1:0)
    assert engine.status(21.0).state == "finished"
    engine.handle(goal("away"), 22.0)  # scored at the buzzer, entered a second later
    after = engine.status(22.0)
    assert after.state == "waiting" and after.score == {"home": 1, "away": 1}
    assert "overtime" in after.waiting_for and after.decided == ""
    engine.handle(NEXT, 30.0)
    engine.handle(goal("home"), 31.0)
    engine.handle(FINISH, 50.0)
    assert engine.status(50.0).decided == "overtime"
    assert engine.status(50.0).score == {"home": 2, "away": 1}
