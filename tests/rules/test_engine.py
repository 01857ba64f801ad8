"""The engine replayed in virtual time: every built-in profile's whole timeline, and the
operator's stops, resumes and added time, including inside the last 30 seconds."""

from __future__ import annotations

import pytest

from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, State
from timekeeper.rules.replay import parse_actions, replay
from timekeeper.show import prompts

START, NEXT, TOGGLE = Command(Action.START), Command(Action.NEXT), Command(Action.TOGGLE)
PAUSE, RESUME, FINISH = Command(Action.PAUSE), Command(Action.RESUME), Command(Action.FINISH)


def add(seconds: float | None = None) -> Command:
    return Command(Action.ADD, seconds)


def timeline(name: str, actions: str = "") -> list[tuple[float, str]]:
    """(seconds after the first start signal, cue) for a replayed match."""
    result = replay(profile.load(name), parse_actions(actions))
    out = []
    for cue in result.cues:
        label = cue.name + ("/stop" if cue.stop else "")
        label += f"x{cue.count}" if cue.count > 1 else ""
        out.append((round(cue.due - result.start, 6), label))
    return out


def melody(at: float, length: float = 30) -> list[tuple[float, str]]:
    return [(at, "last30"), (at + length, "last30/stop")]


def regulation(t0: float, length: float, minutes: int, end: str) -> list[tuple[float, str]]:
    marks = [
        (t0 + length - n * 60, f"minute{'x' + str(n) if n > 1 else ''}")
        for n in range(minutes, 0, -1)
    ]
    return [(t0, "start"), *marks, *melody(t0 + length - 30), (t0 + length, end)]


def ko_after_regulation() -> tuple[Engine, float]:
    """A pl-3x6-ko match at the end of regulation, drawn: waiting for the overtime."""
    eng = Engine(profile.load("pl-3x6-ko"))
    eng.handle(START, 0)
    t = 3 * 360 + 60
    eng.advance(t)
    return eng, t


def test_ithf_whole_match() -> None:
    assert timeline("ithf") == [
        (-20, "prestart"),
        (0, "start"),
        (60, "minutex4"),
        (120, "minutex3"),
        (180, "minutex2"),
        (240, "minute"),
        (270, "last30"),
        (300, "last30/stop"),
        (300, "end"),
    ]


def test_ithf_thirds_marks_at_1_40_and_3_20() -> None:
    assert timeline("ithf-thirds") == [
        (-20, "prestart"),
        (0, "start"),
        (100, "thirdx2"),
        (200, "third"),
        *melody(270),
        (300, "end"),
    ]


def test_ithf_playoff_adds_untimed_sudden_death_begun_by_next() -> None:
    # the replay's operator presses NEXT at once, and decides the sudden death at once
    assert timeline("ithf-playoff")[-4:] == [
        (300, "last30/stop"),
        (300, "end"),
        (300, "start"),
        (300, "end"),
    ]


def test_ithf_playoff_sudden_death_runs_until_the_operator_ends_it() -> None:
    eng = Engine(profile.load("ithf-playoff"))
    eng.handle(START, 0)
    eng.advance(320)
    assert eng.state is State.WAITING and eng.status(320).waiting_for == "next: overtime"
    assert [c.name for c in eng.handle(NEXT, 330)] == ["start"]
    assert eng.next_deadline() is None  # untimed: nothing will happen by itself
    eng.handle(PAUSE, 400)
    eng.handle(RESUME, 410)
    assert eng.status(450).play_time == pytest.approx(110)
    with pytest.raises(Refused):
        eng.handle(add(), 450)  # no time to add to an untimed overtime
    assert [c.name for c in eng.handle(NEXT, 460)] == ["end"]
    assert eng.state is State.FINISHED


def test_ithf_playoff_decided_in_regulation_is_finished_by_finish() -> None:
    eng = Engine(profile.load("ithf-playoff"))
    eng.handle(START, 0)
    eng.advance(320)
    assert eng.handle(FINISH, 321) == []  # the end signal has already sounded
    assert eng.state is State.FINISHED


def test_radegast_referee_starts_every_period() -> None:
    eng = Engine(profile.load("radegast"))
    assert [c.name for c in eng.handle(START, 0)] == ["start"]  # no pre-start in these rules
    cues = eng.advance(180)
    assert [c.name for c in cues][-2:] == ["last30", "period_end"] or cues[-1].name == "period_end"
    assert eng.state is State.WAITING
    assert eng.advance(1000) == []  # waits as long as the referee needs
    assert [c.name for c in eng.handle(NEXT, 1000)] == ["start"]
    assert eng.status(1000).part == "period 2"


