"""A real `timekeeper run` process, as a user or systemd runs it: start it, ask it, wait
for its state or its own clock, stop it. Shared by the tests of the command line, the service
and the faults (the fixtures that make its folders are in conftest.py)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest
from helpers import wait_for

from timekeeper.box.controls.socket_client import send
from timekeeper.rules.commands import command_line

TIMEOUT = 30  # seconds any one call may take before the test gives up on it
# a 60-s period, no pre-start: the referee's START starts it
MATCH = """\
title: one minute
prestart: 0
period: {length: 60, marks: none}
"""


# ------------------------------------------------------------- `timekeeper …` on the command line


def tk(
    env: Mapping[str, str], *args: str, cwd: Path | None = None, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess:
    """Run `timekeeper ARGS` to completion, stdin not a terminal."""
    return to_the_end([sys.executable, "-m", "timekeeper", *args], env, cwd, timeout)


def to_the_end(
    argv: list[str], env: Mapping[str, str], cwd: Path | None = None, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess:
    """`argv` run to its end, stdin not a terminal: its exit code and what it printed
    (killed after `timeout`, as subprocess.run does)."""
    proc = in_background(argv, env, cwd)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def start_run(
    procs: list[subprocess.Popen], env: dict[str, str], cwd: Path, *args: str
) -> subprocess.Popen:
    """`timekeeper run ARGS` in the background, stdout and stderr to pipes (not a TTY)."""
    proc = in_background([sys.executable, "-m", "timekeeper", "run", *args], env, cwd)
    procs.append(proc)
    return proc


def in_background(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path | None = None,
    stderr: int = subprocess.PIPE,
    session: bool = False,
    stdout: int = subprocess.PIPE,
) -> subprocess.Popen:
    """`argv` started in the background, stdin not a terminal, its output to pipes (its
    stderr to `stderr`: a pipe of its own, or STDOUT; DEVNULL where nobody reads it); with
    `session`, in a session of its own (as a terminal runs a job: Ctrl-C reaches its whole
    process group)."""
    return subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        text=True,
        start_new_session=session,
    )


def start_match(
    procs: list[subprocess.Popen], env: dict[str, str], profile: Path, sock: Path, *more: str
) -> tuple[subprocess.Popen, Path]:
    """`timekeeper run --start --profile PROFILE --events … --control SOCK MORE` in the
    profile's folder, in the background: the process and its events file (ev.jsonl)."""
    events = profile.parent / "ev.jsonl"
    where = ("--events", str(events), "--control", str(sock))
    proc = start_run(
        procs, env, profile.parent, "--start", "--profile", str(profile), *where, *more
    )
    return proc, events


def wait_until_answers(proc: subprocess.Popen, env: dict[str, str], sock: Path) -> dict:
    """Wait until the runner answers on `sock` (asked in-process: quick), then its status as
    `timekeeper ctl status` prints it."""

    def answers() -> bool:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"timekeeper run exited with {proc.returncode}:\n{out}\n{err}")
        return send(sock, "status")["ok"]

    wait_for(answers, f"an answer on {sock}", TIMEOUT)
    done = tk(env, "ctl", "status", "--json", "--control", str(sock))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wait_for_state(sock: Path, state: str, timeout: float = TIMEOUT) -> dict:
    """Ask the socket in-process (quick) until the runner reports `state`; its status."""
    return wait_for(
        lambda: (s := send(sock, "status")["status"])["state"] == state and s,
        f"the state {state!r}",
        timeout,
    )


def ctl(env: dict[str, str], sock: Path, *args: str) -> tuple[int, dict | None, str]:
    """`timekeeper ctl ARGS --json --control SOCK`: exit code, the JSON it printed, its
    stderr."""
    done = tk(env, "ctl", *args, "--json", "--control", str(sock))
    lines = done.stdout.splitlines()
    if done.returncode == 0:
        assert len(lines) == 1, f"ctl must print one JSON object, got {done.stdout!r}"
        return 0, json.loads(lines[0]), done.stderr
    assert not lines
    return done.returncode, None, done.stderr


def ask(sock: Path, *args: str) -> dict:
    """What `timekeeper ctl ARGS --json --control SOCK` sends and prints, asked in-process:
    the same line, with an id where ctl gives one, and the status (for `result`, the
    match's result); a refusal fails the test. For a test that polls a box or drives
    several: no interpreter started per question (the command itself: tests/cli)."""
    quiet = args[0] == "status"
    answer = send(
        sock, command_line(args), request_id=None if quiet else uuid.uuid4().hex, attempts=3
    )
    assert answer.get("ok"), (args, answer)
    return answer["match_result"] if args[0] == "result" else answer["status"]


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ------------------------------------------------------------- a box run as systemd would run it


def start(box: dict, *args: str, env: dict | None = None, ready: bool = True) -> subprocess.Popen:
    """`timekeeper run` as systemd starts it; with `ready`, returns once it has told systemd
    READY=1 (or has ended). Its socket answers a little earlier; its stop signals are its own
    before that (a SIGTERM at any moment after is a clean stop)."""
    env = dict(env or box["env"])
    notify = None
    if ready and "NOTIFY_SOCKET" not in env:  # (a test that reads the messages itself: not)
        path = box["dir"] / f"notify{len(box['procs'])}"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(path))
        notify.setblocking(False)
        env["NOTIFY_SOCKET"] = str(path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "timekeeper", "run", "--profile", "minute", "--no-keyboard", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    box["procs"].append(proc)
    if notify is not None:
        said: list[bytes] = []

        def ready_or_ended() -> bool:
            with contextlib.suppress(BlockingIOError):
                while True:
                    said.append(notify.recv(4096))
            return any(b"READY=1" in m for m in said) or proc.poll() is not None

        try:
            wait_for(ready_or_ended, "READY=1 from the box", TIMEOUT)
        finally:  # no one reads more: the box's later messages fail at once (it goes on)
            notify.close()
            path.unlink(missing_ok=True)
    return proc


def status(box: dict, proc: subprocess.Popen) -> dict:
    """The running box's status, once it answers (bounded wait)."""

    def answer() -> dict | None:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"timekeeper run exited with {proc.returncode}:\n{out}\n{err}")
        try:
            return send(box["sock"], "status")["status"]
        except (ConnectionError, OSError):
            return None

    return wait_for(answer, "the box to answer", TIMEOUT)


