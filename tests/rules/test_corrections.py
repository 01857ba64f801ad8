"""Every correction of the game clock (SET, ADD either way, a match restored from its journal)
follows one rule for the marks and moves the penalties with the clock; FINISH is taken where
the rules take it, in the live engine and in a scripted render alike."""

from __future__ import annotations

import pytest

from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine
from timekeeper.rules.replay import ScriptError, parse_actions, replay
from timekeeper.show import timeline

START, NEXT, FINISH = Command(Action.START), Command(Action.NEXT), Command(Action.FINISH)
STOP, GO = Command(Action.PAUSE), Command(Action.RESUME)


def cmd(text: str) -> Command:
    return Command.parse(text)


def started(name: str) -> Engine:
    eng = Engine(profile.load(name))
    eng.handle(START, 0)
    if eng.profile.prestart:
        eng.advance(eng.profile.prestart)
    return eng


def marks_after(eng: Engine, resume_at: float, until: float) -> list[tuple[float, str, int]]:
    cues = eng.handle(GO, resume_at) + eng.advance(until)
    return [(c.due, c.name, c.count) for c in cues if c.name in ("minute", "third")]


# ---------------------------------------------------------------- 11.1 one rule for the marks


@pytest.mark.parametrize(
    ("name", "correction", "left", "cue", "count"),
    [
        ("ithf", "set 3:00", 180, "minute", 3),
        ("ithf", "set 3:00.0", 180, "minute", 3),
        ("ithf-thirds", "set 3:20", 200, "third", 2),
        ("ithf-thirds", "set 1:40", 100, "third", 1),
        ("ithf", "add -20", 180, "minute", 3),  # 20 s added before, taken back to exactly 3:00
        ("ithf", "add 10", 180, "minute", 3),  # 2:50 left, 10 s of lost time given back
    ],
)
def test_a_correction_landing_exactly_on_a_mark_sounds_it_as_play_resumes(
    name, correction, left, cue, count
) -> None:
    eng = started(name)
    t0 = eng.profile.prestart
    if correction == "add -20":
        eng.handle(cmd("add 20"), t0 + 50)  # 5:20 in all; stopped with 3:20 left below
        eng.handle(STOP, t0 + 120)
    elif correction == "add 10":
        eng.handle(STOP, t0 + 130)  # 2:50 left: the 3-minute mark has sounded
    else:
        eng.handle(STOP, t0 + 100)  # 3:20 left
    eng.handle(cmd(correction), t0 + 200)
    assert eng.status(t0 + 200).remaining == left
    heard = marks_after(eng, t0 + 300, t0 + 300 + left)
    assert heard[0] == (t0 + 300, cue, count)  # at the very instant play resumes


def test_marks_passed_by_a_correction_are_not_sounded_late_and_those_ahead_all_sound() -> None:
    eng = started("ithf")
    eng.handle(STOP, 20 + 30)  # 4:30 left
    eng.handle(cmd("set 2:30"), 60)  # the 4- and 3-minute marks are passed
    assert marks_after(eng, 70, 400) == [(100, "minute", 2), (160, "minute", 1)]


def test_a_match_restored_exactly_on_a_mark_sounds_it_when_resumed() -> None:
    eng = started("ithf")
    eng.handle(STOP, 20 + 100)
    eng.handle(cmd("set 3:00"), 130)
    snap = eng.snapshot(130)
    again = Engine(profile.load("ithf"))
    again.restore(snap)
    assert marks_after(again, 500, 700)[0] == (500, "minute", 3)


# ---------------------------------------------------------------- 11.2 corrections move penalties


def ball_hockey_with_a_minor() -> Engine:
    eng = started("hokejbal")
    eng.handle(cmd("penalty home minor"), 100)
    eng.handle(STOP, 120)  # 6:00 left, the minor has 40 s left
    return eng


def home_left(eng: Engine, now: float) -> list[float | None]:
    teams = eng.status(now).teams
    assert teams is not None
    return [p.remaining for p in teams["home"].penalties]


@pytest.mark.parametrize("correction", ["set 6:20", "add 20"])
def test_set_and_add_move_a_running_penalty_alike(correction) -> None:
    eng = ball_hockey_with_a_minor()
    eng.handle(cmd(correction), 125)  # the clock ran 20 s while play was stopped
    assert eng.status(125).remaining == 380 and home_left(eng, 125) == [60]
    eng.handle(GO, 130)
    cues = eng.advance(2000)
    assert [(c.name, c.due) for c in cues][:2] == [("penalty_end", 190), ("period_end", 510)]


