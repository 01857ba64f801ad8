"""The results' way in at the desk: what keeps one box's flood that box's cost,
a result the desk could not apply kept until it can be, and the log told once, not per
message.

- `Gate`: at most RATE results a second per table (BURST at once), counted on the table's
  own topic before anything is parsed; the rest are refused unread (a table's real result
  among them is still retained on the broker, and the desk looks at the retained results
  again while a called match has none: deskfiles.Watch).
- `Held`: results that came home but could not be applied (a file unreadable, the journal
  broken by hand, any fault): kept, the latest message per result id, at most PER_TABLE a
  table, and tried again when the tournament's files change or every RETRY seconds. They
  are also retained on the broker: a desk started again finds them there.
- `Notes`: one log line per kind of trouble per SAY_EVERY seconds; what is held back is
  counted and said with the next one."""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable

from timekeeper.hall.result import MatchResult
from timekeeper.web.ratelimit import RateLimits

log = logging.getLogger(__name__)

RATE, BURST = 0.5, 10  # results a table sends: one when its match ends, again when changed
PER_TABLE = 8  # results held per table that could not be applied yet
RETRY = 5.0  # s: held results are tried again this often (and at once on a file's change)
SAY_EVERY = 60.0  # s: a kind of trouble is logged at most once in this
MAX_KINDS = 256


class Notes:
    """The log told of each kind of trouble at most once every `every` s."""

    def __init__(self, every: float = SAY_EVERY, clock: Callable[[], float] = time.monotonic):
        self.every, self.clock = every, clock
        self._said: dict[str, float] = {}
        self._held: Counter[str] = Counter()

    def say(self, kind: str, text: str, level: int = logging.WARNING, exc_info=None) -> bool:
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
        self.limits = RateLimits(rate, burst)
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


class Held:
    """Results that could not be applied yet, the latest message per id, oldest first."""

    def __init__(self, per_table: int = PER_TABLE) -> None:
        self.per_table = per_table
        self.results: OrderedDict[str, tuple[MatchResult, str]] = OrderedDict()

    def keep(self, r: MatchResult, why: str) -> None:
        """Held by its id, game and the table that sent it: another table's message with
        the same id (a forgery) never takes the real one's place."""
        self.results.pop(held_key(r), None)
        self.results[held_key(r)] = (r, why)
        mine = [i for i, (x, _) in self.results.items() if x.table == r.table]
        for ident in mine[: max(0, len(mine) - self.per_table)]:
            del self.results[ident]  # (that table's oldest: another table's are never lost)

    def drop(self, r: MatchResult) -> bool:
        """Forget `r` (applied, or refused by the director); whether it was held."""
        return self.results.pop(held_key(r), None) is not None

    def holds(self, pairing_id: str) -> bool:
        return any(r.id == pairing_id for r, _ in self.results.values())

    def all(self) -> list[MatchResult]:
        return [r for r, _ in self.results.values()]

    def __len__(self) -> int:
        return len(self.results)

    def said(self) -> str | None:
        """The board's line: how many wait, from which tables, and why (the latest reason)."""
        if not self.results:
            return None
        tables = sorted({r.table for r, _ in self.results.values()}, key=_table_key)
        why = next(reversed(self.results.values()))[1]
        n = len(self.results)
        return (
            f"{n} result{'s' if n > 1 else ''} not applied yet (table"
            f"{'s' if len(tables) > 1 else ''} {', '.join(tables)}): {why}; kept and tried "
            "again"
        )


def held_key(r: MatchResult) -> str:
    game = "" if r.pairing.best_of <= 1 else f".g{r.game or r.pairing.game}"
    return f"{r.id}{game}:{r.table}"


def _table_key(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.isdigit() else (1, name)
