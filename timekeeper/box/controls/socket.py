"""The ctl socket: a local UNIX socket taking one command per line, answering one JSON line.

Requests are plain text (`start`, `add 10`, `status`); replies are
`{"ok": true, "status": {...}}` or `{"ok": false, "error": "..."}`."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import socket
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from timekeeper.rules.commands import Command, Refused

if TYPE_CHECKING:  # (`timekeeper ctl` stays light: no numpy or pygame to import)
    from timekeeper.box.runner import Runner

log = logging.getLogger(__name__)
REPLY_TIMEOUT = 5.0


def default_path() -> Path:
    """$TIMEKEEPER_CONTROL, else the service's RuntimeDirectory, else the user's runtime dir."""
    if env := os.environ.get("TIMEKEEPER_CONTROL"):
        return Path(env)
    if runtime := os.environ.get("RUNTIME_DIRECTORY"):
        return Path(runtime.split(":")[0]) / "control.sock"
    if xdg := os.environ.get("XDG_RUNTIME_DIR"):
        return Path(xdg) / "timekeeper" / "control.sock"
    return Path(f"/tmp/timekeeper-{os.getuid()}") / "control.sock"


SERVICE_PATH = Path("/run/timekeeper/control.sock")  # the systemd service's socket


def client_path() -> Path:
    """Where `timekeeper ctl` looks: the default path, else the service's socket (an
    operator's shell has no RUNTIME_DIRECTORY)."""
    path = default_path()
    if path.exists() or "TIMEKEEPER_CONTROL" in os.environ:
        return path
    try:
        service = SERVICE_PATH.exists()
    except PermissionError:  # /run/timekeeper is only for its group: connect says so
        service = True
    return SERVICE_PATH if service else path


class SocketInUse(OSError):
    """Another timekeeper answers on this socket (a second box here needs its own)."""


def in_use(path: Path) -> bool:
    """Another timekeeper answers on `path`: checked before the journal or the sound card is
    touched, so that a second `run` leaves the first one's match alone."""
    return path.is_socket() and _alive(path)


class ControlServer:
    def __init__(self, runner: Runner, path: Path, make_folder: bool = False) -> None:
        """`make_folder` for the default path only: a mistyped --control should fail."""
        self.runner, self.path = runner, path
        if make_folder:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o770)
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise OSError(f"{path} exists and is not a socket; give a new path")
            if _alive(path):
                raise SocketInUse(f"another timekeeper is already listening on {path}")
            path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o117)  # the socket is created 0660 from the start, no window
        try:
            self._sock.bind(str(path))
        finally:
            os.umask(old)
        os.chmod(path, 0o660)
        self._sock.listen(8)
        self._thread = threading.Thread(target=self._serve, name="ctl", daemon=True)

    def start(self) -> ControlServer:
        self._thread.start()
        return self

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(REPLY_TIMEOUT)
        try:  # a client may hang up at any point, even during the final flush on close
            with conn, conn.makefile("rw", encoding="utf-8") as f:
                line = f.readline().strip()
                if line:
                    f.write(json.dumps(self.reply(line)) + "\n")
        except OSError as exc:
            log.debug("ctl connection dropped: %s", exc)

    def reply(self, line: str) -> dict:
        if line == "status":
            return {"ok": True, "status": dataclasses.asdict(self.runner.status())}
        try:
            command = Command.parse(line)
        except ValueError as exc:
            return {"ok": False, "error": str(exc)}
        try:
            status = self.runner.submit(command).result(timeout=REPLY_TIMEOUT)
        except Refused as exc:
            return {"ok": False, "error": str(exc)}
        except TimeoutError:
            return {"ok": False, "error": "the timekeeper did not answer in time"}
        return {"ok": True, "status": dataclasses.asdict(status)}


def _alive(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
            return True
        except OSError:
            return False


def send(path: Path, line: str, timeout: float = REPLY_TIMEOUT + 1) -> dict:
    """The client side, used by `timekeeper ctl`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            raise ConnectionError(f"no timekeeper is running at {path} "
                                  "(start one with `timekeeper run`, or give --control)") from None
        except PermissionError:
            raise ConnectionError(f"not allowed to use {path}: are you in its group (timekeeper "
                                  "for the service)? Log in again after being added, or use "
                                  "sudo") from None
        sock.sendall((line.strip() + "\n").encode())
        with sock.makefile("r", encoding="utf-8") as f:
            answer = f.readline()
    if not answer:
        raise ConnectionError("the timekeeper closed the connection without answering")
    return json.loads(answer)
