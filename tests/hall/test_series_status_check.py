"""A table's `match_series` is believed only as a series that can be (rules/series.py): the
shape the desk checks is the model's, so a forged 5:0 in a best of 3 is refused like any bad
field, and every state a box shows passes."""

from __future__ import annotations

import json

import pytest

from timekeeper.hall.bus import tablestatus
from timekeeper.rules.series import Game, Series


def status_with(series: object) -> bytes:
    body = {"table": "1", "online": True, "status": {"state": "running", "match_series": series}}
    return json.dumps(body).encode()


def check(payload: bytes) -> dict:
    """As the desk reads a table's status (hall/desk/link.py)."""
    return tablestatus.check_status(tablestatus.parse(payload))


def shown(s: Series, match: str = "QF2") -> dict:
    """As a box shows its series (box/series.py `SeriesPlay.shown`: the model's own)."""
    return s.shown(match)


def test_every_state_a_box_shows_is_believed() -> None:
    states = [
        Series(3),
        Series(7, earlier=(2, 0)),
        Series(3, (Game(1, 3, 1), Game(2, 2, 4, "overtime"))),
        Series(3, (Game(1, 3, 1), Game(2, 4, 2))),  # decided: the last game on the table
        Series(9, earlier=(4, 4)).add(Game(9, 0, 1, "shootout")),
    ]
    for s in states:
        assert check(status_with(shown(s)))["status"]["match_series"] == shown(s)


@pytest.mark.parametrize(
    "series",
    [
        {"best_of": 3, "game": 6, "home_wins": 5, "away_wins": 0, "winner": "home"},
        {"best_of": 4, "game": 1, "home_wins": 0, "away_wins": 0, "winner": None},
        {"best_of": 1, "game": 3, "home_wins": 0, "away_wins": 0, "winner": None},
        {"best_of": 3, "game": 1, "home_wins": 1, "away_wins": 0, "winner": None},
        {"best_of": 3, "game": 3, "home_wins": 1, "away_wins": 1, "winner": "away"},
        {"best_of": 3, "game": 2, "home_wins": 2, "away_wins": 0, "winner": None},
        {"best_of": 5, "game": 1.5, "home_wins": 0, "away_wins": 0, "winner": None},
        {"best_of": 5, "game": 1, "home_wins": -1, "away_wins": 0, "winner": None},
        {"best_of": 5, "game": 1, "home_wins": 0, "away_wins": True, "winner": None},
        {"best_of": 5, "game": 1, "home_wins": 0, "away_wins": 0, "winner": "nobody"},
        {"best_of": 5, "game": 1, "home_wins": 0, "away_wins": 0, "winner": None, "match": 7},
        "3:0",
    ],
)
def test_a_series_that_cannot_be_is_refused_naming_the_field(series: object) -> None:
    with pytest.raises(tablestatus.BadStatus, match=r"status\.match_series: not "):
        check(status_with(series))
