"""What travels on the hall's bus, and the checks every message passes before it is believed.

A hall command is a small JSON object on `timekeeper/HALL/all/command` (every table) or
`timekeeper/HALL/TABLE/command` (one table). It carries an id, so that none is carried out
twice (a reconnect may deliver it again), and the wall-clock time it was sent, so that one
delivered late after a broker outage is refused rather than replayed. `at` is an instant on
the hall's synced wall clock: each box maps it once, on receipt, to its own monotonic clock.

Everything from the bus is hostile until checked: size, fields, types and ranges."""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass

from timekeeper.rules.commands import TABLE_NAME
from timekeeper.web import safejson

MAX_PAYLOAD = 2048  # bytes: a command is a few hundred; the broker's limit is set to match
MAX_AGE = 30.0  # s: a command sent longer ago than this is stale (a broker outage), refused
MAX_LEAD = 3600.0  # s: an `at` further ahead than this is a mistake
MAX_ADD = 600.0  # s: hall-wide added time, either way
# cancel: call off what a table holds for an instant ahead (stop and reset do too)
# finish: the table's FINISH, for a table whose operator is away
KINDS = ("start", "stop", "resume", "add", "next", "reset", "cancel", "finish")
_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_NAME = TABLE_NAME  # (a hall's or a table's name: one level of a topic; the tournament file's)


class BadMessage(ValueError):
    """A message refused before it reaches the box (logged with the reason)."""


@dataclass(frozen=True)
class HallCommand:
    id: str
    kind: str  # one of KINDS
    sent: float  # wall-clock seconds (the desk's synced clock) when it was sent
    at: float | None = None  # wall-clock instant it takes effect (start, stop, resume)
    profile: str | None = None  # start: the profile the hall plays (a box on another refuses)
    seconds: float | None = None  # add
    # for this table alone (`hall start --table T`: a late table started on its own is off
    # the hall's time); None: one of the hall's, on the all topic or on each table's own at
    # one instant (a round's tables)
    alone: bool | None = None

    def to_json(self) -> bytes:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None}).encode()


def parse_command(payload: bytes, now_wall: float) -> HallCommand:
    """Check and parse one command; BadMessage says what is wrong with it."""
    if len(payload) > MAX_PAYLOAD:
        raise BadMessage(f"payload of {len(payload)} bytes (at most {MAX_PAYLOAD})")
    try:
        data = safejson.loads(payload, MAX_PAYLOAD, max_depth=2)
    except safejson.BadJSON as exc:
        raise BadMessage(f"not a JSON object ({exc})") from None
    if not isinstance(data, dict):
        raise BadMessage("not a JSON object")
    unknown = set(data) - {"id", "kind", "sent", "at", "profile", "seconds", "alone"}
    if unknown:
        raise BadMessage(f"unknown field(s) {', '.join(sorted(map(str, unknown)))[:80]}")
    ident, kind = data.get("id"), data.get("kind")
    if not isinstance(ident, str) or not _ID.fullmatch(ident):
        raise BadMessage("id must be 1-64 letters, digits or ._:-")
    if kind not in KINDS:
        raise BadMessage(f"unknown command kind (kinds: {', '.join(KINDS)})")
    sent = _number(data, "sent")
    if sent is None:
        raise BadMessage("sent (wall-clock seconds) is missing")
    if now_wall - sent > MAX_AGE:
        raise BadMessage(
            f"stale: sent {now_wall - sent:.0f} s ago (a broker outage?); not carried out late"
        )
    if sent - now_wall > MAX_AGE:
        raise BadMessage(f"sent {sent - now_wall:.0f} s in the future: clocks not in step")
    at = _number(data, "at")
    if at is not None and not -MAX_AGE <= at - now_wall <= MAX_LEAD:
        raise BadMessage(
            f"at is {at - now_wall:+.0f} s from now (allowed: up to {MAX_LEAD:g} s ahead)"
        )
    if kind in ("start", "resume") and at is None:
        raise BadMessage(f"{kind} needs at (the wall-clock instant it takes effect)")
    profile = data.get("profile")
    if profile is not None and (not isinstance(profile, str) or not _NAME.fullmatch(profile)):
        raise BadMessage("profile must be a profile's name")
    seconds = _number(data, "seconds")
    if kind == "add" and (seconds is None or not 0 < abs(seconds) <= MAX_ADD):
        raise BadMessage(f"add needs seconds, 0 < |seconds| <= {MAX_ADD:g}")
    alone = data.get("alone")
    if alone not in (None, True):
        raise BadMessage("alone must be true (or left out)")
    return HallCommand(ident, kind, sent, at, profile, seconds, alone)


def _number(data: dict, key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadMessage(f"{key} must be a number")
    return float(value)


def check_name(kind: str, value: str) -> str:
    """A hall or table name: it becomes part of MQTT topics, so no wildcards or slashes."""
    if not _NAME.fullmatch(value):
        raise ValueError(f"a {kind} name is 1-32 letters, digits, - or _ (got {value!r})")
    return value


def topic(hall: str, table: str, leaf: str) -> str:
    """`timekeeper/HALL/TABLE/LEAF` (TABLE `all` or `+` for every table): the one place the
    bus's topic names are made."""
    return f"timekeeper/{hall}/{table}/{leaf}"


@dataclass(frozen=True)
class Topics:
    hall: str
    table: str

    @property
    def status(self) -> str:
        return topic(self.hall, self.table, "status")

    @property
    def command(self) -> str:
        return topic(self.hall, self.table, "command")

    @property
    def reply(self) -> str:
        return topic(self.hall, self.table, "reply")

    @property
    def all_commands(self) -> str:
        return topic(self.hall, "all", "command")


def hall_topics(hall: str) -> tuple[str, str, str]:
    """(every table's status, every table's reply, the all-tables command topic)."""
    return topic(hall, "+", "status"), topic(hall, "+", "reply"), topic(hall, "all", "command")
