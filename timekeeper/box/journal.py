"""The match journal: the engine's snapshot on disk, so that a crash, `kill -9` or a power
cut never loses the match time nor its goals. The service comes back with the clock stopped
at the journaled play time and waits for RESUME (or REPLAY: ITHF 4.5).

Writes are atomic (temporary file, fsync, rename, fsync of the folder): a power cut leaves
either the old journal or the new one, never half of one. They happen on every change the
operator makes and at most every `interval` seconds while a clock runs, which keeps an SD
card's wear to a few thousand small writes a day."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
import time
from dataclasses import asdict, fields
from pathlib import Path

from timekeeper.rules.commands import MAX_ADD, MAX_NAME, MAX_PLAYER, check_name
from timekeeper.rules.engine import Engine, Snapshot, State, Status
from timekeeper.rules.penalties import GAME, KINDS, MAX_KINDS, TEAMS, WAITING
from timekeeper.rules.penalties import RUNNING as PENALTY_RUNNING
from timekeeper.rules.stoppedtime import MAX_PENALTIES_HELD
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.listener import RunnerListener

log = logging.getLogger(__name__)

FILE_NAME = "match.json"
FORMAT = 1
RUNNING = (State.RUNNING.value, State.SHOT.value)
IN_PROGRESS = {s.value for s in State} - {
    State.IDLE.value,
    State.PRESTART.value,
    State.FINISHED.value,
}  # what restore goes on with
MAX_SECONDS = 24 * 3600.0  # no period is played for longer than a day
MAX_ADDED = MAX_ADD  # nor is more than an hour added to one (the engine refuses more)
MAX_SHOTS = 1000  # shoot-out shots: sudden death ends long before
MAX_BYTES = 256 * 1024  # a journal is a few hundred bytes; ball hockey's a few KB
# The file's names of the snapshot's fields, where they differ: the period is written as
# `period`, counted from 1 as on the status line (0: before the first), as it always was,
# so journals old and new read both ways; the snapshot keeps the 0-based `index`.
FILE_KEYS = {"index": "period"}


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
    record: dict = {"format": FORMAT}
    for name, value in asdict(snap).items():
        record[FILE_KEYS.get(name, name)] = value + 1 if name == "index" else value
    record["written"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")  # for people reading it only
    return json.dumps(record) + "\n"


def loads(text: str, source: Path | str = "journal") -> Snapshot:
    """Parse and check a journal; JournalError says what is wrong with it, whatever it is
    (the fuzz test feeds it random bytes, JSON and mutations of real journals)."""
    if len(text) > MAX_BYTES:
        raise JournalError(f"{source}: too large for a journal ({len(text)} characters)")
    try:
        return _loads(text, source)
    except JournalError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError, OverflowError) as exc:
        raise JournalError(
            f"{source}: not a journal ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


def _loads(text: str, source: Path | str) -> Snapshot:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JournalError(f"{source}: not a journal (corrupt or truncated: {exc})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise JournalError(f"{source}: not a timekeeper journal of format {FORMAT}")
    kinds = {
        "profile": str,
        "state": str,
        "index": int,
        "play_time": float,
        "added": float,
        "shots": int,
        "shootout": bool,
    }
    values: dict = {}
    extra = record.get("extra")
    if extra is not None:
        try:
            _check_extra(extra)
        except _Wrong as exc:
            raise JournalError(
                f"{source}: field 'extra{exc.args[0]}' missing or wrong ({exc.args[1]!r:.60})"
            ) from None
    values["extra"] = extra
    score = record.get("score")  # (journals before the score have none; the engine's
    if score is not None and not isinstance(score, dict):  # restore checks the rest)
        raise JournalError(f"{source}: field 'score' must be an object ({score!r:.60})")
    values["score"] = score
    values["names"] = _names(record.get("names"), source)
    for field in fields(Snapshot):
        if field.name in ("extra", "score", "names"):
            continue
        key = FILE_KEYS.get(field.name, field.name)
        value = record.get(key)
        kind = kinds[field.name]
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not ok or (kind is not bool and isinstance(value, bool)):
            raise JournalError(f"{source}: field {key!r} missing or wrong ({value!r:.60})")
        values[field.name] = float(value) if kind is float else value  # type: ignore[arg-type]
    if values["state"] not in {s.value for s in State}:
        raise JournalError(f"{source}: unknown state {values['state']!r:.60}")
    for name, top in (("play_time", MAX_SECONDS), ("added", MAX_ADDED)):
        if not 0 <= values[name] <= top:  # also NaN and infinity
            raise JournalError(
                f"{source}: field {name!r} out of range ({values[name]!r}; 0 to {top:g} s)"
            )
    if not 0 <= values["index"] <= 1000 or not 0 <= values["shots"] <= MAX_SHOTS:
        raise JournalError(f"{source}: period or shots out of range")
    values["index"] -= 1  # (the file counts from 1)
    return Snapshot(**values)


def _names(names: object, source: Path | str) -> dict | None:
    """The sides' names as the engine keeps them (journals before the names have none)."""
    if names is None:
        return None
    if (
        not isinstance(names, dict)
        or set(names) != set(TEAMS)
        or not all(isinstance(names[team], str) and len(names[team]) <= MAX_NAME for team in TEAMS)
    ):
        raise JournalError(
            f'{source}: field \'names\' must be {{"home": NAME, "away": NAME}} ({names!r:.60})'
        )
    for team in TEAMS:
        try:
            if check_name(names[team]) != names[team]:
                raise ValueError(f"{names[team]!r} is not a name as kept")
        except ValueError as exc:
            raise JournalError(f"{source}: field 'names.{team}': {exc}") from None
    return {team: names[team] for team in TEAMS}


