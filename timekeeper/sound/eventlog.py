"""`--events FILE`: one JSON line per cue played, for referees' records and for measuring.
A cue nobody heard (the sound was down) is still written, marked `"heard": false` with why.
Once the sides have names, each line carries them (`"names": {"home": …, "away": …}`): a day
of matches goes into one file, and a line read alone (grep, tail, jq) still says whose match
it was. A render has no names, and its lines are as they always were. A series played on the
box adds one line of another kind for each game it counts (`{"series": …}`: that game, the
games before it, the wins; box/series.py): a result a referee looks up beside the cues."""

from __future__ import annotations

import errno
import json
import logging
import os
from datetime import datetime
from pathlib import Path

from timekeeper.rules.engine import Cue, Engine, Status
from timekeeper.sound.listener import RunnerListener

log = logging.getLogger(__name__)
MAX_PENDING = 1 << 20  # bytes kept for a log that cannot be written (about 5,000 cues)
_FULL = (errno.ENOSPC, errno.EDQUOT)


class EventLog(RunnerListener):
    """Live runs append (a day of matches in one file); a render replaces the file, so that
    it always describes the WAV beside it. A silent run (no sound card) still records every
    cue, each with `"heard": false`.

    A live log (`keep_going`) never stops the match: a full disk or a write error is told
    once, naming the file; the lines wait (up to MAX_PENDING bytes) and are written, in order,
    as soon as a write succeeds again (each cue retries). Lines are written whole with
    os.write on an O_APPEND file, so a failed write never leaves half a line to repeat."""

    def __init__(
        self,
        path: Path,
        append: bool = True,
        profile: str = "",
        wall_clock: bool = False,
        keep_going: bool = False,
        heard: bool = True,
    ) -> None:
        self.path, self.profile, self.wall_clock = path, profile, wall_clock
        self.heard = heard
        self.keep_going = keep_going
        self._flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
        self._fd: int | None = None
        self._pending = bytearray()
        self._failed = False
        self._lost = 0  # lines dropped while failing, beyond MAX_PENDING
        try:
            self._open()
        except OSError as exc:  # a wrong path is refused at start; a full disk is waited out
            if not (keep_going and exc.errno in _FULL):
                raise
            self._failing(exc)

    def engine_replaced(self, engine: Engine) -> None:
        """The hall switched the box to another profile: its lines name that one from now."""
        if self.profile:
            self.profile = engine.profile.key

    def cue_played(self, cue: Cue, status: Status, played: float, not_heard: str | None) -> None:
        """A live runner's listener: every cue, not the stops of a melody."""
        if not cue.stop:
            self.record(cue, played, not_heard, status.names)

    def record(
        self,
        cue: Cue,
        played: float,
        not_heard: str | None = None,
        names: dict[str, str] | None = None,
    ) -> None:
        """`played`: when the cue went out (or would have); `not_heard`: why nobody heard it,
        None when it was sounded; `names`: the sides' (written once either has one)."""
        entry: dict[str, object] = {
            "cue": cue.name,
            "due": round(cue.due, 6),
            "played": round(played, 6),
            "period": cue.period,
            "play_time": round(cue.play_time, 3),
        }
        if not_heard is not None:
            entry["heard"], entry["why"] = False, not_heard
        if cue.name in ("minute", "third"):
            entry["count"] = cue.count
        if self.profile:
            entry["profile"] = self.profile
        if names and any(names.values()):
            entry["names"] = {"home": names.get("home", ""), "away": names.get("away", "")}
        if self.wall_clock:  # for people reading the record; never used for timing
            entry["time"] = datetime.now().astimezone().isoformat(timespec="milliseconds")
        if cue.offset:
            entry["offset"] = round(cue.offset, 6)
        if cue.detail:  # whose penalty or time-out ended
            entry["detail"] = cue.detail
        if not self.heard and not_heard is None:
            entry["heard"] = False
        self.write_line(json.dumps(entry, ensure_ascii=False))

    def note(self, entry: dict[str, object], names: dict[str, str] | None = None) -> None:
        """A line that is not a cue's (a series' game counted: `{"series": …}`), with the
        profile, the names and the time as a cue's line has them."""
        entry = dict(entry)
        if self.profile:
            entry["profile"] = self.profile
        if names and any(names.values()):
            entry["names"] = {"home": names.get("home", ""), "away": names.get("away", "")}
        if self.wall_clock:
            entry["time"] = datetime.now().astimezone().isoformat(timespec="milliseconds")
        self.write_line(json.dumps(entry, ensure_ascii=False))

    def write_line(self, text: str) -> None:
        line = (text + "\n").encode("utf-8")
        if len(self._pending) + len(line) > MAX_PENDING:
            self._lost += 1
        else:
            self._pending += line
        try:
            self._flush()
        except OSError as exc:
            if not self.keep_going:
                raise
            self._failing(exc)
            return
        if self._failed:
            lost = f"; {self._lost} lines were lost meanwhile" if self._lost else ""
            log.warning("events log %s written again%s", self.path, lost)
            self._failed, self._lost = False, 0

    def _open(self) -> None:
        self._fd = os.open(self.path, self._flags, 0o644)
        self._flags &= ~os.O_TRUNC  # (reopened after a failure: never truncated again)

    def _flush(self) -> None:
        if self._fd is None:
            self._open()
        assert self._fd is not None
        while self._pending:
            written = os.write(self._fd, self._pending)
            del self._pending[:written]

    def _failing(self, exc: OSError) -> None:
        if not self._failed:
            log.error(
                "cannot write the events log %s: %s; the match goes on, and the lines "
                "are written as soon as it can be written again",
                self.path,
                exc.strerror or exc,
            )
        self._failed = True

    def close(self) -> None:
        if self._pending and self._fd is not None:
            try:
                self._flush()
            except OSError:
                if not self.keep_going:
                    raise
        if self._pending or self._lost:
            log.warning(
                "events log %s: %d bytes could not be written", self.path, len(self._pending)
            )
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
