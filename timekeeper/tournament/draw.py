"""The draw: players into groups (or into the knock-out's seed order), random from a printed
seed so anyone can repeat it and see it was fair, or by pots from a ranking list.

The seed is given, never taken from a clock here: the command line picks one and prints it."""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Draw:
    seed: int
    method: str  # "random", "pots", "snake" (by a ranking, ITHF) or "hand" (set by hand)
    groups: dict[str, tuple[str, ...]]  # empty for a knock-out alone
    order: tuple[str, ...]  # the seed order: pots' ranking, or the random order


def group_names(count: int) -> list[str]:
    """A, B, … Z, then AA, AB …"""
    letters = string.ascii_uppercase
    return [letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26] for i in range(count)]


def random_draw(names: Sequence[str], groups: int, seed: int) -> Draw:
    """Shuffled with `seed`, then dealt A, B, C … A, B, C …: group sizes differ by one at
    most, and the same seed gives the same draw on any machine (Python's Mersenne Twister)."""
    order = list(names)
    random.Random(seed).shuffle(order)
    return Draw(seed, "random", _deal(order, groups) if groups else {}, tuple(order))


def hand_draw(groups: Sequence[Sequence[str]], seed: int) -> Draw:
    """The organiser's own groups, as the file sets them (A, B … in its order); the order is
    theirs dealt back: every group's first, then every second …"""
    letters = group_names(len(groups))
    longest = max(map(len, groups))
    order = [g[i] for i in range(longest) for g in groups if i < len(g)]
    return Draw(
        seed, "hand", {x: tuple(g) for x, g in zip(letters, groups, strict=True)}, tuple(order)
    )


def _unranked(rest: list[str], given: Sequence[str]) -> list[str]:
    """The unranked in the order the file gives (`unranked:`), those it does not name after
    them in the order drawn."""
    at = {name: i for i, name in enumerate(given)}
    return sorted(rest, key=lambda n: at.get(n, len(at)))


def _seed_order(
    names: Sequence[str], ranking: Sequence[str], rng: random.Random, unranked: Sequence[str]
) -> list[str]:
    """The ranked players in the ranking's order, then the others in the order `unranked`
    gives, the rest of them drawn with `rng` (which a pots draw goes on drawing with)."""
    ranked = [n for n in ranking if n in names]
    rest = [n for n in names if n not in ranked]
    rng.shuffle(rest)
    return ranked + _unranked(rest, unranked)


def pots_draw(
    names: Sequence[str],
    ranking: Sequence[str],
    groups: int,
    seed: int,
    unranked: Sequence[str] = (),
) -> Draw:
    """Seeded pots: the best `groups` ranked players are pot 1, one in each group, the next
    `groups` pot 2, and so on; within a pot the group is drawn. Players not on the ranking
    list come last, in drawn order. A knock-out alone takes the ranking as the seed order."""
    rng = random.Random(seed)
    order = _seed_order(names, ranking, rng, unranked)
    if not groups:
        return Draw(seed, "pots", {}, tuple(order))
    letters = group_names(groups)
    out: dict[str, list[str]] = {g: [] for g in letters}
    for start in range(0, len(order), groups):
        pot = order[start : start + groups]
        # a last, smaller pot goes into groups drawn at random
        slots = list(letters) if len(pot) == groups else rng.sample(letters, len(pot))
        rng.shuffle(slots)
        for name, group in zip(pot, slots, strict=True):
            out[group].append(name)
    return Draw(seed, "pots", {g: tuple(p) for g, p in out.items()}, tuple(order))


def snake_draw(
    names: Sequence[str],
    ranking: Sequence[str],
    groups: int,
    seed: int,
    unranked: Sequence[str] = (),
) -> Draw:
    """The ITHF's meander: the ranked players, best first, dealt into the groups forth and
    back (3 groups: 1, 6, 7, 12 … / 2, 5, 8, 11 … / 3, 4, 9, 10 …); the unranked after them,
    in an order drawn with `seed`. A knock-out alone takes this order as its seeds."""
    order = _seed_order(names, ranking, random.Random(seed), unranked)
    if not groups:
        return Draw(seed, "snake", {}, tuple(order))
    letters = group_names(groups)
    out: dict[str, list[str]] = {g: [] for g in letters}
    for i, name in enumerate(order):
        lap, at = divmod(i, groups)
        out[letters[at if lap % 2 == 0 else groups - 1 - at]].append(name)
    return Draw(seed, "snake", {g: tuple(p) for g, p in out.items()}, tuple(order))


def _deal(order: list[str], groups: int) -> dict[str, tuple[str, ...]]:
    letters = group_names(groups)
    return {g: tuple(order[i::groups]) for i, g in enumerate(letters)}


def read_ranking(file: Path, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """A ranking list (ranking.py: the ITHF file or one player a line). Returns the
    tournament's players in ranked order and a plain list's lines that name nobody here (a
    national ranking names many who do not play tonight)."""
    from timekeeper.tournament import ranking

    found = ranking.match(ranking.read(file), names)
    return list(found.ranked), list(found.unknown)
