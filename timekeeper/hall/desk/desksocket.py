"""The desk's socket: while `hall serve --tournament cup.yaml` runs, it is the one writer of
the tournament's ledger, and the terminal's commands hand it their entries here
(`cup.desk.sock` beside the file) rather than write the ledger themselves.

One request a line, one JSON answer a line, as the box's ctl socket takes them:

- `{"file": "/abs/cup.yaml", "op": "result", "fields": {...}}` → `{"ok": true, "result":
  "applied", "entry": {...}}` (the ledger entry as written, with its number);
- `{"file": ..., "op": "round", "fields": {"number": 3}}` → `{"ok": true, "result": "called",
  "text": "...", "called": [[table, home, away], ...], "language": "cs"}`;
- `{"ok": false, "result": "refused" | "busy", "error": "..."}`: nothing changed.

The entry is made by the desk (`entry`, the clerk's checks on the tournament as the desk
holds it, with the matches its tables have begun) and written by the desk
(`Director.submit`), as a result typed on the board is. Everything from outside has a size,
a rate and a range: a request is at most MAX_REQUEST bytes sent within LINE_DEADLINE, at most
RATE a second (BURST at once), MAX_CONNECTIONS served at once, and every field is of its type
and within its bounds (`parse`). The socket is the user's alone (0600); a socket left by a
desk that was killed is found dead and replaced by the next desk, and a command finding it
writes the ledger itself under its lock (the client: timekeeper/cli/desk_client.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timekeeper.rules.series import DECIDED
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import clerk
from timekeeper.tournament.events import Event
from timekeeper.web import safejson
from timekeeper.web.ratelimit import Bucket

if TYPE_CHECKING:
    from timekeeper.hall.desk.director import Director
    from timekeeper.tournament.state import Tournament

log = logging.getLogger(__name__)

MAX_REQUEST = 16 * 1024  # bytes of one request line (a lot of 256 names is ~8 KB)
MAX_ANSWER = 1 << 20  # bytes of one answer a client reads
LINE_DEADLINE = 2.0  # seconds for the whole request line
ANSWER_DEADLINE = 30.0  # what a client waits (a round waits up to 5 s for the broker)
MAX_CONNECTIONS = 4  # served at once; more are answered "busy"
RATE, BURST = 10.0, 20  # requests a second, and at once
MAX_TEXT = 200  # a reason
MAX_NAME = 100  # a player, a table, a group, a score
MAX_NAMES = 512  # names in a lot's order
MAX_NUMBER = 10_000  # a round, a game
MAX_SEED = 2**63
MAX_PATH = 100  # bytes of a socket path (the kernel takes 107)


class BadRequest(ValueError):
    """A request the desk does not take: too long, too slow, too many, or a field out of
    its type or range. Nothing is changed."""


def socket_path(file: Path) -> Path:
    """Where the desk serving `file` listens: beside it (`cup.yaml` → `cup.desk.sock`), or,
    where that path is too long for a socket, in $XDG_RUNTIME_DIR under a name made from the
    file's whole path (else in the system's temporary folder, checked as the user's)."""
    file = Path(file).resolve()
    beside = file.with_name(file.stem + ".desk.sock")
    if len(os.fsencode(beside)) <= MAX_PATH:
        return beside
    digest = hashlib.sha256(os.fsencode(file)).hexdigest()[:20]
    folder = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    return Path(folder) / f"timekeeper-desk-{os.getuid()}-{digest}.sock"


