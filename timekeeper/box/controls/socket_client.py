"""The ctl socket's client, used by `timekeeper ctl`: one request, one answer, and every way
it can go wrong said in words that name the path (the protocol is in `socket.py`)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

from timekeeper.box.controls.socket import REPLY_TIMEOUT
from timekeeper.box.controls.socket_path import check_folder


class NoAnswer(ConnectionError):
    """The request was sent but no answer came: whether it was applied is unknown."""


def send(
    path: Path,
    line: str,
    timeout: float = REPLY_TIMEOUT + 1,
    request_id: str | None = None,
    attempts: int = 1,
) -> dict:
    """One request, answered as a dict. With an id, a lost answer is asked for again
    (`attempts` in all) without any risk of applying the command twice. ConnectionError
    (NoAnswer) says what went wrong, naming the path."""
    text = (
        line.strip()
        if request_id is None
        else json.dumps({"id": request_id, "command": line.strip()})
    )
    for attempt in range(1, attempts + 1):
        try:
            return _send_once(path, text, timeout)
        except NoAnswer:
            if attempt == attempts:
                raise
            time.sleep(0.2)
    raise AssertionError("unreachable")


def _send_once(path: Path, text: str, timeout: float) -> dict:
    try:  # another user's folder could forge the answers
        check_folder(path)
    except OSError as exc:
        raise ConnectionError(str(exc)) from None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            raise ConnectionError(
                f"no timekeeper is running at {path} "
                "(start one with `timekeeper run`, or give --control)"
            ) from None
        except PermissionError:
            raise ConnectionError(
                f"not allowed to use {path}: are you in its group (timekeeper "
                "for the service)? Log in again after being added, or use "
                "sudo"
            ) from None
        except (BlockingIOError, TimeoutError):  # its backlog is full: it is swamped or hung
            raise NoAnswer(
                f"the timekeeper at {path} takes no connection now (busy or hung); try again"
            ) from None
        except OSError as exc:
            raise ConnectionError(f"cannot connect to {path}: {exc.strerror or exc}") from None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall((text + "\n").encode())  # (refused at once, e.g. busy: read why)
        try:
            with sock.makefile("rb") as f:
                answer = f.readline(64 * 1024 * 1024)
        except TimeoutError:
            raise NoAnswer(
                f"no answer from {path} within {timeout:g} s: the command may or "
                "may not have been applied; `timekeeper ctl status` shows"
            ) from None
        except OSError as exc:
            raise NoAnswer(
                f"the connection to {path} broke ({exc.strerror or exc}): the "
                "command may or may not have been applied"
            ) from None
    if not answer:
        raise NoAnswer(f"the timekeeper at {path} closed the connection without answering")
    try:
        reply = json.loads(answer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        reply = None
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise ConnectionError(
            f"{path} answered something that is not a timekeeper's reply "
            "(is it another program's socket? give --control)"
        )
    if reply["ok"] and not isinstance(reply.get("status"), dict):
        raise ConnectionError(f"{path} answered without a status: not a timekeeper's reply")
    return reply
