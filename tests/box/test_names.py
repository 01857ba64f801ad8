"""The sides' names: `names HOME AWAY` from ctl, the web and the config, in any
script, bounded and printable; kept by the engine through a reset and a new match, in the
status, the journal (old journals still load) and the events log; over a real `timekeeper
run` with `ctl`. (The status line's room for them: test_status_width.py.)"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from helpers import Clock
from hypothesis import given
from hypothesis import strategies as st
from running import ctl, start, status, stop

from timekeeper.box import config as box_config
from timekeeper.box.journal import JournalError, dumps, loads
from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import (
    MAX_NAME,
    Action,
    Command,
    Refused,
    check_name,
    command_line,
)
from timekeeper.rules.engine import Engine, Snapshot
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show.status import clock_text, columns, status_text
from timekeeper.sound.eventlog import EventLog
from timekeeper.web.server import _command_of


def play_out(eng: Engine, now: float) -> float:
    """The match to its end, NEXT wherever it waits (a sudden death: its goal); the time."""
    while eng.state.value != "finished":
        due = eng.next_deadline()
        if due is None:
            eng.handle(Command.parse("next"), now)
        else:
            now = due
            eng.advance(now)
    return now


# ------------------------------------------------------------------ the command


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ("names Novák Svoboda", ("Novák", "Svoboda")),
        ("names \"Jan Novák\" 'Petr Svoboda'", ("Jan Novák", "Petr Svoboda")),
        ("names=Wiśniewski Żółć", ("Wiśniewski", "Żółć")),  # (the render script's `=` form)
        ("NAMES 'Пётр Иванов' 'Ľudovít Šťastný'", ("Пётр Иванов", "Ľudovít Šťastný")),
        ('names "" Svoboda', ("", "Svoboda")),  # "" or - : that side has no name
        ("names - -", ("", "")),
        ("names '  Jan   Novák  ' Svoboda", ("Jan Novák", "Svoboda")),  # spaces made single
        ("names 'Jan\u00a0Novák' x", ("Jan Novák", "x")),  # a no-break space is a space
        ("names Nova\u0301k x", ("Novák", "x")),  # typed decomposed: kept composed (NFC)
        ('names "O\'Neil" 張偉', ("O'Neil", "張偉")),
        ("names " + "Ž" * MAX_NAME + " x", ("Ž" * MAX_NAME, "x")),
    ],
)
def test_names_in_any_script_are_taken_as_typed(line: str, names: tuple[str, str]) -> None:
    command = Command.parse(line)
    assert command.action is Action.NAMES and command.names == names
    assert Command.parse(str(command)).names == names  # the log's form reads back


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("names \x1b[2J x", "U+001B"),  # a terminal escape: would garble the status line
        ("names 'a\x07b' x", "U+0007"),
        ("names x '\x00\x01'", "U+0000"),
        ("names 'a\u200bb' x", "U+200B"),  # invisible (a zero-width space)
        ("names 'a\u202eb' x", "U+202E"),  # a right-to-left override
        ("names '\ue000' x", "U+E000"),  # private use: shown as nothing anyone can read
        ("names " + "x" * (MAX_NAME + 1) + " y", f"at most {MAX_NAME} characters"),
        ("names Novák", "takes two names, got 1"),
        ("names", "takes two names, got 0"),
        ("names Jan Novák Svoboda", "takes two names, got 3"),
        ("names O'Neil x", "no closing quotation"),
    ],
)
def test_a_name_that_cannot_be_shown_is_refused_with_the_reason(line: str, words: str) -> None:
    with pytest.raises(ValueError, match=r"names? ") as caught:
        Command.parse(line)
    assert words in str(caught.value)


def test_ctl_and_the_web_send_each_name_as_one_word() -> None:
    """ctl's arguments and the web's args are words: a name with spaces, an apostrophe or
    none at all stays one; the other commands' words are joined as they always were."""
    for words in (["Jan Novák", "Petr Svoboda"], ["O'Neil", ""], ["-", 'a "b" c']):
        line = command_line(["names", *words])
        assert Command.parse(line).names == tuple(check_name(w) for w in words)
    assert command_line(["penalty", "home", "minor", "17"]) == "penalty home minor 17"
    web = _command_of({"command": "names", "args": ["Jan Novák", "Пётр Иванов"]})
    assert web.names == ("Jan Novák", "Пётр Иванов")
    with pytest.raises(ValueError, match="U\\+0007"):
        _command_of({"command": "names", "args": ["a\x07", "b"]})


