"""A result that changes at its table before it is confirmed there (a goal entered after the
end counts, docs/commands.md) comes home again with the same id: the desk takes it as a
correction with that reason; the same result again is applied once; once the
director confirmed the old one, the change waits for the director."""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

from boardhall import BoardDesk, call, cup

from timekeeper.hall.bus.pairing import parse_pairing
from timekeeper.hall.bus.result import MatchResult
from timekeeper.hall.desk.director import Director
from timekeeper.tournament.events import ResultEvent


def home(pairing, score: tuple[int, int], confirmed: bool = False) -> MatchResult:
    return MatchResult(pairing, "1", score, "regulation", (), (), time.time(), confirmed=confirmed)


def test_a_result_changed_at_its_table_before_it_is_confirmed_is_a_correction(
    tmp_path: Path,
) -> None:
    file = cup(tmp_path)
    first = call(file, 1, time.time())[0]
    director = Director(BoardDesk(), file)
    assert director.receive(home(first, (1, 0))) == "applied"
    assert director.receive(home(first, (1, 0))) == "known"
    # the late equaliser, then the operator's confirm with it
    assert director.receive(home(first, (1, 1))) == "corrected"
    assert director.receive(home(first, (1, 1), confirmed=True)) == "known"
    assert first.id in director.confirmed
    m = director.t.fixture(first.match)
    assert m.result is not None and m.result.text() == "1:1"
    mine = [e for e in director.t.events if isinstance(e, ResultEvent) and e.source == first.id]
    assert [e.result.text() for e in mine] == ["1:0", "1:1"]
    assert mine[-1].reason == "changed at its table before it was confirmed there"
    assert [e.result.text() for e in mine[-1:] if e.corrects] == ["1:1"]


def test_a_change_after_the_director_confirmed_waits_for_the_director(tmp_path: Path) -> None:
    file = cup(tmp_path)
    first = call(file, 1, time.time())[0]
    director = Director(BoardDesk(), file)
    assert director.receive(home(first, (2, 0))) == "applied"
    director.confirm(first.id)
    said = director.receive(dataclasses.replace(home(first, (2, 1))))
    assert said == f"pending: {first.match} was confirmed as 2:0", said
    assert director.t.fixture(first.match).result.text() == "2:0"


def test_a_round_called_elsewhere_is_the_boards_whoever_reads_the_calls_first(
    tmp_path: Path,
) -> None:
    """Round 2 called in another terminal while the boxes still send round 1's statuses: the
    status read the calls file first (it marks matches begun), and the board still shows
    round 2 (it showed round 1 all evening, a newcomer's run found)."""
    file = cup(tmp_path)
    first = call(file, 1, time.time())
    director = Director(BoardDesk(), file)
    for p, table in zip(first, ("1", "2"), strict=False):
        director.receive(dataclasses.replace(home(p, (1, 0)), table=table))
    assert director.snapshot()["round"] == 1
    second = call(file, 2, time.time())  # (`hall round 2` in another terminal)
    director.status(
        "1", {"online": True, "pairing": {"id": first[0].id}, "status": {"state": "finished"}}
    )
    board = director.snapshot()
    assert board["round"] == 2
    assert {t["pairing"]["id"] for t in board["tables"] if t["pairing"]} == {p.id for p in second}


def series_desk(tmp_path: Path, best_of: str) -> tuple[Director, list]:
    """A desk serving a play-off in series, round 1 called; the pairings it pushed."""
    from cups import Client, drawn

    desk = BoardDesk()
    desk.client = Client()
    director = Director(desk, drawn(tmp_path, best_of))
    director.call_round(1, wait=0.0)
    return director, desk.client.sent


def game(sent: list, score: tuple[int, int], confirmed: bool = False) -> MatchResult:
    """Table 1's result for the game its latest pairing calls."""
    p = parse_pairing(next(body for topic, body, _ in reversed(sent) if "/1/" in topic))
    return MatchResult(p, "1", score, "regulation", (), (), time.time(), confirmed, p.game)


def test_a_game_of_a_decided_series_changed_at_its_table_waits(tmp_path: Path, caplog) -> None:
    """SF1 (best of 3) won 2:0; its box sends game 1 again as 0:5, confirmed at the table: it
    waits for the director, the series stands, and the log never says the director confirmed."""
    director, sent = series_desk(tmp_path, "{SF: 3}")
    first = game(sent, (2, 1))
    assert director.receive(first) == "applied"
    assert director.receive(game(sent, (3, 1))) == "applied"
    with caplog.at_level(logging.INFO):
        said = director.receive(dataclasses.replace(first, score=(0, 5), confirmed=True))
        assert director.receive(game(sent, (3, 1), confirmed=True)) == "known"
    assert said.startswith("pending: SF1 is decided (") and "--game 1" in said, said
    assert list(director.pending) == [f"{first.id}.g1"]
    assert director.t.named("SF1").series.games_text() == "2:1, 3:1"
    log = "\n".join(r.getMessage() for r in caplog.records)
    assert "confirmed by the director" not in log and f"{first.id}.g2 confirmed at its" in log


def test_a_game_changed_after_a_later_game_was_played_waits(tmp_path: Path) -> None:
    director, sent = series_desk(tmp_path, "{SF: 5}")
    first = game(sent, (2, 1))
    assert director.receive(first) == "applied"
    assert director.receive(game(sent, (1, 3))) == "applied"
    said = director.receive(dataclasses.replace(first, score=(0, 4)))
    assert said.startswith("pending: SF1 game 2 is played already"), said
    assert director.t.named("SF1").series.games_text() == "2:1, 1:3"
    assert game(sent, (1, 0)).game == 3  # (game 3 still called next)
