"""A best-of-5 play-off as people look at it, in Debian's headless Chromium at each moment of
a series' life (game 1 running, a drawn game in sudden death, 2:1 in games, decided): the
board's tiles (1920×1080) make the series their headline, the largest text after the clock,
nothing under 3 % of the screen's height, the state in words; the play-off blocks put the
names first with the games won beside them and each game's score under them, the winner
marked; a player's phone (390×844) shows the series and who the next opponent may be; the
box's display page (`run --best-of 5`, 1920×1080) heads with the series once it is won. The
same pages are the docs' pictures (scripts/screenshots.py, docs/img/series-*.png)."""

from __future__ import annotations

from pathlib import Path

import pytest
from seriesscreens import take_box, take_night
from webbox import have_browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]


def test_the_board_and_the_phones_tell_the_series_at_each_moment(tmp_path: Path) -> None:
    take_night(tmp_path / "night", tmp_path)


def test_the_box_display_heads_with_the_series_once_it_is_won(tmp_path: Path) -> None:
    take_box(tmp_path, tmp_path)
