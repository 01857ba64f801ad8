"""The desk's overview page in Debian's headless Chromium, over a desk that holds its tables'
statuses as the broker would hand them over (a fake that subclasses the real Desk): a table
in its pre-start shows its countdown, "stop all" asks first, and a refusal says what the desk
can do. (tests/hall/test_hall.py plays the same page against real boxes and a real broker.)"""

from __future__ import annotations

import re

import pytest
from helpers import wait_for
from webbox import LOADED, browser, csp_watched, have_browser

from timekeeper.hall.table.deskprompts import what_the_desk_can


@pytest.mark.slow
@pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver")
def test_the_overview_counts_a_prestart_down_and_asks_before_stopping_all(overview) -> None:
    url, token, desk = overview
    with browser(1280, 800) as page:
        page.get(f"{url}/hall#token={token}")
        tile = "return [...document.querySelectorAll('.table')].map(t => t.textContent)"
        texts = wait_for(
            lambda: (t := page.execute_script(tile)) and len(t) == 2 and t, "both tables", 10
        )
        assert "PRE-START" in texts[1] and "--:--" not in texts[1]
        assert re.search(r"0:[345]\d", texts[1]), texts[1]  # counting down from 0:59

        stop = page.find_element("css selector", "button[data-command=stop]")
        stop.click()  # asks first; "no" sends nothing
        alert = wait_for(lambda: page.switch_to.alert, "the confirmation", 5)
        assert "every table" in alert.text
        alert.dismiss()
        assert desk.sent == []
        stop.click()
        wait_for(lambda: page.switch_to.alert, "the confirmation", 5).accept()
        answer = wait_for(
            lambda: (a := page.find_element("id", "answer").text) and "REFUSED" in a and a,
            "the answer",
            10,
        )
        assert [c.kind for c in desk.sent] == ["stop"]
        # what the desk can do, never the table's keys
        assert "from the desk, stop stops the clock" in answer
        assert "SPACE" not in answer and "ctl" not in answer


@pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver")
@pytest.mark.slow
def test_the_overview_draws_with_the_boxes_shared_script_under_the_csp(overview) -> None:
    """The desk's page takes its words, clock and parts from the box's common.js (served by
    the desk too), and its CSP (script-src 'self', no inline script) refuses nothing."""
    url, _, _ = overview
    with browser(1280, 800) as page, csp_watched(page):
        page.get(f"{url}/hall")
        tile = "return [...document.querySelectorAll('.table')].map(t => t.textContent)"
        texts = wait_for(
            lambda: (t := page.execute_script(tile)) and len(t) == 2 and t, "both tables", 10
        )
        assert "table 1" in texts[0] and re.search(r"[23]:\d\d", texts[0]), texts[0]
        assert page.find_element("id", "counts").text == "2 tables, 2 online"
        loaded = page.execute_script(LOADED)
        assert {"/lang/en.js", "/static/common.js", "/static/hall.js", "/static/hall.css"} <= set(
            loaded
        ), loaded
        assert page.execute_script("return [window.tkViolations, window.tkMissing]") == [[], []]


@pytest.mark.parametrize(
    ("status", "words"),
    [
        ({"state": "idle"}, "start begins the match"),
        ({"state": "prestart", "countdown": 4.2}, "the start comes by itself in 5 s"),
        ({"state": "running"}, "stop stops the clock"),
        ({"state": "stopped"}, "resume goes on"),
        (
            {"state": "waiting", "waiting_for": "next: overtime", "period": 1, "periods": 1},
            "next starts the overtime; finish ends the match instead",
        ),
        (
            {"state": "break", "waiting_for": "next: period 2", "period": 1, "periods": 3},
            "next starts period 2",
        ),
        (
            {"state": "waiting", "waiting_for": "finish", "period": 1, "periods": 1},
            "finish ends it (the match is decided: the table's operator's f, or hall finish)",
        ),
        ({"state": "shootout"}, "the shoot-out is the table operator's"),
        ({"state": "finished"}, "reset makes the table ready for the next round, then start"),
    ],
)
def test_a_refusal_at_the_desk_names_the_desks_commands(status: dict, words: str) -> None:
    said = what_the_desk_can(status)
    assert words in said
    for key in ("START/NEXT", "STOP/RESUME", "SPACE", "ctl ", "Enter"):
        assert key not in said
