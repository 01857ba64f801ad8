"""The desk's calls, kept beside the tournament (`cup.yaml` → `cup.calls.jsonl`): every
pairing a desk pushed to a table, one a line, and the marks about them — a result confirmed
by the director, a called match begun at its table (its box past idle with that pairing)
or back to idle (reset). Every desk that reads the tournament, in any process, reads this
file again when it has grown (`read`), so that a round called anywhere is one call to all;
`timekeeper tournament result` reads it too, to know which knock-out matches have begun."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from timekeeper.hall.bus.messages import BadMessage
from timekeeper.hall.bus.pairing import Pairing, parse_pairing

log = logging.getLogger(__name__)

MARKS = ("confirmed", "begun", "idle")  # {"confirmed": result id}, {"begun": pairing id} …


def calls_path(file: Path) -> Path:
    """cup.yaml → cup.calls.jsonl, beside it and its ledger."""
    return Path(file).with_name(Path(file).stem + ".calls.jsonl")


class CallBook:
    """What the calls file says, read as it grows (it is only appended to)."""

    def __init__(self, tournament_file: Path) -> None:
        self.path = calls_path(tournament_file)
        self.issued: dict[str, Pairing] = {}  # every pairing id called
        self.latest: dict[str, Pairing] = {}  # match -> its latest call
        self.confirmed: set[str] = set()  # result ids the director has confirmed
        self.begun: set[str] = set()  # pairing ids whose table has begun the match
        self.calls = 0  # pairings read so far (a series' next game: the same id again)
        self._read = 0  # bytes read so far
        self._lines = 0  # whole lines read so far (a skipped one is named by its number)

    def read(self) -> list[Pairing]:
        """The file's new whole lines, if it has grown (a line being written is read next
        time); the pairings among them, in order."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return []
        if size < self._read:  # (replaced by a shorter one: read it whole again)
            self._read = self._lines = 0
            for kept in (self.issued, self.latest, self.confirmed, self.begun):
                kept.clear()
            self.calls = 0
        if size == self._read:
            return []
        with open(self.path, "rb") as stream:
            stream.seek(self._read)
            data = stream.read(size - self._read)
        whole = data[: data.rfind(b"\n") + 1]
        self._read += len(whole)
        new = []
        for raw in whole.splitlines():
            self._lines += 1
            if self._mark(raw):
                continue
            try:
                p = parse_pairing(raw)
            except BadMessage as exc:  # (a call no box could take, one from before a check)
                log.warning("%s:%d: not a call (%s): skipped", self.path, self._lines, exc)
                continue
            self.issued[p.id] = self.latest[p.match] = p
            self.calls += 1
            new.append(p)
        return new

    def _mark(self, raw: bytes) -> bool:
        """Whether the line is a mark (then taken)."""
        try:
            data = json.loads(raw)
        except ValueError:
            return False
        if not isinstance(data, dict) or len(data) != 1 or next(iter(data)) not in MARKS:
            return False
        ((mark, value),) = data.items()
        value = str(value)[:64]
        if mark == "confirmed":
            self.confirmed.add(value)
        elif mark == "begun":
            self.begun.add(value)
        else:
            self.begun.discard(value)
        return True

    def write(self, *entries: Pairing | dict[str, str]) -> None:
        """Append pairings and marks in one write (desks append together); `read` takes
        them in, with whatever another desk wrote before."""
        lines = [
            (e.to_json().decode() if isinstance(e, Pairing) else json.dumps(e)) + "\n"
            for e in entries
        ]
        with open(self.path, "a", encoding="utf-8") as stream:
            stream.write("".join(lines))

    def under_way(self) -> dict[str, str]:
        """match -> why it counts as begun: its latest call is being played at its table."""
        return {
            match: f"under way at its table (called in round {p.round})"
            for match, p in self.latest.items()
            if p.id in self.begun
        }
