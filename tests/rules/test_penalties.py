"""The penalty box and the shoot-out score on their own, in play time: places, the queue,
release, removal, freezing between periods, correction, and the plain-data round trip."""

from __future__ import annotations

import json

import pytest

from timekeeper.rules.penalties import GAME, RUNNING, WAITING, PenaltyBox
from timekeeper.rules.shootout import ShootoutScore

LENGTHS = {"minor": 60.0, "major": 180.0, "personal": 300.0}


def box_with(*entries: tuple[str, tuple[str, ...], float | None]) -> PenaltyBox:
    box = PenaltyBox(running_max=2)
    for team, kinds, play in entries:
        box.add(team, kinds, LENGTHS, play)
    return box


def states(box: PenaltyBox, team: str = "home") -> list[tuple[int, str]]:
    return [(p.id, p.state) for p in box.penalties if p.team == team]


def test_two_run_per_team_the_third_waits_and_takes_the_first_free_place() -> None:
    box = box_with(
        ("home", ("minor",), 10),
        ("home", ("major",), 20),
        ("home", ("minor",), 30),
        ("away", ("minor",), 30),
    )
    assert states(box) == [(1, RUNNING), (2, RUNNING), (3, WAITING)]
    assert states(box, "away") == [(4, RUNNING)]  # the other team's places are its own
    assert box.next_expiry() == 70
    ended = box.expire(95)
    assert [(at, p.id) for at, p in ended] == [(70, 1), (90, 4)]
    assert states(box) == [(2, RUNNING), (3, RUNNING)]
    assert box.penalties[1].since == 70  # started the moment the place came free, not at 95
    assert box.penalties[1].left_at(95) == pytest.approx(35)


def test_a_combination_is_served_in_one_place_one_part_after_the_other() -> None:
    box = box_with(("home", ("minor", "minor", "personal"), 0))
    p = box.penalties[0]
    assert p.total == 420 and p.segment_at(90) == (1, 30)
    assert box.next_expiry() == 420


def test_game_misconduct_alone_holds_no_place_and_has_no_time() -> None:
    box = box_with(("home", ("game",), 0), ("home", ("minor",), 0), ("home", ("minor",), 0))
    assert states(box) == [(1, GAME), (2, RUNNING), (3, RUNNING)]
    assert box.next_expiry() == 60


def test_major_plus_game_frees_the_place_after_three_minutes_and_keeps_the_player_out() -> None:
    box = box_with(("home", ("major", "game"), 0))
    assert [(at, p.id) for at, p in box.expire(200)] == [(180, 1)]
    assert states(box) == [(1, GAME)]


def test_release_ends_the_minor_with_least_time_left_and_the_queue_moves_up() -> None:
    box = box_with(("home", ("minor",), 0), ("home", ("minor",), 20), ("home", ("major",), 25))
    released = box.release("home", 30)
    assert released is not None and released.id == 1  # 30 s left, the other has 50
    assert states(box) == [(2, RUNNING), (3, RUNNING)]
    assert box.penalties[1].since == 30


def test_release_of_a_double_minor_goes_on_with_its_second_minor() -> None:
    box = box_with(("home", ("minor", "minor"), 0))
    box.release("home", 20)
    p = box.penalties[0]
    assert p.state == RUNNING and p.left_at(20) == pytest.approx(60)
    assert box.next_expiry() == 80


def test_release_never_touches_a_major_or_the_other_team() -> None:
    box = box_with(("home", ("major",), 0), ("away", ("minor",), 0))
    assert box.release("home", 10) is None
    assert box.release("away", 10) is not None and box.penalties[-1].team == "home"


def test_remove_takes_back_the_latest_or_a_named_penalty() -> None:
    box = box_with(("home", ("minor",), 0), ("home", ("minor",), 0), ("home", ("major",), 0))
    assert box.remove("home", 1, 10).id == 1  # type: ignore[union-attr]
    assert states(box) == [(2, RUNNING), (3, RUNNING)]
    assert box.remove("home", None, 10).id == 3  # type: ignore[union-attr]
    assert box.remove("home", 9, 10) is None and box.remove("away", None, 10) is None


def test_frozen_between_periods_and_counting_again_from_the_next_start() -> None:
    box = box_with(("home", ("minor",), 450))
    box.freeze(480)  # the half ends with 30 s of it left
    assert box.penalties[0].left_at(None) == 30 and box.next_expiry() is None
    box.add("home", ("minor",), LENGTHS, None)  # entered during the break
    box.thaw(0)
    assert box.next_expiry() == 30 and box.penalties[1].since == 0


def test_a_correction_moves_running_penalties_by_the_same_amount_within_their_length() -> None:
    box = box_with(("home", ("minor",), 200), ("home", ("major",), 225), ("home", ("minor",), 225))
    box.shift(230, 220)  # the clock ran 10 s too long: set it back
    assert box.penalties[0].left_at(220) == pytest.approx(40)  # 30 s left → 40 s
    assert box.penalties[1].left_at(220) == pytest.approx(180)  # never more than its length
    box.shift(220, 260)  # 40 s forward: the minor is served, the waiting one takes its place
    assert [(at, p.id) for at, p in box.expire(260)] == [(260, 1)]
    assert states(box) == [(2, RUNNING), (3, RUNNING)]


def test_the_box_is_plain_data() -> None:
    box = box_with(("home", ("minor", "minor", "personal"), 10), ("away", ("major", "game"), 20))
    box.freeze(50)
    again = PenaltyBox.from_dict(json.loads(json.dumps(box.to_dict())))
    assert again == box


# ---------------------------------------------------------------- the shoot-out's score


def score_after(*attempts: tuple[str, bool], first: int = 3) -> ShootoutScore:
    score = ShootoutScore(first, 1)
    for team, scored in attempts:
        assert score.check(team) is None
        score.record(team, scored)
    return score


def test_the_first_series_stops_once_one_side_cannot_be_caught() -> None:
    assert score_after(("home", True), ("away", False), ("home", True)).winner() is None
    assert (
        score_after(("home", True), ("away", False), ("home", True), ("away", False)).winner()
        == "home"
    )  # 2:0, one left each


def test_after_three_each_drawn_one_each_until_one_side_alone_scores() -> None:
    draw = [
        ("home", True),
        ("away", True),
        ("home", False),
        ("away", False),
        ("home", False),
        ("away", False),
    ]
    assert score_after(*draw).winner() is None
    assert score_after(*draw, ("home", True)).winner() is None  # away still shoots
    assert score_after(*draw, ("home", True), ("away", True)).winner() is None
    assert (
        score_after(*draw, ("home", True), ("away", True), ("home", False), ("away", True)).winner()
        == "away"
    )


def test_teams_take_turns_and_nobody_shoots_once_it_is_decided() -> None:
    score = score_after(("away", True))
    assert "away's turn" not in (score.check("away") or "")
    assert "home's turn" in (score.check("away") or "")
    decided = score_after(("home", True), ("away", False), ("home", True), ("away", False))
    assert "decided" in (decided.check("home") or "")
    assert ShootoutScore.from_dict(json.loads(json.dumps(decided.to_dict()))) == decided
