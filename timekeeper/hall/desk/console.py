"""`timekeeper hall …`: the desk's commands, as a tournament director types them."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from timekeeper.hall.bus import timesync
from timekeeper.hall.bus.broker import Broker
from timekeeper.hall.bus.messages import BadMessage
from timekeeper.hall.bus.pairing import Pairing, pairing_topic, parse_pairing
from timekeeper.hall.desk.link import (
    DEFAULT_LEAD,
    MIN_LEAD,
    Desk,
    DeskError,
    DeskReader,
    anonymous_warning,
    new_command,
    summary,
)
from timekeeper.show import language
from timekeeper.show.status import series_text

TIMED = ("start", "resume", "next")  # happen at an instant: every table together
# a box sends its status at least every 5 s (hall/table/link.py): one older than this was
# not heard from since, and `hall status` says how old it is
OLD_STATUS = 12.0
COUNTING = ("prestart", "break", "shot")  # the states whose countdown runs


def instant(
    at_text: str | None, in_text: str | None, kind: str, wall: Callable[[], float] | None = None
) -> float | None:
    """The wall-clock instant of `--at HH:MM:SS` (today, local time) or `--in 10s`."""
    now = (wall or time.time)()
    if at_text:
        try:
            clock = dt.time.fromisoformat(at_text.strip())
        except ValueError:
            raise DeskError(f"--at takes HH:MM:SS (got {at_text!r})") from None
        today = dt.datetime.fromtimestamp(now).date()
        at = dt.datetime.combine(today, clock).timestamp()
        if at - now < MIN_LEAD:
            raise DeskError(
                f"--at {at_text} is {'past' if at < now else 'too near'}: give an "
                f"instant at least {MIN_LEAD:g} s ahead"
            )
        return at
    if in_text:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min)?\s*", in_text)
        if not match:
            raise DeskError(f"--in takes seconds, e.g. 10s or 2m (got {in_text!r})")
        seconds = float(match.group(1)) * (60 if (match.group(2) or "s").startswith("m") else 1)
        if seconds < MIN_LEAD and kind in TIMED:
            raise DeskError(f"--in {in_text}: at least {MIN_LEAD:g} s, to reach every table")
        return now + seconds
    return now + DEFAULT_LEAD if kind in TIMED else None


def run(
    action: str,
    broker: Broker | str,
    hall: str,
    table: str | None = None,
    profile: str | None = None,
    at_text: str | None = None,
    in_text: str | None = None,
    seconds: float | None = None,
    out: Callable[[str], None] = print,
    as_json: bool = False,
) -> int:
    try:
        if isinstance(broker, str):
            broker = Broker.parse(broker)
        if action == "add" and seconds is None:
            raise DeskError("hall add takes SECONDS, e.g. hall add 30")
        instant(at_text, in_text, action)  # (a wrong --at/--in is told before connecting)
        desk = Desk(broker, hall)
        pairings = PairingReader(hall)
        desk.add_reader(pairings)  # (before the statuses settle: handed over with them)
    except (DeskError, ValueError) as exc:
        out(f"timekeeper: {exc}")
        return 2 if not isinstance(exc, DeskError) or "broker" not in str(exc) else 1
    try:
        if action == "status":
            statuses = desk.read_statuses()
            out(
                json.dumps(statuses, indent=1, ensure_ascii=False)
                if as_json
                else status_table(hall, statuses)
            )
            said = anonymous_warning(broker)
            if said:  # (stderr: stdout is the table or the JSON)
                print(said, file=sys.stderr)
            return 0
        # the instant counts from when the command goes out: connected, with the tables'
        # statuses in (on a busy machine that took over 3 s, and every table refused a
        # start `--in 4s` that came after its instant)
        desk.read_statuses()
        try:
            at = instant(at_text, in_text, action)
        except DeskError as exc:  # (--at: too near by now)
            out(f"timekeeper: {exc}")
            return 2
        command = new_command(action, at, profile, seconds)
        when = (
            ""
            if at is None
            else " at " + dt.datetime.fromtimestamp(at).strftime("%H:%M:%S.%f")[:-3]
        )
        out(f"hall {hall}: {action}{when} (id {command.id}) …")
        only: list[str] | None = None
        skipped: dict[str, str] = {}
        if action == "start" and table is None:
            only, skipped = pairings.round_tables(desk.tables())
        answers = desk.send(command, table, only=only)
    finally:
        desk.close()
    for name, why in skipped.items():
        out(f"  table {name}: skipped  {why}")
    if not answers:
        out("no table answered (none online in this hall?)")
        return 1 if not skipped else 0
    failed = 0
    silent = [
        name
        for name, answer in answers.items()
        if str(answer.get("error", "")).startswith("no answer")
    ]
    for name, answer in answers.items():
        if answer.get("ok"):
            shown = summary({"online": True, "synced": True, "status": answer.get("status")})
            out(f"  table {name}: ok  {shown}")
        else:
            failed += 1
            out(f"  table {name}: REFUSED  {answer.get('error', '')}")
    if silent:
        out(f"did not answer: table{'s' if len(silent) > 1 else ''} {', '.join(silent)}")
    return 0 if failed == 0 else 1


class PairingReader(DeskReader):
    """The tables' retained pairings, for a hall start with a tournament served: the round
    called last is the one played, and a table without a match in it stays as it is (it
    played a phantom 0:0 with the last round's names)."""

    def __init__(self, hall: str) -> None:
        self.hall = hall
        self.pairings: dict[str, Pairing] = {}

    def owns(self, name: str) -> bool:
        parts = name.split("/")
        return len(parts) == 4 and parts[1] == self.hall and parts[3] == "pairing"

    def connected(self, client: Any) -> None:
        client.subscribe([(pairing_topic(self.hall, "+"), 1)])

    def handle(self, name: str, payload: bytes) -> None:
        table = name.split("/")[2]
        if not payload:
            self.pairings.pop(table, None)
            return
        with contextlib.suppress(BadMessage):  # (a bad one: the box says so in its status)
            self.pairings[table] = parse_pairing(payload)

    def round_tables(self, statuses: dict[str, dict]) -> tuple[list[str] | None, dict[str, str]]:
        """(the tables that play the round called last, or None when no round was called:
        every table; the others, each with why it is skipped)."""
        pairings = dict(self.pairings)
        if not pairings:
            return None, {}
        current = max(p.round for p in pairings.values())
        playing = sorted((t for t, p in pairings.items() if p.round == current), key=_key)
        skipped = {
            t: f"no match in round {current}" + _last(pairings.get(t))
            for t in sorted(set(statuses) | set(pairings), key=_key)
            if t not in playing
        }
        return playing, skipped


def _last(p: Pairing | None) -> str:
    return "" if p is None else f" (its last: round {p.round}, {p.match} {p.sides})"


def _key(name: str) -> tuple[int, Any]:
    return (0, int(name)) if name.isdigit() else (1, name)


STATUS_COLUMNS = ("table", "state", "part", "time", "score", "match", "sync")


def status_table(hall: str, statuses: dict[str, dict], now: float | None = None) -> str:
    """`hall status`: one line per table — state, part, its clock (the time left, or the
    countdown of a pre-start, a break or a shot), score, the match (its id, the players and
    the series on the table), sync (and what else the desk must know: off the hall's time,
    the last refusal, a status not heard from lately). Each status is the box's last, up to
    a few seconds old: a running clock and what is pending are told as of `now` (the hall's
    time, the desk's synced wall clock)."""
    if not statuses:
        return f"hall {hall}: no table has reported (none online in this hall?)"
    at = timesync.wall_now() if now is None else now
    rows = [STATUS_COLUMNS] + [status_row(name, status, at) for name, status in statuses.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(STATUS_COLUMNS) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in rows
    ]
    online = sum(1 for s in statuses.values() if s.get("online"))
    return "\n".join([f"hall {hall}: {online} of {len(statuses)} tables online", *lines])


def match_text(status: dict) -> str:
    """The match on a table: `QF2 Novák – Svoboda · game 3 · Novák leads 2:0` (the pairing's
    id, the players the box shows, else the pairing's, and the series on the table)."""
    s = status.get("status") or {}
    pairing = status.get("pairing") or {}
    names = {
        side: str((s.get("names") or {}).get(side) or pairing.get(side) or "")
        for side in ("home", "away")
    }
    words = [str(pairing.get("match") or "")]
    if any(names.values()):
        words.append(f"{names['home'] or 'HOME'} – {names['away'] or 'AWAY'}")
    text = " ".join(w for w in words if w)
    series = s.get("match_series")
    if series:
        said = series_text(
            {**series, "match": ""},  # (its id is the pairing's, said first)
            names,
            str(s.get("state", "")),
            language.english()["series"],
            lambda side: side.upper(),
        )
        text = f"{text} · {said}" if text else said
    return text


def status_age(status: dict, now: float) -> float:
    """How long ago (s, on the hall's time) the box sent this status; 0 where unknown or
    where the box's clock is not the hall's (not synced: its `sent` says nothing)."""
    sent = status.get("sent")
    if not isinstance(sent, (int, float)) or not status.get("synced", True):
        return 0.0
    return max(0.0, now - float(sent))


def status_row(name: str, status: dict, now: float) -> tuple[str, ...]:
    """One table's line, its clock and what is pending aged from when the box sent it."""
    if status.get("bad"):
        return (name, "BAD STATUS", "", "", "", "", str(status["bad"]))
    if not status.get("online", False):
        return (name, "OFFLINE", "", "", "", "", "")
    s = status.get("status") or {}
    score = s.get("score") or {}
    left = ""
    age = status_age(status, now)
    counting = s.get("state") in COUNTING and s.get("countdown") is not None
    clock = s.get("countdown") if counting else s.get("remaining")
    if clock is not None and (counting or s.get("state") == "running"):
        clock -= age  # (the clock ran on since the box sent it)
    if clock is not None:
        whole = int(max(0.0, clock) + 0.999)
        left = f"{whole // 60}:{whole % 60:02d}"
    sync = "synced" if status.get("synced", True) else status.get("sync", "NOT SYNCED")
    notes = []
    if (
        status.get("synced", True)
        and status.get("in_step") is False
        and s.get("state") not in ("idle", "finished", None)
    ):
        notes.append("off the hall's time")
    if status.get("error"):
        notes.append(f"last command refused: {status['error']}")
    for waiting in s.get("scheduled") or []:
        notes.append(f"pending: {waiting['command']} in {max(0.0, waiting['in'] - age):.0f} s")
    if age > OLD_STATUS:
        notes.append(f"status {age:.0f} s old")
    return (
        name,
        str(s.get("state", "?")).upper(),
        str(s.get("part") or ""),
        left,
        f"{score.get('home', 0)}:{score.get('away', 0)}",
        match_text(status),
        "; ".join([sync, *notes]),
    )
