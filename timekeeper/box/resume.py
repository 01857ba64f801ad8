"""Which match a starting box goes on with: `--resume-at`, `--resume-from`, else the journal
(unless `--fresh`), restored into the engine with its clock stopped; `--replay` plays it again
from the start with the goals kept (ITHF 4.5). Bad input is a ConfigError naming the option."""

from __future__ import annotations

import logging
from pathlib import Path

from timekeeper.box.journal import Journal, JournalError, loads, parse_resume_at
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, Snapshot
from timekeeper.rules.yamldoc import ConfigError

log = logging.getLogger(__name__)


def resume(
    engine: Engine,
    journal: Journal,
    resume_at: str | None = None,
    resume_from: Path | None = None,
    fresh: bool = False,
    replay: bool = False,
) -> Snapshot | None:
    """The match to go on with, restored into the engine with its clock stopped (None: a new
    match)."""
    key = engine.profile.key
    if resume_at:
        try:
            snap = parse_resume_at(resume_at, key)
        except ValueError as exc:
            raise ConfigError(str(exc), field="--resume-at") from None
        source = "--resume-at"
    elif resume_from:
        try:
            snap = loads(resume_from.read_text(encoding="utf-8"), resume_from)
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read: {exc}", resume_from) from None
        except JournalError as exc:
            raise ConfigError(str(exc), field="--resume-from") from None
        if snap.profile != key:
            raise ConfigError(
                f"the journal is of profile {snap.profile}, not {key}; "
                f"run with --profile {snap.profile}",
                resume_from,
            )
        source = str(resume_from)
    elif fresh:
        if replay:
            raise ConfigError(
                "--replay plays the journal's match again; --fresh starts a new one: choose one",
                field="--replay",
            )
        return None
    else:  # whatever is wrong with the journal, it is set aside: never a crash loop
        kept = journal.resume()
        if kept is None:
            return None
        return _restored(engine, kept, str(journal.path), replay)
    try:
        engine.restore(snap)
    except Exception as exc:
        raise ConfigError(str(exc), field="--resume-at" if resume_at else "--resume-from") from None
    return _restored(engine, snap, source, replay)


def _restored(engine: Engine, snap: Snapshot, source: str, replay: bool) -> Snapshot | None:
    """A match restored into the engine: replayed from the start (--replay), or the match
    to go on with (None when there is none, e.g. it was in its pre-start countdown)."""
    if replay:
        _replay(engine, source)
        return snap
    if engine.state.value == "idle":
        if snap.state == "prestart":
            log.info("the match was in its pre-start countdown: START begins it again")
        return None
    return snap


def _replay(engine: Engine, source: str) -> None:
    """--replay: ITHF 4.5, the match is played again from the start with the goals kept."""
    try:  # a restored match has no deadline: the time told does not matter
        engine.handle(Command(Action.REPLAY), 0.0)
    except Refused as exc:
        raise ConfigError(
            f"no match under way in {source} to replay ({exc})", field="--replay"
        ) from None