@given(st.text(max_size=40), st.text(max_size=40))
def test_any_text_is_a_name_as_kept_or_refused_and_never_breaks_the_status_line(
    home: str, away: str
) -> None:
    """Whatever is typed: a ValueError, or names that are printable, at most 32 characters,
    kept as they are when given again (the journal checks that), and a status line that
    still fits 79 columns with the state and the clock."""
    try:
        command = Command.parse(command_line(["names", home, away]))
    except ValueError:
        return
    assert command.names is not None
    for name in command.names:
        assert len(name) <= MAX_NAME and name.isprintable() and name == name.strip()
        assert check_name(name) == name
    eng = Engine(profile.load("hokejbal"))
    eng.handle(command, 0.0)
    eng.handle(Command.parse("start"), 0.0)
    now = 100.0
    eng.advance(now)  # past the pre-start: the clock runs
    shown = eng.status(now)
    text = status_text(shown, 79, ("SILENT",))
    assert columns(text) <= 79 and "RUNNING" in text, text
    assert f"left {clock_text(shown.remaining)}" in text, text


# ------------------------------------------------------------------ the engine


def test_names_apply_in_every_state_sound_nothing_and_outlive_a_reset_and_the_match() -> None:
    eng = Engine(profile.load("ithf-playoff"))
    assert eng.status(0.0).names == {"home": "", "away": ""}
    assert eng.handle(Command.parse("names Novák Svoboda"), 0.0) == []
    eng.handle(Command.parse("start"), 0.0)
    eng.advance(25.0)
    assert eng.handle(Command.parse('names "Jan Novák" Svoboda'), 25.0) == []  # a typo fixed
    assert eng.state.value == "running"
    eng.handle(Command.parse("reset"), 30.0)  # the same pairing plays again
    assert eng.status(30.0).names == {"home": "Jan Novák", "away": "Svoboda"}
    eng.handle(Command.parse("start"), 30.0)
    now = play_out(eng, 30.0)
    assert eng.status(now).names["home"] == "Jan Novák"
    eng.handle(Command.parse("start"), now)  # a new match: the names stay until new ones
    assert eng.status(now).names == {"home": "Jan Novák", "away": "Svoboda"}
    eng.handle(Command.parse("names - Dvořák"), now)
    assert eng.status(now).to_dict()["names"] == {"home": "", "away": "Dvořák"}


def test_a_refused_command_leaves_the_names_alone() -> None:
    eng = Engine(profile.load("hokejbal"))
    eng.handle(Command.parse("names 'HC Kladno' 'Sokol Pražský'"), 0.0)
    with pytest.raises(Refused):
        eng.handle(Command.parse("timeout home"), 1.0)  # not before the match
    assert eng.status(1.0).names == {"home": "HC Kladno", "away": "Sokol Pražský"}


# ------------------------------------------------------------------ the journal


@pytest.mark.parametrize("state", ["idle", "stopped", "finished"])
def test_the_journal_keeps_the_names_whatever_the_state(state: str) -> None:
    eng = Engine(profile.load("pl-3x6"))
    eng.handle(Command.parse("names 'Paweł Wiśniewski' 'Пётр Иванов'"), 0.0)
    now = 0.0
    if state != "idle":
        eng.handle(Command.parse("start"), 0.0)
        now = eng.next_deadline() or 0.0  # the start signal
        eng.advance(now)
        eng.handle(Command.parse("pause"), now + 10.0)
    if state == "finished":
        eng.handle(Command.parse("resume"), now + 10.0)
        now = play_out(eng, now + 10.0)
    assert eng.state.value == state
    text = dumps(eng.snapshot(now))
    assert "Paweł Wiśniewski" in json.loads(text)["names"]["home"]
    again = Engine(profile.load("pl-3x6"))
    again.restore(loads(text))
    assert again.status(0.0).names == {"home": "Paweł Wiśniewski", "away": "Пётр Иванов"}


def test_an_old_journal_without_names_still_loads() -> None:
    old = (
        '{"format": 1, "profile": "ithf", "state": "stopped", "period": 1, '
        '"play_time": 61.5, "added": 0, "shots": 0, "shootout": false}'
    )
    snap = loads(old)
    assert snap.names is None
    eng = Engine(profile.load("ithf"))
    eng.restore(snap)
    assert eng.state.value == "stopped" and eng.status(0.0).names == {"home": "", "away": ""}


@pytest.mark.parametrize(
    "names",
    [
        '"Novák"',
        '{"home": "Novák"}',
        '{"home": 7, "away": ""}',
        '{"home": "a\\u0007", "away": ""}',
        '{"home": "' + "x" * 40 + '", "away": ""}',
        '{"home": " Novák", "away": ""}',
        '{"home": "", "away": "", "third": ""}',
    ],
)
def test_a_journal_with_names_that_are_not_names_is_refused(names: str) -> None:
    text = (
        '{"format": 1, "profile": "ithf", "state": "idle", "period": 0, "play_time": 0, '
        f'"added": 0, "shots": 0, "shootout": false, "names": {names}}}'
    )
    with pytest.raises(JournalError, match="names"):
        loads(text)
    with pytest.raises(ValueError, match="names"):  # nor does the engine take them
        Engine(profile.load("ithf")).restore(Snapshot("ithf", "idle", names=json.loads(names)))


