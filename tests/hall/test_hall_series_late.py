"""Late and out-of-order game results from a table's own login: on a broker with the project's
own ACL and the table's user as `scripts/install-pi.sh --hall-user` writes it, table 1's box
sends a game of its series again, changed, after a later game was played or the series was
decided. `hall serve` runs in a process of its own. Such a change is never applied from the
table: it waits for the director, named on the board, and the series stands as played."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from deskhall import Served, tk
from test_hall_forged import SECRETS, Table, desk_log, result, until, waiting

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.desk.callbook import CallBook
from timekeeper.hall.practice import Mosquitto
from timekeeper.tournament.ledger import open_tournament

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

FINAL = """\
title: Final night
rules: {extends: radegast}
tables: 1
players: [Adam, Běla]
stages:
  knockout:
    tree: seeded
    profile: ithf-playoff
    final_profile: ithf-playoff
    best_of: {F: 5}
"""


@pytest.fixture
def final(tmp_path: Path) -> Iterator[dict]:
    """The broker (ACL, users desk and 1), `hall serve --config desk.yaml --tournament
    cup.yaml` with a best-of-5 final at table 1, round 1 called, table 1 holding game 1."""
    # the shipped config and ACL, with the users `install-pi.sh --hall-user` adds
    broker = Mosquitto(tmp_path / "mq", users=SECRETS, tables=("1", "2")).start()
    served, table = None, None
    try:
        url = broker.url
        (tmp_path / "desk.pass").write_text(SECRETS["desk"] + "\n")
        config = tmp_path / "desk.yaml"
        config.write_text(f"hall:\n  broker: {url}\n  user: desk\n  password_file: desk.pass\n")
        file = tmp_path / "cup.yaml"
        file.write_text(FINAL, encoding="utf-8")
        drawn = tk("tournament", "draw", "-f", str(file), "--seed", "1")
        assert drawn.returncode == 0, drawn.stderr
        served = Served(url, file, tmp_path / "state", "--config", str(config))
        table = Table(url, "1")
        called = tk("hall", "round", "1", "--config", str(config), "--tournament", str(file))
        assert called.returncode == 0, called.stdout + called.stderr
        yield {"served": served, "table": table, "file": file}
    finally:
        if table is not None:
            table.close()
        if served is not None:
            served.stop()
        broker.stop()


def holds(table: Table, game: int, wins: tuple[int, int]) -> Pairing:
    """The table's pairing once it is the call of `game` at `wins`."""
    return until(
        lambda: (
            (p := table.pairing) is not None
            and (p.game, p.home_wins, p.away_wins) == (game, *wins)
            and p
        ),
        f"table 1's call of game {game} at {wins}",
    )


def play(table: Table, games: list[tuple[int, int]]) -> list[Pairing]:
    """Each game as its box ends it: its call, then its result on the table's own topic."""
    calls, wins = [], [0, 0]
    for number, score in enumerate(games, 1):
        p = holds(table, number, (wins[0], wins[1]))
        table.send(dataclasses.replace(result(p, "1", score), game=number))
        wins[0 if score[0] > score[1] else 1] += 1
        calls.append(p)
    return calls


def series(file: Path) -> tuple[str, list[str]]:
    t, _ = open_tournament(file, drawn=True)
    s = t.series["F"]
    return s.score_text(), [g.text() for g in s.games]


def again(p: Pairing, number: int, score: tuple[int, int]):
    """Game `number` sent again by its box, changed and confirmed at the table."""
    return dataclasses.replace(result(p, "1", score, confirmed=True), game=number)


def test_a_decided_final_is_never_reopened_by_its_tables_late_changes(final) -> None:
    """The final won 3:1 at table 1; its box then sends game 1 as 0:5 and game 2 as 0:6,
    `confirmed: true`: both wait for the director, named on the board; the series stays 3:1,
    no game 5 is called, and the log never calls the table's confirm the director's."""
    served, table, file = final["served"], final["table"], final["file"]
    calls = play(table, [(1, 0), (2, 0), (0, 1), (3, 0)])
    until(lambda: series(file)[0] == "3:1", "the final decided 3:1 in the ledger")
    table.send(again(calls[0], 1, (0, 5)))
    table.send(again(calls[1], 2, (0, 6)))
    waits = until(
        lambda: (w := waiting(served, "1", "F")) and len(w) == 2 and w,
        "both changed games waiting for the director",
    )
    assert sorted((w["id"], w["score"]) for w in waits) == [
        (f"{calls[0].id}.g1", "0:5"),
        (f"{calls[0].id}.g2", "0:6"),
    ], waits
    assert all("decided" in w["why"] for w in waits), waits
    assert series(file) == ("3:1", ["1:0", "2:0", "0:1", "3:0"])
    book = CallBook(file)
    book.read()
    assert max(p.game for p in book.issued.values()) == 4  # (no game 5 called)
    assert [p.game for p in [book.latest["F"]]] == [4]
    said = desk_log(served)
    assert "confirmed by the director" not in said, said
    assert "changed at its table" not in said, said
    assert "table 1: result 0:5 for F waits for the director" in said, said


def test_a_game_changed_after_a_later_game_was_played_waits(final) -> None:
    """Game 1 of the final sent again as 0:4 while game 3 is already in (2:1 in games): it
    waits for the director, the series stays 2:1 with game 4 next, and game 4 still counts."""
    served, table, file = final["served"], final["table"], final["file"]
    calls = play(table, [(1, 0), (0, 1), (2, 0)])
    holds(table, 4, (2, 1))
    table.send(dataclasses.replace(result(calls[0], "1", (0, 4)), game=1))
    (waits,) = until(lambda: waiting(served, "1", "F"), "the changed game 1 waiting")
    assert (waits["id"], waits["score"]) == (f"{calls[0].id}.g1", "0:4"), waits
    assert "game 3" in waits["why"], waits
    assert series(file) == ("2:1", ["1:0", "0:1", "2:0"])
    fourth = holds(table, 4, (2, 1))
    table.send(dataclasses.replace(result(fourth, "1", (1, 0)), game=4))
    until(lambda: series(file)[0] == "3:1", "game 4 in: the final decided 3:1")
    assert series(file)[1] == ["1:0", "0:1", "2:0", "1:0"]
    assert [w["id"] for w in waiting(served, "1", "F")] == [f"{calls[0].id}.g1"]
