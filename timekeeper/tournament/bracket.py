"""The play-off tree: which group places (or drawn seeds) meet, and where each winner and
loser goes next, up to the final and the 3rd-place match.

A tree is a list of Nodes whose sides are seats (plan.py) — a group's place, a seed of a
knock-out drawn alone, the winner or loser of a match — so it is fixed at the draw and filled
in as results come, never rebuilt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from timekeeper.tournament.plan import Loser, Place, Seat, Seed, Winner, group_of

Entry = tuple[Seat, Seat] | Seat  # a first-round match, or a seat that has a bye


@dataclass(frozen=True)
class Node:
    id: str  # "QF1", "SF2", "F", "3P", "P7", "R16-3"
    name: str  # "quarter-final 1"
    home: Seat
    away: Seat
    level: int  # 0 for the first round
    places: tuple[int, int] | None = None  # (winner's, loser's) final place, if it decides them
    final: bool = False  # played with the final's profile
    best_of: int = 1  # a series of this many games (series.py); 1: one match

    @property
    def needs(self) -> list[str]:
        """The matches this one waits for."""
        return [s.match for s in (self.home, self.away) if isinstance(s, Winner | Loser)]


def level_name(matches: int) -> tuple[str, str]:
    """(id prefix, name) of a level with this many slots."""
    return {1: ("F", "final"), 2: ("SF", "semi-final"), 4: ("QF", "quarter-final")}.get(
        matches, (f"R{2 * matches}-", f"round of {2 * matches}")
    )


def tree(entries: Sequence[Entry], third_place: bool) -> list[Node]:
    """A single-elimination tree from its first round, in bracket order: neighbours' winners
    meet. A bye (a bare source) goes straight to the next level."""
    if len(entries) & (len(entries) - 1):
        raise ValueError(f"{len(entries)} first-round slots do not make a tree")
    nodes: list[Node] = []
    current = list(entries)
    level = 0
    while True:
        prefix, name = level_name(len(current))
        winners: list[Seat] = []
        for i, entry in enumerate(current):
            if not isinstance(entry, tuple):
                winners.append(entry)
                continue
            alone = len(current) == 1
            node_id = prefix if alone else f"{prefix}{i + 1}"
            nodes.append(
                Node(
                    node_id,
                    name if alone else f"{name} {i + 1}",
                    entry[0],
                    entry[1],
                    level,
                    (1, 2) if alone else None,
                    final=alone,
                )
            )
            winners.append(Winner(node_id))
        if len(current) == 1:
            break
        current = [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]
        level += 1
    semis = [n for n in nodes if n.id in ("SF1", "SF2")]
    if third_place and len(semis) == 2:
        final = nodes.pop()
        nodes.append(Node("3P", "3rd place", Loser("SF1"), Loser("SF2"), final.level, (3, 4)))
        nodes.append(final)
    return nodes


def cross(groups: Sequence[str], advance: int, third_place: bool) -> list[Node]:
    """Radegast's tree: A1–B2, B1–A2, C1–D2 … (advance 2), or A1–B1 … (advance 1). The
    winners of A and B (and A's two) are in different halves, so they meet only in the
    final."""
    if advance == 1:
        return tree(
            [(Place(groups[i], 1), Place(groups[i + 1], 1)) for i in range(0, len(groups), 2)],
            third_place,
        )
    if len(groups) == 1:
        return tree([(Place(groups[0], 1), Place(groups[0], 2))], third_place)
    top = [(Place(groups[i], 1), Place(groups[i + 1], 2)) for i in range(0, len(groups), 2)]
    bottom = [(Place(groups[i + 1], 1), Place(groups[i], 2)) for i in range(0, len(groups), 2)]
    return tree(top + bottom, third_place)


def crossed(x: str, y: str, top: int, third_place: bool) -> list[Node]:
    """A play-off drawn across two groups, each one's best `top`: with 4, X1–Y4, Y2–X3 in the
    top half, Y1–X4, X2–Y3 in the bottom (the better place at home), so the two winners meet
    only in the final and two of one group not before the semi-finals."""
    if top == 1:
        return tree([(Place(x, 1), Place(y, 1))], third_place)
    half = [(p, top + 1 - p) for p in bracket_order(top // 2)]  # (1, 4), (2, 3) for 4

    def pair(a: str, b: str, p: int, q: int) -> tuple[Seat, Seat]:
        return (Place(a, p), Place(b, q)) if p % 2 else (Place(b, p), Place(a, q))

    upper = [pair(x, y, p, q) for p, q in half]
    lower = [pair(y, x, p, q) for p, q in half]
    return tree(upper + lower, third_place)


def bracket_order(size: int) -> list[int]:
    """Seed numbers in bracket positions: 1 and 2 meet only in the final, 1–4 only in the
    semi-finals … (1, 8, 4, 5, 2, 7, 3, 6 for 8)."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [x for seed in order for x in (seed, n + 1 - seed)]
    return order


def seeded(sources: Sequence[Seat], third_place: bool) -> list[Node]:
    """A tree for any number: sources in seed order, the bracket the next power of two, the
    best seeds getting the byes."""
    size = 1
    while size < len(sources):
        size *= 2
    size = max(size, 2)
    positions = bracket_order(size)
    entries: list[Entry] = []
    for i in range(0, size, 2):
        a, b = positions[i], positions[i + 1]
        if b > len(sources):
            entries.append(sources[a - 1])
        else:
            entries.append((sources[a - 1], sources[b - 1]))
    return tree(_apart(entries), third_place)


def _clashes(entries: Sequence[Entry]) -> int:
    """Pairs of one group meeting in the first match of either: a first-round match, or a
    bye's holder and the match beside it (its first opponent comes from there)."""
    count = 0
    for i, entry in enumerate(entries):
        if isinstance(entry, tuple):
            count += group_of(entry[0]) is not None and group_of(entry[0]) == group_of(entry[1])
        elif (i ^ 1) < len(entries):  # (a lone entry: a knock-out of one has no match)
            beside = entries[i ^ 1]
            sides = beside if isinstance(beside, tuple) else (beside,)
            count += sum(
                group_of(entry) is not None and group_of(entry) == group_of(s) for s in sides
            )
    return count


def _apart(entries: list[Entry]) -> list[Entry]:
    """The seeded bracket with no two of one group meeting at once (three groups
    could give C1–C2, and A1's first opponent A2): sides of the first round (a bye's
    holder too) are swapped with others of the same place (a runner-up for a runner-up),
    the nearest in the bracket first, while a swap lowers those meetings. A group winner
    keeps the bye its seed gave it."""
    out = list(entries)
    spots = [
        (i, k)
        for i, e in enumerate(out)
        for k in ((0, 1) if isinstance(e, tuple) else (-1,))
        if group_of(_side(out, (i, k))) is not None
    ]

    def place(at: list[Entry], spot: tuple[int, int]) -> int:
        side = _side(at, spot)
        return side.place if isinstance(side, Place) else 0

    while (now := _clashes(out)) > 0:
        best: tuple[int, int, list[Entry]] | None = None
        for n, p in enumerate(spots):
            for q in spots[n + 1 :]:
                if p[0] == q[0] or place(out, p) != place(out, q) or place(out, p) == 1:
                    continue
                trial = list(out)
                first, second = _side(out, p), _side(out, q)
                trial[p[0]] = _put(trial[p[0]], p[1], second)
                trial[q[0]] = _put(trial[q[0]], q[1], first)
                score = _clashes(trial)
                if score < now and (best is None or (score, q[0] - p[0]) < best[:2]):
                    best = (score, q[0] - p[0], trial)
        if best is None:
            break
        out = best[2]
    return out


def _side(entries: Sequence[Entry], spot: tuple[int, int]) -> Seat:
    entry = entries[spot[0]]
    return entry[spot[1]] if isinstance(entry, tuple) else entry


def _put(entry: Entry, k: int, side: Seat) -> Entry:
    if not isinstance(entry, tuple):
        return side
    return (side, entry[1]) if k == 0 else (entry[0], side)


def group_seeds(groups: Sequence[str], advance: int) -> list[Seat]:
    """The qualifiers in seed order: every group winner, then every runner-up …"""
    return [Place(g, place) for place in range(1, advance + 1) for g in groups]


def vht6(sizes: dict[str, int], third_place: bool) -> list[Node]:
    """VHT 6 (8 teams or more, two groups): the group winners go to the semi-finals, the 2nd
    and 3rd play quarter-finals (A2–B3, B2–A3) for the other places there, and the last of
    each group play for the second-to-last place."""
    a, b = sorted(sizes)
    total = sizes[a] + sizes[b]
    nodes = [
        Node("QF1", "quarter-final 1", Place(a, 2), Place(b, 3), 0),
        Node("QF2", "quarter-final 2", Place(b, 2), Place(a, 3), 0),
        Node(
            f"P{total - 1}",
            f"{total - 1}th place",
            Place(a, sizes[a]),
            Place(b, sizes[b]),
            0,
            (total - 1, total),
        ),
        Node("SF1", "semi-final 1", Place(a, 1), Winner("QF2"), 1),
        Node("SF2", "semi-final 2", Place(b, 1), Winner("QF1"), 1),
    ]
    if third_place:
        nodes.append(Node("3P", "3rd place", Loser("SF1"), Loser("SF2"), 2, (3, 4)))
    nodes.append(Node("F", "final", Winner("SF1"), Winner("SF2"), 2, (1, 2), final=True))
    return nodes


def build(
    tree_kind: str,
    groups: dict[str, int],
    advance: int,
    third_place: bool,
    players: int,
    pairs: Sequence[tuple[Seat, Seat]] = (),
) -> list[Node]:
    """The tree a tournament file asks for (`groups`: each group's size; none for a
    knock-out drawn alone, whose sides are the seeds #1 … #n)."""
    letters = sorted(groups)
    if pairs:
        return tree(list(pairs), third_place)
    if not groups:
        return seeded([Seed(i) for i in range(1, players + 1)], third_place)
    if tree_kind == "vht6":
        return vht6(groups, third_place)
    if tree_kind == "cross":
        return cross(letters, advance, third_place)
    return seeded(group_seeds(letters, advance), third_place)


def placings(
    nodes: Sequence[Node], outcome: dict[str, tuple[str, str]], rest: Sequence[str]
) -> list[tuple[int, str]]:
    """The final standings, 1st to last: places the tree decides (final, 3rd place, VHT's
    second-to-last), then those out in a later round before those out earlier, then `rest`
    (the others in the order the caller gives: by group place, then record). `outcome`:
    match id → (winner, loser), for the matches decided so far. Ties within a round are
    ordered by the caller's order too, so the list is one line a player (the ITHF form)."""
    order_of = {name: i for i, name in enumerate(rest)}
    fixed: dict[str, int] = {}
    out_at: dict[str, int] = {}
    for node in nodes:
        if node.id not in outcome:
            continue
        winner, loser = outcome[node.id]
        if node.places:
            fixed[winner], fixed[loser] = node.places
        else:
            out_at[loser] = node.level
    everyone = list(rest)
    free = iter(p for p in range(1, len(everyone) + 1) if p not in fixed.values())
    others = sorted(
        (n for n in everyone if n not in fixed), key=lambda n: (-out_at.get(n, -1), order_of[n])
    )
    result = [(place, name) for name, place in fixed.items()]
    result += [(next(free), name) for name in others]
    return sorted(result)
