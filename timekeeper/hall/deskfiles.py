"""The desk's files: the tournament's file and ledger, and the calls beside them
(`cup.calls.jsonl`, hall/callbook.py), read again only when they change; and the watch that
looks at them every second, so that what another terminal typed acts at once.

Where the files cannot be read (a journal broken by hand) the state as last read stands,
`unreadable` says why, and the error is raised to whoever asked: a result is then held
(its record in the inbox's `Records`), never applied on the old state. The watch tries the
held results again as soon as the files change (the journal mended) and every RETRY s."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

from timekeeper.hall.callbook import CallBook, calls_path
from timekeeper.hall.inbox import RETRY, Notes
from timekeeper.hall.pairing import Pairing
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.ledger import E, Ledger, open_tournament
from timekeeper.tournament.state import Tournament

SWEEP = 10.0  # s: while a called match has no result, the retained results are read again

Stamp = tuple[int, int, int] | None  # (inode, size, mtime) of a file; None: not there


class DeskFiles:
    """The tournament as last read, the calls any desk made, and each table's latest call."""

    def __init__(self, file: Path, notes: Notes, say: Callable[[str], None]) -> None:
        self.file, self.notes, self.say = Path(file), notes, say
        self.t: Tournament
        self.ledger: Ledger
        self.t, self.ledger = open_tournament(self.file, drawn=True)
        self.book = CallBook(self.file)  # (every desk's calls, read as the file grows)
        self.calls = calls_path(self.file)
        self.called: dict[str, Pairing] = {}  # table -> the latest pairing called there
        self._calls_seen = 0  # how many calls `called` was worked out from
        self.unreadable = ""  # why the tournament's files cannot be read now ("": they can)
        # the files as last read (read again when they change; None: read at the next look)
        self._stamp: list[Stamp] | None = None
        self.read_calls()

    def read_calls(self) -> None:
        """The calls any desk made since the last look (the calls file, if it grew). Each
        table's latest call is worked out from the book's whole list, never from what one
        read returned: whoever reads the book (a box's status, a result), no call is lost."""
        self.book.read()
        if self.book.calls == self._calls_seen:
            return
        where = {s.match: s.table for s in self.t.slots}
        self.called = {}
        for p in self.book.issued.values():  # (in the file's order: the last one stands)
            if p.match in where:
                self.called[where[p.match]] = p
        self._calls_seen = self.book.calls

    def reload(self) -> None:
        """The ledger again (a result typed meanwhile at `timekeeper tournament result`), and
        the calls another desk made meanwhile. The tournament's file and ledger are read only
        when changed since last read; where they cannot be read the error is raised."""
        stamp = self.stamps()
        if stamp != self._stamp or self.unreadable:
            try:
                self.t, self.ledger = open_tournament(self.file, drawn=True)
            except (ConfigError, OSError) as exc:
                if str(exc) != self.unreadable:
                    self.notes.say("unreadable", f"the tournament cannot be read: {exc}")
                self.unreadable = str(exc)
                raise
            if self.unreadable:
                self.say("the tournament is readable again")
            self._stamp, self.unreadable = stamp, ""
        self.read_calls()

    def record(self, event: E) -> E:
        """Write `event` (while it serves, this desk is the ledger's one writer) and take its
        own write as read: the watch reads the files again only for what others changed."""
        written = self.ledger.record(self.t, event)
        self._stamp = self.stamps()
        return written

    def stamps(self) -> list[Stamp]:
        """The tournament's file, its ledger and its calls as they are on the disk now."""
        out: list[Stamp] = []
        for f in (self.file, self.ledger.path, self.book.path):
            try:
                st = f.stat()
            except OSError:
                out.append(None)
            else:
                out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return out

    def applied(self) -> set[str]:
        """The ids of the result messages in the ledger."""
        return {e.source for e in self.t.events if isinstance(e, ResultEvent) and e.source}

    def table_of(self, p: Pairing) -> str | None:
        """The table a pairing was called at: its match's (a match keeps its table)."""
        return next((s.table for s in self.t.slots if s.match == p.match), None)


class Watch:
    """One look at the files (`look`), made every second by `start`'s thread: the files
    read again when changed (or while unreadable); the held results tried again at once when
    the files changed or became readable, and every RETRY s; the retained results asked for
    again every SWEEP s. The clock is injected (a test looks without waiting)."""

    def __init__(
        self,
        files: DeskFiles,
        refresh: Callable[[], None],
        holding: Callable[[], bool],
        retry: Callable[[], None],
        sweep: Callable[[], None] | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`refresh`: read the files again (under the desk's lock; raises where they cannot
        be read); `holding`/`retry`: whether results are held, and try them again; `sweep`:
        ask for the retained results again (None: a desk that takes no results)."""
        self.files, self.refresh, self.holding, self.retry = files, refresh, holding, retry
        self.sweep, self.clock = sweep, clock
        self.seen: list[Stamp] | None = None
        self.tried = self.swept = clock()

    def look(self) -> None:
        """Never raises: a ledger being fixed by hand is said once (by `reload`) and looked at
        again at the next look."""
        now = self.files.stamps()
        changed, was_unreadable = now != self.seen, bool(self.files.unreadable)
        if changed or was_unreadable:
            with contextlib.suppress(Exception):  # (`reload` said it, once)
                self.refresh()
        self.seen = now
        mended = was_unreadable and not self.files.unreadable
        if self.holding() and (changed or mended or self.clock() - self.tried >= RETRY):
            self.tried = self.clock()
            self.retry()  # (never raises)
        if self.sweep is not None and self.clock() - self.swept >= SWEEP:
            self.swept = self.clock()
            with contextlib.suppress(Exception):  # (off the bus: the next sweep)
                self.sweep()

    def start(self, every: float = 1.0) -> threading.Event:
        """Look every `every` s in a thread of its own; set the event to stop it."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every):
                self.look()

        threading.Thread(target=loop, name="desk-watch", daemon=True).start()
        return stop
