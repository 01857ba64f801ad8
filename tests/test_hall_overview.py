"""The desk's overview page in Debian's headless Chromium, over a desk that holds its tables'
statuses as the broker would hand them over (a fake that subclasses the real Desk): a table
in its pre-start shows its countdown, "stop all" asks first, and a refusal says what the desk
can do. (tests/test_hall.py plays the same page against real boxes and a real broker.)"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import free_port, wait_for
from webbox import LOADED, browser, csp_watched, have_browser

from timekeeper.hall.bus.messages import HallCommand
from timekeeper.hall.desk.link import Desk
from timekeeper.hall.desk.overview import Overview
from timekeeper.hall.table.deskprompts import desk_prompt, what_the_desk_can
from timekeeper.web.guard import Site
from timekeeper.web.token import TokenStore

RUNNING = {
    "state": "running",
    "part": "period",
    "remaining": 200.0,
    "countdown": None,
    "score": {"home": 1, "away": 0},
    "period": 1,
    "periods": 1,
    "waiting_for": "",
}
PRESTART = {
    "state": "prestart",
    "part": "",
    "remaining": None,
    "countdown": 58.4,
    "score": {"home": 0, "away": 0},
    "period": 0,
    "periods": 1,
    "waiting_for": "",
}


class FakeDesk(Desk):
    """The real Desk's tables and answers without a broker: `statuses` as the bus would have
    them; `send` records the command and answers as a running table refuses a resume."""

    def __init__(self, statuses: dict[str, dict]) -> None:  # (no broker to connect to)
        self.hall = "hall"
        self.statuses = statuses
        self._lock = threading.Lock()
        self.sent: list[HallCommand] = []

    def send(
        self, command: HallCommand, table: str | None = None, wait: float = 2.0
    ) -> dict[str, dict]:
        self.sent.append(command)
        return {
            "1": {
                "table": "1",
                "ok": False,
                "error": "the match is under way" + desk_prompt(RUNNING),
            }
        }


@contextlib.contextmanager
def serving(desk: Desk, folder: Path, lang: str = "en") -> Iterator[tuple[str, str]]:
    """The overview of `desk` served as `hall serve` serves it (behind web/guard.py's
    doors) on a free port, its own thread and loop, in `lang`: (url, the desk's token).
    Also used by scripts/screenshots.py."""
    tokens = TokenStore(folder)
    overview = Overview(desk, tokens, lang)
    site = Site(overview.guard, overview.app(), "127.0.0.1", free_port())
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(site.start(), loop).result(10)
    try:
        yield f"http://127.0.0.1:{site.port}", tokens.token
    finally:
        asyncio.run_coroutine_threadsafe(site.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture
def overview(tmp_path: Path, request) -> Iterator[tuple[str, str, FakeDesk]]:
    """The overview served: (url, token, desk); in English, or the language an indirect
    parameter names."""
    sent = time.time()
    desk = FakeDesk(
        {
            "1": {
                "table": "1",
                "online": True,
                "synced": True,
                "in_step": True,
                "sent": sent,
                "status": RUNNING,
            },
            "2": {
                "table": "2",
                "online": True,
                "synced": True,
                "in_step": True,
                "sent": sent,
                "status": PRESTART,
            },
        }
    )
    with serving(desk, tmp_path / "desk", getattr(request, "param", "en")) as (url, token):
        yield url, token, desk


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
