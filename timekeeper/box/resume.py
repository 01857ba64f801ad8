"""Which match a starting box goes on with: `--resume-at`, `--resume-from`, else the journal
(unless `--fresh`), restored into the engine with its clock stopped; `--replay` plays it again
from the start with the goals kept (ITHF 4.5). And which local series (`run --best-of`): the
one under way in `series.json`, under the profile its games are played with and with its
players. Bad input is a ConfigError naming the option."""

from __future__ import annotations

import logging
from pathlib import Path

from timekeeper.box.journal import Journal, JournalError, last_profile, loads, parse_resume_at
from timekeeper.box.series import FILE as SERIES_FILE
from timekeeper.box.series import LOCAL, Journaled, journaled, under_way
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, Snapshot
from timekeeper.rules.profiletypes import Profile
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


def series_going_on(
    folder: Path, best_of: int | None, fresh: bool, in_hall: bool
) -> Journaled | None:
    """The local series (`run --best-of`) a starting box goes on with, as its file has it:
    one under way, unless the command names another --best-of; a won one, by the same
    --best-of (RESET begins the next); never with --fresh or in a hall. None: no such
    series (live._series says what becomes of the file's)."""
    if fresh or in_hall:
        return None
    kept = journaled(folder)
    if kept is None or kept.id != LOCAL or kept.series is None:
        return None
    s = kept.series
    if (best_of is None and not s.decided) or best_of == s.best_of:
        return kept
    return None  # (another --best-of under way: refused by live._series, naming both commands)


def series_profile(
    kept: Journaled | None, folder: Path, usual: Profile, explicit: str | None
) -> Profile:
    """The profile a local series under way is played under, whatever the config says (the
    service's restart names no --profile): its games must go on as they began, a drawn one
    to its overtime. A --profile that names another is refused (ConfigError naming both
    commands: go on with the series, or begin a new one with --fresh; a won series' next one,
    after RESET, is played under the one it names). A file written
    before the box kept the profile: the profile of the last game in the match journal,
    unless --profile names one; a profile that can no longer be loaded: `usual`, said."""
    if kept is None or kept.series is None:
        return usual
    key = kept.profile or ("" if explicit else last_profile(folder))
    if not key or key == usual.key:
        return usual
    s = kept.series
    if explicit and s.decided:
        return usual  # (the next series, after RESET, is played under it)
    if explicit:
        raise ConfigError(
            f"{folder / SERIES_FILE} holds a best-of-{s.best_of} series under way "
            f"({under_way(s)}) played under profile {key}: "
            f"`timekeeper run --best-of {s.best_of} --profile {key}` goes on with it, "
            f"`timekeeper run --best-of {s.best_of} --profile {explicit} --fresh` begins a new one",
            field="--profile",
        )
    try:
        played = profile.load(key)
    except ConfigError as exc:
        log.warning(
            "the series' profile %s can no longer be loaded (%s): its games go on under %s",
            key,
            exc,
            usual.key,
        )
        return usual
    why = "" if kept.profile else " (its last game's, in the match journal)"
    log.info(
        "the series under way is played under profile %s%s, not %s: going on with it",
        played.key,
        why,
        usual.key,
    )
    return played


def name_sides(engine: Engine, kept: Journaled | None, usual: tuple[str, str]) -> None:
    """The sides' names at start: the journal's match's; else the players of the local
    series going on (`kept`: between its games the match journal may hold none, e.g. one
    set aside); else `usual`, the config's. (A box in a hall has no local series: its
    desk's pairing names the sides.)"""
    if any(engine.names.values()):
        return
    if kept is not None and any(kept.names.values()):
        engine.name_sides(kept.names["home"], kept.names["away"])
        log.info("the series' players: %s – %s", kept.names["home"], kept.names["away"])
    else:
        engine.name_sides(*usual)
