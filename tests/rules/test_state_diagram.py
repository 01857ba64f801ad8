"""The state diagram in the engine's docstring and in docs/how-it-works.md is drawn from the
engine's table (scripts/draw_states.py): a row added, removed or retargeted without drawing
it again fails here. And the table is the whole story: every state has its arrows, every
arrow leads to a state, and what it says of START/NEXT is what the status tells."""

from __future__ import annotations

import importlib.util

from helpers import ROOT

from timekeeper.rules import profile
from timekeeper.rules.commands import Action
from timekeeper.rules.engine import TRANSITIONS, Engine, State


def draw_states():  # scripts/ is no package
    spec = importlib.util.spec_from_file_location(
        "draw_states", ROOT / "scripts" / "draw_states.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_drawn_diagrams_are_the_tables() -> None:
    draw = draw_states()
    for path, (indent, before, after) in draw.PLACES.items():
        text = path.read_text(encoding="utf-8")
        assert draw.drawn(text, indent, before, after) == text, (
            f"{path.name}: the state diagram differs from TRANSITIONS; run scripts/draw_states.py"
        )
    assert draw.main(["--check"]) == 0


def test_a_changed_table_is_a_stale_diagram(monkeypatch) -> None:
    draw = draw_states()
    path, (indent, before, after) = next(iter(draw.PLACES.items()))
    text = path.read_text(encoding="utf-8")
    monkeypatch.setattr(
        TRANSITIONS, "table", [r for r in TRANSITIONS.table if r.event is not Action.REPLAY]
    )
    assert "replay → idle" in text and draw.drawn(text, indent, before, after) != text


def test_every_state_is_drawn_and_every_arrow_leads_somewhere() -> None:
    lines = TRANSITIONS.diagram()
    assert {line.split()[0] for line in lines if not line.startswith(" ")} == {
        *(s.value for s in State),
        "any",
    }
    for row in TRANSITIONS.table:
        assert (row.handler is None) == (row.refusal is not None), row
        assert row.handler is None or row.targets, row


def test_the_prompt_offers_only_presses_the_table_takes() -> None:
    """What what_now offers in a state is a row of the table there (no copy by hand), and
    START/NEXT's `then` is what a fresh match's status says it waits for."""
    for state in State:
        for row in TRANSITIONS.ways_on(state):
            assert (state, row.event) in TRANSITIONS.by_key and row.handler is not None
    assert Engine(profile.load("ithf")).status(0.0).waiting_for == "start"