class _Wrong(Exception):
    """(where, value): a field of `extra` that is missing or of the wrong kind or range."""


def _int(value: object, where: str, top: int = 1_000_000, low: int = 0) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= top:
        raise _Wrong(where, value)


def _seconds(value: object, where: str, none: bool = False) -> None:
    if none and value is None:
        return
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not (0 <= value <= MAX_SECONDS)
    ):
        raise _Wrong(where, value)


def _teams(value: object, where: str, top: int) -> None:
    if not isinstance(value, dict) or set(value) != set(TEAMS):
        raise _Wrong(where, value)
    for team in TEAMS:
        _int(value[team], f"{where}.{team}", top)


def _check_extra(extra: object) -> None:
    """A stopped-time match's penalties, time-outs and shoot-out score, field by field: the
    engine trusts what the journal hands it."""
    if not isinstance(extra, dict):
        raise _Wrong("", extra)
    box = extra.get("box")
    if not isinstance(box, dict) or set(box) != {"running_max", "next_id", "penalties"}:
        raise _Wrong(".box", box)
    _int(box["running_max"], ".box.running_max", 10, 1)
    _int(box["next_id"], ".box.next_id", 1_000_000, 1)
    penalties = box["penalties"]
    if not isinstance(penalties, list) or len(penalties) > 2 * MAX_PENALTIES_HELD:
        raise _Wrong(".box.penalties", penalties)
    keys = {"id", "team", "kinds", "segments", "player", "state", "served", "since"}
    for i, p in enumerate(penalties):
        at = f".box.penalties[{i}]"
        if not isinstance(p, dict) or set(p) != keys:
            raise _Wrong(at, p)
        _int(p["id"], f"{at}.id", 1_000_000, 1)
        if p["team"] not in TEAMS:
            raise _Wrong(f"{at}.team", p["team"])
        if (
            not isinstance(p["kinds"], list)
            or not 0 < len(p["kinds"]) <= MAX_KINDS
            or any(k not in KINDS for k in p["kinds"])
        ):
            raise _Wrong(f"{at}.kinds", p["kinds"])
        if not isinstance(p["segments"], list) or len(p["segments"]) > MAX_KINDS:
            raise _Wrong(f"{at}.segments", p["segments"])
        for segment in p["segments"]:
            _seconds(segment, f"{at}.segments")
        if not isinstance(p["player"], str) or len(p["player"]) > MAX_PLAYER:
            raise _Wrong(f"{at}.player", p["player"])
        if p["state"] not in (PENALTY_RUNNING, WAITING, GAME):
            raise _Wrong(f"{at}.state", p["state"])
        _seconds(p["served"], f"{at}.served")
        _seconds(p["since"], f"{at}.since", none=True)
    score = extra.get("score")
    if score is not None:
        if not isinstance(score, dict) or set(score) != {
            "first",
            "then",
            "attempts",
            "goals",
            "opener",
        }:
            raise _Wrong(".score", score)
        _int(score["first"], ".score.first", 100, 1)
        _int(score["then"], ".score.then", 100, 1)
        _teams(score["attempts"], ".score.attempts", MAX_SHOTS)
        _teams(score["goals"], ".score.goals", MAX_SHOTS)
        if score["opener"] is not None and score["opener"] not in TEAMS:
            raise _Wrong(".score.opener", score["opener"])
    _teams(extra.get("timeouts_used"), ".timeouts_used", 100)
    _int(extra.get("stoppage"), ".stoppage", 10_000_000)
    _int(extra.get("timeout_stoppage"), ".timeout_stoppage", 10_000_000, -1)
    if extra.get("penalty_shot") not in (None, *TEAMS):
        raise _Wrong(".penalty_shot", extra.get("penalty_shot"))
    known = {
        "box",
        "score",
        "timeouts_used",
        "timeout_team",
        "timeout_until",
        "stoppage",
        "timeout_stoppage",
        "penalty_shot",
    }
    if set(extra) - known:
        raise _Wrong("." + sorted(set(extra) - known)[0], "unknown field")


