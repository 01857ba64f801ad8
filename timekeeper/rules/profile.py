"""Profiles: a rule set's timing as YAML, validated once at load into immutable objects
(rules/profiletypes.py); a profile that follows ITHF is held to it (rules/ithf.py).

Everything the engine needs is decided here (period names, which cue ends each period, the
mark schedule), so the engine itself never second-guesses its input."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timekeeper.rules import ithf
from timekeeper.rules.data import builtin_dir, user_dirs
from timekeeper.rules.profiletypes import (
    FEEDBACK_CUES,
    Break,
    Mark,
    Penalties,
    Period,
    Profile,
    Shootout,
    Timeout,
)
from timekeeper.rules.yamldoc import HOUR, ConfigError, Doc, Path_, Reader

TOP_KEYS = (
    "title",
    "description",
    "follows",
    "extends",
    "add_step",
    "prestart",
    "feedback",
    "period",
    "break",
    "overtime",
    "shootout",
    "penalties",
    "timeout",
    "forfeit_signal",
    "no_show",
    "tenths",
)
PERIOD_KEYS = ("length", "count", "name", "marks", "mark_beeps", "melody", "starts")
OVERTIME_KEYS = ("length", "untimed", "sudden_death", "marks", "mark_beeps", "melody")
BREAK_KEYS = ("length", "warning")
SHOOTOUT_KEYS = ("first", "then", "shot")
PENALTY_KEYS = ("minor", "major", "personal", "match", "running", "power_play_goal_ends_minor")
FORFEIT_AFTER = 30.0  # ITHF 4.6: a player not ready 30 s after the start loses
MAX_WAIT = 3600.0  # a match penalty or a no-show countdown longer than an hour is a typo
TIMEOUT_KEYS = ("length", "per_team")
RULE_SETS = ("ithf",)
NO_RULE_SET = (None, "none")  # `follows: none` (or null): a club profile that keeps no rule set

# Sane ranges, checked at load: a value outside them is a typo or an attack, never a match
# (10^11 periods or a 10^9-second period would cost minutes and gigabytes before play).
MAX_LENGTH = 3 * HOUR  # a period or an overtime part
MAX_PERIODS = 12
MAX_OVERTIMES = 6
MAX_BREAK = HOUR
MAX_PRESTART = 600.0
MAX_ADD_STEP = 600.0
MAX_MELODY = 600.0
MIN_MARK_SPACING = 0.1  # (tests play sub-second matches)
MAX_MARKS = 1000  # per period
MAX_SHOTS = 50  # per team in the first series
MAX_SHOT_LENGTH = 600.0
MAX_PENALTY = HOUR
MAX_RUNNING = 6
MAX_TIMEOUT = 600.0
MAX_TIMEOUTS = 10
MAX_TITLE = 120
MAX_DESCRIPTION = 2000


# ---------------------------------------------------------------------------- lookup


def profile_dirs() -> list[tuple[Path, str]]:
    return [(d, "user") for d in user_dirs("profiles")] + [(builtin_dir("profiles"), "built-in")]


def available() -> dict[str, tuple[Path, str]]:
    """name -> (file, origin); user profiles shadow built-ins of the same name."""
    found: dict[str, tuple[Path, str]] = {}
    for folder, origin in profile_dirs():
        if folder.is_dir():
            for file in sorted(folder.glob("*.yaml")):
                found.setdefault(file.stem, (file, origin))
    return dict(sorted(found.items()))


def find(
    name_or_path: str, relative_to: Path | None = None, exclude: tuple[Path, ...] = ()
) -> Path:
    """A profile file by path, or by name: next to `relative_to` (for extends:), then the
    user folders, then the built-ins. Files in `exclude` are passed over, so that a user's
    `ithf.yaml` can say `extends: ithf` and mean the built-in one."""
    looks_like_path = "/" in name_or_path or name_or_path.endswith((".yaml", ".yml"))
    if looks_like_path:
        path = Path(name_or_path).expanduser()
        if relative_to is not None and not path.is_absolute():
            path = relative_to / path
        if not path.is_file():
            what = "not a regular file" if path.exists() else "no such profile file"
            raise ConfigError(what, path)
        return path
    folders = [relative_to] if relative_to is not None else []
    folders += [folder for folder, _ in profile_dirs()]
    passed_over = False
    for exact in (True, False):  # `ITHF` finds ithf.yaml, but an exact name comes first
        for folder in folders:
            candidate = _named(folder, name_or_path, exact)
            if candidate is not None:
                if candidate.resolve() not in exclude:
                    return candidate
                passed_over = True
    if passed_over:
        raise ConfigError(f"extends itself: no other profile is named {name_or_path!r}")
    names = ", ".join(available()) or "(none found)"
    hint = did_you_mean(name_or_path, list(available()))
    raise ConfigError(f"unknown profile {name_or_path!r}; {hint}available: {names}")


def did_you_mean(name: str, names: list[str]) -> str:
    """`did you mean 'club'? ` for the closest of `names` (case aside), else ''."""
    folded = {n.casefold(): n for n in names}
    near = difflib.get_close_matches(name.casefold(), list(folded), n=1)
    return f"did you mean {folded[near[0]]!r}? " if near else ""


def _named(folder: Path, name: str, exact: bool) -> Path | None:
    """The profile file `name` in `folder`; with `exact` off, whatever the letters' case."""
    if exact:
        candidate = folder / f"{name}.yaml"
        return candidate if candidate.is_file() else None
    if not folder.is_dir():
        return None
    return next(
        (
            f
            for f in sorted(folder.glob("*.yaml"))
            if f.stem.casefold() == name.casefold() and f.is_file()
        ),
        None,
    )


