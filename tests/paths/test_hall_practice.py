"""The practice hall as docs/hall.md gives it, typed as written: `timekeeper hall practice`
in one process (a terminal of its own), every other command in a process of its own, the
blocks taken from the doc's text so that the doc and the test cannot drift; Ctrl-C leaves no
process behind. And a box makes the folders it is told to use."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import ROOT, free_port, wait_for
from running import ask, in_background, to_the_end

from timekeeper import cli
from timekeeper.cli import practice
from timekeeper.hall.practice import Mosquitto

DOC = ROOT / "docs" / "hall.md"
PRACTICE = "## A practice hall on one machine (first)"
BY_HAND = "**By hand**"
EVENING = "### A whole evening in the practice hall"
WAIT = 120  # seconds: a broker, boxes and a desk starting on 2 busy cores
QUICK = "title: a practice match, 15 s\nprestart: 3\nperiod: {length: 15, marks: none, melody: 0}\n"


# ------------------------------------------------------------------ the doc's own blocks


def sh_blocks(after: str) -> list[str]:
    """The ```sh blocks of docs/hall.md after the line `after`, up to the next heading of
    the same or a higher level."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    level = after.split(" ")[0] if after.startswith("#") else "#" * 7
    blocks: list[str] = []
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        if current is None and line.startswith("#") and len(line.split(" ")[0]) <= len(level):
            break
        if line.startswith("```"):
            if current is not None:
                blocks.append("\n".join(current))
                current = None
            elif line.strip() == "```sh":
                current = []
            continue
        if current is not None:
            current.append(line)
    return blocks


def steps(block: str) -> list[str]:
    """A block as a director types it: one step a command line (a heredoc, a loop or a line
    continued with \\ is one step); comment lines are none."""
    out: list[str] = []
    lines = iter(block.splitlines())
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        step = [line]
        if heredoc := re.search(r"<<'?(\w+)'?", line):
            for more in lines:
                step.append(more)
                if more == heredoc.group(1):
                    break
        elif line.startswith("for "):
            for more in lines:
                step.append(more)
                if more.strip() == "done":
                    break
        while step[-1].endswith("\\"):
            step.append(next(lines))
        out.append("\n".join(step))
    return out


def shell_env(**extra: str) -> dict[str, str]:
    """A director's shell: `timekeeper` on the PATH (this checkout's), no sound card to
    trouble (SDL's dummy driver; no PulseAudio server to find), built-in profiles only."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SDL_AUDIODRIVER": "dummy",
        "PULSE_SERVER": "unix:/nonexistent/pulse",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def sh(
    step: str, cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess:
    return to_the_end(["bash", "-c", step], env, cwd, timeout)


def typed(step: str, cwd: Path, env: dict[str, str], timeout: float = 60) -> str:
    """One step, run to its end as typed; it must succeed. Its output."""
    done = sh(step, cwd, env, timeout)
    assert done.returncode == 0, f"`{step}` exit {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


def once_running(step: str, cwd: Path, env: dict[str, str]) -> str:
    """A step typed at a table once its match runs, as the doc says (`ctl goal` after the
    pre-start): the box's status asked on its socket (in-process) until then, then the step
    typed once; it must succeed. Its output."""
    found = re.search(r"--control (\S+)", step)
    assert found, step
    running("the match running", cwd / found.group(1))
    return typed(step, cwd, env)


def running(what: str, sock: Path) -> dict:
    """The box's status once its match runs, asked on its socket (in-process)."""
    return wait_for(lambda: (s := ask(sock, "status"))["state"] == "running" and s, what, 30)


