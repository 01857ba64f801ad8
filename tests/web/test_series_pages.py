"""A series on the box's pages as a person sees them: `timekeeper run --best-of 7 --web` and
Debian's headless Chromium. The display page and the overlay say the game and the series'
score, in the page's language. Skipped where Chromium is missing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import QUICK, wait_for
from webbox import WebBox, browser, have_browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]


def won_by_home(box: WebBox) -> None:
    """A game: START (its pre-start), a goal for home, the clock set to its end (the box
    ends the decided game itself)."""
    assert box.command("start")[0] == 200
    wait_for(lambda: box.status()["state"] == "running", "the game running", 10)
    for command in (("pause",), ("goal", "home"), ("set", "0:00"), ("resume",)):
        assert box.command(*command)[0] == 200, command
    wait_for(lambda: box.status()["state"] == "finished", "the game over", 10)


def test_the_display_and_the_overlay_show_the_series(tmp_path: Path) -> None:
    game = tmp_path / "quick.yaml"
    game.write_text(textwrap.dedent(QUICK), encoding="utf-8")
    with WebBox(str(game), extra=("--best-of", "7")) as box, browser(1280, 720) as page:
        box.command("names", "Novák", "Svoboda")
        page.get(f"{box.url}/")
        series = lambda: page.find_element("id", "series").text  # noqa: E731
        wait_for(lambda: series() == "game 1 · series 0:0", "the series before game 1", 10)
        won_by_home(box)
        wait_for(lambda: series() == "next: game 2 · Novák leads 1:0", "game 1 counted", 10)
        assert box.command("start")[0] == 200
        wait_for(lambda: series() == "game 2 · Novák leads 1:0", "game 2 begun", 10)
        page.get(f"{box.url}/overlay?lang=cs")
        wait_for(
            lambda: page.find_element("id", "ov-series").text == "zápas 2 · Novák vede 1:0",
            "the overlay's series, in Czech",
            10,
        )
        assert page.execute_script("return window.tkMissing") == []


def test_the_hall_overview_shows_a_tables_series(tmp_path: Path) -> None:
    import time

    from boardhall import RUNNING, FakeDesk, serving

    series = {"best_of": 7, "game": 3, "home_wins": 2, "away_wins": 0, "winner": None}
    status = {
        **RUNNING,
        "names": {"home": "Novák", "away": "Svoboda"},
        "match_series": {**series, "match": "QF2"},
    }
    table = {"table": "1", "online": True, "synced": True, "in_step": True, "sent": time.time()}
    desk = FakeDesk({"1": {**table, "status": status}})
    with serving(desk, tmp_path / "desk", "de") as (url, _token), browser(1280, 800) as page:
        page.get(f"{url}/hall")
        wait_for(
            lambda: (
                page.find_element("css selector", ".table .series").text
                == "QF2 · Spiel 3 · Novák führt 2:0"
            ),
            "the table's series on its tile, in German",
            10,
        )
