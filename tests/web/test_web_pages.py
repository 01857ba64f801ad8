"""The pages as a person sees them: a real box (`timekeeper run --web`) and Debian's headless
Chromium driven by Selenium. Skipped where Chromium is missing (`./bootstrap.sh --test`
installs it)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import ROOT, wait_for
from webbox import LOADED, WebBox, browser, csp_watched, have_browser

pytestmark = [
    pytest.mark.slow,  # a browser and a box (tests/conftest.py: the fast tier)
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]


def clock_text(seconds: float) -> str:
    whole = math.ceil(seconds - 1e-9) if seconds > 0 else 0
    return f"{whole // 60}:{whole % 60:02d}"


def shown(driver) -> str:
    return driver.execute_script("return window.tkDisplay.text()")


def page_samples(driver, seconds: float) -> list[float]:
    """The display's seconds, read in the page over `seconds` of the page's own clock (its
    performance.now()): what it showed between pushes, sampled as it ticked."""
    read = "return [window.tkDisplay.seconds(), performance.now()]"
    samples: list[list[float]] = [driver.execute_script(read)]
    wait_for(
        lambda: (
            samples.append(driver.execute_script(read))
            or samples[-1][1] - samples[0][1] >= seconds * 1000
        ),
        f"{seconds} s of the page",
        10,
    )
    return [value for value, _ in samples]


def body(driver) -> str:
    return driver.find_element("tag name", "body").text


@pytest.fixture(scope="module")
def box():
    with WebBox("hokejbal") as running:
        yield running


def test_the_pages_draw_with_the_shared_script_under_the_csp(box) -> None:
    """The box's pages load common.js (the words, the clock, the parts: the desk's pages
    load the same file) before live.js, and their CSP refuses nothing."""
    box.command("reset")
    with browser(1280, 720) as page, csp_watched(page):
        for path, own in (
            ("/", "display.js"),
            ("/control", "control.js"),
            ("/overlay", "overlay.js"),
        ):
            page.get(box.url + path)
            wait_for(
                lambda: (
                    page.execute_script("return document.readyState") == "complete"
                    and page.execute_script(LOADED)
                ),
                f"{path} loaded",
                10,
            )
            if path == "/":
                wait_for(lambda: shown(page) == "8:00", "the idle display's clock", 10)
            loaded = page.execute_script(LOADED)
            assert {"/static/common.js", "/static/live.js", f"/static/{own}"} <= set(loaded)
            seen = page.execute_script(
                "return [window.tkViolations, window.tkMissing, "
                "TK.clockText(75.5), TK.partName('period 2')]"
            )
            assert seen == [[], [], "1:16", "period 2"], (path, seen)


def test_the_display_follows_a_match(box) -> None:
    box.command("reset")
    with browser(1280, 720) as page:
        page.get(f"{box.url}/?table=Table 3")
        box.wait_text(page, "Table 3")
        # idle: the match length (8:00), not --:--
        wait_for(lambda: shown(page) == "8:00" and "READY" in body(page), "the idle page", 5)

        assert box.command("start")[0] == 200
        wait_for(lambda: "7:50" <= shown(page) <= "8:00", "the period's clock", 10)
        # the clock runs in the browser between pushes
        wait_for(lambda: shown(page) <= "7:58", "the clock running down on the page", 5)

        code, answer = box.command("toggle")
        assert code == 200
        stopped_at = clock_text(answer["status"]["remaining"])
        wait_for(lambda: shown(page) == stopped_at, f"the stopped time {stopped_at}", 10)
        assert "STOPPED" in body(page)
        # a stopped clock stays put: the page's seconds over half a second of its own ticks
        assert len(set(page_samples(page, 0.5))) == 1

        box.command("add", "10")
        box.wait_text(page, "+0:10 added", 10)
        stopped_at = clock_text(box.status()["remaining"])
        wait_for(lambda: shown(page) == stopped_at, "the clock with the added time", 10)

        code, answer = box.command("penalty", "away", "minor", "8")
        minor = clock_text(answer["status"]["teams"]["away"]["penalties"][0]["remaining"])
        box.wait_text(page, "#8", 10)
        assert "minor" in body(page) and minor in body(page)

        # the short-handed team scores (no goal ends a penalty being served: rule 30 d)
        assert box.command("goal", "away", "17")[0] == 200
        assert box.status()["score"] == {"home": 0, "away": 1}
        wait_for(lambda: page.find_element("id", "score-away").text == "1", "the score", 10)

        box.command("toggle")
        wait_for(lambda: "STOPPED" not in body(page), "running again", 10)
        seen = page_samples(page, 1.0)  # never backwards while running
        assert seen == sorted(seen, reverse=True) and seen[0] > seen[-1]
        # a running penalty counts down with the clock
        wait_for(
            lambda: page.find_element("css selector", "#pen-away .left").text < minor,
            f"the penalty below {minor}",
            5,
        )


def test_offline_appears_when_the_box_stops_answering_and_clears(box) -> None:
    with browser(800, 600) as page:
        page.get(f"{box.url}/")
        wait_for(lambda: page.execute_script("return window.tkDisplay.online()"), "online", 5)
        offline = page.find_element("id", "offline")
        assert not offline.is_displayed()
        box.pause_process()
        try:
            began = time.monotonic()
            wait_for(offline.is_displayed, "OFFLINE", 5)
            assert time.monotonic() - began <= 4.0  # (with the polling's own delays)
            # the page's own account: OFFLINE after at most 3 s without a word from the box
            assert page.execute_script("return window.tkDisplay.silence()") <= 3000
            assert "OFFLINE" in body(page)
        finally:
            box.continue_process()
        wait_for(lambda: not offline.is_displayed(), "back online", 8)


def test_the_operator_page_with_the_token_starts_and_stops_a_match(box) -> None:
    box.command("reset")
    with browser(390, 844) as phone:
        phone.get(box.link())
        wait_for(lambda: "token" not in phone.current_url, "the token off the address bar", 10)
        wait_for(lambda: phone.find_element("id", "state").text == "READY", "the status", 5)
        phone.find_element("id", "go").click()
        wait_for(lambda: box.status()["state"] == "running", "the match running", 10)
        phone.find_element("id", "toggle").click()
        wait_for(lambda: box.status()["state"] == "stopped", "the match stopped", 10)
        phone.find_element("id", "set-time").send_keys("99:99")
        phone.find_element("id", "set").click()  # a refusal is shown with its reason
        wait_for(lambda: "refused" in phone.find_element("id", "note").text, "the refusal", 10)
        assert "set M:SS" in phone.find_element("id", "note").text
        phone.find_element("id", "mute").click()
        wait_for(lambda: box.status()["muted"], "muted", 10)
        wait_for(lambda: "UNMUTE" in phone.find_element("id", "mute").text, "the mute shown", 10)
        phone.find_element("id", "mute").click()
        wait_for(lambda: not box.status()["muted"], "unmuted", 10)
        reset = phone.find_element("id", "reset")
        # (centred: selenium would scroll it under the pinned START/NEXT and STOP/RESUME)
        phone.execute_script("arguments[0].scrollIntoView({block: 'center'})", reset)
        reset.click()
        wait_for(lambda: "TAP AGAIN" in reset.text, "the reset armed", 10)
        assert box.status()["state"] == "stopped"  # one tap only arms it
        reset.click()
        wait_for(lambda: box.status()["state"] == "idle", "reset on the second tap", 10)


def test_without_the_token_the_operator_page_cannot(box) -> None:
    box.command("reset")
    with browser(390, 844) as phone:
        phone.get(f"{box.url}/control")
        wait_for(lambda: phone.find_element("id", "state").text == "READY", "the status", 5)
        assert "ctl link" in phone.find_element("id", "note").text
        phone.find_element("id", "go").click()  # refused on the page: nothing is sent
        wait_for(
            lambda: "no operator token" in phone.find_element("id", "note").text,
            "the page's refusal",
            10,
        )
        assert box.status()["state"] == "idle"
        phone.get(f"{box.url}/control#token=guessed-wrong-token-0000000000")
        wait_for(
            lambda: "no longer valid" in phone.find_element("id", "note").text,
            "a wrong token refused",
            10,
        )
        phone.find_element("id", "go").click()
        wait_for(
            lambda: "ctl link" in phone.find_element("id", "note").text, "the page's refusal", 3
        )
        assert box.status()["state"] == "idle"


def test_ctl_link_prints_the_operator_link_and_a_qr_code(box) -> None:
    def link(*extra: str) -> str:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "ctl",
                "link",
                "--control",
                str(box.control),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
        return done.stdout

    out = link()
    assert f"{box.url}/control#token={box.token}" in out
    assert "█" in out or "▀" in out  # the QR code
    renewed = link("--new")
    assert box.token not in renewed
    box.token = renewed.split("#token=")[1].split()[0]
    assert box.command("status")[0] in (400, 200)
    assert json.loads(json.dumps(box.status()))["state"]


def test_the_screenshots_script_makes_its_pictures(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import screenshots
    finally:
        sys.path.pop(0)
    shots = screenshots.take(tmp_path)
    assert [p.name for p in shots] == [
        "display-tv.png",
        "display-phone.png",
        "control-phone.png",
        "overlay.png",
        "display-final.png",
        "hall-overview.png",
    ]
    for shot in shots:
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 2000
