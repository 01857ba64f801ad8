"""The rules' last gaps: a goal in a sudden death ends the match on the spot, and
an overtime (or a shoot-out) is played only after a draw. Each test names its seed's rule
and quotes its words (the English digest: ../shared/spec/RULES.md). The engine is told the
time; nothing sleeps."""

from __future__ import annotations

import pytest

from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, State
from timekeeper.rules.replay import parse_actions, replay
from timekeeper.show.prompts import PRESS_FINISH, complete, what_now


def cmd(text: str) -> Command:
    return Command.parse(text)


def play(eng: Engine, *steps: tuple[float, str]) -> list[tuple[float, str]]:
    cues = []
    for at, text in steps:
        cues += eng.handle(cmd(text), at)
    return [(c.due, c.name) for c in cues if not c.stop]


def started(name: str) -> Engine:
    eng = Engine(profile.load(name))
    eng.handle(cmd("start"), 0)
    if eng.profile.prestart:
        eng.advance(eng.profile.prestart)
    return eng


def to_the_end_of_regulation(eng: Engine, t: float) -> float:
    """Every part of regulation played out from `t` (NEXT through the breaks): the engine
    waits at regulation's end; the time it got there."""
    while eng.state is not State.WAITING or eng.m.index + 1 < eng.profile.regulation:
        if eng.state in (State.WAITING, State.BREAK):
            eng.handle(cmd("next"), t)
        next_t = eng.next_deadline()
        assert next_t is not None
        t = next_t
        eng.advance(t)
    return t


def to_overtime(name: str, drawn: bool = True) -> tuple[Engine, float]:
    """A match of `name` played to the end of regulation (1:1 if `drawn`, else no goals
    entered), and its overtime started: the engine and the overtime's start."""
    eng = started(name)
    t0 = eng.profile.prestart
    if drawn:
        play(eng, (t0 + 10, "goal home"), (t0 + 20, "goal away"))
    t = to_the_end_of_regulation(eng, t0)
    eng.handle(cmd("next"), t)
    assert eng.period is not None and eng.period.overtime
    return eng, t


# ---------------------------------------------------------------- 1. the goal ends it


@pytest.mark.parametrize(
    "name", ["ithf-playoff", "pl-3x6-ko", "pl-3x6-final", "hokejbal-playoff", "hokejbal-group-ot"]
)
def test_a_goal_in_a_sudden_death_ends_the_match_with_the_end_signal(name: str) -> None:
    """Polish III.2 (seed 002): "Jeżeli jedna drużyna strzeli gola następuje zakończenie
    meczy" — if one team scores, the match ends; XVI.1: "drużyna która zdobędzie w dogrywce
    bramkę wygrywa mecz". Slovak rule 1 (seed 003): "V predĺžení sa rozhoduje gólom" — the
    overtime is decided by a goal. ITHF 4.8 (seed 000): "Vítězem se stane ten hráč, který
    jako první vstřelí platnou branku" — the first valid goal wins."""
    eng, t = to_overtime(name)
    cues = play(eng, (t + 40, "goal away"))
    assert cues == [(t + 40, "goal"), (t + 40, "end")]  # the end signal at once
    assert eng.state is State.FINISHED and eng.next_deadline() is None
    assert eng.status(t + 50).score == {"home": 1, "away": 2}
    with pytest.raises(Refused, match="over"):
        eng.handle(cmd("next"), t + 60)  # no shoot-out follows


def test_a_goal_entered_while_the_clock_is_stopped_ends_the_sudden_death_then() -> None:
    """Slovak rule 1: "V predĺžení sa rozhoduje gólom „rýchla smrť“" (net time: the clock
    stops at the whistle, the goal is entered while it is stopped)."""
    eng, t = to_overtime("hokejbal-playoff")
    play(eng, (t + 30, "pause"))
    assert play(eng, (t + 35, "goal home 9")) == [(t + 35, "goal"), (t + 35, "end")]
    assert eng.state is State.FINISHED


def test_a_penalty_shot_scored_in_a_sudden_death_ends_the_match() -> None:
    """Slovak rule 1: the overtime "is decided by a goal"; a penalty shot's goal is one."""
    eng, t = to_overtime("hokejbal-playoff")
    play(eng, (t + 30, "pause"), (t + 31, "penalty-shot away"))
    assert play(eng, (t + 40, "attempt away goal")) == [
        (t + 40, "shot_end"),
        (t + 40, "goal"),
        (t + 40, "end"),
    ]
    assert eng.state is State.FINISHED