def parse_resume_at(text: str, profile_key: str) -> Snapshot:
    """`PERIOD:MM:SS`, the play time already played in that period, e.g. `2:01:30` — to
    continue on another box a match whose table or box broke."""
    match = re.fullmatch(r"\s*(\d+):(\d+):(\d+(?:\.\d+)?)\s*", text)
    if not match:
        raise ValueError(
            f"takes PERIOD:MM:SS of play time, e.g. 2:01:30 for period 2 at "
            f"1:30 played (got {text!r})"
        )
    period, minutes, seconds = match.groups()
    if int(period) < 1:
        raise ValueError("periods count from 1")
    if float(seconds) >= 60:
        raise ValueError(f"seconds must be under 60 (got {seconds})")
    played = int(minutes) * 60 + float(seconds)
    return Snapshot(profile_key, State.STOPPED.value, int(period) - 1, played)


def _read(path: Path) -> str:
    if not stat.S_ISREG(os.stat(path).st_mode):  # (a FIFO would block the start)
        raise OSError(f"{path} is not a regular file")
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    return raw.decode("utf-8")


def match_in_progress(folder: Path) -> Snapshot | None:
    """The journal's match in progress, if it can be read (else None; nothing is set aside
    here: Journal.load does that): a starting box plays it with the profile it was played
    with, whatever `--profile` says (the hall's pairing may have switched it)."""
    try:
        snap = loads(_read(folder / FILE_NAME))
    except (OSError, UnicodeDecodeError, JournalError):
        return None
    return snap if snap.state in IN_PROGRESS and snap.index >= 0 else None


def last_profile(folder: Path) -> str:
    """The profile of the journal's match, in progress or finished ("": no journal that can
    be read): a local series' last game, where its file is older than the profile kept in it."""
    try:
        return loads(_read(folder / FILE_NAME)).profile
    except (OSError, UnicodeDecodeError, JournalError):
        return ""


