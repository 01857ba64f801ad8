"""The plan of a tournament in types: a seat (who will sit in a match or a group once the
results say it) and a stage (its seats and how it is played).

The tournament file (spec.py, stagefile.py) and the ledger's draw (events.py) are read into
these once; the rest of the wing trusts them. The ledger's text of a seat (`#3`, `A1`, `2/1`,
`W:QF1`, `L:SF2`: the lines it has always written) is read and written here only."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Seed:
    """The k-th seed of a knock-out drawn alone (the draw's order)."""

    number: int


@dataclass(frozen=True)
class Place:
    """Place `place` of group `group` (a basic group, or a final or placement group)."""

    group: str
    place: int


@dataclass(frozen=True)
class Winner:
    match: str


@dataclass(frozen=True)
class Loser:
    match: str


Seat = Seed | Place | Winner | Loser


def text(seat: Seat) -> str:
    """The ledger's text of a seat. A basic group of a staged day is named by digits, so its
    place is written with a slash (`2/1`: group 2's winner); a lettered group's without
    (`A1`, `A11`: group A1's winner)."""
    match seat:
        case Seed(number):
            return f"#{number}"
        case Winner(match):
            return f"W:{match}"
        case Loser(match):
            return f"L:{match}"
        case Place(group, place) if group.isdigit():
            return f"{group}/{place}"
        case Place(group, place):
            return f"{group}{place}"


def describe(seat: Seat) -> str:
    """A seat whose player is not known yet, as the sheets and the desk write it."""
    match seat:
        case Seed(number):
            return f"seed {number}"
        case Winner(match):
            return f"winner {match}"
        case Loser(match):
            return f"loser {match}"
        case Place(group, place) if group.isdigit():
            return f"group {group} #{place}"
        case Place(group, place) if group[-1].isdigit():
            return f"{group} #{place}"  # (A1's winner: not "A11")
        case Place(group, place):
            return f"{group}{place}"


def read(value: str, groups: Collection[str] = ()) -> Seat:
    """A seat from the ledger's text (or a `pairs:` entry of the file). A lettered group's
    name may end in a digit (`A11`: A1's winner), so the longest of `groups` it begins with
    is taken; without `groups`, the trailing digits are the place. Raises ValueError."""
    if value[:2] in ("W:", "L:") and value[2:]:
        return Winner(value[2:]) if value[0] == "W" else Loser(value[2:])
    if value.startswith("#") and value[1:].isdigit() and int(value[1:]) >= 1:
        return Seed(int(value[1:]))
    group, slash, place = value.rpartition("/")
    if slash:
        if group.isdigit() and place.isdigit() and int(place) >= 1:
            return Place(group, int(place))
        raise ValueError(f"{value!r} is no seat (group/place, e.g. 2/1)")
    for name in sorted(groups, key=len, reverse=True):
        rest = value[len(name) :]
        if value.startswith(name) and rest.isdigit() and int(rest) >= 1:
            return Place(name, int(rest))
    group = value.rstrip("0123456789")
    if group and group != value and group[0].isalpha() and int(value[len(group) :]) >= 1:
        return Place(group, int(value[len(group) :]))
    raise ValueError(f"{value!r} is no seat (A1, 2/1, #3, W:QF1 or L:SF2)")


def group_of(seat: Seat) -> str | None:
    """The group a place is in (None for a seed or a match's winner or loser)."""
    return seat.group if isinstance(seat, Place) else None


@dataclass(frozen=True)
class Groups:
    """The basic groups: round robins of the players as drawn (or set by hand)."""

    size: int  # players in a full group; the groups differ by one at most
    advance: int  # how many of each group go on to a knock-out drawn from them
    profile: str
    seeding: str = "pots"  # a draw with a ranking: snake (ITHF's meander) or pots
    by_hand: tuple[tuple[str, ...], ...] = ()  # the organiser's own groups, if set
    unranked: tuple[str, ...] = ()  # the unranked players' order, if given (else drawn)

    def names(self, players: int) -> list[str]:
        """The basic groups of a staged day: 1, 2, 3 … (the later groups have letters)."""
        return [str(n) for n in range(1, self.count(players) + 1)]

    def count(self, players: int) -> int:
        return len(self.by_hand) if self.by_hand else -(-players // self.size)


@dataclass(frozen=True)
class RoundRobin:
    """A final group (carrying the results between players of the same basic group) or a
    placement group (playing everyone anew), its seats the basic groups' places."""

    name: str
    seats: tuple[Place, ...]  # in seed order
    carry: bool
    profile: str


@dataclass(frozen=True)
class Bracket:
    """A knock-out: how its first round is made (`tree`), the bronze match, the profiles,
    the series by round (`best_of`: round key → N, series.py).

    `tree`: `cross`, `vht6` or `seeded` from the basic groups' places (or the draw's seeds
    for a knock-out alone); `pairs`: the first round as `pairs` gives it; `top`: a final or
    placement group's best `top` by seed (`groups`: its one group), or crossed from two
    (`groups`: X, Y: X1–Y4, Y2–X3, Y1–X4, X2–Y3 for top 4). A later play-off's ids are
    prefixed with its name (`B.SF1`)."""

    tree: str
    third_place: bool
    profile: str
    final_profile: str
    pairs: tuple[tuple[Seat, Seat], ...] = ()
    best_of: Mapping[str, int] = field(default_factory=dict)
    name: str = ""  # a play-off of later groups: its name (A, B …); "": the knock-out
    groups: tuple[str, ...] = ()  # the later groups it is drawn from
    top: int = 0  # … how many of each
    prefix: str = ""  # "" or "B."
