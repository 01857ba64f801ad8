"""A play-off in series at the desk (the desk's side), each part a process of
its own on a real Mosquitto: `hall serve --tournament`, `hall round N`, and tables that
answer each game's pairing with that game's result as a box does (the box itself is
series33b's; here a fake). Each game's result goes into the ledger once; the desk pushes
the same pairing again, retained, for the next game with the wins so far, and none after
the series is decided; then the bracket moves on and the next round calls the final."""

from __future__ import annotations

import time

import pytest
from deskhall import FakeTables, Served, tk
from helpers import HALL_WAIT, wait_for

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.bus.result import MatchResult, result_topic
from timekeeper.tournament.ledger import open_tournament

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

CUP = """\
title: Series night
rules: {extends: radegast}
tables: 2
players: [Novák, Dvořák, Svoboda, Černý]
stages:
  knockout:
    tree: seeded
    profile: ithf-playoff
    final_profile: ithf-playoff
    best_of: {SF: 3, F: 7, 3P: 5}
"""


class SeriesTables(FakeTables):
    def game(self, table: str, home: int, away: int, decided: str = "regulation") -> Pairing:
        """The table's game result for the pairing it holds (its game with it)."""
        p = self.pairings[table]
        r = MatchResult(p, table, (home, away), decided, (), (), time.time(), game=p.game)
        self.client.publish(result_topic("hall", table), r.to_json(), qos=1, retain=True)
        return p

    def waits_for(self, table: str, game: int, wins: tuple[int, int]) -> Pairing:
        return wait_for(
            lambda: (
                (p := self.pairings.get(table))
                and (p.game, p.home_wins, p.away_wins) == (game, *wins)
                and p
            ),
            f"table {table}'s pairing for game {game} at {wins}",
            HALL_WAIT,
        )


def test_the_desk_calls_each_game_of_a_series_until_it_is_decided(broker, tmp_path) -> None:
    file = tmp_path / "cup.yaml"
    file.write_text(CUP, encoding="utf-8")
    assert tk("tournament", "draw", "-f", str(file), "--seed", "1").returncode == 0
    served = Served(broker["url"], file, tmp_path / "desk")
    tables = SeriesTables(broker["url"])
    try:
        called = tk("hall", "round", "1", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        assert "SF1 · game 1 · 0:0 semi-final 1: Černý – Dvořák" in called.stdout
        first = tables.waits_for("1", 1, (0, 0))
        assert (first.match, first.best_of) == ("SF1", 3)
        tables.game("1", 2, 1)
        second = tables.waits_for("1", 2, (1, 0))
        assert second.id == first.id and second.sides == first.sides
        tables.waits_for("2", 1, (0, 0))
        tables.game("2", 0, 1)
        tables.waits_for("2", 2, (0, 1))
        tables.game("2", 3, 2, "sudden_death")  # (a drawn game: ITHF 4.8's sudden death)
        tables.waits_for("2", 3, (1, 1))
        tables.game("1", 3, 0)  # SF1: Černý wins 2:0
        tables.game("2", 1, 2)  # SF2: Svoboda wins 2:1

        def decided() -> bool:
            t, _ = open_tournament(file, drawn=True)
            return t.named("SF1").result is not None and t.named("SF2").result is not None

        wait_for(decided, "both semi-finals decided in the ledger", HALL_WAIT)
        t, _ = open_tournament(file, drawn=True)
        assert [(g.home, g.away, g.decided) for g in t.series["SF2"].games] == [
            (0, 1, "regulation"),
            (3, 2, "sudden_death"),
            (1, 2, "regulation"),
        ]
        sources = [e.source for e in t.history("SF2") if getattr(e, "source", None)]
        assert len(sources) == len(set(sources)) == 3  # each game once, under its own id
        assert tables.pairings["1"].game == 2  # no pairing for a game after the decided one
        assert t.named("F").sides == "Černý – Svoboda"
        board = wait_for(
            lambda: (b := served.board()) and b["next"]["round"] == 2 and b,
            "the board to offer round 2",
            HALL_WAIT,
        )
        assert board["pending"] == []
        called = tk("hall", "round", "2", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        final = wait_for(
            lambda: (p := tables.pairings.get("1")) and p.match == "F" and p,
            "the final's pairing",
            HALL_WAIT,
        )
        assert (final.best_of, final.game, final.home_wins, final.away_wins) == (7, 1, 0, 0)
        nxt = tk("tournament", "rounds", "--next", "-f", str(file))
        assert "table 1: round 2  F · game 1 · 0:0  Černý – Svoboda  (ready)" in nxt.stdout
    finally:
        tables.close()
        out, err = served.stop()
    assert "Traceback" not in out + err