# ------------------------------------------------------------------ the config


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_config_gives_the_names_a_box_starts_with(tmp_path: Path) -> None:
    cfg = box_config.load(
        write_config(
            tmp_path,
            """\
        names:
          home: "Jan  Novák "
          away: 1984
    """,
        )
    )
    assert cfg.names == ("Jan Novák", "1984")
    assert box_config.load(write_config(tmp_path, "names: {away: Пётр}\n")).names == ("", "Пётр")
    assert box_config.load(write_config(tmp_path, "profile: ithf\n")).names == ("", "")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('names:\n  home: "a\\x07"\n', r":2:9: names.home: a name must be printable text"),
        ("names:\n  away: " + "x" * 33 + "\n", r":2:9: names.away: a name is at most 32"),
        ("names:\n  away: [a, b]\n", r":2:9: names.away: must be a name \(text\)"),
        ("names:\n  hme: Novák\n", r":2:3: names.hme: unknown key; did you mean 'home'"),
        ("names: Novák\n", r":1:8: names: must be a mapping"),
    ],
)
def test_bad_names_in_the_config_are_refused_with_file_line_and_field(
    tmp_path: Path, text: str, where: str
) -> None:
    with pytest.raises(ConfigError, match=where):
        box_config.load(write_config(tmp_path, text))


# ------------------------------------------------------------------ the events log


def test_every_cue_line_carries_the_names_once_there_are_some(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    clock, events = Clock(), EventLog(path, profile="ithf")
    runner = Runner(Engine(profile.load("ithf")), [], events, clock=clock)
    runner.step(Command(Action.START))
    runner.step(Command.parse("names 'Jan Novák' 'Пётр Иванов'"))
    clock.now = 20.0
    runner.step()  # the start signal
    clock.now = 80.0
    runner.step()  # the first minute's mark
    runner.step(Command.parse("names '' ''"))
    clock.now = 140.0
    runner.step()
    events.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["cue"] for e in entries] == ["prestart", "start", "minute", "minute"]
    assert "names" not in entries[0] and "names" not in entries[-1]  # none set then
    assert [e["names"] for e in entries[1:3]] == [{"home": "Jan Novák", "away": "Пётр Иванов"}] * 2
    assert "Пётр Иванов" in lines[1]  # readable as written, not \u-escaped


# ------------------------------------------------------------------ a real box, with ctl

CONFIG = """\
names:
  home: HC Kladno
  away: Sokol Pražský
"""


@pytest.mark.slow
def test_ctl_names_on_a_real_box_kept_through_a_restart(service_box) -> None:
    """The config's names at the first start; `ctl names` with spaces, Czech and Cyrillic;
    refusals said before the socket (exit 2); the journal's names over the config's after a
    restart; the events log's lines carry them."""
    box = service_box
    config = write_config(box["dir"], CONFIG)
    events = box["dir"] / "events.jsonl"
    args = ("--config", str(config), "--events", str(events))
    proc = start(box, *args)
    assert status(box, proc)["names"] == {"home": "HC Kladno", "away": "Sokol Pražský"}
    env, sock = box["env"], box["sock"]
    code, st, err = ctl(env, sock, "names", "Jan Novák", "Пётр Иванов")
    assert code == 0 and st is not None, err
    assert st["names"] == {"home": "Jan Novák", "away": "Пётр Иванов"}
    code, _, err = ctl(env, sock, "names", "a\x1b[2J", "b")
    assert code == 2 and "U+001B" in err and "Traceback" not in err
    code, _, err = ctl(env, sock, "names", "Novák")
    assert code == 2 and "takes two names" in err
    code, st, _ = ctl(env, sock, "start")
    assert code == 0 and st is not None and st["names"]["away"] == "Пётр Иванов"
    stop(proc)

    proc = start(box, *args)  # the journal's names, not the config's
    assert status(box, proc)["names"] == {"home": "Jan Novák", "away": "Пётр Иванов"}
    code, st, _ = ctl(env, sock, "names", "", "-")  # cleared: the config's come back next time
    assert code == 0 and st is not None and st["names"] == {"home": "", "away": ""}
    stop(proc)
    proc = start(box, *args)
    assert status(box, proc)["names"] == {"home": "HC Kladno", "away": "Sokol Pražský"}
    stop(proc)
    cues = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    assert cues and cues[0]["cue"] == "start"
    assert cues[0]["names"] == {"home": "Jan Novák", "away": "Пётр Иванов"}