def keep_aside(path: Path) -> Path | None:
    """Keep a file that is not taken beside it, under a name of its own that is never
    overwritten (match.json.2026-11-30T10-53-01.bad), the file itself gone: nothing writes
    over the evidence. The kept path, or None (it could not be renamed)."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
    for n in range(1, 100):
        bad = path.with_name(f"{path.name}.{stamp}{'' if n == 1 else f'-{n}'}.bad")
        try:
            os.link(path, bad)  # never over an existing file
        except FileExistsError:
            continue
        except OSError:  # (no hard links here, e.g. FAT): a rename, checked first
            if bad.exists():
                continue
            try:
                os.rename(path, bad)
            except OSError:
                return None
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.unlink(path)
        return bad
    return None


class Journal(RunnerListener):
    """Keeps `folder/match.json` in step with the engine: saved on every change (a runner
    listener) and, while a clock runs, at the runner's timer."""

    def __init__(self, folder: Path, engine: Engine, interval: float = 1.0) -> None:
        """Raises ConfigError for a sound pack's folder (a mix-up once put journals into
        the built-in pack): a pack is copied from box to box and must hold no match."""
        if (folder / "pack.yaml").is_file():
            raise ConfigError(
                f"{folder} is a sound pack's folder; the journal goes in a state folder of its own",
                field="--state-dir",
            )
        self.path = folder / FILE_NAME
        self.engine, self.interval = engine, interval
        self._last: Snapshot | None = None
        self._next_due: float | None = None
        self._failed = False

    def load(self) -> Snapshot | None:
        """The journaled snapshot, or None (no journal, or one that cannot be used: it is
        then set aside for a look, and the box starts clean — never a crash loop on a bad
        file)."""
        try:
            text = _read(self.path)
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.set_aside(f"cannot read it ({exc})")
            return None
        try:
            snap = loads(text, self.path)
        except JournalError as exc:
            self.set_aside(str(exc).removeprefix(f"{self.path}: "))
            return None
        if snap.profile != self.engine.profile.key:
            if snap.state not in IN_PROGRESS or snap.index < 0:  # nothing to go on with
                log.info(
                    "journal %s held no match in progress (profile %s, %s); starting a "
                    "new match of %s",
                    self.path,
                    snap.profile,
                    snap.state,
                    self.engine.profile.key,
                )
                return None  # (the next save replaces it)
            kept = self.set_aside(None)
            if kept is None:
                log.warning(
                    "a match of profile %s in progress could not be kept (%s cannot "
                    "be renamed); starting a new match",
                    snap.profile,
                    self.path,
                )
            else:
                log.warning(
                    "a match of profile %s in progress was kept as %s; `timekeeper run "
                    "--profile %s --resume-from %s` goes on with it",
                    snap.profile,
                    kept,
                    snap.profile,
                    kept,
                )
            return None
        return snap

    def resume(self, now: float = 0.0) -> Snapshot | None:
        """Load the journal and restore it into the engine, clock stopped: the snapshot, or
        None (nothing to resume, or a journal set aside because the engine could not go on
        with it — whatever is wrong with it, nothing is raised)."""
        snap = self.load()
        if snap is None:
            return None
        try:
            self.engine.restore(snap)
            self.engine.status(now)  # what the box does first with it, tried before it counts
            self.engine.next_deadline()
            self.engine.snapshot(now)
        except Exception as exc:  # (any: a damaged journal must never stop a start)
            self.engine.restore(Snapshot(self.engine.profile.key, "idle"))
            self.set_aside(f"{type(exc).__name__}: {str(exc)[:200]}")
            return None
        return snap

    def set_aside(self, why: str | None) -> Path | None:
        """Keep a journal that is not resumed beside it (`keep_aside`), and say why (`why`:
        None when the caller says it). The kept path, or None."""
        kept = keep_aside(self.path)
        if why is not None:
            where = f"; kept as {kept}" if kept else ""
            log.warning("journal %s not resumed: %s; starting a new match%s", self.path, why, where)
        return kept

    def save(self, now: float) -> None:
        snap = self.engine.snapshot(now)
        self._next_due = now + self.interval if snap.state in RUNNING else None
        if snap == self._last and not self._failed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, dumps(snap))
        except OSError as exc:  # a full or read-only card must not stop the match
            if not self._failed:
                log.error(
                    "cannot write the journal %s: %s; the match time is NOT kept "
                    "through a crash or power cut (check --state-dir / state_dir)",
                    self.path,
                    exc.strerror or exc,
                )
            self._failed = True
            self._next_due = now + max(self.interval, 1.0)  # tried again, running or not
            return
        if self._failed:
            log.info("journal %s written again", self.path)
        self._failed, self._last = False, snap

    def match_changed(self, status: Status, now: float) -> None:
        self.save(now)

    def engine_replaced(self, engine: Engine) -> None:  # (another profile, between matches)
        self.engine = engine

    # the runner's scheduler interface
    def next_due(self) -> float | None:
        return self._next_due

    def fire(self, now: float) -> None:
        self.save(now)