def ours(path: Path) -> bool:
    """Whether `path` is a socket of this user's (another user's could forge the answers);
    False if there is none."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise ConfigError(
            f"{path} is not a desk's socket of this user's (a file, or another user's): "
            "remove it, then type the command again"
        )
    return True


# ---------------------------------------------------------------------- requests


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_NUMBER:
        raise BadRequest(f"a whole number from 1 to {MAX_NUMBER}, not {str(value)[:20]!r}")
    return value


def _maybe_count(value: Any) -> int | None:
    return None if value is None else _count(value)


def _text(most: int) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or len(value) > most:
            raise BadRequest(f"text of at most {most} characters")
        return value

    return check


def _maybe_score(value: Any) -> str | None:
    return None if value is None else _text(16)(value)


def _one_of(*allowed: str | None) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if value not in allowed:
            raise BadRequest(f"one of {', '.join(str(a) for a in allowed)}")
        return value

    return check


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise BadRequest("true or false")
    return value


def _names(value: Any) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_NAMES:
        raise BadRequest(f"a list of at most {MAX_NAMES} names")
    return [_text(MAX_NAME)(v) for v in value]


def _seed(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_SEED:
        raise BadRequest("a seed is a whole number from 0")
    return value


# op -> field -> its check; every field must be given (None where a command leaves it out)
FIELDS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "result": {
        "round": _count,
        "table": _text(MAX_NAME),
        "score": _maybe_score,
        "decided": _one_of(*DECIDED),
        "forfeit": _one_of(None, "home", "away"),
        "reason": _text(MAX_TEXT),
        "game": _maybe_count,
        "one_game": _flag,
    },
    "replay": {"round": _count, "table": _text(MAX_NAME), "reason": _text(MAX_TEXT)},
    "withdraw": {"player": _text(MAX_NAME), "reason": _text(MAX_TEXT)},
    "lot": {"group": _text(MAX_NAME), "order": _names, "seed": _seed},
    "round": {"number": _count},
}


@dataclasses.dataclass(frozen=True)
class Request:
    file: str  # the tournament the sender means (a desk serves one)
    op: str
    fields: Mapping[str, Any]

    def to_line(self) -> bytes:
        return (json.dumps(dataclasses.asdict(self), ensure_ascii=False) + "\n").encode()


def parse(raw: bytes) -> Request:
    """A request line, checked whole: its size, its shape, each field's type and range."""
    if len(raw) > MAX_REQUEST:
        raise BadRequest(f"a request of more than {MAX_REQUEST} bytes")
    try:
        data = safejson.loads(raw, MAX_REQUEST)  # (bounded in depth too, NaN refused)
    except safejson.BadJSON as exc:
        raise BadRequest(f"not a JSON request: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"file", "op", "fields"}:
        raise BadRequest('a request is {"file": ..., "op": ..., "fields": {...}}')
    op, fields, file = data["op"], data["fields"], data["file"]
    if not isinstance(file, str) or not 0 < len(file) <= 4096:
        raise BadRequest("file: the tournament file's path")
    if op not in FIELDS:
        raise BadRequest(f"op: one of {', '.join(FIELDS)}")
    if not isinstance(fields, dict) or set(fields) != set(FIELDS[op]):
        raise BadRequest(f"fields of {op}: {', '.join(FIELDS[op])}")
    checked = {}
    for name, check in FIELDS[op].items():
        try:
            checked[name] = check(fields[name])
        except BadRequest as exc:
            raise BadRequest(f"{op} {name}: {exc}") from None
    return Request(file, op, checked)


def entry(
    t: Tournament, op: str, f: Mapping[str, Any], time: str, begun: Mapping[str, str]
) -> Event:
    """The ledger entry a command makes, checked by the clerk against `t` (`begun`: the
    matches under way at their tables): the one way, for the desk and for a command that
    writes the ledger itself."""
    if op == "result":
        return clerk.result(
            t,
            f["round"],
            f["table"],
            f["score"],
            f["decided"],
            f["forfeit"],
            f["reason"],
            time,
            begun=begun,
            game=f["game"],
            one_game=f["one_game"],
        )
    if op == "replay":
        return clerk.replay(t, f["round"], f["table"], f["reason"], time, begun=begun)
    if op == "withdraw":
        return clerk.withdraw(t, f["player"], f["reason"], time)
    if op == "lot":
        return clerk.lot(t, f["group"], f["order"], f["seed"], time)
    raise ValueError(f"{op} makes no ledger entry")


# ---------------------------------------------------------------------- the server


class DeskSocket:
    """The serving desk's socket (a thread of its own, one more a request)."""

    def __init__(self, director: Director, clock: Callable[[], float] = time.monotonic) -> None:
        self.director = director
        self.file = str(Path(director.file).resolve())
        self.path = socket_path(director.file)
        if ours(self.path):
            if _alive(self.path):
                raise ConfigError(
                    f"another desk serves {director.file} (its socket {self.path} answers): "
                    "one desk owns a tournament; stop that one first"
                )
            self.path.unlink()  # (a desk killed: its socket is left, dead)
            log.info("desk: %s was left by a desk that stopped: replaced", self.path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # created 0600 from the start, no window
        try:
            self._sock.bind(str(self.path))
        finally:
            os.umask(old)
        self._sock.listen(MAX_CONNECTIONS)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._bucket = Bucket(RATE, BURST, clock)
        self._bucket_lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="desk-socket", daemon=True)

    def start(self) -> DeskSocket:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                if self._closed:
                    return
                time.sleep(0.1)  # (out of descriptors: the connection waits in the backlog)
                continue
            if not self._slots.acquire(blocking=False):
                _send(conn, _refused("busy", f"{MAX_CONNECTIONS} commands at once; try again"))
                conn.close()
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            with conn:
                try:
                    raw = _read_line(conn)
                    with self._bucket_lock:
                        allowed = self._bucket.take()
                    answer = (
                        self.reply(parse(raw))
                        if allowed
                        else _refused("busy", f"more than {RATE:g} commands a second; try again")
                    )
                except BadRequest as exc:
                    answer = _refused("refused", str(exc))
                _send(conn, answer)
        except OSError as exc:
            log.debug("desk socket: a connection dropped: %s", exc)
        finally:
            self._slots.release()

    def reply(self, request: Request) -> dict:
        """The answer to a checked request (the desk's own errors as refusals)."""
        if request.file != self.file:
            return _refused("refused", f"this desk serves {self.file}, not {request.file}")
        try:
            if request.op == "round":
                return self._round(request.fields["number"])
            op, fields = request.op, request.fields
            written = self.director.submit(lambda t, begun, when: entry(t, op, fields, when, begun))
        except ConfigError as exc:  # (a TournamentError too: what the clerk refused)
            return _refused("refused", str(exc))
        except OSError as exc:
            return _refused("refused", f"{exc.filename or ''} {exc.strerror or exc}".strip())
        except Exception as exc:  # a bug here must not cost the socket its thread
            log.exception("desk socket: a request failed")
            return _refused("refused", f"internal error ({type(exc).__name__}); see its log")
        return {"ok": True, "result": "applied", "entry": written.to_dict()}

    def _round(self, number: int) -> dict:
        d = self.director
        done = d.call_round(number)
        lines = [f"hall {d.hall}: round {number} of {d.t.spec.title}"]
        lines += [f"  table {table}: {what}" for table, what in done]
        called = [[t, p.home, p.away] for t, p in d.called.items() if p.round == number]
        return {
            "ok": True,
            "result": "called",
            "text": "\n".join(lines),
            "called": called,
            "language": d.t.spec.language,
        }


def _refused(result: str, error: str) -> dict:
    return {"ok": False, "result": result, "error": error[:400]}


def _send(conn: socket.socket, answer: dict) -> None:
    try:
        conn.settimeout(1.0)
        conn.sendall((json.dumps(answer, ensure_ascii=False) + "\n").encode())
    except OSError as exc:
        log.debug("desk socket: an answer not delivered: %s", exc)


def _read_line(conn: socket.socket) -> bytes:
    """One request line within LINE_DEADLINE and MAX_REQUEST bytes."""
    deadline = time.monotonic() + LINE_DEADLINE
    data = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BadRequest(f"too slow: send the whole request within {LINE_DEADLINE:g} s")
        conn.settimeout(left)
        try:
            chunk = conn.recv(4096)
        except TimeoutError:
            raise BadRequest(
                f"too slow: send the whole request within {LINE_DEADLINE:g} s"
            ) from None
        end = chunk.find(b"\n")
        data += chunk if end < 0 else chunk[:end]
        if len(data) > MAX_REQUEST:
            raise BadRequest(f"a request of more than {MAX_REQUEST} bytes")
        if end >= 0 or not chunk:
            return bytes(data)


def _alive(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
            return True
        except OSError:
            return False
