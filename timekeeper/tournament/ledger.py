"""The tournament's ledger (`cup.journal.jsonl` beside `cup.yaml`): one event a line (JSON,
events.py), appended and flushed to disk before a command says it is done. Nothing is ever
rewritten: a correction is a new line with its reason, so the whole evening can be replayed
and audited from the file alone. `open_tournament` is the one way to read a tournament file
with its ledger, `Ledger.record` the one way to add to it: the terminal's commands and the
hall's desk both use them.

The one exception to "never rewritten": a last line cut off by a crash while it was being
written (no newline at its end, not valid JSON) was never acknowledged to anyone; it is
reported when read, and cut away before the next line is appended."""

from __future__ import annotations

import dataclasses
import datetime
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from timekeeper.rules.yamldoc import ConfigError, Where
from timekeeper.tournament import events, spec
from timekeeper.tournament.events import EntryError, Event
from timekeeper.tournament.state import Tournament, TournamentError

MAX_LINE = 1_000_000  # a draw of 256 players is about 60 KB
E = TypeVar("E", bound=Event)


def stamp(wall: float) -> str:
    """An entry's `time`, the moment (seconds since the epoch) a caller read off its wall
    clock, in local time with its offset: one format whoever writes the ledger."""
    return datetime.datetime.fromtimestamp(wall).astimezone().isoformat(timespec="seconds")


@dataclass(frozen=True)
class Entry:
    line: int  # 1-based, for errors that point into the file
    event: Event


def open_tournament(file: Path, drawn: bool = False) -> tuple[Tournament, Ledger]:
    """The tournament file and its ledger, folded (`drawn`: refused if not drawn yet). An
    entry the tournament cannot take is refused with the ledger's file:line; a torn last
    line is left out (the ledger's `torn` says so; the next entry replaces it)."""
    s = spec.load(file)
    ledger = Ledger(s.ledger)
    t = Tournament(s)
    for entry in ledger.read():
        try:
            t.apply(entry.event)
        except EntryError as exc:
            raise ConfigError(
                f"{exc.message} (an entry the tournament cannot take)",
                Where(s.ledger, entry.line, 1),
                exc.field,
            ) from None
        except TournamentError as exc:  # the file no longer fits the draw: both are named
            raise TournamentError(f"{Where(s.ledger, entry.line, 1)}: {exc}") from None
    if drawn:
        t.require_drawn()
    return t, ledger


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.torn = ""  # a cut-off last line found by read(), if any

    def read(self) -> list[Entry]:
        """Every entry, checked for shape and numbering (n = 1, 2, 3 …): a line lost or
        edited by hand is refused with file:line rather than silently skipped."""
        if not self.path.exists():
            return []
        if not self.path.is_file():
            raise ConfigError("not a regular file (a device, a FIFO or a folder)", self.path)
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        found: list[tuple[int, dict[str, Any]]] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            found.append((number, self._parse(line, number, len(found) + 1)))
        if tail.strip():
            try:
                found.append((len(lines) + 1, self._parse(tail, len(lines) + 1, len(found) + 1)))
            except ConfigError:
                self.torn = tail.decode("utf-8", "replace")
        return [Entry(number, self._event(data, number)) for number, data in found]

    def _event(self, data: dict[str, Any], number: int) -> Event:
        try:
            return events.from_dict(data)
        except EntryError as exc:
            raise ConfigError(
                f"{exc.message} (an entry the tournament cannot read)",
                Where(self.path, number, 1),
                exc.field,
            ) from None

    def _parse(self, line: bytes, number: int, expected: int) -> dict[str, Any]:
        where = Where(self.path, number, 1)
        if len(line) > MAX_LINE:
            raise ConfigError("a ledger line longer than any the tournament writes", where)
        try:
            event = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"not a ledger entry ({exc})", where) from None
        kind = event.get("event") if isinstance(event, dict) else None
        if not isinstance(kind, str) or kind not in events.KINDS:
            raise ConfigError(
                f"not a ledger entry (event is one of {', '.join(events.KINDS)})", where
            )
        if event.get("n") != expected:
            raise ConfigError(
                f"entry number {event.get('n')!r} where {expected} belongs: a "
                "line is missing or was moved",
                where,
            )
        return dict(event)

    def record(self, t: Tournament, event: E) -> E:
        """Write `event`, checked against `t` (refused if another desk wrote meanwhile), and
        fold it into `t`; the event as written (with its number). It is checked once, as it
        is folded into a copy of `t` (`Tournament.folded`: the clerk's, where the clerk made
        it); `t` takes that copy once the line is on the disk, and stays as it was if not."""
        after = t.folded(event)
        written = self.append(event, after=len(t.events))  # (numbered as `after` has it)
        t.adopt(after)
        return written

    def append(self, event: E, after: int | None = None) -> E:
        """Write one entry (numbered here) and make sure it is on the disk before returning.
        Two desks typing at once take turns (a lock on the file); `after`, the number of
        entries the caller's decision was made on, refuses an entry if another desk wrote
        one meanwhile, since it was checked against a state that no longer stands."""
        new = not self.path.exists()
        with open(self.path, "ab") as stream:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX)  # released when the file is closed
            entries = self.read()
            if after is not None and len(entries) != after:
                raise ConfigError(
                    "the ledger changed while this was typed (another desk?): "
                    "nothing written; look again and repeat it",
                    self.path,
                )
            if self.torn:
                self._cut_torn_tail()
            event = dataclasses.replace(event, n=len(entries) + 1)
            line = json.dumps(event.to_dict(), ensure_ascii=False, sort_keys=True).encode()
            if len(line) >= MAX_LINE:
                raise ConfigError(
                    f"an entry of {len(line):,} bytes, more than the ledger takes "
                    f"({MAX_LINE:,}): nothing written",
                    self.path,
                )
            if self.path.stat().st_size and not self._ends_with_newline():
                line = b"\n" + line  # a last entry a person saved without its newline
            self._write(stream.fileno(), line + b"\n", new)
        if new:  # the file's name in its folder must survive a power cut too
            folder = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        return event

    def _write(self, fd: int, data: bytes, new: bool) -> None:
        """All of `data` on the disk, or nothing: a write the disk cannot take (full, or a
        file size limit) is taken back, so that no half line is left to be read as a crash
        and every entry before it stands."""
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            os.ftruncate(fd, size)
            if new and not size:
                self.path.unlink(missing_ok=True)
            raise OSError(
                exc.errno,
                f"{exc.strerror}: nothing written, every entry before stands; make room on "
                "its disk (or move the tournament to another) and type it again",
                str(self.path),
            ) from None

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as stream:
            stream.seek(-1, os.SEEK_END)
            return stream.read(1) == b"\n"

    def _cut_torn_tail(self) -> None:
        raw = self.path.read_bytes()
        keep = raw.rfind(b"\n") + 1
        with open(self.path, "r+b") as stream:
            stream.truncate(keep)
            os.fsync(stream.fileno())
        self.torn = ""
