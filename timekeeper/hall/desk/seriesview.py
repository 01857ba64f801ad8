"""A play-off match as the board and the players' pages show it: who plays (or where a side
not known yet comes from: "winner of SF1 (Novák – Svoboda)"), the winner once decided, and
for a series (rules/series.py) the game on the table, the wins and each game's score. Plain
JSON for `/api/board` and `/api/player/NAME`; the pages put it into words."""

from __future__ import annotations

from typing import Any

from timekeeper.rules.series import Game
from timekeeper.tournament.fixture import Fixture, seat_text
from timekeeper.tournament.plan import Loser, Seat, Winner
from timekeeper.tournament.publicview import View
from timekeeper.tournament.state import Tournament


def side_from(
    t: Tournament, m: Fixture, side: str, view: View | None = None
) -> dict[str, str] | None:
    """Where a side not known yet comes from, for a page to say in its language: `{"what":
    "winner", "match": "SF1", "sides": "Novák – Svoboda"}` (`sides` "" while that match's
    players are not known either); None for a side known, or one from a group's place.
    Named as `view` (the public's, tournament/publicview.py) may name them; None: all."""
    seat: Seat | None = m.home_source if side == "home" else m.away_source
    if _named(m, view)[side == "away"] or not isinstance(seat, Winner | Loser):
        return None
    before = t.fixture(seat.match)
    home, away = _named(before, view)
    sides = f"{home} – {away}" if home and away else ""
    return {"what": "winner" if isinstance(seat, Winner) else "loser", "match": seat.match,
            "sides": sides}  # fmt: skip


def side_text(t: Tournament, m: Fixture, side: str, view: View | None = None) -> str:
    """A side's name, or where it comes from: `winner of SF1 (Novák – Svoboda)` (that
    match's players once known, else `winner of SF1`), `A1` (a group's place), as `view`
    may name them."""
    if name := _named(m, view)[side == "away"]:
        return name
    came = side_from(t, m, side, view)
    if came is None:
        return seat_text(m.home_source if side == "home" else m.away_source)
    known = f" ({came['sides']})" if came["sides"] else ""
    return f"{came['what']} of {came['match']}{known}"


def _named(m: Fixture, view: View | None) -> tuple[str | None, str | None]:
    return view.named(m) if view is not None else (m.home, m.away)


def series_view(m: Fixture) -> dict[str, Any] | None:
    """A series' state for the pages (None: a single match): best of, the game on the table,
    the wins, the winner, and each game played (its number, score as `3:2 (SD)` and winner)."""
    s = m.series
    if s is None:
        return None
    return {
        **s.shown(m.id),
        "walkover": s.walkover is not None,
        "games": [
            {"number": g.number, "score": g.text(), "winner": g.winner}
            for g in s.games
            if not g.walkover
        ],
    }


def match_view(t: Tournament, m: Fixture) -> dict[str, Any]:
    """A play-off match's sides (`sides_view`), its winner ("home", "away" or None) and its
    series, for the bracket's blocks."""
    winner = m.series.winner if m.series is not None else m.result.winner if m.result else None
    return {**sides_view(t, m), "winner": winner, "series": series_view(m)}


def sides_view(t: Tournament, m: Fixture, view: View | None = None) -> dict[str, Any]:
    """A match's sides as `view` may name them, each a name or where it comes from, in
    words (`home`, `away`) and for a page to say in its language (`home_from`, `away_from`)."""
    return {
        **{side: side_text(t, m, side, view) for side in ("home", "away")},
        **{f"{side}_from": side_from(t, m, side, view) for side in ("home", "away")},
    }


def standing_for(m: Fixture, player: str) -> dict[str, Any] | None:
    """A series from `player`'s side (a phone's page), their figures first: best of, the
    game on the table, the wins, whether they won it (None: not decided) and each game's
    score with whether they won it. None for a single match."""
    s = m.series
    if s is None:
        return None
    side = "home" if m.home == player else "away"

    def mine_first(home: int, away: int) -> tuple[int, int]:
        return (home, away) if side == "home" else (away, home)

    def game(g: Game) -> dict[str, Any]:
        score = "{}:{}".format(*mine_first(g.home, g.away))
        return {
            "number": g.number,
            "score": score + g.text()[len(f"{g.home}:{g.away}") :],
            "won": g.winner == side,
        }

    return {
        "match": m.id,
        "best_of": s.best_of,
        "game": s.on_table,
        "wins": list(mine_first(s.home_wins, s.away_wins)),
        "won": None if s.winner is None else s.winner == side,
        "games": [game(g) for g in s.games if not g.walkover],
    }
