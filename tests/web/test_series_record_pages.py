"""A series' record on the box's pages: the display page lists each game counted, and the
operator's page (the phone's /control), once the series is won, offers no START/NEXT (START
takes no further game) until RESET begins the next series.
`timekeeper run --best-of 3 --web` and Debian's headless Chromium; skipped where Chromium is
missing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import QUICK, wait_for
from test_series_pages import won_by_home
from webbox import WebBox, browser, have_browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]


def test_the_control_page_offers_no_start_after_the_series_is_won(tmp_path: Path) -> None:
    game = tmp_path / "quick.yaml"
    game.write_text(textwrap.dedent(QUICK), encoding="utf-8")
    with WebBox(str(game), extra=("--best-of", "3")) as box, browser(390, 844) as page:
        page.get(box.link())
        go = lambda: page.find_element("id", "go")  # noqa: E731
        wait_for(lambda: go().is_displayed(), "START/NEXT before game 1", 10)
        won_by_home(box)
        assert go().is_displayed()  # (game 2 is next)
        won_by_home(box)
        wait_for(lambda: not go().is_displayed(), "no START/NEXT once the series is won", 10)
        assert box.command("reset")[0] == 200  # the evening's next series
        wait_for(lambda: go().is_displayed(), "START/NEXT for the next series", 10)


def test_the_display_page_lists_each_game_of_the_series(tmp_path: Path) -> None:
    game = tmp_path / "quick.yaml"
    game.write_text(textwrap.dedent(QUICK), encoding="utf-8")
    with WebBox(str(game), extra=("--best-of", "3")) as box, browser(1920, 1080) as page:
        page.get(f"{box.url}/")
        games = lambda: page.find_element("id", "series-games")  # noqa: E731
        wait_for(lambda: page.find_element("id", "series").text, "the series shown", 10)
        assert not games().is_displayed()  # (no game counted yet)
        won_by_home(box)
        wait_for(lambda: games().text == "1:0", "game 1 on record", 10)
        won_by_home(box)
        wait_for(lambda: games().text == "1:0 · 1:0", "both games on record", 10)