@pytest.mark.parametrize("correction", ["set 5:50", "add -10"])
def test_time_is_taken_back_in_a_stopped_time_game_and_penalties_go_with_it(correction) -> None:
    eng = ball_hockey_with_a_minor()
    eng.handle(cmd(correction), 125)  # the clock missed 10 s of play
    assert eng.status(125).remaining == 350 and home_left(eng, 125) == [30]
    assert eng.status(125).added == 0
    eng.handle(GO, 130)
    assert [(c.name, c.due) for c in eng.advance(2000)][:2] == [
        ("penalty_end", 160),
        ("period_end", 480),
    ]


def test_taking_time_back_never_goes_below_zero_and_ends_what_it_serves() -> None:
    eng = ball_hockey_with_a_minor()
    assert eng.handle(cmd("add -3600"), 125) == []  # silently: play is stopped
    assert eng.status(125).remaining == 0 and home_left(eng, 125) == []
    with pytest.raises(Refused, match="no time left to take back"):
        eng.handle(cmd("add -1"), 126)
    assert [c.name for c in eng.handle(GO, 130)] == ["period_end"]


def test_taking_time_back_while_the_clock_runs_ends_a_served_penalty_on_the_ice() -> None:
    eng = started("hokejbal")
    eng.handle(cmd("penalty home minor"), 100)
    cues = eng.handle(cmd("add -50"), 150)  # 10 s left in the minor
    assert [(c.name, c.due) for c in cues] == [("penalty_end", 150)]


def test_gross_time_still_takes_back_only_added_time() -> None:
    eng = started("ithf")
    with pytest.raises(Refused, match="no added time to take back"):
        eng.handle(cmd("add -5"), 40)


# ---------------------------------------------------------------- 11.4 FINISH in a timed overtime


def test_finish_is_refused_in_an_overtime_played_in_full() -> None:
    eng = started("radegast-playoff")
    for t in (180, 360):
        eng.advance(t)
        eng.handle(NEXT, t)
    eng.advance(540)
    eng.handle(NEXT, 540)  # the 3-minute overtime: played in full (seed 004)
    with pytest.raises(Refused, match="not sudden death"):
        eng.handle(FINISH, 600)
    eng.advance(720)
    eng.handle(NEXT, 720)  # still drawn: sudden death
    assert [c.name for c in eng.handle(FINISH, 750)] == ["end"]


# ---------------------------------------------------------------- 11.3 FINISH in a render


def cue_names(name: str, actions: str) -> list[tuple[float, str]]:
    result = replay(profile.load(name), parse_actions(actions))
    return [(round(c.due - result.start, 6), c.name) for c in result.cues if not c.stop]


def test_a_scripted_finish_after_regulation_ends_the_match_without_an_overtime() -> None:
    tl = cue_names("ithf-playoff", "305:finish")
    assert tl[-1] == (300, "end") and [n for _, n in tl].count("start") == 1


def test_a_scripted_finish_during_a_shot_keeps_that_shots_start_signal() -> None:
    """A finish during a shot ends it; its start signal sounded before (XV.18, seed
    002: "each penalty shot has a 15-second limit"), so the render and `show` keep it.
    pl-3x6-ko: regulation ends at 1140, the overtime at 1320; shots of 15 s from there."""
    tl = cue_names("pl-3x6-ko", "23:01:finish")
    shots = [t for t, n in tl if n == "shot_start"]
    assert shots == [1320, 1335, 1350, 1365, 1380] and tl[-1] == (1381, "end")
    assert "shot_end" not in [n for t, n in tl if t > 1380]  # the finish ended the shot
    assert timeline.describe(profile.load("pl-3x6-ko"), parse_actions("23:01:finish"))[-3:] == [
        "     23:00          so shot_start     shot starts",
        "     23:01            (operator: FINISH)",
        "     23:01          so end            final signal",
    ]


def test_a_scripted_finish_as_a_shot_would_start_starts_no_further_shot() -> None:
    tl = cue_names("pl-3x6-ko", "23:00:finish")
    shots = [t for t, n in tl if n == "shot_start"]
    assert len(shots) == 4 and tl[-2:] == [(1380, "shot_end"), (1380, "end")]


def test_play_goes_on_before_a_later_finish_when_the_script_says_next() -> None:
    tl = cue_names("radegast-playoff", "3:00:next,6:00:next,9:00:next,12:00:next,12:30:finish")
    assert tl[-1] == (750, "end") and [n for _, n in tl].count("start") == 5


def test_a_scripted_finish_where_the_rules_refuse_it_is_an_error_of_the_script() -> None:
    with pytest.raises(ScriptError, match="not sudden death"):
        cue_names("radegast-playoff", "3:00:next,6:00:next,9:00:next,9:30:finish")


def test_a_timed_overtime_over_before_the_finish_is_played_first() -> None:
    tl = cue_names("radegast-playoff", "12:30:finish")  # drawn after the 3-minute overtime
    assert [n for _, n in tl].count("start") == 4 and tl[-1] == (720, "end")