def test_radegast_timeline() -> None:
    expected = []
    for i in range(3):
        expected += regulation(180 * i, 180, 2, "end" if i == 2 else "period_end")
    assert timeline("radegast") == expected


def test_radegast_playoff_three_minute_overtime_then_sudden_death() -> None:
    tl = timeline("radegast-playoff")
    assert tl[-8:] == [*regulation(540, 180, 2, "end"), (720, "start"), (720, "end")]


def test_pl_3x6_breaks_are_signalled_and_the_next_period_starts_itself() -> None:
    expected = []
    for i in range(3):
        t0 = i * 390
        expected += regulation(t0, 360, 5, "end" if i == 2 else "period_end")
        if i < 2:
            expected.append((t0 + 380, "break_warning"))
    assert timeline("pl-3x6") == expected


def test_pl_3x6_ko_overtime_then_shootout_of_15_second_shots() -> None:
    tl = timeline("pl-3x6-ko")
    ot = 3 * 360 + 2 * 30
    assert tl[-19:-13] == [
        (ot, "start"),
        (ot + 60, "minutex2"),
        (ot + 120, "minute"),
        *melody(ot + 150),
        (ot + 180, "period_end"),
    ]
    shots = tl[-14:]
    assert shots[0] == (ot + 180, "period_end")
    for k in range(6):  # three shots each, 15 s each, then the operator finishes
        assert shots[1 + 2 * k] == (ot + 180 + 15 * k, "shot_start")
        assert shots[2 + 2 * k] == (ot + 195 + 15 * k, "shot_end")
    assert tl[-1] == (ot + 270, "end")


def test_pl_3x6_final_has_3_plus_6_minutes_of_overtime_and_five_shots_each() -> None:
    p = profile.load("pl-3x6-final")
    assert [(x.name, x.length, x.end_cue) for x in p.periods[3:]] == [
        ("overtime 1", 180, "period_end"),
        ("overtime 2", 360, "period_end"),
    ]
    assert p.shootout is not None and (p.shootout.first, p.shootout.then) == (5, 1)
    tl = timeline("pl-3x6-final")
    assert sum(1 for _, c in tl if c == "shot_start") == 10


def test_shootout_series_counting_and_early_shots() -> None:
    eng, t = ko_after_regulation()
    eng.handle(NEXT, t)  # overtime
    eng.advance(t + 180)
    assert eng.state is State.SHOOTOUT
    for k in range(6):
        assert [c.name for c in eng.handle(NEXT, t + 200 + 10 * k)] == ["shot_start"]
        assert eng.handle(NEXT, t + 205 + 10 * k) == []  # taken inside the limit: no signal
    st = eng.status(t + 300)
    assert (st.shot, st.series) == (6, 2)
    assert [c.name for c in eng.handle(FINISH, t + 300)] == ["end"]


def test_sudden_death_goal_in_timed_overtime_ends_the_match() -> None:
    eng, t = ko_after_regulation()
    eng.handle(NEXT, t)
    cues = eng.handle(NEXT, t + 170)  # a goal with 10 s left: melody playing
    assert [(c.name, c.stop) for c in cues[-2:]] == [("last30", True), ("end", False)]
    assert eng.state is State.FINISHED


def test_next_does_not_end_a_regular_period_by_accident() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    with pytest.raises(Refused, match="still being played"):
        eng.handle(NEXT, 60)
    assert eng.state is State.RUNNING


# ---------------------------------------------------------------- stop, resume, added time


def test_pause_shifts_every_later_cue() -> None:
    tl = timeline("ithf", "100:pause,130:resume")
    assert (160, "minutex2") not in tl
    assert (210, "minutex2") in tl and (330, "end") in tl


def test_added_time_moves_the_end_and_marks_still_to_come() -> None:
    tl = timeline("ithf", "90:add=10")
    assert (60, "minutex4") in tl and (130, "minutex3") in tl
    assert tl[-3:] == [(280, "last30"), (310, "last30/stop"), (310, "end")]


def test_added_time_while_stopped() -> None:
    tl = timeline("ithf", "100:pause,110:add,110:add,120:resume")
    assert tl[-1] == (340, "end")


