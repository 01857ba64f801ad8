"""The public's view of a tournament at a given time, by the file's `public:` settings (see
public.py for what they are and why): which results a player page may show, and each group's
table as the public may see it. A pure function of the tournament and the time."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from timekeeper.tournament.events import Event, ResultEvent
from timekeeper.tournament.public import Public
from timekeeper.tournament.standings import Played, Row, standings
from timekeeper.tournament.state import Tournament


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

    results: dict[str, bool]  # match id -> its result may be shown
    groups: dict[str, list[dict[str, Any]]]  # group -> rows (points: None when hidden)
    frozen: dict[str, int]  # group -> the group round its table stands at (absent: live)
    points_hidden: bool


def view(t: Tournament, public: Public, now: float) -> View:
    """The public view of `t` at `now` (seconds since the epoch), by `public`."""
    in_groups = any(m not in t.results for m in t.group_matches)
    times = came_in(t.events)
    shown: dict[str, bool] = {}
    groups: dict[str, list[dict[str, Any]]] = {}
    frozen: dict[str, int] = {}
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
        groups[group] = [_row(row, hide_points) for row in rows]
    for node in t.nodes:
        shown[node] = node in t.results
    return View(shown, groups, frozen, hide_points)


HIDDEN: tuple[str, ...] = ("won", "ot_won", "drawn", "ot_lost", "lost", "points")
HIDDEN += ("goals_for", "goals_against", "goal_difference", "goals")


def _row(row: Row, hide: bool) -> dict[str, Any]:
    """A table's row for the public: with points hidden, whatever they could be counted from
    (wins, draws, losses, goals) goes too; the place, the name and the matches played stay."""
    out = {**row.to_json(), "goals": f"{row.goals_for}:{row.goals_against}"}
    if hide:
        out.update(dict.fromkeys(HIDDEN), ahead_by="")
    return out


def _standings(t: Tournament, group: str, counted: list[Played]) -> list[Row]:
    return standings(t.groups[group], counted, t.spec.rules, t.lots.get(group, ()))
