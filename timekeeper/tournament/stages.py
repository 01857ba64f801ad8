"""The stages after the basic groups, as a graph: final groups and placement groups whose
seats are basic groups' places (`2/1`: group 2's winner), and the play-offs from them.

The seats are fixed at the draw, the players in them known once their basic group is
complete. A final group carries the results between players of the same basic group (they
do not meet again: the match is left out of its round robin, and the basic group's result
counts, once); a placement group carries nothing (everyone plays everyone anew)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from timekeeper.tournament import bracket, series
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.schedule import GroupMatch, circle
from timekeeper.tournament.spec import LaterGroup, Playoff


def seat(group: str, place: int) -> str:
    return f"{group}/{place}"


def parse_seat(text: str) -> tuple[str, int] | None:
    """`2/1` → ("2", 1); anything else (a player's name) → None."""
    group, slash, place = text.rpartition("/")
    return (group, int(place)) if slash and group and place.isdigit() else None


def seat_text(text: str) -> str:
    """A seat as the sheets write it while its player is not known: `2/1` → `group 2 #1`."""
    found = parse_seat(text)
    return f"group {found[0]} #{found[1]}" if found else text


def later_matches(group: LaterGroup) -> list[GroupMatch]:
    """The group's round robin by the circle method over its seats; in a final group the
    pairs from the same basic group are left out (their result is carried)."""
    seats = [seat(g, p) for g, p in group.seats]
    out: list[GroupMatch] = []
    for r, pairs in enumerate(circle(seats), 1):
        for home, away in pairs:
            if group.carry and home.split("/")[0] == away.split("/")[0]:
                continue
            out.append(GroupMatch(f"{group.name}.{len(out) + 1}", group.name, home, away, r))
    return out


def playoff_nodes(p: Playoff) -> list[Node]:
    """The bracket of a group's top `p.top` by its places (byes for the best where the
    number is not a power of two), its ids prefixed for a second play-off (B.SF1)."""
    nodes = bracket.seeded([f"{p.group}{i}" for i in range(1, p.top + 1)], p.third_place)
    nodes = [replace(n, best_of=series.best_of_for(n.id, p.best_of)) for n in nodes]
    if not p.prefix:
        return nodes

    def source(s: str) -> str:
        return f"{s[:2]}{p.prefix}{s[2:]}" if s[:2] in ("W:", "L:") else s

    return [
        replace(
            n,
            id=p.prefix + n.id,
            name=f"{p.group} {n.name}",
            home=source(n.home),
            away=source(n.away),
        )
        for n in nodes
    ]


def playoff_of(node_id: str, playoffs: Sequence[Playoff]) -> Playoff | None:
    """The play-off a match id belongs to (unprefixed ids: the first)."""
    for p in playoffs:
        if p.prefix and node_id.startswith(p.prefix):
            return p
    return next((p for p in playoffs if not p.prefix), None)
