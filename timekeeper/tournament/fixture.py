"""A match of the tournament as the desk sees it now (`Tournament.fixture` makes it): its
own module so that what checks an entry against it (entrycheck.py) need not import the
tournament's state."""

from __future__ import annotations

from dataclasses import dataclass

from timekeeper.tournament import plan
from timekeeper.tournament.plan import Seat
from timekeeper.tournament.results import Result
from timekeeper.tournament.schedule import Slot
from timekeeper.tournament.series import Series


@dataclass(frozen=True)
class Fixture:
    """A match of the tournament as the desk sees it now — who (if known yet), where, its
    result — made from the draw (a GroupMatch or a knock-out Node) and the events since."""

    id: str
    stage: str  # "group A", "quarter-final 1" …
    home: str | None
    away: str | None
    home_source: Seat | None  # the seat a side comes from (None in the basic groups)
    away_source: Seat | None
    slot: Slot
    result: Result | None
    replay: bool  # a replay was ordered and not yet played
    knockout: bool
    series: Series | None = None  # a play-off series: its games so far (result: once decided)

    @property
    def sides(self) -> str:
        home = self.home or seat_text(self.home_source)
        return f"{home} – {self.away or seat_text(self.away_source)}"


def seat_text(seat: Seat | None) -> str:
    """Where a side not known yet comes from, as a person reads it ("": no seat)."""
    return "" if seat is None else plan.describe(seat)