def load(name_or_path: str) -> Profile:
    file = find(name_or_path)
    return build(_load_doc(file, ()), file)


def _load_doc(file: Path, chain: tuple[Path, ...]) -> Doc:
    file = file.resolve()
    if file in chain:
        raise ConfigError("extends itself (a loop of extends:)", file, "extends")
    doc = Doc.load(file)
    if not isinstance(doc.data, dict):
        raise doc.error((), "a profile must be a mapping of settings")
    base_name = doc.data.get("extends")
    if base_name is None:
        return doc
    if not isinstance(base_name, str):
        raise doc.error(("extends",), "must be a profile name or a path")
    try:
        base_file = find(base_name, relative_to=file.parent, exclude=(file.resolve(),))
    except ConfigError as exc:
        raise doc.error(("extends",), exc.message) from None
    base = _load_doc(base_file, (*chain, file))
    merged = doc.merged_over(base)
    leaves = "follows" in doc.data and _rule_set(doc.data["follows"]) in NO_RULE_SET
    if leaves and _rule_set(base.data.get("follows")) in RULE_SETS:
        # a club profile that leaves a rule set does not carry its name in the title: its
        # own title and description, or the file's name
        for key in ("title", "description"):
            if key not in doc.data:
                merged.data.pop(key, None)
    return merged


def _rule_set(value: Any) -> Any:
    """`follows:` is read case-insensitively (ITHF, None)."""
    return value.strip().lower() if isinstance(value, str) else value


# ---------------------------------------------------------------------------- validation


def _feedback(r: Reader) -> frozenset[str]:
    """`feedback: true` (all), `false` (none), or a list of the cues wanted."""
    value = r.get(("feedback",), True)
    if isinstance(value, bool):
        return frozenset(FEEDBACK_CUES if value else ())
    if not isinstance(value, list):
        raise r.doc.error(
            ("feedback",),
            f"must be true, false or a list of {', '.join(FEEDBACK_CUES)}, not {value!r}",
        )
    for i, name in enumerate(value):
        if name not in FEEDBACK_CUES:
            raise r.doc.error(
                ("feedback", i), f"must be one of {', '.join(FEEDBACK_CUES)}, not {name!r}"
            )
    return frozenset(value)


