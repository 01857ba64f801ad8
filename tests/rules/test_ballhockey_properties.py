"""Properties of ball-hockey matches under any operator script: penalties never run unless
the game clock does, never more than two run per team and none waits while a place is free,
every penalty ends at most once, its time left stays within its length, cues come in order
and the match still ends."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, State

SHORT_BALL = """\
    title: short ball hockey
    extends: hokejbal
    period:
      length: 60
    break:
      length: 10
    penalties:
      power_play_goal_ends_minor: true   # the setting's own paths, too (off by default)
      minor: 5
      major: 12
      personal: 20
      match: 15
    timeout:
      length: 3
"""
TEXTS = [
    "pause",
    "resume",
    "toggle",
    "next",
    "penalty home minor",
    "penalty away minor",
    "penalty home major",
    "penalty away minor+minor+personal",
    "penalty home major+game",
    "penalty away game",
    "release home",
    "release away",
    "remove home",
    "remove away 2",
    "timeout home",
    "timeout away",
    "set 0:30",
    "set 0:59",
    "add 3",
    # the score: power-play goals end minors, undo-goal gives them back; match penalties,
    # penalty shots
    "goal home",
    "goal away 9",
    "undo-goal home",
    "undo-goal away",
    "penalty away match",
    "penalty-shot home",
    "attempt home goal",
    "attempt home miss",
]
COMMANDS = st.sampled_from([Command.parse(t) for t in TEXTS])
SCRIPTS = st.lists(st.tuples(st.floats(0, 6, allow_nan=False), COMMANDS), max_size=40)


@pytest.fixture(scope="module")
def ball(tmp_path_factory) -> profile.Profile:
    import textwrap

    path = tmp_path_factory.mktemp("ball") / "ball.yaml"
    path.write_text(textwrap.dedent(SHORT_BALL), encoding="utf-8")
    return profile.load(str(path))


def check_box(eng: Engine, now: float) -> dict[int, float]:
    """The box's invariants at `now`; the time left of each running penalty by id."""
    teams = eng.status(now).teams
    assert teams is not None
    left = {}
    for team in teams.values():
        running = [p for p in team.penalties if p.state == "running"]
        waiting = [p for p in team.penalties if p.state == "waiting"]
        assert len(running) <= 2 and (not waiting or len(running) == 2)
        for p in running + waiting:
            assert p.remaining is not None and 0 <= p.remaining <= 20 * 3 + 1e-6
        left.update({p.id: p.remaining for p in running})
    return left


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=SCRIPTS)
def test_any_script_keeps_the_box_honest(ball: profile.Profile, script) -> None:
    eng = Engine(ball)
    cues = eng.handle(Command(Action.START), 0.0)
    now = 0.0
    for delay, command in script:
        before, state = check_box(eng, now), eng.state
        new = eng.advance(mid := now + delay / 2)
        cues += new
        if state is not State.RUNNING and not new and eng.state is state:
            assert check_box(eng, mid) == before  # nothing runs while the clock stands
        now += delay
        cues += eng.advance(now)
        if eng.state is State.FINISHED:
            break
        try:
            cues += eng.handle(command, now)
        except Refused as refused:
            cues += refused.cues
        check_box(eng, now)
    if eng.state is State.STOPPED:
        if eng.status(now).penalty_shot is not None:  # taken, no result entered: NEXT ends it
            cues += eng.handle(Command(Action.NEXT), now)
        cues += eng.handle(Command(Action.RESUME), now)
    for _ in range(3):  # the break, the second half: the replay's operator presses NEXT
        cues += eng.advance(now := now + 1000)
        if eng.state is State.WAITING:
            cues += eng.handle(Command(Action.NEXT), now)
    assert eng.state is State.FINISHED
    dues = [c.due for c in cues]
    assert dues == sorted(dues)
    ended = [c.detail.split()[1] for c in cues if c.name == "penalty_end"]
    assert len(ended) == len(set(ended))  # every penalty ends once at most