def played(box: dict, proc: subprocess.Popen, seconds: float) -> dict:
    """Wait until the box's own match clock has played `seconds`; its status then. (A real
    process's clock runs in real time: this waits for its state, not for a pause.)"""
    return wait_for(
        lambda: (s := status(box, proc))["play_time"] >= seconds and s,
        f"{seconds} s played",
        TIMEOUT,
    )


def stays_stopped(box: dict, proc: subprocess.Popen) -> float:
    """The stopped clock's time, the same in ten answers over some milliseconds (a running
    clock moves by a millisecond, the status's resolution, between any two)."""
    times = {status(box, proc)["play_time"] for _ in range(10)}
    assert len(times) == 1, times
    return times.pop()


def command(box: dict, line: str) -> dict:
    answer = send(box["sock"], line)
    assert answer["ok"], answer
    return answer["status"]


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=5)
        print(err)
    assert proc.returncode == 0, err
    return out, err


def hall(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "timekeeper", "hall", *args, "--broker", url],
        capture_output=True,
        text=True,
        timeout=30,
    )


# ------------------------------------------------------------- a box as its operator runs it


class TableBox:
    """A box as its operator runs it, in a folder of its own (short: an AF_UNIX path) with
    its `profiles` (name -> YAML) on the profile path: `run(*args)` starts `timekeeper run
    --no-gpio --no-keyboard --state-dir … --control … ARGS` (its output to `log()`) and waits
    until it answers; `tk(*args)` runs a command to its end, `ctl(*args)` as typed at the
    table (a process; its JSON), `status()` and `state(wanted)` ask the socket in-process
    (a poll starts no process); `close()` kills what it started and removes the folder."""

    def __init__(self, profiles: Mapping[str, str], prefix: str = "tk-box-") -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
        (self.folder / "profiles").mkdir()
        for name, text in profiles.items():
            (self.folder / "profiles" / f"{name}.yaml").write_text(text, encoding="utf-8")
        self.env = {
            **os.environ,
            "SDL_AUDIODRIVER": "dummy",
            "PYTHONUNBUFFERED": "1",
            "TIMEKEEPER_PROFILES_PATH": str(self.folder / "profiles"),
            "TIMEKEEPER_SOUNDS_PATH": "",
        }
        self.sock = self.folder / "c.sock"
        self.procs: list[subprocess.Popen] = []

    def run(self, *args: str) -> subprocess.Popen:
        usual = ("--no-gpio", "--no-keyboard", "--state-dir", str(self.folder / "state"))
        where = ("--control", str(self.sock))
        with open(self.folder / "out.log", "a") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "timekeeper", "run", *usual, *where, *args],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.procs.append(proc)
        wait_for(lambda: self.status(proc), "the box to answer", TIMEOUT)
        return proc

    def tk(self, *args: str) -> subprocess.CompletedProcess:
        return tk(self.env, *args, timeout=60)

    def ctl(self, *args: str) -> dict:
        done = self.tk("ctl", *args, "--json", "--control", str(self.sock))
        assert done.returncode == 0, (args, done.stdout, done.stderr, self.log())
        return json.loads(done.stdout)

    def status(self, proc: subprocess.Popen | None = None) -> dict:
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the box exited {proc.returncode}:\n{self.log()}")
        return ask(self.sock, "status")

    def state(self, wanted: str, timeout: float = TIMEOUT) -> dict:
        return wait_for(
            lambda: (s := self.status())["state"] == wanted and s, f"the state {wanted}", timeout
        )

    def begin(self) -> None:
        """START at the table: the game's pre-start, then its clock runs."""
        assert self.ctl("start")["state"] == "prestart"
        self.state("running")

    def play_out(self, winner: str, sudden: bool) -> dict:
        """The running game won by `winner` at the table: in regulation (a goal, the clock
        set to its end: the box ends the decided game itself), or drawn and won in the
        sudden death (NEXT, then the goal). The finished status."""
        self.ctl("pause")
        if not sudden:
            self.ctl("goal", winner)
        self.ctl("set", "0:00")
        self.ctl("resume")
        if sudden:
            waiting = self.state("waiting")
            assert waiting["waiting_for"] == "next: overtime"  # a draw is not over: ITHF 4.8
            self.ctl("next")
            self.ctl("goal", winner)
        return self.state("finished")

    def log(self) -> str:
        path = self.folder / "out.log"
        return path.read_text() if path.exists() else ""

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


def hall_box(
    profile: Path, folder: Path, url: str, table: str, *more: str, launcher: tuple = ()
) -> list[str]:
    """`timekeeper run` as a hall's box is started (hall/practice.py's `box_command`):
    `profile`, a fresh match, its state and socket (c.sock) in `folder`, on the hall's bus
    `url` as `table`; `launcher` instead of `-m timekeeper` (a box whose clock is off:
    tests/skewedbox.py)."""
    from timekeeper.hall.practice import TIMEKEEPER, box_command

    argv = box_command(
        url, table, folder, "--profile", str(profile), "--fresh", *more, control=folder / "c.sock"
    )
    return [sys.executable, *launcher, *argv[len(TIMEKEEPER) :]] if launcher else argv
