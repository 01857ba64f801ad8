"""Every moment of a match on the display page, as a newcomer in the hall sees it, and the
operator page's and the overlay's part in it: a real box (`timekeeper run --web`) on short
profiles, driven through its API, and Debian's headless Chromium. The periods are ended with
`set 0:01` and a resume, and every step waits for what the page shows, never for a pause.
Skipped where Chromium is missing (`./bootstrap.sh --test` installs it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import wait_for
from webbox import WebBox, browser, have_browser

from timekeeper.web.server import STATIC

pytestmark = [
    pytest.mark.slow,  # a browser and a box (tests/conftest.py: the fast tier)
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]

# ITHF's play-off (its signals, its untimed sudden death), one minute long
ITHF = """\
    title: Quick ITHF play-off
    extends: ithf-playoff
    follows: none
    prestart: 1
    period:
      length: 60
      marks: none
      melody: 0
"""
# ball hockey's play-off: two 1-minute halves, a 1-s break, a 1-minute overtime, then a
# shoot-out of one attempt each (tenths under the last minute, as hokejbal asks)
BALL_HOCKEY = """\
    title: Quick hokejbal play-off
    extends: hokejbal-playoff
    prestart: 1
    period:
      length: 60
    break:
      length: 1
      warning: 0
    overtime:
      - length: 60
        sudden_death: true
    shootout:
      first: 1
      then: 1
      shot: none
"""
# Polish disc hockey's knock-out: one minute, a 1-minute overtime, a timed shoot-out
POLISH = """\
    title: Quick Polish KO
    extends: pl-3x6-ko
    period:
      length: 60
      count: 1
      marks: none
      melody: 0
    overtime:
      - length: 60
        sudden_death: true
        marks: none
        melody: 0
    shootout:
      first: 1
      then: 1
      shot: 15
