"""The match journal: the engine's snapshot on disk, so that a crash, `kill -9` or a power
cut never loses the match time nor its goals. The service comes back with the clock stopped
at the journaled play time and waits for RESUME (or REPLAY: ITHF 4.5).

Writes are atomic (temporary file, fsync, rename, fsync of the folder): a power cut leaves
either the old journal or the new one, never half of one. They happen on every change the
operator makes and at most every `interval` seconds while a clock runs, which keeps an SD
card's wear to a few thousand small writes a day."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import asdict, fields
from pathlib import Path

from timekeeper.rules.engine import Engine, Snapshot, State

log = logging.getLogger(__name__)

FILE_NAME = "match.json"
FORMAT = 1
RUNNING = (State.RUNNING.value, State.SHOT.value)
MAX_SECONDS = 24 * 3600.0  # no period is played, nor time added, for longer than a day


class JournalError(ValueError):
    """A journal that cannot be used (corrupt, truncated, from another profile)."""


def state_dir(chosen: Path | None = None) -> Path:
    """--state-dir, else systemd's $STATE_DIRECTORY, else ~/.local/state/timekeeper."""
    if chosen is not None:
        return chosen
    if os.environ.get("STATE_DIRECTORY"):
        return Path(os.environ["STATE_DIRECTORY"].split(":")[0])
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "timekeeper"


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename itself must survive a power cut
    finally:
        os.close(folder)


def dumps(snap: Snapshot) -> str:
    # periods count from 1 in the file, as on the status line (0: before the first)
    record = {"format": FORMAT, **asdict(snap) | {"period": snap.period + 1},
              "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}  # for people reading it only
    return json.dumps(record) + "\n"


def loads(text: str, source: Path | str = "journal") -> Snapshot:
    """Parse and check a journal; JournalError says what is wrong with it."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JournalError(f"{source}: not a journal (corrupt or truncated: {exc})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise JournalError(f"{source}: not a timekeeper journal of format {FORMAT}")
    kinds = {"profile": str, "state": str, "period": int, "play_time": float, "added": float,
             "shots": int, "shootout": bool}
    values: dict = {}
    for name in ("extra", "score"):  # optional objects (journals before the score have none)
        value = record.get(name)
        if value is not None and not isinstance(value, dict):
            raise JournalError(f"{source}: field {name!r} must be an object ({value!r})")
        values[name] = value
    for field in fields(Snapshot):
        if field.name in ("extra", "score"):
            continue
        value = record.get(field.name)
        kind = kinds[field.name]
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not ok or (kind is not bool and isinstance(value, bool)):
            raise JournalError(f"{source}: field {field.name!r} missing or wrong ({value!r})")
        values[field.name] = float(value) if kind is float else value
    if values["state"] not in {s.value for s in State}:
        raise JournalError(f"{source}: unknown state {values['state']!r}")
    for name in ("play_time", "added"):
        if not 0 <= values[name] <= MAX_SECONDS:  # also NaN and infinity
            raise JournalError(f"{source}: field {name!r} out of range ({values[name]!r})")
    if values["period"] < 0 or values["shots"] < 0:
        raise JournalError(f"{source}: negative period or shots")
    values["period"] -= 1
    return Snapshot(**values)


def parse_resume_at(text: str, profile_key: str) -> Snapshot:
    """`PERIOD:MM:SS`, the play time already played in that period, e.g. `2:01:30` — to
    continue on another box a match whose table or box broke."""
    match = re.fullmatch(r"\s*(\d+):(\d+):(\d+(?:\.\d+)?)\s*", text)
    if not match:
        raise ValueError(f"takes PERIOD:MM:SS of play time, e.g. 2:01:30 for period 2 at "
                         f"1:30 played (got {text!r})")
    period, minutes, seconds = match.groups()
    if int(period) < 1:
        raise ValueError("periods count from 1")
    if float(seconds) >= 60:
        raise ValueError(f"seconds must be under 60 (got {seconds})")
    played = int(minutes) * 60 + float(seconds)
    return Snapshot(profile_key, State.STOPPED.value, int(period) - 1, played)


class Journal:
    """Keeps `folder/match.json` in step with the engine. `save` after every change; `tick`
    from the runner's scheduler while a clock runs."""

    def __init__(self, folder: Path, engine: Engine, interval: float = 1.0) -> None:
        self.path = folder / FILE_NAME
        self.engine, self.interval = engine, interval
        self._last: Snapshot | None = None
        self._next_due: float | None = None
        self._failed = False

    def load(self) -> Snapshot | None:
        """The journaled snapshot, or None (no journal, or one that cannot be used: it is
        then kept as match.json.bad for a look, and the box starts clean — never a crash
        loop on a bad file)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return self.set_aside(f"cannot read it ({exc})")
        try:
            snap = loads(text, self.path)
        except JournalError as exc:
            return self.set_aside(str(exc).removeprefix(f"{self.path}: "))
        if snap.profile != self.engine.profile.key:
            return self.set_aside(f"it holds a match of profile {snap.profile}, not "
                                  f"{self.engine.profile.key}")
        return snap

    def set_aside(self, why: str) -> None:
        """Keep a journal that cannot be resumed as match.json.bad, and say so."""
        bad = self.path.with_name(self.path.name + ".bad")
        try:
            os.replace(self.path, bad)
            kept = f"; kept as {bad}"
        except OSError:
            kept = ""
        log.warning("journal %s not resumed: %s; starting a new match%s", self.path, why, kept)
        return None

    def save(self, now: float) -> None:
        snap = self.engine.snapshot(now)
        self._next_due = now + self.interval if snap.state in RUNNING else None
        if snap == self._last:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, dumps(snap))
        except OSError as exc:  # a full or read-only card must not stop the match
            if not self._failed:
                log.error("cannot write the journal %s: %s; the match time is NOT kept "
                          "through a crash or power cut (check --state-dir / state_dir)",
                          self.path, exc.strerror or exc)
            self._failed = True
            return
        if self._failed:
            log.info("journal %s written again", self.path)
        self._failed, self._last = False, snap

    # the runner's scheduler interface
    def next_due(self) -> float | None:
        return self._next_due

    def fire(self, now: float) -> None:
        self.save(now)


