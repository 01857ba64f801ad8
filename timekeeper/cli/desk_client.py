"""The terminal's side of the desk's socket (hall/desksocket.py): while `hall serve` holds the
tournament, a command that adds to its ledger (`tournament result`, `replay`, `withdraw`,
`lot`) or calls a round (`hall round`) hands it to that desk and prints what it answers;
with no desk serving, the command writes the ledger itself, under its lock, as always.

A socket left by a desk that was killed answers nothing: the command says so and writes the
ledger itself. A desk that takes the request but does not answer in time is an error that
says the entry may or may not be in (`tournament history` shows): never written twice."""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from timekeeper.hall import desksocket
from timekeeper.tournament.state import TournamentError

if TYPE_CHECKING:
    from timekeeper.tournament.ledger import Ledger
    from timekeeper.tournament.state import Tournament

from timekeeper.tournament.events import Event

E = TypeVar("E", bound=Event)


BUSY_PATIENCE = 10.0  # s: a desk that says "busy" (nothing changed) is asked again till then
BUSY_PAUSE = 0.2  # s between the asks: the desk's rate is 10 a second


def ask(file: Path, op: str, fields: Mapping[str, Any]) -> dict | None:
    """The serving desk's answer to one request, or None where no desk serves `file` (a
    stale socket said on stderr). A refusal is a TournamentError with the desk's words; a
    desk busy with other commands (a script typing a round's results) is asked again."""
    give_up = time.monotonic() + BUSY_PATIENCE
    while True:
        answer = _ask_once(file, op, fields)
        if answer is None or answer["ok"] or answer.get("result") != "busy":
            break
        if time.monotonic() > give_up:
            break
        time.sleep(BUSY_PAUSE)
    if answer is not None and not answer["ok"]:
        raise TournamentError(f"the desk refused it: {answer.get('error')}")
    return answer


def _ask_once(file: Path, op: str, fields: Mapping[str, Any]) -> dict | None:
    """One request and the desk's answer as it came (None: no desk serves `file`)."""
    path = desksocket.socket_path(file)
    if not desksocket.ours(path):
        return None
    request = desksocket.Request(str(Path(file).resolve()), op, dict(fields))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(desksocket.ANSWER_DEADLINE)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            print(
                f"timekeeper: no desk answers at {path} (left by a desk that stopped): "
                "writing the ledger here, under its lock",
                file=sys.stderr,
            )
            return None
        except OSError as exc:
            raise TournamentError(
                f"cannot reach the desk at {path}: {exc.strerror or exc}"
            ) from None
        try:
            sock.sendall(request.to_line())
            with sock.makefile("rb") as stream:
                raw = stream.readline(desksocket.MAX_ANSWER)
        except OSError as exc:
            raise TournamentError(
                f"no answer from the desk at {path} ({exc.strerror or 'no answer in time'}): "
                "it may or may not have taken it; `timekeeper tournament history` shows"
            ) from None
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        answer = None
    if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
        raise TournamentError(
            f"the desk at {path} closed without an answer: it may or may not have taken "
            "it; `timekeeper tournament history` shows"
        )
    return answer


def record(
    file: Path,
    t: Tournament,
    ledger: Ledger,
    kind: type[E],
    op: str,
    fields: Mapping[str, Any],
    now: str,
    begun: Mapping[str, str] | None = None,
) -> tuple[Tournament, E]:
    """One ledger entry (`op` with its `fields`, as desksocket.FIELDS lists them), written
    by the serving desk, or here under the ledger's lock where none serves; the tournament
    with it, and the entry as written (its number)."""
    from timekeeper.tournament import events
    from timekeeper.tournament.ledger import open_tournament

    answer = ask(file, op, fields)
    if answer is None:
        made = desksocket.entry(t, op, fields, now, begun or {})
    else:
        made = events.from_dict(answer["entry"])
    if not isinstance(made, kind):
        raise TournamentError(f"a {made.kind} entry where a {op} was asked for")
    if answer is None:
        return t, ledger.record(t, made)
    t, _ = open_tournament(file)  # (as the desk wrote it: on the disk before it answered)
    return t, made
