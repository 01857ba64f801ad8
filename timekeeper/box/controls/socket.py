"""The ctl socket: a local UNIX socket taking one request per line, answering one JSON line.

A request is a command as text (`start`, `add 10`, `status`), or a JSON object that gives
it an id: `{"id": "4f1c…", "command": "add 10"}`. A command with an id is applied at most
once: a client that lost the answer sends the same id again and gets the first outcome, never
a second `add`. Every reply says what happened:

- `{"ok": true, "result": "applied", "status": {...}}`
- `{"ok": false, "result": "refused", "error": "..."}` (nothing changed)
- `{"ok": false, "result": "dropped", "error": "..."}` (not applied within its deadline,
  and never will be: safe to send again)
- `{"ok": false, "result": "busy", "error": "..."}` (too many connections; nothing done)

Everything from outside has a size, a rate and a range: a line is at most MAX_LINE bytes of
UTF-8, sent whole within LINE_DEADLINE; at most MAX_CONNECTIONS are served at once; running
out of file descriptors is waited out, never taken for the end. `quit` is refused: only the
box's own keyboard or a signal stops it (the service restarts after any exit it did not ask
for, so a remote `quit` would only restart it).

Where the socket lives and whether its folder can be trusted: `socket_path.py`; the client
that `timekeeper ctl` uses: `socket_client.py`."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import socket
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from pathlib import Path
from typing import TYPE_CHECKING

from timekeeper.box.controls import socket_path
from timekeeper.rules.commands import Action, Command, Refused

if TYPE_CHECKING:  # (`timekeeper ctl` stays light: no numpy or pygame to import)
    from timekeeper.box.runner import Runner

log = logging.getLogger(__name__)
MAX_LINE = 4096  # bytes of one request, newline included
LINE_DEADLINE = 2.0  # seconds for the whole request line (a slow sender is cut off)
COMMAND_DEADLINE = 2.0  # a command not applied by then is dropped, never applied later
MAX_CONNECTIONS = 16  # served at once; more get "busy"
MAX_ERROR = 160  # characters of an error reply: one short line, never the request echoed
MAX_ID = 64
REMEMBERED_IDS = 256  # ids whose outcome is kept for a client's retries
REPLY_TIMEOUT = COMMAND_DEADLINE + 3.0  # what a client waits for one answer
NOT_ON_SOCKET = (Action.QUIT,)  # the socket may carry every other command, and status
_STARVED = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class BadRequest(ValueError):
    """A request line that is too long, too slow, not UTF-8 or not JSON we know."""


@dataclasses.dataclass(frozen=True)
class Request:
    line: str  # the command, or "status"
    id: str | None = None

    @classmethod
    def parse(cls, raw: bytes) -> Request:
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise BadRequest("not UTF-8 text; send one command per line") from None
        if not text.startswith("{"):
            return cls(text)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise BadRequest('not JSON; send a command, or {"id": ..., "command": ...}') from None
        if not isinstance(data, dict) or not isinstance(data.get("command"), str):
            raise BadRequest('a JSON request is {"id": "...", "command": "..."}')
        request_id = data.get("id")
        if request_id is not None and (
            not isinstance(request_id, str) or not 0 < len(request_id) <= MAX_ID
        ):
            raise BadRequest(f"an id is a string of 1 to {MAX_ID} characters")
        return cls(data["command"].strip(), request_id)


def _short(text: str) -> str:
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"


class SocketInUse(OSError):
    """Another timekeeper answers on this socket (a second box here needs its own)."""


class ControlServer:
    def __init__(
        self,
        runner: Runner,
        path: Path,
        make_folder: bool = False,
        commands: dict[str, Callable[[list[str]], dict]] | None = None,
    ) -> None:
        """`make_folder` for the default path only: a mistyped --control should fail.
        `commands`: requests for the box rather than the match, by their first word (`link
        [new]`, `result [confirm]`), as the web server takes them."""
        self.runner, self.path = runner, path
        self.commands = dict(commands or {})
        if make_folder:
            socket_path.make_folder(path)
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise OSError(f"{path} exists and is not a socket; give a new path")
            if socket_path.alive(path):
                raise SocketInUse(f"another timekeeper is already listening on {path}")
            path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o117)  # the socket is created 0660 from the start, no window
        try:
            self._sock.bind(str(path))
        finally:
            os.umask(old)
        os.chmod(path, 0o660)
        self._sock.listen(MAX_CONNECTIONS)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._seen: OrderedDict[str, Future] = OrderedDict()  # id → its command's outcome
        self._seen_lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="ctl", daemon=True)

    def start(self) -> ControlServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes accept()
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    # ------------------------------------------------------------------ connections

    def _serve(self) -> None:
        pause, starved = 0.05, False
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError as exc:
                if self._closed:
                    return
                if exc.errno in _STARVED:  # the connection waits in the backlog meanwhile
                    if not starved:
                        log.error(
                            "control socket %s: cannot accept a connection (%s); "
                            "retrying until some close",
                            self.path,
                            exc.strerror,
                        )
                    starved = True
                    time.sleep(pause)
                    pause = min(1.0, pause * 2)
                    continue
                if exc.errno in (errno.ECONNABORTED, errno.EINTR, errno.EPROTO):
                    continue
                log.error("control socket %s: %s; retrying", self.path, exc.strerror or exc)
                time.sleep(1.0)
                continue
            if starved:
                log.info("control socket %s: accepting connections again", self.path)
            pause, starved = 0.05, False
            self._hand_over(conn)

    def _hand_over(self, conn: socket.socket) -> None:
        if not self._slots.acquire(blocking=False):
            self._send(
                conn,
                {
                    "ok": False,
                    "result": "busy",
                    "error": f"busy: {MAX_CONNECTIONS} connections at once; try again",
                },
            )
            _drain(conn, seconds=0.0, most=MAX_LINE)  # (never holds up accept)
            conn.close()
            return
        try:
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()
        except RuntimeError:  # no thread to be had (TasksMax): the connection is refused
            self._slots.release()
            conn.close()

    def _answer(self, conn: socket.socket) -> None:
        try:
            with conn:
                try:
                    raw = _read_line(conn)
                    if raw is None:
                        return  # hung up without a word
                    answer = self.reply(Request.parse(raw))
                except BadRequest as exc:
                    self._send(conn, {"ok": False, "result": "refused", "error": str(exc)})
                    _drain(conn)
                    return
                except OSError:
                    raise
                except Exception as exc:  # a bug here must not cost the socket its thread
                    log.exception("ctl request failed")
                    answer = {
                        "ok": False,
                        "result": "refused",
                        "error": f"internal error ({type(exc).__name__}); see the log",
                    }
                self._send(conn, answer)
        except OSError as exc:  # a client may hang up at any point
            log.debug("ctl connection dropped: %s", exc)
        finally:
            self._slots.release()

    @staticmethod
    def _send(conn: socket.socket, answer: dict) -> None:
        if "error" in answer:
            answer["error"] = _short(answer["error"])
        try:
            conn.settimeout(1.0)
            conn.sendall((json.dumps(answer) + "\n").encode())
        except OSError as exc:
            log.debug("ctl reply not delivered: %s", exc)

    # ------------------------------------------------------------------ requests

    def reply(self, request: Request | str) -> dict:
        if isinstance(request, str):
            request = Request(request)
        line = request.line
        if line == "status":
            return {"ok": True, "status": self.runner.status().to_dict()}
        word, *args = line.split() or [""]
        if word in self.commands:
            return self.commands[word](args)
        try:
            command = Command.parse(line)
        except ValueError as exc:
            return {"ok": False, "result": "refused", "error": str(exc)}
        if command.action in NOT_ON_SOCKET:
            return {
                "ok": False,
                "result": "refused",
                "error": f"{command.action.value} is not taken over the socket: stop the box with "
                "its keyboard (q q) or `systemctl stop timekeeper`",
            }
        future = self._submit(command, request.id)
        try:
            status = future.result(timeout=COMMAND_DEADLINE)
        except TimeoutError:
            if future.cancel():  # the runner never took it: it never will
                return _dropped()
            try:  # the runner is applying it right now
                status = future.result(timeout=REPLY_TIMEOUT)
            except Refused as exc:
                return {"ok": False, "result": "refused", "error": str(exc)}
            except TimeoutError:
                return {
                    "ok": False,
                    "result": "unknown",
                    "error": "taken but not answered in time; "
                    "`ctl status` shows whether it applied",
                }
        except CancelledError:
            return _dropped()
        except Refused as exc:
            return {"ok": False, "result": "refused", "error": str(exc)}
        return {"ok": True, "result": "applied", "status": status.to_dict()}

    def _submit(self, command: Command, request_id: str | None) -> Future:
        """The command's future: a new one, or the one its id already has (a retry)."""
        if request_id is None:
            return self.runner.submit(command)
        with self._seen_lock:
            known = self._seen.get(request_id)
            if known is not None and not known.cancelled():
                self._seen.move_to_end(request_id)
                return known  # applied, refused, or still queued: once, whatever happens
            future = self.runner.submit(command)  # (a dropped one was never applied)
            self._seen[request_id] = future
            while len(self._seen) > REMEMBERED_IDS:
                self._seen.popitem(last=False)
            return future


