"""Hostile or absurd input is refused fast, before it costs minutes and gigabytes: YAML files
(profiles, configs and packs share one loader), the numbers of a profile, and the operator's
commands. Each is a ConfigError naming file and line (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from timekeeper.box import config
from timekeeper.rules import profile
from timekeeper.rules.commands import Command, Refused
from timekeeper.rules.engine import MAX_PENALTIES_HELD, Engine
from timekeeper.rules.replay import ScriptError, parse_actions
from timekeeper.rules.yamldoc import MAX_BYTES, ConfigError, Doc


def alias_bomb(depth: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, depth + 1)]
    return "\n".join(lines) + "\n"


HOSTILE = [
    ("bomb", alias_bomb(), ":9:", "more than 64 aliases"),
    (
        "few-alias-bomb",
        "a: &a ["
        + ", ".join(["x"] * 50)
        + "]\nb: &b ["
        + ", ".join(["*a"] * 30)
        + "]\nc: ["
        + ", ".join(["*b"] * 30)
        + "]\n",
        ":1:",
        "more than 5000 values",
    ),
    ("flow-nesting", "period: " + "[" * 1000 + "]" * 1000 + "\n", ":1:", "nested more than"),
    (
        "block-nesting",
        "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "x: 1\n",
        ":32:",
        "nested more than 32 deep",
    ),
    ("digits", "period:\n  length: " + "9" * 5000 + "\n", ":2:11:", "a number of more than"),
    ("nul", "period:\n  length: 60\x00\n", ":2:13:", "a NUL byte"),
    ("values", "x: [" + "1, " * 60_000 + "1]\n", ":1:", "more than 5000 values"),
    ("not-utf8", "title: caf\xe9\n", ":1:", "not a UTF-8 text file"),
    ("del", "title: x\nplace: a\x7fb\n", ":2:9:", "a control character (0x7f)"),
    ("bel", "title: x\x07\n", ":1:9:", "a control character (0x07)"),
    ("esc", "players:\n  - \x1b[31mred\n", ":2:5:", "a control character (0x1b)"),
]


@pytest.mark.parametrize(("name", "text", "where", "message"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_yaml_is_refused_with_file_and_line(tmp_path, name, text, where, message) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(text.encode("latin-1" if name == "not-utf8" else "utf-8"))
    with pytest.raises(ConfigError) as caught:
        Doc.load(path)
    assert str(caught.value).startswith(f"{path}{where}") and message in str(caught.value)


def test_a_large_file_is_refused_before_it_is_read_whole(tmp_path) -> None:
    path = tmp_path / "big.yaml"
    with open(path, "wb") as out:
        out.truncate(100 * 1024 * 1024)  # a 100 MB document (sparse: no disk used)
    with pytest.raises(ConfigError, match=f"more than {MAX_BYTES // 1024} KB"):
        Doc.load(path)


def test_devices_and_fifos_are_refused_without_waiting(tmp_path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    for path in (fifo, zero):
        with pytest.raises(ConfigError, match="not a regular file"):
            Doc.load(path)
        with pytest.raises(ConfigError, match="not a regular file"):
            profile.load(str(path))


def test_configs_share_the_limits(tmp_path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(alias_bomb())
    with pytest.raises(ConfigError, match="aliases"):
        config.load(path)


def test_anchors_and_a_few_aliases_are_still_fine(tmp_path) -> None:
    path = tmp_path / "anchored.yaml"
    path.write_text("period: &p {length: 60, count: 2}\nbreak: {length: 30}\n")
    assert profile.load(str(path)).periods[1].length == 60


@pytest.mark.slow
def test_an_alias_bomb_profile_exits_2_at_once(tmp_path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    run = subprocess.run(
        [sys.executable, "-m", "timekeeper", "check", "--profile", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "more than 64 aliases" in run.stderr
    assert "Traceback" not in run.stderr


# ---------------------------------------------------------------- ranges at load


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("period: {length: 60, count: 100000000000}", "period.count", "from 1 to 12"),
        ("period: {length: 60, count: 1000000}", "period.count", "from 1 to 12"),
        ("period: {length: 1000000000}", "period.length", "at most 10800 seconds"),
        ("period: {length: 60}\nbreak: {length: 100000}", "break.length", "at most 3600"),
        (
            "period: {length: 60}\novertime: [" + ", ".join(["{length: 60}"] * 7) + "]",
            "overtime",
            "at most 6 overtime parts",
        ),
        ("period: {length: 60}\novertime: [{length: 100000}]", "overtime[0].length", "at most"),
        ("period: {length: 60}\nshootout: {first: 1000}", "shootout.first", "from 1 to 50"),
        ("period: {length: 60}\nshootout: {shot: 100000}", "shootout.shot", "at most 600"),
        ("period: {length: 60}\npenalties: {minor: 100000}", "penalties.minor", "at most 3600"),
        ("period: {length: 60}\npenalties: {running: 1000}", "penalties.running", "from 1 to 6"),
        ("period: {length: 60}\ntimeout: {length: 100000}", "timeout.length", "at most 600"),
        ("period: {length: 60}\ntimeout: {per_team: 1000}", "timeout.per_team", "from 1 to 10"),
        ("period: {length: 60}\nprestart: 100000", "prestart", "at most 600"),
        ("period: {length: 60}\nadd_step: 100000", "add_step", "at most 600"),
        ("period: {length: 10800, marks: 5, mark_beeps: single}", "period.marks", "at most 1000"),
        ("period: {length: 60, marks: 0.001, mark_beeps: single}", "period.marks", "at least 0.1"),
        ("period: {length: 60}\ntitle: " + "x" * 500, "title", "at most 120 characters"),
    ],
)
def test_every_number_of_a_profile_has_a_sane_range(write_profile, text, field, message) -> None:
    path = write_profile("absurd", text + "\n")
    with pytest.raises(ConfigError) as caught:
        profile.load(str(path))
    error = str(caught.value)
    assert error.startswith(f"{path}:") and f" {field}: " in error and message in error


def test_the_largest_sane_values_load(write_profile) -> None:
    path = write_profile(
        "big",
        "period: {length: 10800, count: 12, marks: minutes, "
        "mark_beeps: single}\nbreak: {length: 3600}\n",
    )
    assert len(profile.load(str(path)).periods) == 12


# ---------------------------------------------------------------- commands


@pytest.mark.parametrize(
    "text",
    [
        "add 1_0",
        "add ١٠",
        "add １０",
        "add 1e3",
        "add 0x10",
        "set ٤:٣٢",
        "set ４:３２",
        "set 1_0:00",
        "remove home ²",
        "remove home ٣",
        "penalty home minor " + "9" * 100,
    ],
)
def test_commands_take_plain_ascii_numbers_only(text) -> None:
    with pytest.raises(ValueError):
        Command.parse(text)


def test_script_times_take_plain_ascii_numbers_only() -> None:
    for bad in ("1_0:pause", "١٠:pause", "1e2:pause"):
        with pytest.raises(ScriptError):
            parse_actions(bad)
    assert parse_actions("10.5:pause")[0].at == 10.5


def test_penalties_held_by_a_team_are_capped_with_a_reason() -> None:
    eng = Engine(profile.load("hokejbal"))
    eng.handle(Command.parse("start"), 0)
    for _ in range(MAX_PENALTIES_HELD):
        eng.handle(Command.parse("penalty home minor"), 10)
    with pytest.raises(Refused, match="penalties in the box already"):
        eng.handle(Command.parse("penalty home minor"), 11)
    eng.handle(Command.parse("penalty away minor"), 11)  # the other team is not held up
    eng.handle(Command.parse("remove home"), 12)
    eng.handle(Command.parse("penalty home minor"), 13)
