"""No sound card: at a terminal `run` says so at once, with the fix, and offers to go on
SILENT; the service retries quietly; libasound's own lines never reach the user; and
`--audio silent` chooses silence up front.

SDL's real ALSA driver, on a machine with no card. Where the machine has one, an empty ALSA
configuration stands in for "no card" (ALSA_CONFIG_PATH), so the tests mean the same
everywhere."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_for
from running import in_background

from tests.conftest import SHORT

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

TOLD_WITHIN = 2.0  # s from the program's start (its imports done) to the message and fix
# The child imports what `run` needs, then says GO: what is timed is the program's own
# start-up (config, profile, pack, one try of the card), not Python's imports on a busy box.
CHILD = """
import sys, time
import numpy, pygame, timekeeper.box.live, timekeeper.sound.sdlsink, timekeeper.sound.pulse
import timekeeper.cli
print("GO", flush=True)
sys.exit(timekeeper.cli.main(sys.argv[1:]))
"""
RUN = (sys.executable, "-m", "timekeeper", "run", "--profile", "short", "--no-gpio")


@pytest.fixture
def cardless() -> Iterator[dict[str, str]]:
    """The environment of a machine without a sound card, SDL on its ALSA driver, with the
    short test profile, its own state folder and control socket (TK_TEST_DIR)."""
    folder = Path(tempfile.mkdtemp(prefix="tk-nocard-", dir="/tmp"))  # short: AF_UNIX
    (folder / "short.yaml").write_text(textwrap.dedent(SHORT))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULSE_", "ALSA_"))}
    env |= {
        "SDL_AUDIODRIVER": "alsa",
        "TIMEKEEPER_PROFILES_PATH": str(folder),
        "TIMEKEEPER_CONTROL": str(folder / "c.sock"),
        "STATE_DIRECTORY": str(folder),
        "PYTHONUNBUFFERED": "1",
        "TERM": "xterm",
        "COLUMNS": "200",
    }
    if Path("/dev/snd").exists():  # a machine with a card: an ALSA that knows of none
        (folder / "alsa.conf").write_text("")
        env["ALSA_CONFIG_PATH"] = str(folder / "alsa.conf")
    env["TK_TEST_DIR"] = str(folder)
    yield env
    shutil.rmtree(folder, ignore_errors=True)


class Pty:
    """`timekeeper run` on a pseudo-terminal (stdin, stdout and stderr), read as a person
    would see it."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, *args],
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.text = ""

    def read_until(self, wanted: str, timeout: float = 15.0, after: int = 0) -> float:
        """Wait for `wanted` on the screen (from character `after` on); the time it came."""

        def shown() -> bool:
            if wanted in self.text[after:]:
                return True
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child has gone (EIO)
                    chunk = b""
                if not chunk:  # (pytest.fail is not an Exception: wait_for lets it through)
                    pytest.fail(f"exited before {wanted!r}; the screen:\n{self.text}")
                self.text += chunk.decode(errors="replace")
            return wanted in self.text[after:]

        try:
            wait_for(shown, repr(wanted), timeout, interval=0)
        except AssertionError:
            pytest.fail(f"never shown: {wanted!r}; the screen:\n{self.text}")
        return time.monotonic()

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self) -> int:
        """Stop the child (SIGTERM: the same quit as `q`), wait, and read what is left."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

        def drained() -> bool:  # (all it wrote read, and gone)
            if not select.select([self.master], [], [], 0.1)[0]:
                return self.proc.poll() is not None
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                chunk = b""
            self.text += chunk.decode(errors="replace")
            return not chunk and self.proc.poll() is not None

        with contextlib.suppress(AssertionError):  # (still there: proc.wait says so below)
            wait_for(drained, "the child to exit", 15, interval=0)
        return self.proc.wait(timeout=15)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def terminal(cardless) -> Iterator:
    """Start `run` on a pty; always killed at the end, also when the test fails."""
    started: list[Pty] = []

    def start(*args: str) -> Pty:
        started.append(Pty(["run", "--profile", "short", "--no-gpio", *args], cardless))
        return started[-1]

    try:
        yield start
    finally:
        for one in started:
            one.close()


def test_no_card_at_a_terminal_is_told_at_once_and_goes_on_silent(terminal, cardless) -> None:
    events = Path(cardless["TK_TEST_DIR"]) / "events.jsonl"
    run = terminal("--events", str(events))
    go = run.read_until("GO")
    told = run.read_until("Press Enter to go on SILENT")
    assert told - go < TOLD_WITHIN
    assert "No sound card" in run.text and "--audio silent" in run.text  # the fix, up front
    assert "aplay -l" in run.text and "trying again" not in run.text
    run.press("\r")
    run.read_until("\r\x1b[KSILENT  ")  # the status line begins with it, in capitals
    run.press("s")  # start: the pre-start signal now, the start signal 2 s later
    run.read_until("cue start ")
    run.read_until("[SILENT: not heard]")
    assert run.finish() == 0
    assert "ALSA lib" not in run.text
    logged = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["cue"] for e in logged][:2] == ["prestart", "start"]
    assert all(e["heard"] is False for e in logged)


def test_q_at_the_prompt_quits(terminal) -> None:
    run = terminal()
    run.read_until("q to quit")
    run.press("q")
    assert run.proc.wait(timeout=15) == 1
    run.finish()
    assert "quit at the prompt" in run.text and "ALSA lib" not in run.text


def test_r_at_the_prompt_tries_the_card_again(terminal) -> None:
    run = terminal()
    run.read_until("q to quit")
    run.press("r")
    run.read_until("trying the sound card again")
    run.read_until("q to quit", after=run.text.index("trying the sound card again"))
    assert run.text.count("No sound card") == 2
    run.press("q")
    assert run.proc.wait(timeout=15) == 1


def test_the_service_retries_quietly_and_exits_for_systemd(cardless) -> None:
    config = Path(cardless["TK_TEST_DIR"]) / "config.yaml"
    config.write_text("audio: {attempts: 2}\n")
    proc = subprocess.run(
        [
            *RUN,
            "--config",
            str(config),
        ],
        env=cardless,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.count("audio not ready (attempt") == 1
    assert "gave up after 2 attempts" in proc.stderr and "--audio silent" in proc.stderr
    assert "ALSA lib" not in proc.stderr + proc.stdout and "Press Enter" not in proc.stdout


def test_audio_silent_is_chosen_up_front_and_marks_every_line(cardless) -> None:
    proc = in_background([*RUN, "--no-keyboard", "--audio", "silent", "--start"], cardless)
    try:
        lines: list[str] = []
        wait_for(
            lambda: lines.append(proc.stdout.readline()) or "cue start" in lines[-1],
            "the start signal's line",
            15,
            interval=0,
        )
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = "".join(lines) + out
    assert "state SILENT  " in text  # every state line begins with it
    assert "cue start  period=1 play=0:00  [SILENT: not heard]" in text
    assert "ALSA lib" not in text + err and proc.returncode == 0
