"""The operator's prompts (show/prompts.py): the one place that names the controls, for a
refusal and for a match resumed from its journal."""

from __future__ import annotations

import pytest

from timekeeper.rules import profile
from timekeeper.rules.commands import Command, Hint, Refused
from timekeeper.rules.engine import Engine, Snapshot
from timekeeper.show import prompts


def test_every_hint_is_worded() -> None:
    status = Engine(profile.load("ithf")).status(0.0)
    for hint in Hint:
        assert prompts.prompt(Refused("why", hint), status)
    assert prompts.prompt(Refused("why"), status) == ""  # the reason says it all


def test_a_ball_hockey_shoot_out_asks_for_each_attempt() -> None:
    eng = Engine(profile.load("hokejbal-playoff"))
    eng.restore(Snapshot("hokejbal-playoff", "shootout", index=len(eng.profile.periods) - 1))
    with pytest.raises(Refused) as caught:
        eng.handle(Command.parse("pause"), 0.0)
    assert str(prompts.complete(caught.value, eng.status(0.0))) == (
        "the clock is not running (between shots): enter each attempt: h g, h m, a g or a m "
        "(ctl attempt TEAM goal|miss)"
    )


def test_a_resumed_match_names_the_same_presses_as_a_refusal() -> None:
    eng = Engine(profile.load("pl-3x6"))
    eng.restore(Snapshot("pl-3x6", "running", index=0, play_time=100.0))
    stopped = prompts.resumed_text(eng.status(0.0))
    assert stopped.startswith("period 1 stopped at 1:40 played, ")
    assert f"score 0:0: {prompts.PRESS_RESUME} goes on; or `ctl replay`" in stopped
    eng.restore(Snapshot("pl-3x6", "waiting", index=0, play_time=360.0))
    assert prompts.resumed_text(eng.status(0.0)) == (
        f"period 1 over: {prompts.PRESS_NEXT} goes on to period 2"
    )
    eng.restore(Snapshot("pl-3x6", "idle"))
    assert prompts.resumed_text(eng.status(0.0)) == (
        f"no match under way: {prompts.PRESS_START} begins one"
    )
