"""A newcomer's first hour: quitting takes `q q` while a match is under way, names
are forgiving, and every refusal says what to press."""

from __future__ import annotations

import logging
import os
import re
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, wait_for

from timekeeper import cli
from timekeeper.box.controls.keyboard import PENDING, Keyboard, KeyReader
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, Snapshot
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import prompts
from timekeeper.sound.pack import find_pack

# ----------------------------------------------------------------------------- quitting


@pytest.mark.parametrize("state", ["idle", "finished"])
def test_one_q_quits_a_box_with_no_match_under_way(state: str) -> None:
    keys = KeyReader(state=lambda: state)
    assert keys.feed("q").action is Action.QUIT


@pytest.mark.parametrize(
    "state", ["prestart", "running", "stopped", "break", "waiting", "shootout", "shot"]
)
def test_a_match_under_way_quits_on_q_twice_only(state: str) -> None:
    keys = KeyReader(state=lambda: state)
    assert keys.feed("q") is None and "press q again to quit" in keys.hint
    assert keys.feed(" ").action is Action.TOGGLE  # any other key: no quit, and it counts
    assert keys.feed("Q") is None
    keys.expire()  # no key for 3 s: the question lapses
    assert keys.feed("q") is None
    assert keys.feed("q").action is Action.QUIT
    assert keys.feed("\x03").action is Action.QUIT  # Ctrl-C is deliberate: at once


def test_a_q_not_confirmed_in_time_says_so() -> None:
    """The question lapses on the keyboard's clock, and says how to quit (no sleep: the
    clock is the test's)."""
    now = [100.0]
    keys = KeyReader(state=lambda: "running", clock=lambda: now[0])
    assert keys.feed("q") is None and "press q again to quit" in keys.hint
    now[0] += PENDING - 0.1
    keys.tick()  # not yet
    assert keys.hint.startswith("press q again")
    now[0] += 0.1
    keys.tick()
    assert keys.hint == f"quit not confirmed: press q twice within {PENDING:g} s"
    assert keys.feed("q") is None  # a question again, not a quit
    now[0] += PENDING  # no tick meanwhile (a busy reader): the late second q asks again
    assert keys.feed("q") is None and "press q again to quit" in keys.hint
    assert keys.feed("q").action is Action.QUIT
    keys.feed("r")
    now[0] += PENDING
    keys.tick()
    assert keys.hint == f"reset not confirmed: press r twice within {PENDING:g} s"


def test_the_keyboard_asks_the_match_state_on_a_terminal(caplog) -> None:
    """On a real (pseudo) terminal: one `q` while running is a question, the second quits."""
    caplog.set_level(logging.INFO)
    master, slave = os.openpty()
    got: list[Command] = []
    keyboard = Keyboard(got.append, fd=slave, state=lambda: "running").start()
    try:
        os.write(master, b"q")
        # the first q has been read (its question is asked): it must not have quit
        wait_for(lambda: "press q again to quit" in caplog.text, "the question", 5)
        assert got == []
        os.write(master, b"q")
        wait_for(lambda: got, "the second q read", 5)
    finally:
        keyboard.close()
        os.close(master)
        os.close(slave)
    assert [c.action for c in got] == [Action.QUIT]


# ----------------------------------------------------------------------------- names


def test_profile_names_ignore_case() -> None:
    assert profile.load("ITHF").key == "ithf"
    assert profile.load("Hokejbal-Playoff").key == "hokejbal-playoff"
    with pytest.raises(ConfigError, match="did you mean 'ithf-playoff'"):
        profile.find("ITHF-PLAYOF")


def test_a_mistyped_pack_name_gets_a_suggestion(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "club").mkdir()
    (tmp_path / "club" / "pack.yaml").write_text("cues: {start: start.wav}\n")
    monkeypatch.setenv("TIMEKEEPER_SOUNDS_PATH", str(tmp_path))
    assert find_pack("club") == tmp_path / "club"
    with pytest.raises(ConfigError, match=r"did you mean 'club'\? packs: club, default"):
        find_pack("clubb")
    with pytest.raises(ConfigError, match="did you mean 'default'"):
        find_pack("defualt")


# ----------------------------------------------------------------------------- messages


def refusal(eng: Engine, line: str, now: float) -> str:
    """The refusal as the operator reads it: worded as the live runner has it worded."""
    with pytest.raises(Refused) as caught:
        eng.handle(Command.parse(line), now)
    return str(prompts.complete(caught.value, eng.status(now)))


def test_the_pre_start_countdown_says_the_start_comes_by_itself() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(Command.parse("start"), 0.0)
    text = refusal(eng, "toggle", 3.2)
    assert "the start signal comes by itself in 17 s" in text
    assert "START and SPACE do nothing" in text and "RESET (r r, ctl reset" in text
    for line in ("start", "next", "pause"):
        assert "comes by itself" in refusal(eng, line, 3.2)


