"""The desk holds the tournament (its file and ledger) and runs the evening over the hall's
bus: calling a round pushes each table its pairing; each table's result comes home by itself
and goes into the tournament's ledger once, however often it arrives.

`Director` is the desk's one face (the bus's reader, the board's, the commands'), cut along
its jobs:
- deskfiles.py: the files, read again when they change, and the watch that looks at them;
- rounds.py: calling rounds (a series' next game, a match called again after a correction);
- intake.py: the results inbox, one record per result (held, waiting for the
  director, refused, applied: inbox.py's `Records`);
- boardview.py: the board's view (`/api/board`) and the desk's log.

What the desk called is kept beside the tournament's ledger (`cup.calls.jsonl`, one pairing
a line), and every desk reading that tournament reads it again when it has grown: a round
called at `hall round N` in another terminal, on the board, or before a restart is one and
the same call to each of them (`hall serve` takes its results)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.bus.result import MatchResult
from timekeeper.hall.desk.boardview import BoardView, DeskLog
from timekeeper.hall.desk.callbook import CallBook, calls_path
from timekeeper.hall.desk.deskfiles import DeskFiles, Watch
from timekeeper.hall.desk.inbox import Gate, Notes
from timekeeper.hall.desk.intake import Intake
from timekeeper.hall.desk.intake import source as _source
from timekeeper.hall.desk.link import DeskReader
from timekeeper.hall.desk.rounds import Rounds
from timekeeper.hall.desk.rounds import series_line as _series_line
from timekeeper.tournament.ledger import E, Ledger, stamp
from timekeeper.tournament.state import Tournament

__all__ = ["Director", "_series_line", "_source", "calls_path"]


class Director(DeskReader):
    """Joined to a Desk (its connection); thread-safe (the bus's thread, the web's)."""

    def __init__(
        self,
        desk: Any,
        file: Path,
        wall: Callable[[], float] = time.time,
        results: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`results`: take the results home (`hall serve`); a command that only calls a
        round (`hall round N`) leaves them to the serving desk, which applies each once.
        `clock`: the watch's (when the held results are tried again)."""
        self.desk, self.file, self.wall, self.results = desk, Path(file), wall, results
        self.hall: str = desk.hall
        self._lock = threading.RLock()
        self.notes = Notes()
        self.log = DeskLog()
        self.files = DeskFiles(self.file, self.notes, self.log.say)
        self.rounds = Rounds(self.files, desk, self._lock, wall, results, self.log.say)
        self.intake = Intake(
            self.files, self.rounds, desk, self._lock, wall, self.log.say, self.notes
        )
        self.view = BoardView(
            self.files, self.rounds, self.intake, desk, self._lock, wall, self.log
        )
        self.watcher = Watch(
            self.files,
            self._refresh,
            self.intake.holding,
            self.intake.retry,
            self.intake.sweep if results else None,
            clock,
        )
        desk.add_reader(self)

    def _refresh(self) -> None:
        with self._lock:
            self.rounds.refresh()

    # ---------------------------------------------------------------- what it holds

    @property
    def t(self) -> Tournament:
        return self.files.t

    @property
    def ledger(self) -> Ledger:
        return self.files.ledger

    @property
    def book(self) -> CallBook:
        return self.files.book

    @property
    def calls(self) -> Path:
        return self.files.calls

    @property
    def called(self) -> dict[str, Pairing]:
        """table -> the latest pairing called there."""
        return self.files.called

    @property
    def issued(self) -> dict[str, Pairing]:
        """Every pairing id called (by any desk)."""
        return self.files.book.issued

    @property
    def confirmed(self) -> set[str]:
        """The results confirmed (by the director, or at their tables)."""
        return self.files.book.confirmed

    @property
    def unreadable(self) -> str:
        return self.files.unreadable

    @property
    def pending(self) -> dict[str, tuple[MatchResult, str]]:
        """The results inbox's view: name -> (result, why it waits for the director)."""
        with self._lock:
            return self.intake.records.waiting()

    @property
    def refused(self) -> set[str]:
        """The results inbox's view: the names of the results the director refused."""
        with self._lock:
            return self.intake.records.refused()

    @property
    def latest(self) -> dict[str, MatchResult]:
        return self.intake.latest

    @property
    def held(self) -> list[MatchResult]:
        """The results inbox's view: the results held (not applied yet), oldest first."""
        with self._lock:
            return self.intake.records.held()

    @property
    def gate(self) -> Gate:
        return self.intake.gate

    @property
    def events(self) -> list[str]:
        return self.log.events

    def applied(self) -> set[str]:
        return self.files.applied()

    # ---------------------------------------------------------------- the bus (DeskReader)

    def owns(self, topic: str) -> bool:
        parts = topic.split("/")
        return len(parts) == 4 and parts[1] == self.hall and parts[3] in ("result", "pairing")

    def connected(self, client: Any) -> None:
        """On every (re)connect: the results; and the calls again, whose matches wait for
        their results (a broker restarted without its retained messages). A desk that only
        calls (`results=False`) reads nothing."""
        if not self.results:
            return
        self.intake.subscribe(client)
        self.rounds.call_again(client)

    def handle(self, topic: str, payload: bytes) -> None:
        self.intake.handle(topic, payload)

    def status(self, table: str, body: dict[str, Any]) -> None:
        self.rounds.status(table, body)

    def watch(self, every: float = 1.0) -> threading.Event:
        """Look at the files every `every` s in a thread of its own (deskfiles.Watch): what
        another terminal typed acts at once; set the event to stop."""
        return self.watcher.start(every)

    # ---------------------------------------------------------------- the director's

    def receive(self, r: MatchResult) -> str:
        return self.intake.receive(r)

    def call_round(self, number: int, wait: float = 5.0) -> list[tuple[str, str]]:
        return self.rounds.call_round(number, wait)

    def next_round(self) -> int | None:
        return self.rounds.next_round()

    def current_round(self) -> int | None:
        return self.rounds.current_round()

    def accept(self, result_id: str) -> str:
        return self.intake.accept(result_id)

    def refuse(self, result_id: str) -> None:
        self.intake.refuse(result_id)

    def confirm(self, result_id: str) -> None:
        self.intake.confirm(result_id)

    def correct(
        self, round_: int, table: str, score: str, decided: str = "regulation", reason: str = ""
    ) -> str:
        return self.intake.correct(round_, table, score, decided, reason)

    def submit(self, make: Callable[[Tournament, dict[str, str], str], E]) -> E:
        """An entry a terminal's command hands this desk (hall/desk/desksocket.py): made by `make`
        from the tournament as it stands, the matches under way and the time, written by this
        desk (while it serves, the ledger's one writer), then acted on as the board's are."""
        with self._lock:
            self.rounds.refresh()
            event = make(self.t, self.book.under_way(), stamp(self.wall()))
            written = self.files.record(event)
            self.log.say(f"typed at a terminal: {written.text()}")
            self.rounds.recall()
            return written

    def troubles(self) -> list[str]:
        return self.view.troubles()

    def snapshot(self) -> dict[str, Any]:
        return self.view.snapshot()
