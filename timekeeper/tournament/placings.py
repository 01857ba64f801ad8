"""The final standings: every player one place, 1 … N, from the trees' outcomes and the
groups' orders (docs/tournament.md, "The play-off" and "An ITHF tournament")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from timekeeper.tournament import bracket, stages
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.spec import Spec
from timekeeper.tournament.standings import Row


class Folded(Protocol):
    """What the final standings read of the tournament (state.Tournament)."""

    spec: Spec
    basic: dict[str, tuple[str, ...]]
    order: tuple[str, ...]
    nodes: dict[str, Node]

    @property
    def later(self) -> Mapping[str, object]: ...
    @property
    def groups(self) -> dict[str, tuple[str, ...]]: ...
    def standings(self, group: str) -> list[Row]: ...
    def outcome(self, match: str) -> tuple[str, str] | None: ...


def final(t: Folded) -> list[tuple[int, str]]:
    """The final standings for the sheets and the ITHF form (see bracket.placings)."""
    outcomes = {n: o for n in t.nodes if (o := t.outcome(n)) is not None}
    if t.later:
        return _staged(t, outcomes)
    return [
        (p, n) for p, n in bracket.placings(list(t.nodes.values()), outcomes, _by_group_place(t))
    ]


def _by_group_place(t: Folded) -> list[str]:
    """Everyone, by basic-group place, then points, goal difference, goals scored, then
    the draw order (the order of those no later stage ranks)."""
    rest: list[str] = []
    if t.basic:
        rows = [r for g in t.basic for r in t.standings(g)]
        rows.sort(
            key=lambda r: (
                r.place,
                -r.points,
                -r.goal_difference,
                -r.goals_for,
                t.order.index(r.player),
            )
        )
        rest = [r.player for r in rows]
    else:
        rest = list(t.order)
    return rest


def _staged(t: Folded, outcomes: dict[str, tuple[str, str]]) -> list[tuple[int, str]]:
    """A staged day: the final groups, then the placement groups in the file's order, each
    by its play-off (those out earlier below, by the group's order) and then its own
    standings; those in no later group (or in one not filled yet) after them, by
    basic-group place."""
    placed: list[str] = []
    groups = t.groups
    done: set[str] = set()
    for name in t.later:
        if name not in groups:
            continue
        playoff = next((p for p in t.spec.playoffs if name in p.groups), None)
        if playoff is not None and playoff.name in done:
            continue
        order = _by_place(t, [g for g in (playoff.groups if playoff else [name]) if g in groups])
        if playoff is not None:
            done.add(playoff.name)
            nodes = [
                n for n in t.nodes.values() if stages.playoff_of(n.id, t.spec.playoffs) == playoff
            ]
            order = [n for _, n in bracket.placings(nodes, outcomes, order)]
        placed += [n for n in order if n not in placed]
    placed += [n for n in _by_group_place(t) if n not in placed]
    return [(i, n) for i, n in enumerate(placed, 1)]


def _by_place(t: Folded, names: Sequence[str]) -> list[str]:
    """The players of these groups by their place, then the groups' order (a crossed
    play-off's two groups: A1's 1st, A2's 1st, A1's 2nd …)."""
    rows = [(r.place, i, r.player) for i, g in enumerate(names) for r in t.standings(g)]
    return [player for _, _, player in sorted(rows)]
