"""The rounds: every group's round robin by the circle method, then laid over the tables.

A round is one match at each table at once. The lay-out is greedy and measured: each round
takes every match that can be played (no player twice in a round) until the tables are full,
so no table stands idle while a match could be played; among those it takes first the
matches whose players sat out the round before, so nobody plays twice in a row where the
numbers allow a rest. A few priority orders are tried and the best kept (fewest rounds, then
fewest back-to-back matches); `bench/tournament.py` prints the figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class GroupMatch:
    """A group's match as the circle method pairs it (a knock-out's is a bracket.Node)."""

    id: str  # "A.1": group A's first match
    group: str
    home: str
    away: str
    circle: int  # the circle-method round within its group, 1-based

    @property
    def players(self) -> tuple[str, str]:
        return self.home, self.away


@dataclass(frozen=True)
class Slot:
    round: int  # 1-based over the whole evening
    table: str
    match: str  # a GroupMatch's or a knock-out match's id


@dataclass(frozen=True)
class Figures:
    rounds: int
    matches: int
    idle: int  # table-rounds with no match
    back_to_back: int  # times a player plays in two rounds in a row
    tired: int  # players who play two rounds in a row at least once


def circle(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """The circle method: the first seat stays, the others turn one place a round; an odd
    group gets an empty seat, the bye. Every pair meets exactly once. Home and away alternate
    for the fixed seat and across the board, so nobody is home in every match."""
    seats: list[str | None] = [*players, None] if len(players) % 2 else list(players)
    n = len(seats)
    out: list[list[tuple[str, str]]] = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = seats[i], seats[n - 1 - i]
            if a is None or b is None:
                continue
            swap = (r % 2 == 1) if i == 0 else (i % 2 == 1)
            pairs.append((b, a) if swap else (a, b))
        out.append(pairs)
        seats = [seats[0], seats[-1], *seats[1:-1]]
    return out


def group_matches(groups: Mapping[str, Sequence[str]]) -> list[GroupMatch]:
    out: list[GroupMatch] = []
    for group, players in groups.items():
        number = 0
        for r, pairs in enumerate(circle(players), 1):
            for home, away in pairs:
                number += 1
                out.append(GroupMatch(f"{group}.{number}", group, home, away, r))
    return out


Key = Callable[[GroupMatch, set[str], dict[str, int]], tuple[object, ...]]


def _by_circle(p: GroupMatch, last: set[str], left: dict[str, int]) -> tuple[object, ...]:
    return (len(set(p.players) & last), p.circle, p.group, p.id)


def _by_longest_group(p: GroupMatch, last: set[str], left: dict[str, int]) -> tuple[object, ...]:
    return (len(set(p.players) & last), -left[p.group], p.circle, p.group, p.id)


def _first_fit(p: GroupMatch, last: set[str], left: dict[str, int]) -> tuple[object, ...]:
    """The baseline the bench compares with: group by group, no rest rule."""
    return (p.group, p.circle, p.id)


ORDERS: tuple[Key, ...] = (_by_circle, _by_longest_group)


def lay_out(
    matches: Sequence[GroupMatch], tables: int, orders: Sequence[Key] = ORDERS
) -> list[list[GroupMatch]]:
    """The group matches in rounds of at most `tables` matches (see the module's doc)."""
    best: list[list[GroupMatch]] | None = None
    for order in orders:
        rounds = _greedy(matches, tables, order)
        if best is None or _score(rounds, tables) < _score(best, tables):
            best = rounds
    return best or []


def _score(rounds: list[list[GroupMatch]], tables: int) -> tuple[int, int]:
    f = measure(rounds, tables)
    return f.rounds, f.back_to_back


def _greedy(matches: Sequence[GroupMatch], tables: int, order: Key) -> list[list[GroupMatch]]:
    left = list(matches)
    per_group: dict[str, int] = {}
    for p in left:
        per_group[p.group] = per_group.get(p.group, 0) + 1
    rounds: list[list[GroupMatch]] = []
    last: set[str] = set()
    while left:
        chosen: list[GroupMatch] = []
        busy: set[str] = set()
        for p in sorted(left, key=lambda p: order(p, last, per_group)):
            if len(chosen) == tables:
                break
            if p.home in busy or p.away in busy:
                continue
            chosen.append(p)
            busy |= set(p.players)
        for p in chosen:
            left.remove(p)
            per_group[p.group] -= 1
        rounds.append(sorted(chosen, key=lambda p: (p.group, p.id)))
        last = busy
    return rounds


def measure(rounds: Sequence[Sequence[GroupMatch]], tables: int) -> Figures:
    """The figures the issue asks for: rounds, idle table-rounds and back-to-back matches.
    Idle counts every empty table of every round, so a tail of thin rounds shows."""
    back = 0
    tired: set[str] = set()
    previous: set[str] = set()
    for matches in rounds:
        now = {name for p in matches for name in p.players}
        again = now & previous
        back += len(again)
        tired |= again
        previous = now
    count = sum(len(r) for r in rounds)
    return Figures(len(rounds), count, len(rounds) * tables - count, back, len(tired))


def slots(
    rounds: Sequence[Sequence[GroupMatch]], tables: Sequence[str], first: int = 1
) -> list[Slot]:
    """Rounds onto named tables: the n-th match of a round at the n-th table."""
    return [
        Slot(first + r, tables[i], p.id)
        for r, matches in enumerate(rounds)
        for i, p in enumerate(matches)
    ]


def place_after(
    items: Sequence[tuple[str, Sequence[str]]],
    tables: Sequence[str],
    first: int,
    rounds_of: dict[str, int] | None = None,
) -> list[Slot]:
    """Knock-out matches onto rounds and tables: each in the earliest round from `first` on
    that comes after the matches it waits for (`items`: id and the ids it depends on, in
    the order to place them), at the first free table."""
    placed: dict[str, int] = dict(rounds_of or {})
    used: dict[int, int] = {}
    out: list[Slot] = []
    for match, needs in items:
        r = max([first, *(placed[n] + 1 for n in needs if n in placed)])
        while used.get(r, 0) >= len(tables):
            r += 1
        out.append(Slot(r, tables[used.get(r, 0)], match))
        used[r] = used.get(r, 0) + 1
        placed[match] = r
    return out