MAX_BEEPS = 9  # more beeps than this nobody counts; they run into the next mark


def _marks(
    r: Reader, path: Path_, spec: Any, beeps: str, length: float, inherited: bool = False
) -> tuple[Mark, ...]:
    """The marks of a period. Marks `inherited` from the regulation period that do not fit a
    shorter overtime are simply left out; marks a profile asks for and cannot get are errors."""
    if spec is None or spec is False or spec == "none":
        return ()
    if spec == "thirds":
        counts = [(length * 2 / 3, 2), (length / 3, 1)]
        cue = "third"
    else:
        if spec == "minutes":
            every = 60.0
        elif (
            isinstance(spec, int | float)
            and not isinstance(spec, bool)
            and (math.isfinite(spec) and spec >= MIN_MARK_SPACING)
        ):
            every = float(spec)
        else:
            raise r.doc.error(
                path,
                "must be minutes, thirds, none or a number of seconds "
                f"between marks (at least {MIN_MARK_SPACING:g}), not "
                f"{spec!r}",
            )
        if every >= length:
            if inherited:
                return ()
            raise r.doc.error(path, f"marks every {every:g} s leave none in a {length:g}-s period")
        if length / every > MAX_MARKS + 1:
            raise r.doc.error(
                path,
                f"marks every {every:g} s make {int(length // every)} "
                f"marks in a {length:g}-s period; at most {MAX_MARKS}",
            )
        counts = [
            (n * every, n) for n in range(int(length // every), 0, -1) if n * every < length - 1e-9
        ]
        cue = "minute"
    if beeps == "count" and counts and counts[0][1] > MAX_BEEPS:
        raise r.doc.error(
            path,
            f"the first mark of a {length:g}-s period would be "
            f"{counts[0][1]} beeps; mark less often, or set "
            "mark_beeps: single",
        )
    return tuple(Mark(rem, n if beeps == "count" else 1, cue) for rem, n in counts)


@dataclass(frozen=True)
class _Regular:
    """The regulation period's settings, as read (overtime parts inherit some of them)."""

    length: float
    count: int
    beeps: str  # count | single
    marks_spec: Any  # as written: minutes, thirds, none, or seconds between marks
    marks: tuple[Mark, ...]
    melody: float
    starts: str


# a part of the match before its end cue is known: (name, overtime, length, marks, melody,
# sudden_death, starts)
_Part = tuple[str, bool, float | None, tuple[Mark, ...], float, bool, str]


def build(doc: Doc, file: Path) -> Profile:
    """The Profile a document describes, checked step by step in the order of its file's
    sections; ConfigError (file:line: field) at the first thing wrong."""
    r = Reader(doc)
    doc.check_keys((), doc.data, TOP_KEYS)
    follows = _follows(r)
    regular = _regular(r)
    intermission = _intermission(r)
    overtime_specs = _overtime_specs(r)
    shootout = _shootout(r)
    penalties = _penalties(r)
    timeout = _timeout(r)
    forfeit_signal = r.flag(("forfeit_signal",), False)
    first_marks = _first_marks(r, regular, forfeit_signal)
    no_show = None if r.get(("no_show",)) is None else _at_most(r, ("no_show",), None)
    word = _period_word(r)
    parts = [
        _regulation_part(regular, i, word, first_marks, bool(overtime_specs))
        for i in range(regular.count)
    ]
    parts += [
        _overtime_part(r, regular, i, len(overtime_specs), shootout is not None)
        for i in range(len(overtime_specs))
    ]
    profile = Profile(
        key=file.stem,
        title=r.text(("title",), file.stem, most=MAX_TITLE),
        source=file,
        follows=follows,
        add_step=r.seconds(("add_step",), 10.0, most=MAX_ADD_STEP),
        prestart=r.seconds(("prestart",), 0, zero=True, most=MAX_PRESTART),
        feedback=_feedback(r),
        periods=_periods(parts, shootout is not None),
        regulation=regular.count,
        intermission=intermission,
        shootout=shootout,
        penalties=penalties,
        timeout=timeout,
        description=" ".join(r.text(("description",), "", most=MAX_DESCRIPTION).split()),
        forfeit_signal=forfeit_signal,
        no_show=no_show,
        tenths=r.flag(("tenths",), False),
    )
    if follows == "ithf":
        ithf.check(profile, doc, regular.marks_spec, regular.beeps)
    return profile


def _follows(r: Reader) -> str | None:
    follows = _rule_set(r.get(("follows",)))
    if follows in NO_RULE_SET:
        return None
    if follows not in RULE_SETS:
        known = ", ".join(RULE_SETS)
        raise r.doc.error(
            ("follows",),
            f"unknown rule set {follows!r}; known: {known}, or "
            "none (a club profile that follows no rule set)",
        )
    return str(follows)


def _regular(r: Reader) -> _Regular:
    r.mapping(("period",), PERIOD_KEYS, optional=False)
    length = r.seconds(("period", "length"), most=MAX_LENGTH)
    count = r.integer(("period", "count"), 1, MAX_PERIODS)
    beeps = r.choice(("period", "mark_beeps"), ("count", "single"), "count")
    marks_spec = r.get(("period", "marks"), "none")
    marks = _marks(r, ("period", "marks"), marks_spec, beeps, length)
    melody = r.seconds(("period", "melody"), 0, zero=True, most=MAX_MELODY)
    if melody > length:
        raise r.doc.error(
            ("period", "melody"), f"is longer than the period ({melody:g} > {length:g} s)"
        )
    starts = r.choice(("period", "starts"), ("operator", "auto"), "operator")
    return _Regular(length, count, beeps, marks_spec, marks, melody, starts)


def _period_word(r: Reader) -> str:
    """What the periods are called: period 1, half 2 …"""
    word = r.text(("period", "name"), "period", most=20).strip()
    if not word:
        raise r.doc.error(("period", "name"), "must name the periods (period, half, …)")
    return word


def _intermission(r: Reader) -> Break | None:
    if r.mapping(("break",), BREAK_KEYS) is None:
        return None
    length = r.seconds(("break", "length"), most=MAX_BREAK)
    warning = r.get(("break", "warning"))
    if warning is not None:
        warning = r.seconds(("break", "warning"), zero=True, most=MAX_BREAK)
        if warning >= length:
            raise r.doc.error(("break", "warning"), "must be shorter than the break")
    return Break(length, warning)


def _overtime_specs(r: Reader) -> list[Any]:
    specs = r.get(("overtime",), [])
    if not isinstance(specs, list):
        raise r.doc.error(("overtime",), "must be a list of overtime parts")
    if len(specs) > MAX_OVERTIMES:
        raise r.doc.error(
            ("overtime",), f"at most {MAX_OVERTIMES} overtime parts (got {len(specs)})"
        )
    return specs


def _shootout(r: Reader) -> Shootout | None:
    if r.mapping(("shootout",), SHOOTOUT_KEYS) is None:
        return None
    untimed = r.get(("shootout", "shot")) == "none"
    return Shootout(
        r.integer(("shootout", "first"), 3, MAX_SHOTS),
        r.integer(("shootout", "then"), 1, MAX_SHOTS),
        None if untimed else r.seconds(("shootout", "shot"), 15.0, most=MAX_SHOT_LENGTH),
    )


def _penalties(r: Reader) -> Penalties | None:
    if r.mapping(("penalties",), PENALTY_KEYS) is None:
        return None
    defaults = {"minor": 60.0, "major": 180.0, "personal": 300.0}
    minor, major, personal = (
        r.seconds(("penalties", k), v, most=MAX_PENALTY) for k, v in defaults.items()
    )
    return Penalties(
        minor,
        major,
        personal,
        running=r.integer(("penalties", "running"), 2, MAX_RUNNING),
        match=_at_most(r, ("penalties", "match"), 300.0),
        power_play_goal_ends_minor=r.flag(("penalties", "power_play_goal_ends_minor"), False),
    )


def _timeout(r: Reader) -> Timeout | None:
    if r.mapping(("timeout",), TIMEOUT_KEYS) is None:
        return None
    return Timeout(
        r.seconds(("timeout", "length"), 30.0, most=MAX_TIMEOUT),
        r.integer(("timeout", "per_team"), 1, MAX_TIMEOUTS),
    )


def _first_marks(r: Reader, regular: _Regular, forfeit_signal: bool) -> tuple[Mark, ...]:
    """The first period's marks: with the forfeit signal (ITHF 4.6), its point is a mark like
    the others, so it follows every stop, correction and added second."""
    if not forfeit_signal:
        return regular.marks
    if regular.length <= FORFEIT_AFTER:
        raise r.doc.error(("forfeit_signal",), f"needs a period longer than {FORFEIT_AFTER:g} s")
    forfeit = Mark(regular.length - FORFEIT_AFTER, 1, "forfeit")
    return tuple(sorted((*regular.marks, forfeit), key=lambda mark: -mark.remaining))


def _regulation_part(
    regular: _Regular, i: int, word: str, first_marks: tuple[Mark, ...], overtime: bool
) -> _Part:
    single = "regulation" if overtime else "match"  # a single period's name
    name = f"{word} {i + 1}" if regular.count > 1 else single
    return (
        name,
        False,
        regular.length,
        first_marks if i == 0 else regular.marks,
        regular.melody,
        False,
        "operator" if i == 0 else regular.starts,
    )


def _overtime_part(r: Reader, regular: _Regular, i: int, count: int, shootout: bool) -> _Part:
    p: Path_ = ("overtime", i)
    r.mapping(p, OVERTIME_KEYS, optional=False)
    name = "overtime" if count == 1 else f"overtime {i + 1}"
    sudden = r.flag((*p, "sudden_death"), True)
    if r.flag((*p, "untimed"), False):
        for key in ("length", "marks", "melody"):
            if r.get((*p, key)) is not None:
                raise r.doc.error((*p, key), "an untimed overtime has no " + key)
        if i + 1 < count or shootout:
            raise r.doc.error(
                (*p, "untimed"),
                "an untimed sudden death lasts until the "
                "deciding goal: nothing after it (overtime, shoot-out) is "
                "ever played",
            )
        return (name, True, None, (), 0.0, True, "operator")
    length = r.seconds((*p, "length"), most=MAX_LENGTH)
    beeps = r.choice((*p, "mark_beeps"), ("count", "single"), regular.beeps)
    own = r.get((*p, "marks"))
    marks = _marks(
        r,
        (*p, "marks"),
        regular.marks_spec if own is None else own,
        beeps,
        length,
        inherited=own is None,
    )
    melody = r.seconds((*p, "melody"), min(regular.melody, length), zero=True, most=MAX_MELODY)
    if melody > length:
        raise r.doc.error((*p, "melody"), "is longer than the overtime")
    return (name, True, length, marks, melody, sudden, "operator")


def _periods(parts: list[_Part], shootout: bool) -> tuple[Period, ...]:
    """The parts numbered, each with the cue that ends it: `period_end` when another part
    must follow — a regulation period always, overtime only on a draw, which a sudden-death
    part that runs out of time is — else `end`."""
    periods = []
    for i, (name, ot, length, marks, melody, sudden, starts) in enumerate(parts):
        if i == len(parts) - 1:
            must_follow = shootout and ot and sudden
        else:
            must_follow = not parts[i + 1][1] or (ot and sudden)
        end_cue = "period_end" if must_follow else "end"
        periods.append(Period(i + 1, name, ot, length, marks, melody, sudden, starts, end_cue))
    return tuple(periods)


def _at_most(r: Reader, path: Path_, default: float | None) -> float:
    return r.seconds(path, default, most=MAX_WAIT)