class Hall:
    """`timekeeper hall practice …` as typed in a terminal of its own: its lines as printed,
    its children, and Ctrl-C (SIGINT to its process group, as a terminal sends it)."""

    def __init__(self, step: str, cwd: Path, env: dict[str, str]) -> None:
        self.proc = in_background(  # (a terminal's job: its own process group)
            ["bash", "-c", f"exec {step}"], env, cwd, subprocess.STDOUT, session=True
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.children: set[int] = set()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def ready(self) -> None:
        wait_for(
            lambda: "ready" in self.lines or self.proc.poll() is not None,
            "hall practice to print `ready`",
            WAIT,
        )
        assert "ready" in self.lines, f"hall practice exited {self.proc.returncode}:\n{self.text}"
        self.children = children_of(self.proc.pid)

    def line(self, pattern: str) -> re.Match:
        found = next((m for line in self.lines if (m := re.search(pattern, line))), None)
        assert found is not None, f"no line {pattern!r} in:\n{self.text}"
        return found

    def ctrl_c(self, sig: signal.Signals = signal.SIGINT) -> None:
        """Ctrl-C (or another signal: SIGTERM to its process id, as `kill PID` sends it);
        then it has ended, 0, and none of its processes lives on."""
        groups = {os.getpgid(pid) for pid in self.children if _alive(pid)}
        if sig == signal.SIGINT:
            os.killpg(self.proc.pid, sig)  # (a terminal's Ctrl-C: to the foreground job)
        else:
            self.proc.send_signal(sig)
        assert self.proc.wait(60) == 0, self.text
        self.reader.join(10)
        assert "practice hall stopped" in self.lines, self.text
        left = [pid for pid in self.children if _alive(pid)]
        assert not left, f"processes left behind: {left}"
        for group in groups:
            with pytest.raises(ProcessLookupError):
                os.killpg(group, 0)

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for pid in self.children:  # (only after a failure: the test has already said so)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def children_of(parent: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def doc_ports() -> Iterator[None]:
    """The doc's own ports (the broker's 1884, the desk's 8090), one test at a time: the
    blocks run as written, so two of them at once would meet there."""
    with open("/tmp/timekeeper-practice-doc-ports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for port in (1884, 8090):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    pytest.fail(f"port {port}, the doc's, is taken on this machine")
        yield


def board(director: str) -> dict:
    """The director's board's JSON, from the link the hall printed (`…/board#token=…`: the
    token goes with the request), polled at most twice a second (the desk limits a client's
    rate)."""
    url, _, token = director.partition("/board#token=")
    request = urllib.request.Request(
        f"{url}/api/board", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)


# ------------------------------------------------------------------ refused plainly, up front


def test_without_mosquitto_it_says_how_to_install_it(monkeypatch, capsys) -> None:
    monkeypatch.setattr(practice, "mosquitto", lambda: None)
    assert cli.main(["hall", "practice", "--tables", "2"]) == 2
    err = capsys.readouterr().err
    assert "sudo apt-get install mosquitto" in err and "Traceback" not in err


def test_a_port_taken_is_refused_before_anything_starts(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["hall", "practice", "--port", str(port)]) == 2
    assert f"port {port} on this machine is taken" in capsys.readouterr().err
    assert not (tmp_path / "hall-practice").exists()


def test_the_docs_blocks_are_found() -> None:
    """A guard against a parser that silently finds nothing to run."""
    first = steps(sh_blocks(PRACTICE)[0])
    assert first[0].startswith("timekeeper hall practice")
    assert any("for t in" in s for s in steps(sh_blocks(BY_HAND)[0]))
    hall, rounds = (steps(b) for b in sh_blocks(EVENING))
    assert hall[-1].startswith("timekeeper hall practice --tournament")
    assert rounds[0].startswith("timekeeper hall round 1")


# ------------------------------------------------------------------ a box makes its folders


@pytest.mark.slow
def test_a_box_started_as_the_doc_writes_it_makes_its_folders(tmp_path: Path) -> None:
    """The by-hand block's `timekeeper run` (as written but for the folder, one that
    does not exist, and the broker's port) answers on its socket; before, it printed
    `ithf IDLE [start]` and exited 1: `control socket …: No such file or directory`."""

    loop = next(s for s in steps(sh_blocks(BY_HAND)[0]) if s.startswith("for t in"))
    command = re.search(r"(timekeeper run .*?)&\n", loop.replace("\\\n", " "), re.S)
    assert command is not None, loop
    broker = Mosquitto(tmp_path / "broker").start()
    port = broker.port
    fresh = tmp_path / "not" / "yet"  # (neither folder exists)
    line = (
        command.group(1)
        .replace("$t", "1")
        .replace("/tmp/box1", str(fresh))
        .replace("localhost:1884", f"localhost:{port}")
    )
    box = None
    try:
        box = subprocess.Popen(
            ["bash", "-c", f"exec {line} --events {fresh}/events/cues.jsonl"],
            cwd=tmp_path,
            env=shell_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        sock = fresh / "ctl.sock"
        wait_for(lambda: sock.is_socket() or box.poll() is not None, "the box's socket", WAIT)
        assert box.poll() is None, box.communicate()[0]
        done = sh(f"timekeeper ctl status --control {sock}", tmp_path, shell_env())
        assert done.returncode == 0 and "IDLE" in done.stdout, done.stderr
        assert (fresh / "events").is_dir() and (fresh / "match.json").is_file()
    finally:
        if box is not None and box.poll() is None:
            box.terminate()
            box.communicate(timeout=30)
        broker.stop()


@pytest.mark.slow
def test_a_box_that_cannot_make_its_folder_says_so_before_any_status(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    done = sh(
        f"timekeeper run --audio silent --no-gpio --no-keyboard --state-dir {blocked}/box "
        f"--control {tmp_path}/c.sock",
        tmp_path,
        shell_env(),
    )
    assert done.returncode == 1
    assert f"cannot make the folder {blocked}/box" in done.stderr, done.stderr
    assert "IDLE" not in done.stdout + done.stderr


# ------------------------------------------------------------------ the practice hall


@pytest.mark.slow
def test_the_practice_block_runs_as_written(tmp_path: Path, doc_ports) -> None:
    """docs/hall.md's first block, typed as written: the hall in one terminal, `hall status`
    and `hall start` in another, every table answering; Ctrl-C leaves nothing behind."""
    first, *others = steps(sh_blocks(PRACTICE)[0])
    env = shell_env()
    hall = Hall(first, tmp_path, env)
    try:
        hall.ready()
        assert hall.line(r"broker:\s+(mqtt://127\.0\.0\.1:1884)")
        tables = re.findall(r"^  table (\d+): (http://\S+/control#token=\S+)", hall.text, re.M)
        assert [t for t, _ in tables] == ["1", "2", "3", "4"], hall.text
        assert len(hall.children) == 6  # the broker, four boxes, the desk
        status = typed(others[0], tmp_path, env)  # hall status
        assert "4 of 4 tables online" in status, status
        started = typed(others[1], tmp_path, env)  # hall start --profile ithf --in 5s
        assert started.count(": ok") == 4, started
        for _, url in tables:  # each table's page answers, its token with it
            with urllib.request.urlopen(url.split("#")[0], timeout=5) as page:
                assert page.status == 200
        hall.ctrl_c()
    finally:
        hall.kill()


def _cup(folder: Path) -> None:
    (folder / "quick.yaml").write_text(QUICK, encoding="utf-8")
    (folder / "cup.yaml").write_text(
        "title: Seeds' cup\nrules: radegast\ntables: 2\n"
        "players: [Novák, Svoboda, Veselý, Dvořák]\n"
        "stages:\n  groups: {size: 4, advance: 2, profile: ./quick.yaml}\n",
        encoding="utf-8",
    )


@pytest.mark.slow
def test_a_round_played_through_the_practice_hall(tmp_path: Path) -> None:
    """`hall practice --tables 2 --tournament cup.yaml` as a process of its own; the round
    called, started and scored from other processes; the results reach the desk; Ctrl-C and
    no process is left."""
    _cup(tmp_path)
    env = shell_env()
    typed("timekeeper tournament draw -f cup.yaml --seed 4711", tmp_path, env)
    port, web = free_port(), free_port()
    hall = Hall(
        f"timekeeper hall practice --tables 2 --tournament cup.yaml --port {port} --listen {web}",
        tmp_path,
        env,
    )
    try:
        hall.ready()
        url = hall.line(r"broker:\s+(mqtt://127\.0\.0\.1:\d+)").group(1)
        base = hall.line(r"board:\s+(http://\S+)/board").group(1)
        director = hall.line(r"the director's: (http://\S+)\)").group(1)
        sock = hall.line(r"table 1: .*ctl --control (\S+)\)").group(1)
        assert url == f"mqtt://127.0.0.1:{port}" and base == f"http://localhost:{web}"
        round_1 = f"timekeeper hall round 1 --tournament cup.yaml --broker {url}"
        called = typed(round_1, tmp_path, env)
        assert "table 1: A.1" in called and "table 2: A.2" in called, called
        typed(f"timekeeper hall start --in 3s --broker {url}", tmp_path, env)
        once_running(f"timekeeper ctl --control {sock} goal home", tmp_path, env)

        def home() -> list:  # each table's result at the desk: counted, or waiting for it
            b = board(director)
            counted = [t["result"] for t in b["tables"] if t["result"]]
            return counted + [p["score"] for p in b["pending"]]

        results = wait_for(
            lambda: len(home()) == 2 and home(), "both results at the desk", WAIT, 0.5
        )
        assert "1:0" in results and "0:0" in results, results
        hall.ctrl_c(signal.SIGTERM)
    finally:
        hall.kill()


@pytest.mark.slow
def test_a_practice_hall_killed_outright_takes_its_children_with_it(tmp_path: Path) -> None:
    """Even `kill -9` of `hall practice` (no chance to stop them) leaves no process: each
    child has SIGTERM from the kernel when its parent dies. (And on a machine with no sound
    card the box that was to sound plays on silent, its line says why.)"""
    hall = Hall(
        f"timekeeper hall practice --tables 1 --port {free_port()} --listen {free_port()}",
        tmp_path,
        shell_env(SDL_AUDIODRIVER="no-such-driver"),
    )
    try:
        hall.ready()
        assert hall.line(r"table 1: http://\S+#token=\S+  \(silent: no sound card here \(")
        assert len(hall.children) == 3  # the broker, the box, the desk
        hall.proc.kill()
        hall.proc.wait(10)
        wait_for(lambda: not any(_alive(pid) for pid in hall.children), "its children to end", 60)
    finally:
        hall.kill()


@pytest.mark.slow
def test_a_whole_evening_runs_as_written(tmp_path: Path, doc_ports) -> None:
    """docs/hall.md's evening, typed as written in two terminals: the tournament and the
    hall; round 1 called, started, a goal; both results home, the group's table on the board
    and in `tournament standings`; round 2 called and started."""
    env = shell_env()
    first, second = (steps(b) for b in sh_blocks(EVENING))
    *setup, practice = first
    for step in setup:
        typed(step, tmp_path, env)
    hall = Hall(practice, tmp_path, env)
    try:
        hall.ready()
        director = hall.line(r"the director's: (http://\S+)\)").group(1)
        round1, start1, goal, standings, round2, start2 = second
        called = typed(round1, tmp_path, env)
        assert "round 1 of Practice cup" in called, called
        assert typed(start1, tmp_path, env).count(": ok") == 2
        once_running(goal, tmp_path, env)

        def home() -> dict | None:  # both results counted, or one waiting for the director
            b = board(director)
            done = [r["played"] for r in b["groups"]["A"]] == [1, 1, 1, 1]
            return b if done or b["pending"] else None

        b = wait_for(home, "round 1's results in the board's table", WAIT, 0.5)
        assert not b["pending"], [p["why"] for p in b["pending"]]  # (not "… did not call")
        table = typed(standings, tmp_path, env)
        assert "1:0" in table, table
        assert board(director)["next"]["round"] == 2
        called = typed(round2, tmp_path, env, timeout=60)
        assert "round 2 of Practice cup" in called, called
        # the board is on round 2 at once, its tables' names round 2's (a newcomer saw round 1
        # all evening: a box's status had read the calls before the board could)
        wait_for(lambda: board(director)["round"] == 2, "the board on round 2", WAIT, 0.5)
        assert typed(start2, tmp_path, env).count(": ok") == 2
        hall.ctrl_c()
    finally:
        hall.kill()


@pytest.mark.slow
def test_a_new_practice_starts_fresh_and_a_box_restarts_with_the_command_it_prints(
    tmp_path: Path,
) -> None:
    """A newcomer ran the docs' sections in turn: the evening's practice hall took over the
    first one's boxes, a 5-minute ITHF match left stopped, and the names waited behind it.
    A new practice starts with fresh boxes (said; `--keep` goes on with them). And the
    command it prints for a box that exited starts that box again as typed, the
    tournament's own profile file found."""
    _cup(tmp_path)
    env = shell_env()
    typed("timekeeper tournament draw -f cup.yaml --seed 4711", tmp_path, env)
    port, web = free_port(), free_port()
    step = f"timekeeper hall practice --tables 1 --port {port} --listen {web}"
    url = f"mqtt://127.0.0.1:{port}"
    sock = "hall-practice/table1/ctl.sock"
    hall = Hall(step, tmp_path, env)
    try:
        hall.ready()
        typed(f"timekeeper hall start --profile ithf --in 3s --broker {url}", tmp_path, env)
        running("the ITHF match running", tmp_path / sock)
        hall.ctrl_c()
    finally:
        hall.kill()
    hall = Hall(f"{step} --tournament cup.yaml", tmp_path, env)
    try:
        hall.ready()
        assert "a fresh practice: the last one's 1 tables" in hall.text, hall.text
        assert "IDLE" in typed(f"timekeeper ctl status --control {sock}", tmp_path, env)
        box = next(pid for pid in hall.children if "--table" in _cmdline(pid))
        os.kill(box, signal.SIGKILL)
        restart = wait_for(
            lambda: next((x for x in hall.lines if "restart it by hand" in x), None),
            "the restart command said",
            30,
        ).split("(then it is yours to stop): ", 1)[1]
        assert restart.startswith("TIMEKEEPER_PROFILES_PATH="), restart
        # typed as printed (the variable before the command), in a terminal of its own
        quiet = subprocess.DEVNULL
        again = in_background(["bash", "-c", restart], env, tmp_path, quiet, True, quiet)
        try:
            wait_for(
                lambda: ask(tmp_path / sock, "status")["profile"] == "quick",
                "the box again, on the tournament's profile",
                30,
            )
        finally:
            os.killpg(again.pid, signal.SIGTERM)  # (its own session: the box with it)
            again.wait(30)
    finally:
        hall.kill()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