def test_pause_inside_last_30_resumes_the_melody_where_it_was() -> None:
    tl = timeline("ithf", "280:pause,300:resume")
    assert tl[-7:] == [
        (270, "last30"),
        (280, "last30/stop"),
        (280, "pause"),
        (300, "resume"),
        (300, "last30"),
        (320, "last30/stop"),
        (320, "end"),
    ]
    result = replay(profile.load("ithf"), parse_actions("280:pause,300:resume"))
    resumed = [c for c in result.cues if c.name == "last30" and not c.stop][-1]
    assert resumed.offset == pytest.approx(10)  # 10 s of the tune were played before the stop
    assert result.cues[-1].due - result.start == pytest.approx(320)


def test_added_time_above_30_s_stops_the_melody_and_it_starts_again_at_30() -> None:
    result = replay(profile.load("ithf"), parse_actions("285:add=20"))
    mel = [
        (round(c.due - result.start, 6), c.stop, c.offset)
        for c in result.cues
        if c.name == "last30"
    ]
    assert mel == [(270, False, 0), (285, True, 0), (290, False, 0), (320, True, 0)]


def test_small_added_time_inside_the_melody_moves_its_position() -> None:
    result = replay(profile.load("ithf"), parse_actions("290:add=5"))
    mel = [
        (round(c.due - result.start, 6), c.stop, round(c.offset, 6))
        for c in result.cues
        if c.name == "last30"
    ]
    # 10 s left → 15 s left: the tune jumps back to where 15 s are left
    assert mel == [(270, False, 0), (290, True, 0), (290, False, 15), (305, True, 0)]


def test_taking_time_back_never_goes_below_what_was_added() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    eng.advance(40)
    with pytest.raises(Refused, match="no added time"):
        eng.handle(add(-10), 50)
    eng.handle(add(), 50)
    eng.handle(add(-30), 60)  # only the 10 s that were added come back
    assert eng.status(60).added == 0
    assert eng.status(60).remaining == pytest.approx(260)  # 40 s played since the start at 20


def test_marks_jumped_over_by_taking_time_back_are_not_sounded_late() -> None:
    tl = timeline("ithf", "100:add=30,125:add=-30")
    # 30 s added at 1:40 (3:50 left); at 2:05 taking them back jumps from 3:05 to 2:35 left,
    # over the 3-minute mark: it is passed silently, the later marks keep their places
    names = [c for _, c in tl]
    assert "minutex3" not in names
    assert (180, "minutex2") in tl and names.count("minutex2") == 1


def test_stop_and_resume_are_refused_when_they_do_not_apply() -> None:
    eng = Engine(profile.load("ithf"))
    with pytest.raises(Refused):
        eng.handle(PAUSE, 0)
    eng.handle(START, 0)
    with pytest.raises(Refused, match="counting down"):
        eng.handle(NEXT, 1)
    with pytest.raises(Refused):
        eng.handle(RESUME, 25)


def test_refused_command_keeps_the_cues_that_came_due_before_it() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    with pytest.raises(Refused) as caught:
        eng.handle(RESUME, 81)  # 1:01 of play: the start and the 4-minute mark came due
    assert [c.name for c in caught.value.cues] == ["start", "minute"]


def test_reset_stops_the_melody_and_returns_to_idle() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    eng.advance(300)
    cues = eng.handle(Command(Action.RESET), 300)
    assert [(c.name, c.stop) for c in cues] == [("last30", True)]
    assert eng.state is State.IDLE and eng.next_deadline() is None


def test_start_after_the_end_begins_a_new_match() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    eng.advance(400)
    assert eng.state is State.FINISHED
    assert [c.name for c in eng.handle(START, 500)] == ["prestart"]
    assert eng.status(500).added == 0 and eng.status(500).period == 0


def test_cues_are_due_at_exact_deadlines_however_late_the_engine_is_told() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 1000.0)
    cues = eng.advance(5000.0)  # told once, hours late
    assert [c.due - 1020 for c in cues] == [0, 60, 120, 180, 240, 270, 300, 300]


def test_play_time_of_the_end_cue_is_length_plus_added() -> None:
    result = replay(profile.load("ithf"), parse_actions("10:add=7,20:pause,25:add,30:resume"))
    assert result.cues[-1].name == "end" and result.cues[-1].play_time == pytest.approx(317)