def test_the_radegast_three_minute_overtime_is_played_in_full_then_sudden_death() -> None:
    """Radegast play-off (seed 004): "ve vyřazovací části se nejdříve prodlužuje 1x3 minuty a
    v případě stále nerozhodného výsledku se hraje na takzvanou „náhlou smrt“ (tzn. hráč,
    který vstřelí první branku, postupuje do další fáze turnaje a utkání končí)"."""
    eng, t = to_overtime("radegast-playoff")
    assert play(eng, (t + 30, "goal home")) == [(t + 30, "goal")]  # no sudden death
    assert eng.state is State.RUNNING
    play(eng, (t + 60, "goal away"))  # 2:2, the 3 minutes played in full
    eng.advance(t + 180)
    assert play(eng, (t + 190, "next")) == [(t + 190, "start")]  # still drawn: sudden death
    assert eng.period is not None and eng.period.length is None
    assert play(eng, (t + 250, "goal home")) == [(t + 250, "goal"), (t + 250, "end")]
    assert eng.state is State.FINISHED


def test_a_goal_in_regulation_ends_nothing() -> None:
    eng = started("pl-3x6-ko")
    assert play(eng, (10, "goal home")) == [(10, "goal")]
    assert eng.state is State.RUNNING


def test_undo_goal_of_the_deciding_goal_reopens_the_sudden_death_where_it_stopped() -> None:
    """Our choice where the rules are silent: the deciding goal was entered by mistake, so
    taking it back puts the match back into its sudden death, the clock stopped at the
    goal's time (the end signal has sounded: the referee restarts play); RESUME goes on and
    the overtime's end still comes at its time."""
    eng, t = to_overtime("pl-3x6-ko")
    play(eng, (t + 100, "goal home"))
    assert play(eng, (t + 105, "undo-goal home")) == []
    assert eng.state is State.STOPPED
    s = eng.status(t + 106)
    assert s.score == {"home": 1, "away": 1} and s.play_time == 100 and s.remaining == 80
    cues = play(eng, (t + 110, "resume"))
    cues += [(c.due, c.name) for c in eng.advance(t + 200)]
    assert (t + 190, "period_end") in cues and eng.state is State.SHOOTOUT


def test_undo_goal_of_an_earlier_goal_after_the_end_keeps_the_match_over() -> None:
    eng, t = to_overtime("pl-3x6-ko")
    play(eng, (t + 100, "goal home"), (t + 110, "undo-goal away"))
    assert eng.state is State.FINISHED and eng.status(t + 110).score == {"home": 2, "away": 0}


def test_undo_of_a_sudden_death_goal_gives_the_penalties_their_time_back() -> None:
    eng, t = to_overtime("hokejbal-playoff")
    play(eng, (t + 10, "penalty home minor"))
    play(eng, (t + 30, "goal away"), (t + 40, "undo-goal away"), (t + 41, "resume"))
    cues = [(c.due, c.name) for c in eng.advance(t + 120)]
    assert (t + 81, "penalty_end") in cues  # 20 s served before the goal, 40 s after


@pytest.mark.parametrize(
    ("name", "sudden"),
    [
        ("ithf-playoff", [True]),  # ITHF 4.8, untimed
        ("pl-3x6-ko", [True]),  # III.2
        ("pl-3x6-final", [True, True]),  # XVI.1b: 3 + 6 minutes, "nagła śmierć"
        ("hokejbal-playoff", [True]),  # rule 1: 1 × 5 min "decided by a goal"
        ("hokejbal-group-ot", [True]),
        ("radegast-playoff", [False, True]),  # 1 × 3 min in full, then sudden death
        ("ithf", []),
        ("ithf-thirds", []),
        ("pl-3x6", []),
        ("radegast", []),
        ("hokejbal", []),
    ],
)
def test_every_built_in_profile_says_which_overtime_is_sudden_death(
    name: str, sudden: list[bool]
) -> None:
    p = profile.load(name)
    assert [x.sudden_death for x in p.periods if x.overtime] == sudden