def test_start_while_stopped_says_that_stop_resume_goes_on() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(Command.parse("start"), 0.0)
    eng.advance(30.0)
    eng.handle(Command.parse("pause"), 30.0)
    text = refusal(eng, "start", 31.0)
    assert text.startswith(
        "already started (while the clock is stopped): "
        "STOP/RESUME (SPACE, ctl resume) goes on; RESET"
    )
    assert "STOP/RESUME (SPACE, ctl resume) goes on" in refusal(eng, "next", 31.0)


@pytest.mark.parametrize(
    "state, line, press",
    [
        ("idle", "toggle", "START/NEXT (s/Enter, ctl start) begins the match"),
        ("running", "resume", "STOP/RESUME (SPACE, ctl pause) stops the clock"),
        ("waiting", "add 10", "START/NEXT (n, ctl next) starts period 2"),
    ],
)
def test_every_refusal_of_a_state_names_the_press_that_goes_on(state, line, press) -> None:
    eng = Engine(profile.load("pl-3x6"))  # three periods with breaks
    if state == "running":
        eng.handle(Command.parse("start"), 0.0)
    if state == "waiting":  # period 1 over, its break waited out on another box
        eng.restore(Snapshot("pl-3x6", "waiting", index=0, play_time=360.0))
    assert press in refusal(eng, line, 40.0)


def test_check_config_says_gpio_off(tmp_path: Path, capsys) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("profile: ithf\ngpio:\n  enabled: false\n")
    assert cli.main(["check", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"ok  config {config}: GPIO off (gpio.enabled: false): no buttons" in out


# ----------------------------------------------------------------------------- on PATH


def bootstrap_link(home: Path, path: str) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "bootstrap.sh"), "--link"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "HOME": str(home), "PATH": path},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_bootstrap_puts_timekeeper_on_path_and_says_how(tmp_path: Path) -> None:
    """bootstrap links ~/.local/bin/timekeeper to the checkout's .venv, and tells whether
    ~/.local/bin is on PATH (and how to add it when it is not)."""
    bin_dir = tmp_path / ".local" / "bin"
    said = bootstrap_link(tmp_path, "/usr/bin:/bin")
    link = bin_dir / "timekeeper"
    assert link.is_symlink() and link.resolve() == (ROOT / ".venv/bin/timekeeper").resolve()
    assert "not on your PATH" in said and 'export PATH="$HOME/.local/bin:$PATH"' in said

    said = bootstrap_link(tmp_path, f"{bin_dir}:/usr/bin:/bin")  # again: on PATH this time
    assert said.startswith("bootstrap: ready: timekeeper (linked in")
    if not link.exists():  # tests run from another environment than the checkout's .venv
        return
    found = subprocess.run(
        ["timekeeper", "profiles"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"},
    )
    assert found.returncode == 0 and "ithf" in found.stdout


@pytest.mark.slow
@pytest.mark.parametrize("uid", ["0", "1000"])
def test_bootstrap_installs_without_sudo_as_root_and_says_why_not_as_a_user(
    tmp_path: Path, uid: str
) -> None:
    """bootstrap's apt-get step on a machine with no sudo (a container): root runs apt-get
    itself; a user is told to run it as root, never `sudo: command not found`."""
    tools = tmp_path / "bin"  # the PATH: id (the user we pretend to be), apt-get, no sudo
    tools.mkdir()
    for name, text in (("id", f"echo {uid}"), ("apt-get", 'echo "apt-get $*"')):
        (tools / name).write_text(f"#!/bin/sh\n{text}\n")
        (tools / name).chmod(0o755)
    function = re.search(
        r"^as_root\(\) \{.*?^\}$", (ROOT / "bootstrap.sh").read_text(), re.M | re.S
    ).group()
    done = subprocess.run(
        ["/bin/bash", "-c", f"need_apt=(mosquitto)\n{function}\nas_root apt-get install mosquitto"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PATH": str(tools)},
    )
    assert "not found" not in done.stderr
    if uid == "0":
        assert done.returncode == 0 and done.stdout == "apt-get install mosquitto\n"
    else:
        assert done.returncode == 1 and done.stdout == ""
        assert "no sudo: run ./bootstrap.sh as root, or install mosquitto first" in done.stderr


@pytest.mark.slow
def test_bootstrap_leaves_a_program_of_the_same_name_alone(tmp_path: Path) -> None:
    bin_dir = tmp_path / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "timekeeper").write_text("#!/bin/sh\necho mine\n")
    said = bootstrap_link(tmp_path, "/usr/bin:/bin")
    assert "is not a link; left alone" in said
    assert (bin_dir / "timekeeper").read_text() == "#!/bin/sh\necho mine\n"