def _dropped() -> dict:
    return {
        "ok": False,
        "result": "dropped",
        "error": f"not applied: the timekeeper was busy for {COMMAND_DEADLINE:g} s; nothing "
        "changed, send it again",
    }


def _read_line(conn: socket.socket) -> bytes | None:
    """One request line, within LINE_DEADLINE overall and MAX_LINE bytes; None if the
    client hung up without sending anything."""
    deadline = time.monotonic() + LINE_DEADLINE
    data = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BadRequest(f"too slow: send the whole line within {LINE_DEADLINE:g} s")
        conn.settimeout(left)
        try:
            chunk = conn.recv(1024)
        except TimeoutError:
            raise BadRequest(f"too slow: send the whole line within {LINE_DEADLINE:g} s") from None
        end = chunk.find(b"\n")
        if end >= 0:
            chunk = chunk[:end]
        if len(data) + len(chunk) > MAX_LINE:
            raise BadRequest(f"line too long: at most {MAX_LINE} bytes")
        data += chunk
        if end >= 0:
            return bytes(data)
        if not chunk:
            return bytes(data) if data.strip() else None


def _drain(conn: socket.socket, seconds: float = 0.5, most: int = 16 << 20) -> None:
    """Read and forget what a refused client still sends, for a moment (0: only what is
    there already): closing with unread data would reset the connection and lose the answer
    on its way."""
    with contextlib.suppress(OSError):  # (a timeout or EAGAIN ends it)
        conn.shutdown(socket.SHUT_WR)
        deadline, read = time.monotonic() + seconds, 0
        while read < most:
            left = deadline - time.monotonic()
            if left > 0:
                conn.settimeout(left)
            else:
                conn.setblocking(False)
            chunk = conn.recv(65536)
            if not chunk:
                return
            read += len(chunk)
