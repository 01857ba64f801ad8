"""The ctl socket under hostile or careless clients: a
real Runner and ControlServer on a real UNIX socket, with no audio output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_for

from timekeeper.box.controls import socket as ctl
from timekeeper.box.controls import socket_path
from timekeeper.box.controls.socket import ControlServer
from timekeeper.box.controls.socket_client import NoAnswer, send
from timekeeper.box.controls.socket_path import private_folder
from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="tk-s-", dir="/tmp"))  # short: AF_UNIX paths
    yield path
    shutil.rmtree(path, ignore_errors=True)


def serve(
    folder: Path,
    run: bool = True,
    name: str = "ithf",
) -> tuple[Runner, ControlServer, threading.Thread]:
    runner = Runner(Engine(profile.load(name)), [])
    thread = threading.Thread(target=runner.run, daemon=True)
    if run:
        thread.start()
    server = ControlServer(runner, folder / "c.sock").start()
    return runner, server, thread


@pytest.fixture
def box(folder: Path) -> Iterator[tuple[Runner, ControlServer, Path]]:
    runner, server, thread = serve(folder)
    yield runner, server, folder / "c.sock"
    server.close()
    runner.submit(Command(Action.QUIT))
    thread.join(5)


def raw(path: Path, data: bytes, timeout: float = 10) -> bytes:
    """Send bytes as they are, read the whole answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        # (it stops reading after its limit: the answer is there all the same)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_quit_is_refused_on_the_socket(box) -> None:
    runner, _, path = box
    answer = send(path, "quit")
    assert answer["ok"] is False and answer["result"] == "refused"
    assert "not taken over the socket" in answer["error"]
    assert not runner.exited.is_set() and send(path, "status")["ok"]


def test_a_muted_box_says_so_in_every_status(box) -> None:
    """`muted` is a field of the status itself: `ctl status` shows it as the web and the
    hall do (it once reached the web only)."""
    _, _, path = box
    assert send(path, "status")["status"]["muted"] is False
    assert send(path, "mute")["status"]["muted"] is True
    assert send(path, "status")["status"]["muted"] is True
    assert send(path, "start")["status"]["muted"] is True  # (every reply's status)
    assert send(path, "unmute")["status"]["muted"] is False


@pytest.mark.parametrize(
    "data, error",
    [
        (b"add " + b"9" * 100_000 + b"\n", "line too long"),
        (b"x" * 3_000_000, "line too long"),  # no newline at all
        (b"start \xff\xfe\n", "not UTF-8"),
        (b'{"id": 5, "command": "start"}\n', "an id is a string"),
        (b'{"a": ' + b"[" * 3000 + b"\n", "not JSON"),  # deep: RecursionError
    ],
)
def test_bad_lines_get_one_short_answer_that_never_echoes(box, data: bytes, error: str) -> None:
    _, _, path = box
    answer = raw(path, data)
    assert answer.count(b"\n") == 1 and len(answer) < 300
    reply = json.loads(answer)
    assert reply["ok"] is False and error in reply["error"]
    assert b"9999999999" not in answer and b"xxxxxxxxxx" not in answer
    assert send(path, "status")["ok"]


def test_a_long_argument_is_not_echoed_whole(box) -> None:
    _, _, path = box
    answer = raw(path, b"penalty home " + b"z" * 4000 + b"\n")
    assert len(answer) < 300 and json.loads(answer)["result"] == "refused"


def test_a_slow_sender_is_cut_off_at_the_overall_deadline(box, monkeypatch) -> None:
    monkeypatch.setattr(ctl, "LINE_DEADLINE", 0.5)
    _, _, path = box
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        began = time.monotonic()
        for letter in b"status":  # one byte every 0.2 s: each read is quick, the whole is not
            try:
                sock.send(bytes([letter]))
            except BrokenPipeError:
                break
            time.sleep(0.2)
        answer = sock.recv(4096)
    assert b"too slow" in answer and time.monotonic() - began < 2.0


def test_connections_beyond_the_limit_are_told_busy_and_it_answers_after(box) -> None:
    _, _, path = box
    idle = []
    for _ in range(ctl.MAX_CONNECTIONS):  # each holds a place, saying nothing
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(path))
        idle.append(sock)
    # once the server has taken them all in, the next one is told busy
    answer = wait_for(
        lambda: (a := send(path, "status"))["result"] == "busy" and a, "a connection told busy"
    )
    assert "try again" in answer["error"]
    for sock in idle:
        sock.close()
    wait_for(lambda: send(path, "status")["ok"], "an answer once the places are free")