def test_add_is_signed_and_its_step_is_the_engines_profiles() -> None:
    """`add -` (the `-` key, the SUBTRACT button) takes one step of this engine's profile
    back, whatever a control was started with; `add -10` is ten seconds back, as before."""
    back = Command.parse("add -")
    assert back == Command(Action.ADD, sign=-1) and Command.parse(str(back)) == back
    assert str(back) == "add=-" and Command.parse("add -10") == Command(Action.ADD, -10.0)
    with pytest.raises(ValueError, match="sign"):
        Command(Action.ADD, 10.0, sign=-1)  # an amount carries its own sign
    for name, step in (("ithf", 10.0), ("hokejbal", 1.0)):
        eng = Engine(profile.load(name))
        eng.handle(START, 0)
        eng.advance(30.0)
        eng.handle(Command(Action.ADD), 30.0)
        eng.handle(Command(Action.ADD), 31.0)
        assert eng.status(31.0).added == 2 * step, name
        eng.handle(back, 32.0)
        assert eng.status(32.0).added == step, name


def test_status_reports_the_running_match() -> None:
    eng = Engine(profile.load("pl-3x6"))
    eng.handle(START, 0)
    st = eng.status(100)
    assert (st.state, st.period, st.periods, st.part) == ("running", 1, 3, "period 1")
    assert st.play_time == pytest.approx(100) and st.remaining == pytest.approx(260)
    eng.advance(365)
    st = eng.status(365)
    assert st.state == "break" and st.countdown == pytest.approx(25)
    assert st.waiting_for == "next: period 2"


def test_next_during_a_break_starts_the_next_period_early() -> None:
    eng = Engine(profile.load("pl-3x6"))
    eng.handle(START, 0)
    eng.advance(365)
    assert [c.name for c in eng.handle(NEXT, 370)] == ["start"]
    assert eng.status(370).period == 2


def test_next_after_the_end_does_not_start_a_new_match() -> None:
    """One press too many after the deciding goal must not sound a start in the hall."""
    eng = Engine(profile.load("ithf"))
    with pytest.raises(Refused, match="has not begun") as caught:
        eng.handle(NEXT, 0)
    assert str(prompts.complete(caught.value, eng.status(0))) == (
        "the match has not begun; START/NEXT (s/Enter, ctl start) begins it"
    )
    eng.handle(START, 0)
    eng.advance(400)
    with pytest.raises(Refused, match="the match is over"):
        eng.handle(NEXT, 401)
    assert eng.state is State.FINISHED


def test_start_never_ends_a_sudden_death_or_a_shot() -> None:
    eng, t = ko_after_regulation()
    assert [c.name for c in eng.handle(START, t)] == ["start"]  # START starts the overtime
    with pytest.raises(Refused, match="already started"):
        eng.handle(START, t + 10)
    eng.advance(t + 180)
    eng.handle(START, t + 200)  # a shot
    with pytest.raises(Refused, match="already started"):
        eng.handle(START, t + 201)
    assert eng.state is State.SHOT


def test_status_after_a_shootout_says_shoot_out() -> None:
    eng, t = ko_after_regulation()
    eng.handle(NEXT, t)
    eng.advance(t + 180)
    eng.handle(NEXT, t + 190)
    eng.handle(FINISH, t + 195)
    assert eng.status(t + 200).part == "shoot-out"


def test_actions_script_forms() -> None:
    steps = parse_actions("2:15:pause, 140:resume;200:add=-10")
    assert [(s.at, str(s.command)) for s in steps] == [
        (135, "pause"),
        (140, "resume"),
        (200, "add=-10"),
    ]
    for bad in ("pause", "5:60:pause", "1:2:3:pause", "10:jump", "10:pause=3", "10:quit"):
        with pytest.raises(ValueError):
            parse_actions(bad)


@pytest.mark.parametrize("text", ["add nan", "add inf", "add 1e300", "add -3601"])
def test_absurd_added_time_is_refused_before_it_reaches_the_clock(text: str) -> None:
    with pytest.raises(ValueError, match="add takes"):  # a plain number of at most 3600
        Command.parse(text)
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    with pytest.raises(Refused, match="at most 3600"):
        eng.handle(Command(Action.ADD, float(text.split()[1])), 30)


def test_a_script_may_reset_and_the_replay_begins_again() -> None:
    tl = timeline("ithf", "120:reset")
    assert [c for _, c in tl].count("prestart") == 2 and tl[-1] == (440, "end")


def test_a_scripted_next_takes_over_the_press_a_finish_does_not() -> None:
    waited = timeline("radegast", "9:00:next")  # the referee starts period 2 at 9:00
    assert (540, "start") in waited and (180, "start") not in waited
    # decided in the sudden death; a finish in the 3-minute overtime is refused
    decided = timeline("radegast-playoff", "3:00:next,6:00:next,9:00:next,12:00:next,12:30:finish")
    assert decided[-1] == (750, "end")
