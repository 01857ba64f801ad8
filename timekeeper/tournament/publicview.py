"""The public's view of a tournament at a given time, by the file's `public:` settings (see
public.py for what they are and why): which results a page may show, each group's table and
cross-table as the public may see them, and which knock-out sides it may name. A pure
function of the tournament and the time.

It is the one filter: every page the desk serves without its token (the board's JSON, the
sheets, the players' pages, the tables' statuses) is drawn from a View; the director's, with
the token, from `view(t, FULL, now)` — the same drawing, nothing kept back."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from timekeeper.tournament.events import Event, ResultEvent
from timekeeper.tournament.fixture import Fixture, seat_text
from timekeeper.tournament.plan import Place
from timekeeper.tournament.public import Public
from timekeeper.tournament.results import Result
from timekeeper.tournament.standings import Played, Row, standings, tie_told
from timekeeper.tournament.state import Tournament

FULL = Public()  # the director's view: every result, every point, no table frozen


def _when(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def came_in(events: Iterable[Event]) -> dict[str, float | None]:
    """When each match's standing result came in (the latest result event's time)."""
    out: dict[str, float | None] = {}
    for e in events:
        if isinstance(e, ResultEvent):
            out[e.match] = _when(e.time)
    return out


@dataclass(frozen=True)
class View:
    """The public's view: the results it may see, and each group's table as it may see it."""

    results: dict[str, bool]  # match id -> its result (if any) may be shown
    groups: dict[str, list[dict[str, Any]]]  # group -> rows (points: None when hidden)
    frozen: dict[str, int]  # group -> the group round its table stands at (absent: live)
    points_hidden: bool
    # group -> the results its cross-table may show: home, away, result, carried from a
    # basic group (counted once, not played again)
    played: dict[str, list[tuple[str, str, Result, bool]]]

    def shown(self, m: Fixture) -> Result | None:
        """`m`'s result, if this view shows it."""
        return m.result if self.results.get(m.id, False) else None

    def named(self, m: Fixture) -> tuple[str | None, str | None]:
        """A knock-out match's players as this view may name them: a side that comes from
        the place of a group whose table is frozen is not named yet (it would tell the
        frozen table's order)."""

        def one(name: str | None, seat: object) -> str | None:
            return None if isinstance(seat, Place) and seat.group in self.frozen else name

        return one(m.home, m.home_source), one(m.away, m.away_source)

    def sides(self, m: Fixture) -> str:
        """`m`'s sides as Fixture.sides writes them, by `named`."""
        home, away = self.named(m)
        return f"{home or seat_text(m.home_source)} – {away or seat_text(m.away_source)}"


def view(t: Tournament, public: Public, now: float) -> View:
    """The public view of `t` at `now` (seconds since the epoch), by `public`."""
    in_groups = any(m not in t.results for m in t.group_matches)
    times = came_in(t.events)
    shown: dict[str, bool] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    frozen: dict[str, int] = {}
    played: dict[str, list[tuple[str, str, Result, bool]]] = {}
    hide_points = in_groups and public.points == "hidden"
    for group in t.groups:
        matches = [m for m in t.group_matches.values() if m.group == group]
        last = max((m.circle for m in matches), default=0)
        until = max(last - public.freeze_last_rounds, 0) if in_groups else last
        if until < last and any(m.id in t.results and m.circle > until for m in matches):
            frozen[group] = until  # (said once the first frozen round has a result)
        for m in matches:
            ok = m.id in t.results and m.circle <= until
            if ok and in_groups and public.results_for_minutes is not None:
                at = times.get(m.id)
                ok = at is not None and 0 <= now - at <= public.results_for_minutes * 60
            shown[m.id] = ok
        counted: list[Played] = [
            (fixture.home or m.home, fixture.away or m.away, t.results[m.id])
            for m in matches
            if m.id in t.results and m.circle <= until
            for fixture in (t.fixture(m.id),)  # a final group's seats: their players
        ] + t.carried(group)
        rows = t.standings(group) if group not in frozen else _standings(t, group, counted)
        complete = t.complete(group) and group not in frozen
        groups[group] = [_row(row, hide_points, complete) for row in rows]
        played[group] = [
            (fixture.home or m.home, fixture.away or m.away, t.results[m.id], False)
            for m in matches
            if shown[m.id]
            for fixture in (t.fixture(m.id),)
        ]
    met = {  # a carried result is shown as its basic group's match is
        frozenset((f.home, f.away)): shown.get(m, False)
        for m in t.group_matches
        for f in (t.fixture(m),)
    }
    for group in t.groups:
        played[group] += [
            (h, a, r, True) for h, a, r in t.carried(group) if met.get(frozenset((h, a)), False)
        ]
    for node in t.nodes:  # (the knock-out's results: always; the bracket says who won)
        shown[node] = True
    return View(shown, groups, frozen, hide_points, played)


def seen(t: Tournament, now: float, director: bool) -> View:
    """The view a page gives: the director's (all of it: with the desk's token) or the
    public's (the file's `public:`: without it)."""
    return view(t, FULL if director else t.spec.public, now)


HIDDEN: tuple[str, ...] = ("won", "ot_won", "drawn", "ot_lost", "lost", "points")
HIDDEN += ("goals_for", "goals_against", "goal_difference", "goals")


def _row(row: Row, hide: bool, complete: bool) -> dict[str, Any]:
    """A table's row: with what separated it from the next said as the board and the sheets
    say it (standings.tie_told); with points hidden, whatever they could be counted from
    (wins, draws, losses, goals) goes too, and what separated it: the place, the name and the
    matches played stay."""
    ahead_by, lot = tie_told(row, complete)
    out = {
        **row.to_json(),
        "goals": f"{row.goals_for}:{row.goals_against}",
        "ahead_by": ahead_by,
        "lot": lot,
    }
    if hide:
        out.update(dict.fromkeys(HIDDEN), ahead_by="", lot="")
    return out


def _standings(t: Tournament, group: str, counted: list[Played]) -> list[Row]:
    return standings(t.groups[group], counted, t.spec.rules, t.lots.get(group, ()))