def test_a_retried_command_id_is_applied_once(folder, write_profile) -> None:
    quick = write_profile("quick", "prestart: 0\nperiod: {length: 60}\n")
    runner, server, thread = serve(folder, name=str(quick))
    path = folder / "c.sock"
    assert send(path, "start")["status"]["state"] == "running"
    first = send(path, "add 10", request_id="abc")
    again = send(path, "add 10", request_id="abc")  # the answer was lost: ask again
    assert first["result"] == again["result"] == "applied"
    assert send(path, "status")["status"]["added"] == 10.0
    assert send(path, "add 10", request_id="def")["status"]["added"] == 20.0
    server.close()
    runner.submit(Command(Action.QUIT))
    thread.join(5)


def test_a_command_not_applied_in_time_is_dropped_never_applied_later(folder, monkeypatch) -> None:
    monkeypatch.setattr(ctl, "COMMAND_DEADLINE", 0.3)
    runner, server, thread = serve(folder, run=False)  # the runner is stuck
    try:
        answer = send(folder / "c.sock", "start", request_id="x1")
        assert answer["result"] == "dropped" and "not applied" in answer["error"]
        thread.start()  # it comes back: the dropped start is never applied
        with contextlib.suppress(Refused):  # (a command after it: the queue has been read)
            runner.submit(Command(Action.PAUSE)).result(5)
        assert send(folder / "c.sock", "status")["status"]["state"] == "idle"
        retry = send(folder / "c.sock", "start", request_id="x1")  # safe to send again
        assert retry["result"] == "applied" and retry["status"]["state"] == "prestart"
    finally:
        server.close()
        runner.submit(Command(Action.QUIT))
        thread.join(5)


def test_ctl_exit_codes_say_what_happened(box, capsys) -> None:
    from timekeeper.cli import main

    _, _, path = box
    assert main(["ctl", "start", "--control", str(path)]) == 0
    assert main(["ctl", "finish", "--control", str(path)]) == 1
    assert "finish refused" in capsys.readouterr().err


def test_the_client_names_the_path_of_a_socket_that_is_not_timekeepers(folder) -> None:
    path = folder / "other.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def answer_garbage() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(100)
            conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n")

    threading.Thread(target=answer_garbage, daemon=True).start()
    with pytest.raises(
        ConnectionError, match=f"{path} answered something that is not a timekeeper's reply"
    ):
        send(path, "status")
    listener.close()


def test_a_socket_that_never_answers_is_a_clear_no_answer(folder) -> None:
    path = folder / "mute.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(0)
    held = []
    with pytest.raises(NoAnswer, match=str(path)):  # accepted by the kernel, never answered,
        for _ in range(50):  # then the backlog is full: EAGAIN
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(str(path))
            except BlockingIOError:
                sock.close()
                send(path, "status", timeout=0.3)
            held.append(sock)
        send(path, "status", timeout=0.3)
    for sock in held:
        sock.close()
    listener.close()


def test_the_tmp_folder_is_made_private_and_a_foreign_one_refused(folder) -> None:
    mine = folder / "mine"
    private_folder(mine, create=True)
    assert os.stat(mine).st_mode & 0o777 == 0o700
    open_one = folder / "open"
    open_one.mkdir(mode=0o777)
    os.chmod(open_one, 0o777)
    with pytest.raises(OSError, match=r"open to other users.*chmod 700"):
        private_folder(open_one, create=True)
    readable = folder / "readable"  # ours, as an older version made it: closed, not refused
    readable.mkdir(mode=0o750)
    os.chmod(readable, 0o750)
    private_folder(readable, create=True)
    assert os.stat(readable).st_mode & 0o777 == 0o700
    link = folder / "link"
    link.symlink_to(mine)
    with pytest.raises(OSError, match="not a folder"):
        private_folder(link, create=True)
    if os.getuid() == 0:  # (root can make a folder belong to someone else)
        theirs = folder / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        with pytest.raises(OSError, match="belongs to another user"):
            private_folder(theirs, create=True)


def test_the_fallback_socket_folder_is_checked_by_server_and_client(folder, monkeypatch) -> None:
    fallback = folder / "fallback"
    fallback.mkdir(mode=0o775)
    os.chmod(fallback, 0o775)
    monkeypatch.setattr(socket_path, "fallback_folder", lambda: fallback)
    runner = Runner(Engine(profile.load("ithf")), [])
    with pytest.raises(OSError, match="open to other users"):
        ControlServer(runner, fallback / "control.sock", make_folder=True)
    with pytest.raises(ConnectionError, match="open to other users"):
        send(fallback / "control.sock", "status")
