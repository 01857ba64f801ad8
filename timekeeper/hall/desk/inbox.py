"""The results' way in at the desk: what keeps one box's flood that box's cost, one record
per result (held until it can be applied, waiting for the director, refused, applied), and
the log told once, not per message.

- `Gate`: at most RATE results a second per table (BURST at once), counted on the table's
  own topic before anything is parsed; the rest are refused unread (a table's real result
  among them is still retained on the broker, and the desk looks at the retained results
  again while a called match has none: deskfiles.Watch).
- `Records`: one record per result (its id, game, sending table and the call it answers)
  and its state: held
  (it came home but could not be applied: a file unreadable, the journal broken by hand, any
  fault; at most PER_TABLE a table, tried again when the tournament's files change or every
  RETRY seconds, and retained on the broker, where a desk started again finds it), waiting
  for the director (why), refused by the director, or applied.
- `Notes`: one log line per kind of trouble per SAY_EVERY seconds; what is held back is
  counted and said with the next one."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.bus.result import MatchResult
from timekeeper.tournament.state import TournamentError
from timekeeper.web.ratelimit import RateLimits

log = logging.getLogger(__name__)

RATE, BURST = 0.5, 10  # results a table sends: one when its match ends, again when changed
PER_TABLE = 8  # results held per table that could not be applied yet
MAX_WAITING = 200  # results waiting for the director: more is a flood, the oldest go
MAX_APPLIED = 1000  # records of results applied kept (more than a day's results)
RETRY = 5.0  # s: held results are tried again this often (and at once on a file's change)
SAY_EVERY = 60.0  # s: a kind of trouble is logged at most once in this
MAX_KINDS = 256


class Notes:
    """The log told of each kind of trouble at most once every `every` s."""

    def __init__(self, every: float = SAY_EVERY, clock: Callable[[], float] = time.monotonic):
        self.every, self.clock = every, clock
        self._said: dict[str, float] = {}
        self._held: Counter[str] = Counter()

    def say(
        self,
        kind: str,
        text: str,
        level: int = logging.WARNING,
        exc_info: BaseException | None = None,
    ) -> bool:
        """Log `text` unless `kind` was said less than `every` s ago (then it is counted);
        whether it was logged."""
        now = self.clock()
        said = self._said.get(kind)
        if said is not None and now - said < self.every:
            self._held[kind] += 1
            return False
        if said is None and len(self._said) >= MAX_KINDS:
            self._said.clear()
        more = self._held.pop(kind, 0)
        tail = f" ({more} more like it in the last {self.every:.0f} s)" if more else ""
        log.log(level, "desk: %s%s", text, tail, exc_info=exc_info)
        self._said[kind] = now
        return True


class Gate:
    """Results a second per table; what a table sent over its rate is counted for the board
    (`flooding`) and said once a minute."""

    def __init__(
        self,
        notes: Notes,
        rate: float = RATE,
        burst: int = BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.notes, self.rate, self.clock = notes, rate, clock
        self.limits = RateLimits(rate, burst, clock=clock)
        self.refused: Counter[str] = Counter()  # table -> refused since `since`
        self.since = clock()

    def allow(self, table: str) -> bool:
        if self.limits.allow(table):
            return True
        if self.clock() - self.since >= SAY_EVERY:
            self.refused, self.since = Counter(), self.clock()
        if table in self.refused or len(self.refused) < MAX_KINDS:
            self.refused[table] += 1
        self.notes.say(
            f"flood:{table}",
            f"table {table} sends results faster than {self.rate:g} a second: the rest "
            "refused unread (its latest retained result is looked at again)",
        )
        return False

    def flooding(self) -> list[str]:
        """What the board says of the tables refused in the last minute or so."""
        if self.clock() - self.since >= 2 * SAY_EVERY:
            self.refused, self.since = Counter(), self.clock()
        return [
            f"table {table} sends too many results: {n:,} refused unread lately "
            f"(at most {self.rate:g} a second is taken)"
            for table, n in sorted(self.refused.items())
        ]


State = Literal["held", "waiting", "refused", "applied"]
HELD: State = "held"
WAITING: State = "waiting"
REFUSED: State = "refused"
APPLIED: State = "applied"


@dataclass
class Record:
    """One result (its id, game, the table that sent it and the call it answers), the latest
    message for it, and where it stands: held (the desk could not apply it yet: tried
    again), waiting for the director (`why`; `name` is the id the director knows it by),
    refused by the director, or applied."""

    result: MatchResult
    state: State
    why: str = ""
    name: str = ""


class Records:
    """The results inbox: one record per result (`record_key`), so that a result is in exactly
    one state. Held results are kept at most `per_table` a table (that table's oldest go),
    results waiting for the director at most `waiting_max` (the oldest of the table that
    sent most go): a flood costs its own table. A refused result stays refused; of the
    applied, the latest MAX_APPLIED are kept (the ledger keeps them all, by `source`)."""

    def __init__(self, per_table: int = PER_TABLE, waiting_max: int = MAX_WAITING) -> None:
        self.per_table, self.waiting_max = per_table, waiting_max
        self.by_key: dict[Key, Record] = {}  # oldest first

    def of(self, r: MatchResult) -> Record | None:
        return self.by_key.get(record_key(r))

    def in_state(self, state: State) -> list[Record]:
        return [x for x in self.by_key.values() if x.state == state]

    def is_refused(self, r: MatchResult) -> bool:
        x = self.of(r)
        return x is not None and x.state == REFUSED

    def is_held(self, r: MatchResult) -> bool:
        x = self.of(r)
        return x is not None and x.state == HELD

    def hold(self, r: MatchResult, why: str) -> None:
        """Held (the latest message, moved to the end), unless refused by the director;
        another table's message with the same id (a forgery) never takes the real one's
        place."""
        if self.is_refused(r):
            return
        self.by_key.pop(record_key(r), None)
        self.by_key[record_key(r)] = Record(r, HELD, why)
        mine = [k for k, x in self.by_key.items() if x.state == HELD and x.result.table == r.table]
        for key in mine[: max(0, len(mine) - self.per_table)]:
            del self.by_key[key]  # (that table's oldest: another table's are never lost)

    def wait(self, r: MatchResult, name: str, why: str) -> bool:
        """Waiting for the director under `name` (the latest message; one record a name);
        whether it waited already."""
        key = record_key(r)
        old = self.by_key.get(key)
        already = old is not None and old.state == WAITING and old.name == name
        for k in [k for k, x in self.by_key.items() if x.state == WAITING and x.name == name]:
            if k != key:
                del self.by_key[k]
        if old is not None:
            old.result, old.state, old.why, old.name = r, WAITING, why, name
        else:
            self.by_key[key] = Record(r, WAITING, why, name)
        waiting = [(k, x) for k, x in self.by_key.items() if x.state == WAITING]
        while len(waiting) > self.waiting_max:
            most = Counter(x.result.table for _, x in waiting).most_common(1)[0][0]
            oldest = next(k for k, x in waiting if x.result.table == most)
            del self.by_key[oldest]
            waiting = [(k, x) for k, x in waiting if k != oldest]
        return already

    def applied(self, r: MatchResult, waiting_too: bool = True) -> None:
        """It is in the ledger. A refused result stays refused; one waiting for the director
        stays waiting unless `waiting_too` (it went in as sent)."""
        x = self.of(r)
        if x is None:
            self.by_key[record_key(r)] = Record(r, APPLIED)
        elif x.state != REFUSED and (waiting_too or x.state != WAITING):
            x.result, x.state, x.why, x.name = r, APPLIED, "", ""
        applied = [k for k, x in self.by_key.items() if x.state == APPLIED]
        for key in applied[: max(0, len(applied) - MAX_APPLIED)]:
            del self.by_key[key]

    def named(self, name: str) -> Record:
        """The record waiting for the director under `name`."""
        found = next((x for x in self.in_state(WAITING) if x.name == name), None)
        if found is None:
            raise TournamentError(f"no result {name} waits")
        return found

    def refuse(self, name: str) -> None:
        self.named(name).state = REFUSED

    def waiting(self) -> dict[str, tuple[MatchResult, str]]:
        """name -> (result, why it waits for the director), oldest first."""
        return {x.name: (x.result, x.why) for x in self.in_state(WAITING)}

    def refused(self) -> set[str]:
        return {x.name for x in self.in_state(REFUSED)}

    def held(self) -> list[MatchResult]:
        """The results held, oldest first."""
        return [x.result for x in self.in_state(HELD)]

    def holds(self, pairing_id: str) -> bool:
        return any(x.result.id == pairing_id for x in self.in_state(HELD))

    def said(self) -> str | None:
        """The board's line: how many are held, from which tables, and why (the latest)."""
        held = self.in_state(HELD)
        if not held:
            return None
        tables = sorted({x.result.table for x in held}, key=_table_key)
        n = len(held)
        return (
            f"{n} result{'s' if n > 1 else ''} not applied yet (table"
            f"{'s' if len(tables) > 1 else ''} {', '.join(tables)}): {held[-1].why}; kept and "
            "tried again"
        )


Key = tuple[str, int | None, str, Pairing]


def record_key(r: MatchResult) -> Key:
    """A result's record: its id, its game (a series'), the table that sent it, and the call
    it says it answers (`as_called`): a message with a call's id but another match's names is
    another result, kept apart from the real one and its refusal."""
    return (r.id, r.series_game, r.table, as_called(r.pairing))


def as_called(p: Pairing) -> Pairing:
    """A call without what changes from game to game of a series (the game, the wins, when it
    was sent): a box that began its next game before the desk's call of it arrived answers
    the same call."""
    return dataclasses.replace(p, sent=0.0, game=1, home_wins=0, away_wins=0)


def _table_key(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.isdigit() else (1, name)
