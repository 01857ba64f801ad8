"""Properties that hold for any operator script: cues come once and in order, the play time
is the period's length plus the added time, and the melody covers exactly the final seconds,
its position in the tune always matching the time left."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Cue, Engine, State

ACTIONS = st.sampled_from(
    [
        Command(Action.PAUSE),
        Command(Action.RESUME),
        Command(Action.TOGGLE),
        Command(Action.ADD),
        Command(Action.ADD, -5.0),
        Command(Action.ADD, 2.5),
        Command(Action.ADD, -1.0),
        Command(Action.NEXT),
        Command(Action.START),
    ]
)
SCRIPTS = st.lists(st.tuples(st.floats(0, 8, allow_nan=False), ACTIONS), max_size=25)


def drive(
    p: profile.Profile, script: list[tuple[float, Command]], to_the_end: bool = True
) -> tuple[Engine, list[Cue], set[float]]:
    """Replay the script; between commands, probe the melody against the clock; then (if
    `to_the_end`) let the match run out. Also returns when time was taken back to zero."""
    cut_at: set[float] = set()
    eng = Engine(p)
    cues = eng.handle(Command(Action.START), 0.0)
    now = 0.0
    for delay, command in script:
        for probe in (now + delay / 3, now + 2 * delay / 3):
            cues += eng.advance(probe)
            check_melody(eng, cues, probe)
        now += delay
        cues += eng.advance(now)
        if eng.state is State.FINISHED:
            break  # START / NEXT would begin a new match: one match is the property's scope
        try:
            cues += eng.handle(command, now)
        except Refused as refused:
            cues += refused.cues
        clock = eng.m.clock
        taken_back = command.seconds is not None and command.seconds < 0
        if taken_back and clock is not None and clock.remaining(now) == 0:
            cut_at.add(now)  # the time was taken back to zero: the period ends early
        check_melody(eng, cues, now)
    if not to_the_end:
        return eng, cues, cut_at
    if eng.state is State.STOPPED:
        cues += eng.handle(Command(Action.RESUME), now)
    cues += eng.advance(now + 10_000)
    assert eng.state is State.FINISHED
    return eng, cues, cut_at


def check_melody(eng: Engine, cues: list[Cue], now: float) -> None:
    """While the clock runs inside the last `melody` seconds, the tune plays, at the point
    that matches the time left; otherwise it is silent."""
    period, clock = eng.period, eng.m.clock
    status = eng.status(now)
    remaining = clock.remaining(now) if clock is not None else None
    melody = [c for c in cues if c.name == "last30"]
    playing = bool(melody) and not melody[-1].stop
    inside = (
        period is not None
        and period.melody > 0
        and status.state == "running"
        and remaining is not None
        and 0 < remaining <= period.melody
    )
    if period is not None and remaining is not None and abs(remaining - period.melody) < 1e-9:
        return  # at the very instant the melody is due: either answer is right
    if status.state != "running" or remaining is None or remaining == 0:
        assert not playing or status.state == "running"
        return
    assert playing == inside, (now, status)
    if playing:
        position = melody[-1].offset + (now - melody[-1].due)
        assert position == pytest.approx(period.melody - remaining, abs=1e-6)


def check_cues(p: profile.Profile, cues: list[Cue], cut_at: set[float]) -> None:
    dues = [c.due for c in cues]
    assert dues == sorted(dues), "cues out of order"
    period = p.periods[0]
    # each mark sounds when the time left is its own; a mark sounds once, unless time added
    # later brings its time back (after any correction, a mark still ahead sounds)
    at = {m.count: m.remaining for m in period.marks}
    last_count, added_since = None, False
    for cue in cues:
        if cue.name == "time_added":
            added_since = True
        elif cue.name in ("minute", "third"):
            assert cue.remaining == pytest.approx(at[cue.count], abs=1e-6)
            assert last_count is None or added_since or cue.count < last_count
            last_count, added_since = cue.count, False
    assert [c.name for c in cues].count("start") == 1
    ends = [c for c in cues if c.name in ("end", "period_end")]
    assert len(ends) == 1 and cues[-1] is ends[0], "one end signal, and nothing after it"
    end = ends[0]
    starts = [c for c in cues if c.name == "last30" and not c.stop]
    stops = [c for c in cues if c.name == "last30" and c.stop]
    assert len(starts) == len(stops), "every melody start is stopped"
    # the last melody run ends exactly with the period, at the very end of the tune (unless
    # the operator ended the period early by taking the remaining time back)
    if not cut_at:
        last = starts[-1]
        assert stops[-1].due == end.due
        assert last.offset + (end.due - last.due) == pytest.approx(period.melody, abs=1e-6)


def played_time(cues: list[Cue]) -> float:
    """Play time as the sum of the clock's runs, read off the cues alone: each run begins
    with `start` or `resume` and ends with `pause` or the end signal."""
    total, since = 0.0, None
    for cue in cues:
        if cue.name in ("start", "resume"):
            since = cue.due
        elif cue.name in ("pause", "end", "period_end") and since is not None:
            total += cue.due - since
            since = None
    return total


def load_text(tmp_path_factory, name: str, text: str) -> profile.Profile:
    path = tmp_path_factory.mktemp("profiles") / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return profile.load(str(path))


@pytest.fixture(scope="module")
def short(tmp_path_factory) -> profile.Profile:
    from tests.conftest import SHORT

    return load_text(tmp_path_factory, "short", SHORT)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(script=SCRIPTS)
def test_any_script_on_a_short_match(short: profile.Profile, script) -> None:
    eng, cues, cut_at = drive(short, script)
    check_cues(short, cues, cut_at)
    end = next(c for c in cues if c.name == "end")
    added = eng.status(end.due).added
    assert added >= 0, "added time never goes below zero"
    assert end.play_time == pytest.approx(short.periods[0].length + added, abs=1e-6)
    assert played_time(cues) == pytest.approx(short.periods[0].length + added, abs=1e-6)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(st.tuples(st.floats(0, 60, allow_nan=False), ACTIONS), max_size=20))
def test_any_script_on_an_ithf_match(script) -> None:
    p = profile.load("ithf")
    eng, cues, cut_at = drive(p, script)
    check_cues(p, cues, cut_at)
    assert played_time(cues) == pytest.approx(300 + eng.status(0).added, abs=1e-6)


MULTI = """\
    prestart: 1
    period: {length: 10, count: 2, marks: 5, melody: 3, starts: auto}
    break: {length: 3, warning: 1}
    overtime: [{length: 6}]
    shootout: {first: 1, then: 1, shot: 2}
"""
ALL_ACTIONS = st.sampled_from([*ACTIONS.elements, Command(Action.FINISH)])


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> profile.Profile:
    return load_text(tmp_path_factory, "multi", MULTI)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(script=st.lists(st.tuples(st.floats(0, 6, allow_nan=False), ALL_ACTIONS), max_size=40))
def test_any_script_through_periods_breaks_overtime_and_shootout(multi, script) -> None:
    eng, cues, _ = drive(multi, script, to_the_end=False)
    dues = [c.due for c in cues]
    assert dues == sorted(dues), "cues out of order"
    for number in range(1, len(multi.periods) + 1):
        mine = [c for c in cues if c.period == number]
        assert [c.name for c in mine].count("start") <= 1
        ends = [c for c in mine if c.name in ("end", "period_end")]
        assert len(ends) <= 1
        if ends:  # the runs of the clock seen in the cues add up to the period's play time
            assert played_time(mine) == pytest.approx(ends[0].play_time, abs=1e-6)
            assert ends[0].remaining in (None, 0) or ends[0].name == "end"
    if eng.state is State.FINISHED:
        assert cues[-1].name == "end"