"""


def profile_file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def body(page) -> str:
    return page.find_element("tag name", "body").text


def shown(page) -> str:
    return page.execute_script("return window.tkDisplay.text()")


def text_of(page, element_id: str) -> str:
    return page.find_element("id", element_id).text


def tap(page, element_id: str):
    """Click a button of the operator page as a thumb would: scrolled into the middle of the
    screen first (selenium would scroll it under the pinned START/NEXT and STOP/RESUME)."""
    button = page.find_element("id", element_id)
    page.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    return button


def ok(box: WebBox, *words: str) -> dict:
    code, answer = box.command(*words)
    assert code == 200, (words, answer)
    return answer["status"]


def state_is(box: WebBox, page, state: str) -> None:
    wait_for(lambda: box.status()["state"] == state, f"the box {state}", 10)
    wait_for(
        lambda: page.execute_script("return document.body.dataset.state") == state,
        f"the page {state}",
        10,
    )


def end_the_period(box: WebBox, page, then: str) -> None:
    """Stop the running clock, set it to 0:01, resume: the period ends a second later."""
    ok(box, "pause")
    ok(box, "set", "0:01")
    ok(box, "resume")
    state_is(box, page, then)


def test_every_moment_of_an_ithf_match(tmp_path: Path) -> None:
    with WebBox(profile_file(tmp_path, "quick-ithf", ITHF)) as box, browser(1280, 720) as page:
        page.get(f"{box.url}/?table=7")
        # idle: the match length, the profile's title, the sides (no grey --:--)
        wait_for(lambda: shown(page) == "1:00", "the match length", 10)
        assert "Quick ITHF play-off" in text_of(page, "sub")
        assert text_of(page, "state") == "READY"
        assert text_of(page, "name-home") == "HOME" and text_of(page, "name-away") == "AWAY"

        ok(box, "start")  # pre-start: its countdown, and what it counts to
        state_is(box, page, "prestart")
        assert "to the start" in text_of(page, "sub")
        state_is(box, page, "running")
        wait_for(lambda: shown(page) in ("1:00", "0:59", "0:58"), "the clock running", 5)
        assert "." not in shown(page)  # rod hockey: whole seconds, always

        ok(box, "pause")  # stopped, with added time
        state_is(box, page, "stopped")
        assert text_of(page, "state") == "STOPPED"
        ok(box, "add", "10")
        box.wait_text(page, "+0:10 added", 5)
        ok(box, "goal", "home", "7")
        ok(box, "goal", "away")
        wait_for(lambda: text_of(page, "goals").startswith("P1"), "the last goals", 5)
        assert "HOME #7" in text_of(page, "goals")
        ok(box, "resume")

        end_the_period(box, page, "waiting")  # period over: what comes next
        assert text_of(page, "state") == "PERIOD OVER"
        assert "next: overtime" in text_of(page, "sub")

        ok(box, "next")  # the untimed sudden death: said as such
        state_is(box, page, "running")
        assert text_of(page, "state") == "SUDDEN DEATH"
        ok(box, "goal", "away", "11")
        if box.status()["state"] != "finished":  # (NEXT at the goal, where it plays on)
            ok(box, "next")
        state_is(box, page, "finished")
        wait_for(lambda: shown(page) == "1:2", "the final score, large", 5)
        assert text_of(page, "state") == "FINAL"
        assert text_of(page, "sub") == "AWAY WINS · in overtime"
        assert "added" not in body(page)


def test_every_moment_of_a_ball_hockey_match(tmp_path: Path) -> None:
    with (
        WebBox(profile_file(tmp_path, "quick-hokejbal", BALL_HOCKEY)) as box,
        browser(1280, 720) as page,
    ):
        page.get(f"{box.url}/")
        wait_for(lambda: shown(page) == "1:00", "the match length", 10)
        assert "Quick hokejbal play-off" in text_of(page, "sub")
        assert text_of(page, "to-home") == "time-outs left: 1"

        ok(box, "start")
        state_is(box, page, "prestart")
        state_is(box, page, "running")
        ok(box, "pause")
        state_is(box, page, "stopped")
        ok(box, "timeout", "home")  # its countdown, and none left
        box.wait_text(page, "TIME-OUT HOME", 5)
        wait_for(lambda: text_of(page, "to-home") == "no time-out left", "time-outs left", 5)
        ok(box, "penalty", "away", "minor", "8")
        box.wait_text(page, "#8", 5)
        # penalty text readable across a hall: at least 4 % of the screen's height
        size = page.execute_script(
            "return parseFloat(getComputedStyle(document.querySelector('#pen-away .penalty'))"
            ".fontSize) / innerHeight"
        )
        assert size >= 0.04
        # under the last minute: tenths, as the profile asks
        ok(box, "set", "0:30")
        wait_for(lambda: shown(page) == "30.0", "tenths under the last minute", 5)
        ok(box, "resume")
        wait_for(lambda: shown(page).startswith("29."), "tenths running", 5)

        end_the_period(box, page, "waiting")  # (the 1-s break, then half 2 waits for NEXT)
        assert "next: half 2" in text_of(page, "sub")
        ok(box, "next")
        state_is(box, page, "running")
        end_the_period(box, page, "waiting")
        assert "next: overtime" in text_of(page, "sub")
        ok(box, "next")
        state_is(box, page, "running")
        assert text_of(page, "state") == "SUDDEN DEATH"  # (its overtime: a goal ends it)
        end_the_period(box, page, "shootout")

        # the shoot-out: its score in place of the clock, each attempt, whose turn
        wait_for(lambda: shown(page) == "0:0", "the shoot-out score", 5)
        assert text_of(page, "state") == "SHOOT-OUT"
        ok(box, "attempt", "home", "goal")
        wait_for(lambda: shown(page) == "1:0", "the shoot-out score 1:0", 5)
        assert "✓" in text_of(page, "att-home") and "AWAY shoots" in text_of(page, "sub")
        assert text_of(page, "score-home") == "0"  # the match score apart: still 0:0
        ok(box, "attempt", "away", "miss")
        state_is(box, page, "finished")
        assert text_of(page, "sub") == "HOME WINS · after the shoot-out 1:0"
        assert "✗" in text_of(page, "att-away")


def test_the_clock_uses_a_portrait_phones_width(tmp_path: Path) -> None:
    with WebBox(profile_file(tmp_path, "quick-ithf", ITHF)) as box, browser(390, 844) as page:
        page.get(f"{box.url}/")
        wait_for(lambda: shown(page) == "1:00", "the match length", 10)
        width = page.execute_script(
            "return document.getElementById('digits').getBoundingClientRect().width"
        )
        assert width >= 0.85 * 390


def test_the_operator_page_shows_the_box_pins_its_main_buttons_and_confirms_a_timeout(
    tmp_path: Path,
) -> None:
    long_title = BALL_HOCKEY.replace(
        "Quick hokejbal play-off",
        "Hokejbal play-off, two quick halves, an overtime and "
        "a shoot-out, as a long title in the header",
    )
    with (
        WebBox(profile_file(tmp_path, "quick-hokejbal", long_title)) as box,
        browser(390, 844) as phone,
    ):
        phone.get(box.link())
        wait_for(lambda: text_of(phone, "state") == "READY", "the status", 10)
        header = "return document.querySelector('.now').getBoundingClientRect().height"
        assert phone.execute_script(header) < 60  # one line, however long the title

        # the names: sent as {"command": "names", "args": [home, away]}
        phone.find_element("id", "name-home").send_keys("Novák")
        phone.find_element("id", "name-away").send_keys("Świątek")
        tap(phone, "set-names")
        wait_for(lambda: "names" in text_of(phone, "note"), "the names answered", 5)
        if "done" in text_of(phone, "note"):  # (where the box keeps names)
            assert box.status()["names"] == {"home": "Novák", "away": "Świątek"}
            wait_for(lambda: text_of(phone, "goal-home") == "GOAL Novák", "the name", 5)
        ok(box, "start")
        wait_for(lambda: box.status()["state"] == "running", "running", 10)
        ok(box, "pause")
        ok(box, "penalty", "home", "minor", "4")
        ok(box, "penalty", "home", "major", "5")
        ok(box, "penalty", "home", "minor", "6")  # waits: two run at once
        wait_for(lambda: "#6" in text_of(phone, "box-home"), "the penalties on the page", 5)
        listed = text_of(phone, "box-home")
        assert "#4" in listed and "1:00" in listed and "waiting" in listed

        # the match penalty (the keyboard's 5)
        tap(phone, "pen-team-away")
        tap(phone, "pen-match")
        tap(phone, "pen-send")
        wait_for(
            lambda: any(p["kinds"] == "match" for p in box.status()["teams"]["away"]["penalties"]),
            "a match penalty",
            5,
        )

        # the time-out: one tap arms it, the second sends it
        timeout = tap(phone, "timeout-away")
        wait_for(lambda: "TAP AGAIN" in timeout.text, "the time-out armed", 10)
        assert box.status()["timeout"] is None
        timeout.click()
        wait_for(lambda: box.status()["timeout"] == "away", "the time-out taken", 10)
        away = "Świątek" if box.status()["names"]["away"] else "AWAY"  # (by name, once named)
        wait_for(
            lambda: f"time-out {away}" in text_of(phone, "timeout-now"),
            "the time-out's countdown",
            10,
        )

        # scrolled to the bottom, START/NEXT and STOP/RESUME are still on screen
        phone.execute_script("window.scrollTo(0, document.body.scrollHeight)")
        wait_for(lambda: phone.execute_script("return window.scrollY") > 100, "scrolled", 10)
        for button in ("go", "toggle"):
            top, bottom = phone.execute_script(
                "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
                "return [r.top, r.bottom]",
                button,
            )
            assert top >= 0 and bottom <= 844, (button, top, bottom)
        tap(phone, "toggle")
        wait_for(lambda: box.status()["state"] == "running", "resumed from the pinned button", 10)
        assert phone.execute_script(header) < 60  # the header, one line


def test_the_polish_shootout_buttons(tmp_path: Path) -> None:
    with (
        WebBox(profile_file(tmp_path, "quick-polish", POLISH)) as box,
        browser(390, 844) as phone,
        browser(1280, 720) as page,
    ):
        phone.get(box.link())
        page.get(f"{box.url}/")
        wait_for(lambda: text_of(phone, "state") == "READY", "the status", 10)
        assert not phone.find_element("id", "shootout-block").is_displayed()
        ok(box, "start")
        wait_for(lambda: box.status()["state"] == "running", "running", 15)
        end_the_period(box, page, "waiting")
        ok(box, "next")
        state_is(box, page, "running")
        end_the_period(box, page, "shootout")
        wait_for(
            lambda: phone.find_element("id", "shootout-block").is_displayed(),
            "the shoot-out buttons",
            5,
        )
        wait_for(lambda: text_of(phone, "clock") == "SO 0:0", "the header's shoot-out", 5)
        wait_for(lambda: shown(page) == "SHOOT-OUT", "no score before an attempt", 5)
        ok(box, "next")  # the first shot's time runs
        state_is(box, page, "shot")
        tap(phone, "so-home-goal")
        wait_for(
            lambda: box.status()["shootout_attempts"] == [{"team": "home", "goal": True}],
            "the attempt entered",
            5,
        )
        wait_for(lambda: "✓" in text_of(page, "att-home"), "the attempt on the display", 5)
        box.wait_text(page, "AWAY shoots", 5)
        assert "AWAY shoots" in text_of(phone, "shootout-now")


def test_the_overlay_is_a_transparent_bar(tmp_path: Path) -> None:
    with WebBox(profile_file(tmp_path, "quick-ithf", ITHF)) as box, browser(1280, 720) as page:
        page.get(f"{box.url}/overlay")
        wait_for(
            lambda: page.execute_script("return window.tkOverlay.clock()") == "1:00",
            "the overlay's clock",
            10,
        )
        backgrounds = page.execute_script(
            "return [getComputedStyle(document.documentElement).backgroundColor,"
            " getComputedStyle(document.body).backgroundColor]"
        )
        assert backgrounds == ["rgba(0, 0, 0, 0)", "rgba(0, 0, 0, 0)"]
        bar = page.find_element("id", "bar")
        assert bar.size["height"] < 0.15 * 720
        assert "HOME" in bar.text and "AWAY" in bar.text and "0:0" in bar.text
        ok(box, "start")
        wait_for(lambda: box.status()["state"] == "running", "running", 10)
        ok(box, "goal", "home")
        wait_for(lambda: "1:0" in page.find_element("id", "ov-score").text, "the score", 5)
    # read-only: the overlay only listens (no command in its code)
    assert "/api/command" not in (STATIC / "overlay.js").read_text(encoding="utf-8")
