"""`show` draws what the engine will do: the text timeline and the SVG picture."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from helpers import ROOT

from timekeeper.rules import profile
from timekeeper.rules.replay import parse_actions
from timekeeper.show.svg import svg
from timekeeper.show.timeline import describe

DOCS = ROOT / "docs"


@pytest.mark.parametrize("name", list(profile.available()))
def test_every_profile_draws_a_well_formed_picture(name: str) -> None:
    root = ET.fromstring(svg(profile.load(name)))
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(name in (t or "") for t in texts)


@pytest.mark.parametrize("name", ["ithf", "pl-3x6-ko"])
def test_the_readme_pictures_are_current(name: str) -> None:
    assert (DOCS / f"{name}.svg").read_text(encoding="utf-8") == svg(profile.load(name)), (
        f"regenerate: timekeeper show {name} --svg docs/{name}.svg"
    )


def test_show_lists_operator_presses_before_what_they_cause() -> None:
    lines = describe(profile.load("ithf"), parse_actions("100:pause,110:resume"))
    text = "\n".join(lines)
    assert "1:40            (operator: PAUSE)\n      1:40    1:40  p1 pause" in text
    assert "5:10    5:00  p1 end" in text


def test_the_ball_hockey_picture_is_current() -> None:
    name = "hokejbal-playoff"
    assert (DOCS / f"{name}.svg").read_text(encoding="utf-8") == svg(profile.load(name)), (
        f"regenerate: timekeeper show {name} --svg docs/{name}.svg"
    )


def test_show_lists_ball_hockey_commands_with_their_arguments() -> None:
    lines = describe(
        profile.load("hokejbal"),
        parse_actions(
            "1:00:penalty=home:minor:17,1:10:pause,1:15:timeout=away,1:20:set=6:55,1:50:resume"
        ),
    )
    text = "\n".join(lines)
    assert "penalties minor 1:00, major 3:00, personal 5:00, game misconduct" in text
    for press in ("PENALTY home minor 17", "TIMEOUT away", "SET 6:55", "RESUME"):
        assert f"(operator: {press})" in text
    assert "1:45    1:05  p1 timeout_end    time-out over: away" in text
    # set back 5 s (6:50 left → 6:55): the minor, 10 s old, has 55 s left from the resume
    assert "2:45    2:00  p1 penalty_end    penalty served: home #1 17 minor" in text