# ---------------------------------------------------------------- 2. overtime only on a draw


@pytest.mark.parametrize(
    "name", ["ithf-playoff", "pl-3x6-ko", "hokejbal-playoff", "radegast-playoff"]
)
def test_after_a_decided_regulation_next_is_refused_and_finish_ends_it(name: str) -> None:
    """ITHF 4.8: "Skončí-li zápas play-off remízou, pak o vítězi rozhodne prodloužení" — only
    a drawn match goes to overtime; Polish III.2 "w przypadku nie roztrzygięcia wyniku"; Slovak
    rule 1 "Ak je po normálnom hracom čase stav nerozhodný"; Radegast "v případě stále
    nerozhodného výsledku"."""
    eng = started(name)
    t0 = eng.profile.prestart
    play(eng, (t0 + 10, "goal home"), (t0 + 20, "goal away"), (t0 + 30, "goal home"))
    t = to_the_end_of_regulation(eng, t0)
    with pytest.raises(Refused, match="the score is 2:1, not a draw: no overtime") as refused:
        eng.handle(cmd("next"), t + 1)
    s = eng.status(t + 1)
    assert PRESS_FINISH in complete(refused.value, s).prompt
    assert s.waiting_for == "finish" and "2:1" in what_now(s) and PRESS_FINISH in what_now(s)
    with pytest.raises(Refused, match="not a draw"):
        eng.handle(cmd("start"), t + 1)  # START/NEXT, too
    assert eng.handle(cmd("finish"), t + 2) == [] and eng.state is State.FINISHED


def test_a_draw_still_goes_to_overtime() -> None:
    """ITHF 4.8: "Skončí-li zápas play-off remízou" — a drawn play-off match goes on."""
    eng, _ = to_overtime("ithf-playoff")  # 1:1
    assert eng.state is State.RUNNING


def test_a_box_whose_operator_enters_no_goals_goes_on_by_hand() -> None:
    """A box whose operator enters no goals keeps working as it always did."""
    eng, _ = to_overtime("pl-3x6-ko", drawn=False)  # NEXT went on: no goals kept
    assert eng.state is State.RUNNING


def test_a_decided_score_at_the_end_of_a_timed_sudden_death_plays_no_shoot_out() -> None:
    """Our choice: where the end of a part goes straight to the
    shoot-out, a decided score ends the match with the end signal instead. Here regulation
    was 1:1 and a goal of it was taken back during the overtime (Polish III.3: penalty shots
    only "if still undecided")."""
    eng, t = to_overtime("pl-3x6-ko")
    play(eng, (t + 20, "undo-goal away"))  # a correction of regulation's score: 1:0
    assert eng.state is State.RUNNING
    cues = [(c.due, c.name) for c in eng.advance(t + 200) if not c.stop]
    assert cues[-1] == (t + 180, "end") and eng.state is State.FINISHED


def test_a_decided_score_between_two_overtime_parts_plays_no_further_part() -> None:
    """Radegast play-off: sudden death only "v případě stále nerozhodného výsledku"."""
    eng, t = to_overtime("radegast-playoff")
    play(eng, (t + 30, "goal home"))
    eng.advance(t + 180)
    with pytest.raises(Refused, match="2:1, not a draw: no overtime 2"):
        eng.handle(cmd("next"), t + 181)
    eng.handle(cmd("finish"), t + 182)
    assert eng.state is State.FINISHED


def test_a_render_with_a_decided_regulation_ends_without_overtime() -> None:
    result = replay(
        profile.load("ithf-playoff"), parse_actions("20:goal=home,95:goal=away,130:goal=home")
    )
    names = [c.name for c in result.cues if not c.stop]
    assert names.count("start") == 1 and names[-1] == "end"
    assert result.presses[-1].command == Command(Action.FINISH)
    assert result.end - result.start == 300


def test_a_render_with_a_goal_in_the_sudden_death_ends_on_it() -> None:
    result = replay(
        profile.load("pl-3x6-ko"), parse_actions("1:00:goal=home,2:00:goal=away,20:00:goal=away")
    )
    tail = [(round(c.due - result.start, 3), c.name) for c in result.cues if not c.stop][-2:]
    assert tail == [(1200, "goal"), (1200, "end")]
    assert "shot_start" not in [c.name for c in result.cues]
