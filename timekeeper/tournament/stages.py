"""The stages after the basic groups: final groups and placement groups whose seats are
basic groups' places, and the play-offs from them (plan.py's RoundRobin and Bracket).

The seats are fixed at the draw, the players in them known once their basic group is
complete. A final group carries the results between players of the same basic group (they
do not meet again: the match is left out of its round robin, and the basic group's result
counts, once); a placement group carries nothing (everyone plays everyone anew)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from timekeeper.tournament import bracket, plan, series
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.plan import Bracket, Loser, Place, RoundRobin, Seat, Winner
from timekeeper.tournament.schedule import GroupMatch, circle


def later_matches(group: RoundRobin) -> list[GroupMatch]:
    """The group's round robin by the circle method over its seats (the ledger names a seat
    by its text, `2/1`); in a final group the pairs from the same basic group are left out
    (their result is carried)."""
    of = {plan.text(s): s for s in group.seats}
    out: list[GroupMatch] = []
    for r, pairs in enumerate(circle(list(of)), 1):
        for home, away in pairs:
            if group.carry and of[home].group == of[away].group:
                continue
            out.append(GroupMatch(f"{group.name}.{len(out) + 1}", group.name, home, away, r))
    return out


def interleaved(sources: Sequence[str], places: Sequence[int], k: int, n: int) -> list[Place]:
    """The k-th (1-based) of n final groups sharing these places of these basic groups, dealt
    alternately: with two, the first takes the 1st, 3rd … of the first basic group and the
    2nd, 4th … of the second (and so on), the second the rest."""
    return [Place(g, p) for p in places for i, g in enumerate(sources) if (i + p - 1) % n == k - 1]


def playoff_nodes(p: Bracket) -> list[Node]:
    """The bracket of a play-off from later groups: one group's best `top` by its places
    (byes for the best where the number is not a power of two), or two groups' crossed; its
    ids prefixed for a second play-off (B.SF1)."""
    if len(p.groups) == 2:
        nodes = bracket.crossed(p.groups[0], p.groups[1], p.top, p.third_place)
    else:
        seats: list[Seat] = [Place(p.groups[0], i) for i in range(1, p.top + 1)]
        nodes = bracket.seeded(seats, p.third_place)
    nodes = [replace(n, best_of=series.best_of_for(n.id, p.best_of)) for n in nodes]
    if not p.prefix:
        return nodes

    def source(s: Seat) -> Seat:
        if isinstance(s, Winner):
            return Winner(p.prefix + s.match)
        return Loser(p.prefix + s.match) if isinstance(s, Loser) else s

    return [
        replace(
            n,
            id=p.prefix + n.id,
            name=f"{p.name} {n.name}",
            home=source(n.home),
            away=source(n.away),
        )
        for n in nodes
    ]


def playoff_of(node_id: str, playoffs: Sequence[Bracket]) -> Bracket | None:
    """The play-off a match id belongs to (unprefixed ids: the first)."""
    for p in playoffs:
        if p.prefix and node_id.startswith(p.prefix):
            return p
    return next((p for p in playoffs if not p.prefix), None)
