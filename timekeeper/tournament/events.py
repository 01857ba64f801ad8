"""The ledger's events, one frozen class a kind: the draw, a result (or its correction), a
replay ordered, a lot drawn. `from_dict` and each `to_dict` are the one place that knows the
JSON lines on disk; their shape is the one the ledger has always had, so every ledger written
before these classes existed reads unchanged, and an event read writes back the same line (a
field not every line has is written only when it has a value: `rules` and `time` of the draw,
`corrects` and `source` of a result)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from timekeeper.tournament.bracket import Node
from timekeeper.tournament.results import Result
from timekeeper.tournament.schedule import GroupMatch, Slot
from timekeeper.tournament.series import BEST_OF, MAX_GAMES

JSON = dict[str, Any]


@dataclass(frozen=True)
class DrawEvent:
    """The draw: the groups (or the knock-out's seed order), every group match, the tree and
    every match's round and table — all fixed now, never laid out again."""

    kind: ClassVar[str] = "draw"
    seed: int
    method: str  # "random" or "seeded pots"
    groups: Mapping[str, tuple[str, ...]]
    order: tuple[str, ...]  # every player, in the drawn order
    matches: tuple[GroupMatch, ...]
    knockout: tuple[Node, ...]
    slots: tuple[Slot, ...]
    rules: Mapping[str, Any] | None = None  # the scoring drawn under (None: not kept yet then)
    time: str | None = None
    n: int = 0  # the ledger's number for it (0: not written yet)
    # a staged day's final and placement groups: name -> {"seats": ["2/1", …], "carry": bool}
    later: Mapping[str, Mapping[str, Any]] | None = None
    # the ranking list's line of each ranked player: name -> {rank, id, name, club, nation}
    ranking: Mapping[str, Mapping[str, Any]] | None = None

    def to_dict(self) -> JSON:
        out: JSON = {
            "event": self.kind,
            "n": self.n,
            "seed": self.seed,
            "method": self.method,
            "groups": {g: list(p) for g, p in self.groups.items()},
            "order": list(self.order),
            "matches": [asdict(m) for m in self.matches],
            "knockout": [_node(k) for k in self.knockout],
            "slots": [[s.round, s.table, s.match] for s in self.slots],
        }
        if self.rules is not None:
            out["rules"] = dict(self.rules)
        if self.time is not None:
            out["time"] = self.time
        if self.later:
            out["later"] = {g: dict(v) for g, v in self.later.items()}
        if self.ranking:
            out["ranking"] = {p: dict(v) for p, v in self.ranking.items()}
        return out

    @classmethod
    def from_dict(cls, data: JSON) -> DrawEvent:
        rules = data.get("rules")
        if rules is not None and not isinstance(rules, dict):
            raise TypeError(f"rules is {rules!r}, not a mapping")
        return cls(
            _number(data, "seed"),
            _text(data, "method"),
            {str(g): tuple(map(str, p)) for g, p in data["groups"].items()},
            tuple(map(str, data["order"])),
            tuple(GroupMatch(**m) for m in data["matches"]),
            tuple(_read_node(k) for k in data["knockout"]),
            tuple(Slot(int(r), str(t), str(m)) for r, t, m in data["slots"]),
            rules,
            _optional_text(data, "time"),
            _number(data, "n", 0),
            _optional_mapping(data, "later"),
            _optional_mapping(data, "ranking"),
        )

    def text(self) -> str:
        return f"draw ({self.method}, seed {self.seed})"


@dataclass(frozen=True)
class ResultEvent:
    """A match's result, typed at the desk or come home from its table; over an earlier one
    it is a correction, which keeps the result it replaced and the reason."""

    kind: ClassVar[str] = "result"
    match: str
    round: int
    table: str
    result: Result
    reason: str | None = None
    corrects: Result | None = None  # the result this one replaces
    source: str | None = None  # the hall's result message it came from (applied once)
    time: str | None = None
    n: int = 0
    game: int | None = None  # a series' game (1 …); None: a single match
    walkover: bool = False  # a series' game forfeited that gives the whole series

    def to_dict(self) -> JSON:
        out: JSON = {
            "event": self.kind,
            "n": self.n,
            "match": self.match,
            "round": self.round,
            "table": self.table,
            "result": self.result.to_json(),
            "reason": self.reason,
            "time": self.time,
        }
        if self.corrects is not None:
            out["corrects"] = self.corrects.to_json()
        if self.source is not None:
            out["source"] = self.source
        if self.game is not None:
            out["game"] = self.game
        if self.walkover:
            out["walkover"] = True
        return out

    @classmethod
    def from_dict(cls, data: JSON) -> ResultEvent:
        game = None if data.get("game") is None else _number(data, "game")
        if game is not None and not 1 <= game <= MAX_GAMES:
            raise ValueError(f"game is 1 to {MAX_GAMES}, not {game}")
        walkover = data.get("walkover", False)
        forfeit = (
            isinstance(data.get("result"), dict) and data["result"].get("decided") == "forfeit"
        )
        if not isinstance(walkover, bool) or (walkover and (game is None or not forfeit)):
            raise ValueError(
                f"walkover is true (a series' game forfeited) or left out, not {walkover!r}"
            )
        return cls(
            _text(data, "match"),
            _number(data, "round"),
            str(data["table"]),
            Result.from_json(data["result"]),
            _optional_text(data, "reason"),
            _optional_result(data, "corrects"),
            _optional_text(data, "source"),
            _optional_text(data, "time"),
            _number(data, "n", 0),
            game,
            walkover,
        )

    def text(self) -> str:
        r = self.result
        game = "" if self.game is None else f" game {self.game}"
        line = (
            f"{'correction' if self.corrects else 'result'} {self.match}{game}: "
            f"{r.home}:{r.away} {r.decided}{' (walkover: the series)' if self.walkover else ''}"
        )
        if self.corrects:
            line += f" (was {self.corrects.home}:{self.corrects.away}; {self.reason})"
        return line


@dataclass(frozen=True)
class ReplayEvent:
    """A replay ordered by a referee: the result, if any, set aside and kept here."""

    kind: ClassVar[str] = "replay"
    match: str
    round: int
    table: str
    reason: str
    voids: Result | None = None
    time: str | None = None
    n: int = 0

    def to_dict(self) -> JSON:
        return {
            "event": self.kind,
            "n": self.n,
            "match": self.match,
            "round": self.round,
            "table": self.table,
            "reason": self.reason,
            "time": self.time,
            "voids": self.voids.to_json() if self.voids else None,
        }

    @classmethod
    def from_dict(cls, data: JSON) -> ReplayEvent:
        return cls(
            _text(data, "match"),
            _number(data, "round"),
            str(data["table"]),
            _text(data, "reason"),
            _optional_result(data, "voids"),
            _optional_text(data, "time"),
            _number(data, "n", 0),
        )

    def text(self) -> str:
        return f"replay {self.match}: {self.reason}"


@dataclass(frozen=True)
class LotEvent:
    """The lot for a tie no criterion breaks: the order drawn, and how it was drawn."""

    kind: ClassVar[str] = "lot"
    group: str
    order: tuple[str, ...]
    how: str = ""  # "drawn by the desk", "drawn with seed 7"
    seed: int | None = None
    time: str | None = None
    n: int = 0

    def to_dict(self) -> JSON:
        return {
            "event": self.kind,
            "n": self.n,
            "group": self.group,
            "order": list(self.order),
            "how": self.how,
            "seed": self.seed,
            "time": self.time,
        }

    @classmethod
    def from_dict(cls, data: JSON) -> LotEvent:
        seed = data.get("seed")
        return cls(
            _text(data, "group"),
            tuple(map(str, data["order"])),
            str(data.get("how") or ""),
            None if seed is None else _number(data, "seed"),
            _optional_text(data, "time"),
            _number(data, "n", 0),
        )

    def text(self) -> str:
        return f"lot group {self.group} ({self.how}): {' > '.join(self.order)}"


Event = DrawEvent | ResultEvent | ReplayEvent | LotEvent
KINDS: dict[str, type[Event]] = {c.kind: c for c in (DrawEvent, ResultEvent, ReplayEvent, LotEvent)}


def from_dict(data: JSON) -> Event:
    """One ledger line's event; a KeyError, TypeError, ValueError or AttributeError says what
    is wrong with it."""
    kind = KINDS.get(str(data.get("event")))
    if kind is None:
        raise ValueError(f"event is one of {', '.join(KINDS)}, not {data.get('event')!r}")
    return kind.from_dict(data)


def _node(k: Node) -> JSON:
    """A node's line; `best_of` only for a series (a draw without one reads as before)."""
    out = {**asdict(k), "places": list(k.places) if k.places else None}
    if k.best_of == 1:
        del out["best_of"]
    return out


def _read_node(k: JSON) -> Node:
    best_of = _number(k, "best_of", 1)
    if best_of not in (1, *BEST_OF):
        raise ValueError(f"best_of is 1, 3, 5, 7 or 9, not {best_of}")
    return Node(**{**k, "places": tuple(k["places"]) if k["places"] else None})


def _text(data: JSON, key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} is {value!r}, not text")
    return value


def _optional_text(data: JSON, key: str) -> str | None:
    return None if data.get(key) is None else _text(data, key)


def _number(data: JSON, key: str, default: int | None = None) -> int:
    value = data.get(key, default) if default is not None else data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{key} is {value!r}, not a whole number")
    return value


def _optional_mapping(data: JSON, key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise TypeError(f"{key} is {value!r}, not a mapping of mappings")
    return {str(k): v for k, v in value.items()}


def _optional_result(data: JSON, key: str) -> Result | None:
    return None if data.get(key) is None else Result.from_json(data[key])
