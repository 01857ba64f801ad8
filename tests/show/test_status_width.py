"""The status line fits an 80-column terminal (79 characters: the last column would wrap, and
`\\r` cannot undo a wrapped line) in every built-in profile and every state a match reaches —
ball hockey with penalties running and waiting, time-outs and the shoot-out included — and the
key help stays reachable (`?`)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import re
from collections.abc import Iterator

import pytest

from timekeeper.rules import profile
from timekeeper.rules.commands import MAX_NAME, Action, Command, Refused, check_name
from timekeeper.rules.engine import Engine, Status
from timekeeper.show import language
from timekeeper.show.status import StatusLine, clock_text, columns, shorten, status_text

WIDTH = 79  # an 80-column terminal
# a whole bench of penalties: two run per team, the rest wait, two game misconducts
PENALTIES = [
    "penalty home minor 17",
    "penalty home major 23",
    "penalty home minor+minor+personal 5",
    "penalty home major+game 99",
    "penalty away minor 88",
    "penalty away minor 77",
    "penalty away personal 66",
    "penalty away minor+game 12",
]


def statuses(name: str) -> Iterator[Status]:
    """Every state of a whole match of `name`, as an operator loading the line up plays it:
    time added, every penalty at once, a time-out in each stoppage, overtime, shoot-out."""
    eng, now = Engine(profile.load(name)), 0.0
    loaded: set[int] = set()
    shot = 0

    def do(line: str) -> None:
        with contextlib.suppress(Refused):  # the operator tries; the engine may say no
            eng.handle(Command.parse(line), now)

    yield eng.status(now)
    do("start")
    for _ in range(400):
        yield eng.status(now)
        state = eng.state.value
        if state == "finished":
            return
        if state == "running" and eng.m.index not in loaded:
            loaded.add(eng.m.index)
            do("add 120")
            if eng.profile.penalties is not None:
                for line in PENALTIES:
                    do(line)
                    yield eng.status(now)
            do("pause")
        elif state == "stopped":
            if eng.m.extra is not None and eng.m.extra.timeout_team is None:
                do("timeout home" if len(loaded) % 2 else "timeout away")
                yield eng.status(now)
                now += 5
                yield eng.status(now)
            do("resume")
        elif state == "shootout" and eng.m.shots >= 7:
            do("finish")  # a rod-hockey shoot-out ends when the referee says so
        elif state in ("waiting", "shootout"):
            do("next")
        elif state == "shot" and eng.m.extra is not None:
            shot += 1
            do(f"attempt {'home' if shot % 2 else 'away'} {'goal' if shot % 3 else 'miss'}")
        else:  # prestart, running, break, a timed shot: on to the next thing due
            due = eng.next_deadline()
            if due is None:  # an untimed sudden death: the goal (NEXT) ends it
                do("next")
                continue
            now = (now + due) / 2 if due - now > 1 else due
            eng.advance(now)
    pytest.fail(f"{name}: the match never finished")


@functools.cache
def shapes(name: str) -> tuple[Status, ...]:
    """One status of each shape a match of `name` takes: two whose unabbreviated lines differ
    only in their digits have parts of the same lengths, so they are shortened alike (digits
    are one column each, and a clock that gains a digit makes a new shape)."""
    found: dict[str, Status] = {}
    for s in statuses(name):
        found.setdefault(re.sub(r"\d", "0", status_text(s)), s)
    return tuple(found.values())


def check_fits(status: Status, flags: tuple[str, ...] = ()) -> str:
    """The line in 79 columns, which keeps the flags, the state, the clock, the countdown and
    what NEXT does now."""
    text = status_text(status, WIDTH, flags)
    assert columns(text) <= WIDTH, f"{columns(text)}: {text}"
    assert status.state.upper() in text.split() and all(f in text for f in flags)
    if status.remaining is not None and status.state not in ("idle", "prestart"):
        assert clock_text(status.remaining) in text, text  # never loses the clock
    if status.waiting_for:  # what NEXT does now
        assert f"[{status.waiting_for}]" in text, text
    if status.countdown is not None:
        assert clock_text(status.countdown) in text, text
    return text


@pytest.mark.parametrize("name", list(profile.available()))
def test_the_status_line_fits_80_columns_in_every_state(name: str) -> None:
    seen = set()
    for status in statuses(name):
        seen.add(status.state)
        for flags in ((), ("SILENT",)):  # room left for a flag after the state
            text = check_fits(status, flags)
            assert len(text) <= WIDTH, f"{len(text)}: {text}"
        muted = status_text(dataclasses.replace(status, muted=True), WIDTH, ("SILENT",))
        assert len(muted) <= WIDTH and muted.startswith("SILENT  MUTED  "), muted
        lost = status_text(
            dataclasses.replace(status, muted=True, audio_fault="stalled"), WIDTH
        )  # (the sound lost mid-match: a flag too, never dropped)
        assert len(lost) <= WIDTH and lost.startswith("MUTED  NO SOUND  "), lost
        assert status.state.upper() in lost.split(), lost
    assert {"idle", "running", "stopped", "finished"} <= seen
    if profile.load(name).shootout is not None:
        assert "shootout" in seen


def test_ball_hockey_is_abbreviated_only_as_far_as_needed() -> None:
    states = list(statuses("hokejbal-playoff"))
    full = [status_text(s) for s in states]
    assert max(len(t) for t in full) > 120  # the unabbreviated line would wrap
    assert status_text(states[0], WIDTH) == full[0]  # a short line is left as it is
    crowded = next(s for s in states if s.timeout is not None)
    text = status_text(crowded, WIDTH)
    assert text.startswith("STOPPED  half 1") and "T/O" in text and "H " in text, text


def test_key_help_is_printed_again_on_question_mark(monkeypatch) -> None:
    """`?` prints the help above the status line; the line ends in `? keys` where it fits."""
    from timekeeper.box.controls.keyboard import KeyReader, help_for

    monkeypatch.setenv("COLUMNS", "80")
    chosen = profile.load("hokejbal")
    help_text = help_for(chosen)
    assert all(len(line) <= WIDTH for line in help_text.splitlines())
    eng = Engine(chosen)
    out = io.StringIO()
    line = StatusLine(lambda: eng.status(0.0), help_text, out=out, tail="? keys")
    assert line.text(eng.status(0.0), WIDTH).endswith("  ? keys")
    out.truncate(0)
    keys = KeyReader()
    assert keys.feed("?") is None and keys.help_wanted  # the Keyboard calls show_help
    line.show_help()
    printed = out.getvalue()
    assert all(help_line in printed for help_line in help_text.splitlines())
    assert printed.rstrip().endswith("? keys")  # the status line is drawn again below


def test_the_last_line_after_quitting_does_not_say_running(monkeypatch) -> None:
    """`q` (or a stop signal) ends the box with the match journaled: the line it leaves on
    the terminal says STOPPED, as the match resumes, not RUNNING with a clock gone still."""
    monkeypatch.setenv("COLUMNS", "80")
    eng = Engine(profile.load("ithf"))
    eng.handle(Command(Action.START), 0.0)
    eng.advance(30.0)
    assert eng.status(30.0).state == "running"
    out = io.StringIO()
    line = StatusLine(lambda: eng.status(40.0), "keys", out=out).start()
    line.close()
    last = out.getvalue().rstrip("\n").rsplit("\r\x1b[K", 1)[-1]
    assert "STOPPED" in last and "RUNNING" not in last, last


# the sides' names as operators type them: long ones in Czech, Polish, Cyrillic and Slovak,
# wide (two-column) characters, a name typed decomposed (a + combining acute), one side only,
# and the longest allowed
NAMES = [
    ("Jan Nepomuk Dvořáček-Procházka", "Grzegorz Brzęczyszczykiewicz"),
    ("Александр Кузнецов-Тимофеев", "Ľudovít Šťastný-Ďurčanský"),
    ("張偉偉張偉偉張偉偉張偉偉張偉偉", "ＶＥＬＫＹ　ＨＣ"),
    ("Nova\u0301k", ""),
    ("W" * MAX_NAME, "M" * MAX_NAME),
]


@pytest.mark.parametrize("name", list(profile.available()))
def test_long_names_in_any_script_never_push_out_the_state_or_the_clock(name: str) -> None:
    """The names stand around the score and take the room the rest leaves: in every profile
    and state the line still fits 79 columns (wide characters counted as two) and keeps all
    that `check_fits` asks for; the names are shortened, never the state or the clock."""
    shown = 0
    for status in shapes(name):
        for home, away in NAMES:
            names = {"home": check_name(home), "away": check_name(away)}
            named = dataclasses.replace(status, names=names)
            for flags in ((), ("SILENT",)):
                text = check_fits(named, flags)
                shown += names["home"][:2] in text
            muted = status_text(dataclasses.replace(named, muted=True), WIDTH, ("SILENT",))
            assert columns(muted) <= WIDTH and muted.startswith("SILENT  MUTED  "), muted
    assert shown  # (the names are there, where there is room)


def test_names_stand_around_the_score_in_full_where_there_is_room() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(Command.parse('names "Jan Novák" Svoboda'), 0.0)
    assert status_text(eng.status(0.0), WIDTH) == "ithf  IDLE  Jan Novák - Svoboda  [start]"
    eng.handle(Command.parse("start"), 0.0)
    eng.handle(Command.parse("goal away 9"), 30.0)
    text = status_text(eng.status(30.0), WIDTH)
    assert "  Jan Novák 0:1 Svoboda  " in text, text
    eng.handle(Command.parse('names "" Svoboda'), 31.0)  # one side only: the other is "home"
    assert "  home 0:1 Svoboda  " in status_text(eng.status(31.0), WIDTH)
    eng.handle(Command.parse("names - -"), 32.0)  # none: the line as it always was
    assert status_text(eng.status(32.0), WIDTH).startswith("ithf  RUNNING  match  0:1  ")


def test_a_name_is_shortened_as_a_person_would() -> None:
    assert shorten("Jan Novák", 9) == "Jan Novák"
    assert shorten("Jan Nepomuk Dvořáček", 14) == "J. N. Dvořáček"
    assert shorten("Jan Nepomuk Dvořáček", 10) == "J. N. Dvo."
    assert shorten("Brzęczyszczykiewicz", 8) == "Brzęczy."
    assert shorten("張偉張偉", 5) == "張偉."  # wide characters take two columns each
    assert columns("張偉") == 4 and columns("Nova\u0301k") == 5


@pytest.fixture(scope="module")
def every_status() -> list[Status]:
    """Every status of every profile, one of each shape: two that differ only in their digits
    (the clock, a countdown) take the same columns in any language."""
    return [s for name in profile.available() for s in shapes(name)]


@pytest.mark.parametrize("code", [c for c in language.LANGUAGES if c != "en"])
def test_the_status_line_fits_80_columns_in_every_language(code: str, every_status) -> None:
    """Translated, the line still fits 79 columns in every profile and state, with long names
    and a flag, and keeps the state word (the language's), the clock, the countdown and what
    NEXT does now; the words are the language's."""
    words = language.words(code)
    long_names = {"home": NAMES[0][0], "away": NAMES[0][1]}
    seen = set()
    for status in every_status:
        state = words["line"][status.state]
        for named in (
            status,
            dataclasses.replace(status, names=long_names, muted=True),
            dataclasses.replace(status, names=long_names, muted=True, audio_fault="stalled"),
        ):
            # (a box without a card, SILENT, has no card to lose: never SILENT and NO SOUND)
            for flags in ((),) if named.audio_fault else ((), ("SILENT",)):
                text = status_text(named, WIDTH, flags, words)
                assert columns(text) <= WIDTH, f"{columns(text)}: {text}"
                assert state in text.split("  "), text
                if status.remaining is not None and status.state not in ("idle", "prestart"):
                    assert clock_text(status.remaining) in text, text
                if status.countdown is not None:
                    assert clock_text(status.countdown) in text, text
                if status.waiting_for:
                    assert f"[{status.waiting_for}]" in text, text
                seen.add(text)
    assert any(words["line"]["left"] in t for t in seen)  # (in the language, not English)
