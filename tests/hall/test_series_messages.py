"""The series' fields of the desk's pairing and of the box's result (SERIES_CONTRACT): sent
only for a series' game, checked like every field from the bus."""

from __future__ import annotations

import json

import pytest

from timekeeper.hall.bus.messages import BadMessage
from timekeeper.hall.bus.pairing import parse_pairing
from timekeeper.hall.bus.result import from_status, parse_result

BASE = {
    "id": "QF2-c1",
    "round": 3,
    "match": "QF2",
    "stage": "quarter-final 2",
    "home": "Novák",
    "away": "Svoboda",
    "profile": "ithf-playoff",
    "sent": 1.0,
    "knockout": True,
}
GAME3 = {"best_of": 7, "game": 3, "home_wins": 2, "away_wins": 0}


def pairing(**fields: object) -> bytes:
    return json.dumps({**BASE, **fields}).encode()


def test_a_series_pairing_round_trips_and_a_single_match_is_as_it_was() -> None:
    p = parse_pairing(pairing(**GAME3))
    assert (p.best_of, p.game, p.home_wins, p.away_wins) == (7, 3, 2, 0)
    assert json.loads(p.to_json()) == {**BASE, **GAME3}
    single = parse_pairing(pairing())
    assert not single.series and json.loads(single.to_json()) == BASE


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"best_of": 7, "game": 3, "home_wins": 2}, "all of"),
        ({**GAME3, "best_of": 6}, "odd"),
        ({**GAME3, "best_of": 11}, "odd, 3-9"),
        ({**GAME3, "best_of": 1}, "odd, 3-9"),
        ({**GAME3, "game": 8}, "game must be 1-7"),
        ({**GAME3, "game": 0}, "game must be 1-7"),
        ({**GAME3, "home_wins": 4}, "under 4"),
        ({**GAME3, "game": True}, "whole numbers"),
        ({**GAME3, "away_wins": -1}, "under 4"),
    ],
)
def test_a_series_pairing_that_cannot_be_is_refused(fields: dict, said: str) -> None:
    with pytest.raises(BadMessage, match=said):
        parse_pairing(pairing(**fields))


def test_a_series_game_result_names_its_game_and_a_single_match_result_does_not() -> None:
    status = {"score": {"home": 2, "away": 1}, "decided": "regulation"}
    game = from_status(parse_pairing(pairing(**GAME3)), "1", status, 5.0)
    body = json.loads(game.to_json())
    assert body["game"] == 3 and body["pairing"]["best_of"] == 7
    assert parse_result(game.to_json()).game == 3
    single = from_status(parse_pairing(pairing()), "1", status, 5.0)
    assert "game" not in json.loads(single.to_json())
    assert parse_result(single.to_json()).game is None
    for wrong in (8, 0, "3"):
        with pytest.raises(BadMessage, match="game must be"):
            parse_result(json.dumps({**body, "game": wrong}).encode())
    with pytest.raises(BadMessage, match="only for a series"):
        parse_result(json.dumps({**json.loads(single.to_json()), "game": 1}).encode())


def test_a_series_pairing_calls_the_game_after_the_games_won() -> None:
    with pytest.raises(BadMessage, match="game 2 is"):
        parse_pairing(pairing(**{**GAME3, "game": 3, "home_wins": 1}))  # (game 3 at 1:0)
    with pytest.raises(BadMessage, match="game 1 is"):
        parse_pairing(pairing(**{**GAME3, "game": 3, "home_wins": 0}))  # (game 3 at 0:0)
