"""The ledger's events, one frozen class a kind: the draw, a result (or its correction), a
replay ordered, a lot drawn. `from_dict` and each `to_dict` are the one place that knows the
JSON lines on disk; their shape is the one the ledger has always had, so every ledger written
before these classes existed reads unchanged, and an event read writes back the same line (a
field not every line has is written only when it has a value: `rules` and `time` of the draw,
`corrects` and `source` of a result)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from timekeeper.rules.series import DECIDED
from timekeeper.tournament import plan
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.plan import Place
from timekeeper.tournament.results import Result
from timekeeper.tournament.schedule import GroupMatch, Slot
from timekeeper.tournament.series import BEST_OF, MAX_GAMES

JSON = dict[str, Any]
MAX_TEXT = 200  # a name, an id, a time stamp (the file's names are shorter: spec.py)
MAX_REASON = 500  # a correction's or a replay's reason (clerk.py refuses a longer one)
MAX_NUMBER = 10**9  # a seed, a round
MAX_ITEMS = 100_000  # a list in a draw (the ledger's line limit comes first)
MAX_SCORE = 99  # a side's goals as typed (results.py: two digits)
MAX_GOALS = MAX_SCORE + 100  # a forfeit: the rule set's goals (at most 100) plus the score
RESULT_FIELDS = ("home", "away", "decided", "at_fault", "at_forfeit")
MATCH_KEYS = ("id", "group", "home", "away", "circle")
NODE_KEYS = ("id", "name", "home", "away", "level", "places", "final", "best_of")
DRAW_KEYS = (
    "event",
    "n",
    "seed",
    "method",
    "groups",
    "order",
    "matches",
    "knockout",
    "slots",
    "rules",
    "time",
    "later",
    "ranking",
    "ranking_date",
)
RESULT_KEYS = (
    "event",
    "n",
    "match",
    "round",
    "table",
    "result",
    "reason",
    "time",
    "corrects",
    "source",
    "game",
    "walkover",
)
REPLAY_KEYS = ("event", "n", "match", "round", "table", "reason", "time", "voids")
LOT_KEYS = ("event", "n", "group", "order", "how", "seed", "time")
WITHDRAW_KEYS = ("event", "n", "player", "reason", "time")


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
    # a staged day's final and placement groups: name -> (seats, carry); on disk
    # name -> {"seats": ["2/1", …], "carry": bool}
    later: Mapping[str, Later] | None = None
    # the ranking list's line of each ranked player: name -> {rank, id, name, club, nation}
    ranking: Mapping[str, Mapping[str, Any]] | None = None
    ranking_date: str | None = None  # the ITHF ranking's date, YYYY-MM-DD (its title's)

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
            out["later"] = {
                g: {"seats": [plan.text(s) for s in v.seats], "carry": v.carry}
                for g, v in self.later.items()
            }
        if self.ranking:
            out["ranking"] = {p: dict(v) for p, v in self.ranking.items()}
        if self.ranking_date is not None:
            out["ranking_date"] = self.ranking_date
        return out

    @classmethod
    def from_dict(cls, data: JSON) -> DrawEvent:
        f = Fields(data, "", DRAW_KEYS)
        groups = f.mapping("groups")
        matches = [Fields(m, f"matches[{i}]", MATCH_KEYS) for i, m in enumerate(f.items("matches"))]
        nodes = [Fields(k, f"knockout[{i}]", NODE_KEYS) for i, k in enumerate(f.items("knockout"))]
        later = _later(f)
        names = [*groups, *(later or {})]
        slots = []
        for i, slot in enumerate(f.items("slots")):
            if not isinstance(slot, list) or len(slot) != 3:
                raise EntryError(f"slots[{i}]", f"must be [round, table, match], not {shown(slot)}")
            at = Fields(dict(zip(("round", "table", "match"), slot, strict=True)), f"slots[{i}]")
            slots.append(Slot(at.whole("round", 1), at.text("table"), at.text("match")))
        return cls(
            f.whole("seed", None),
            f.choice("method", ("random", "pots", "snake", "hand")),
            {Fields.key("groups", g): Fields(groups, "groups").texts(g) for g in groups},
            f.texts("order"),
            tuple(
                GroupMatch(
                    m.text("id"),
                    m.text("group"),
                    m.text("home"),
                    m.text("away"),
                    m.whole("circle", 1),
                )
                for m in matches
            ),
            tuple(
                Node(
                    k.text("id"),
                    k.text("name"),
                    _seat(k, "home", names),
                    _seat(k, "away", names),
                    k.whole("level", 0),
                    k.pair("places", 1, MAX_ITEMS),
                    k.flag("final"),
                    _best_of(k),
                )
                for k in nodes
            ),
            tuple(slots),
            f.optional_mapping("rules"),
            f.optional_text("time"),
            f.whole("n", 0),
            later,
            _mappings(f, "ranking"),
            f.optional_text("ranking_date"),
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
        f = Fields(data, "", RESULT_KEYS)
        match, number, table = f.text("match"), f.whole("round", 1), f.text("table")
        result = read_result(f, "result") or Result(0, 0)  # (never None: not optional)
        game = None if data.get("game") is None else f.whole("game", 1, MAX_GAMES)
        walkover = f.flag("walkover")
        if walkover and (game is None or result.decided != "forfeit"):
            raise EntryError("walkover", "only a series' game forfeited gives the series")
        return cls(
            match,
            number,
            table,
            result,
            f.optional_text("reason", MAX_REASON),
            read_result(f, "corrects", optional=True),
            f.optional_text("source"),
            f.optional_text("time"),
            f.whole("n", 0),
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
        f = Fields(data, "", REPLAY_KEYS)
        return cls(
            f.text("match"),
            f.whole("round", 1),
            f.text("table"),
            f.text("reason", MAX_REASON),
            read_result(f, "voids", optional=True),
            f.optional_text("time"),
            f.whole("n", 0),
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
        f = Fields(data, "", LOT_KEYS)
        return cls(
            f.text("group"),
            f.texts("order"),
            (f.optional_text("how") or "") if data.get("how") != "" else "",
            None if data.get("seed") is None else f.whole("seed", None),
            f.optional_text("time"),
            f.whole("n", 0),
        )

    def text(self) -> str:
        return f"lot group {self.group} ({self.how}): {' > '.join(self.order)}"


@dataclass(frozen=True)
class WithdrawEvent:
    """A player leaves (or misses the rest, Radegast): remembered, so that every match still
    to play, the knock-out's they reach included, is forfeited (state.py works them out)."""

    kind: ClassVar[str] = "withdraw"
    player: str
    reason: str
    time: str | None = None
    n: int = 0

    def to_dict(self) -> JSON:
        return {
            "event": self.kind,
            "n": self.n,
            "player": self.player,
            "reason": self.reason,
            "time": self.time,
        }

    @classmethod
    def from_dict(cls, data: JSON) -> WithdrawEvent:
        f = Fields(data, "", WITHDRAW_KEYS)
        return cls(
            f.text("player"),
            f.text("reason", MAX_REASON),
            f.optional_text("time"),
            f.whole("n", 0),
        )

    def text(self) -> str:
        return f"withdrew: {self.player} ({self.reason})"


Event = DrawEvent | ResultEvent | ReplayEvent | LotEvent | WithdrawEvent
KINDS: dict[str, type[Event]] = {
    c.kind: c for c in (DrawEvent, ResultEvent, ReplayEvent, LotEvent, WithdrawEvent)
}


def from_dict(data: JSON) -> Event:
    """One ledger line's event, every field read into its type and range: an EntryError
    names the field and says what is wrong with it."""
    if not isinstance(data, dict):
        raise EntryError("entry", f"must be a mapping of fields, not {shown(data)}")
    name = data.get("event")
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise EntryError("event", f"one of {', '.join(KINDS)}, not {shown(data.get('event'))}")
    return kind.from_dict(data)


def _node(k: Node) -> JSON:
    """A node's line; `best_of` only for a series (a draw without one reads as before)."""
    out = {
        **asdict(k),
        "home": plan.text(k.home),
        "away": plan.text(k.away),
        "places": list(k.places) if k.places else None,
    }
    if k.best_of == 1:
        del out["best_of"]
    return out


def _best_of(k: Fields) -> int:
    """A node's series length: 1 (a single match, left out) or 3, 5, 7, 9."""
    if k.data.get("best_of") is None:
        return 1
    n = k.whole("best_of", 1, max(BEST_OF))
    if n not in BEST_OF:
        raise EntryError(k.field("best_of"), f"1, 3, 5, 7 or 9, not {n}")
    return n


@dataclass(frozen=True)
class Later:
    """A final or placement group as the draw keeps it: its seats, whether it carries."""

    seats: tuple[Place, ...]
    carry: bool


def _later(f: Fields) -> dict[str, Later] | None:
    """The draw's final and placement groups, their seats read into places once."""
    value = _mappings(f, "later")
    if value is None:
        return None
    out: dict[str, Later] = {}
    for name in value:
        g = Fields(value[name], f"later.{name}", ("seats", "carry"))
        seats: list[Place] = []
        for i, text in enumerate(g.texts("seats")):
            seat = _read_seat(text, f"later.{name}.seats[{i}]", ())
            if not isinstance(seat, Place) or not seat.group.isdigit():
                raise EntryError(
                    f"later.{name}.seats[{i}]", f"{shown(text)} is no basic group's place"
                )
            seats.append(seat)
        out[name] = Later(tuple(seats), g.flag("carry"))
    return out


def _seat(k: Fields, key: str, groups: list[str]) -> plan.Seat:
    return _read_seat(k.text(key), k.field(key), groups)


def _read_seat(text: str, field: str, groups: list[str] | tuple[()]) -> plan.Seat:
    """A seat's text as the ledger writes it, read once (plan.read)."""
    try:
        return plan.read(text, groups)
    except ValueError:
        raise EntryError(field, f"{shown(text)} names no side there is") from None


def _mappings(f: Fields, key: str) -> dict[str, Any] | None:
    """A mapping of mappings (a staged day's later groups, the ranking's lines)."""
    value = f.optional_mapping(key)
    if value is None:
        return None
    for name, item in value.items():
        Fields.key(f.field(key), name)
        if not isinstance(item, dict):
            raise EntryError(f"{f.field(key)}.{name}", f"must be a mapping, not {shown(item)}")
    return value


class EntryError(ValueError):
    """A ledger entry the tournament cannot take: the field and what is wrong with it (the
    ledger adds its file:line)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def shown(value: object) -> str:
    """A value as an error quotes it, cut short (a hand-edited line may hold anything)."""
    text = json.dumps(value, ensure_ascii=False) if _plain(value) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _plain(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class Fields:
    """One entry's fields (or those of a part of it), each read into its type and range;
    a field not known to the entry, missing or out of range is an EntryError naming it."""

    def __init__(self, data: object, name: str, keys: tuple[str, ...] | None = None) -> None:
        if not isinstance(data, dict):
            raise EntryError(name or "entry", f"must be a mapping of fields, not {shown(data)}")
        self.data: dict[str, Any] = data
        self.name = name
        unknown = [k for k in data if keys is not None and k not in keys]
        if unknown:
            raise EntryError(
                self.field(unknown[0]), f"an unknown field (known: {', '.join(keys or ())})"
            )

    @staticmethod
    def key(name: str, key: object) -> str:
        if not isinstance(key, str) or not 0 < len(key) <= MAX_TEXT:
            raise EntryError(name, f"a name of 1 to {MAX_TEXT} characters, not {shown(key)}")
        return key

    def field(self, key: str) -> str:
        return f"{self.name}.{key}" if self.name else key

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise EntryError(self.field(key), "missing")
        return self.data[key]

    def text(self, key: str, most: int = MAX_TEXT) -> str:
        value = self._get(key)
        if not isinstance(value, str):
            raise EntryError(self.field(key), f"must be text, not {shown(value)}")
        if not value.strip() or len(value) > most:
            raise EntryError(self.field(key), f"text of 1 to {most} characters, please")
        return value

    def optional_text(self, key: str, most: int = MAX_TEXT) -> str | None:
        return None if self.data.get(key) is None else self.text(key, most)

    def whole(self, key: str, least: int | None, most: int = MAX_NUMBER) -> int:
        value = self._get(key)
        low = -MAX_NUMBER if least is None else least
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= most:
            raise EntryError(
                self.field(key), f"must be a whole number from {low} to {most}, not {shown(value)}"
            )
        return value

    def flag(self, key: str) -> bool:
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise EntryError(self.field(key), f"must be true or false, not {shown(value)}")
        return value

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self._get(key)
        if value not in choices:
            raise EntryError(self.field(key), f"one of {', '.join(choices)}, not {shown(value)}")
        return str(value)

    def items(self, key: str) -> list[Any]:
        value = self._get(key)
        if not isinstance(value, list):
            raise EntryError(self.field(key), f"must be a list, not {shown(value)}")
        if len(value) > MAX_ITEMS:
            raise EntryError(self.field(key), f"at most {MAX_ITEMS} items (got {len(value)})")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        """A list of different names."""
        value = self.items(key)
        for i, item in enumerate(value):
            Fields.key(f"{self.field(key)}[{i}]", item)
        if len(set(value)) != len(value):
            twice = next(v for i, v in enumerate(value) if v in value[:i])
            raise EntryError(self.field(key), f"{shown(twice)} is named twice")
        return tuple(value)

    def mapping(self, key: str) -> dict[str, Any]:
        value = self._get(key)
        if not isinstance(value, dict):
            raise EntryError(self.field(key), f"must be a mapping, not {shown(value)}")
        return value

    def optional_mapping(self, key: str) -> dict[str, Any] | None:
        return None if self.data.get(key) is None else self.mapping(key)

    def pair(self, key: str, least: int, most: int) -> tuple[int, int] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != 2:
            raise EntryError(self.field(key), f"must be two whole numbers, not {shown(value)}")
        both = Fields(dict(zip(("0", "1"), value, strict=True)), self.field(key))
        return both.whole("0", least, most), both.whole("1", least, most)


def read_result(f: Fields, key: str, optional: bool = False) -> Result | None:
    """A result's fields, each in its range and agreeing with each other (a forfeit names
    the side at fault; only a forfeit does); whether the rule set takes it is the fold's."""
    if optional and f.data.get(key) is None:
        return None
    r = Fields(f.mapping(key), f.field(key), RESULT_FIELDS)
    decided = r.choice("decided", DECIDED) if "decided" in r.data else "regulation"
    forfeit = decided == "forfeit"
    if forfeit:
        at_fault: str | None = r.choice("at_fault", ("home", "away"))
    elif r.data.get("at_fault") is not None:
        raise EntryError(r.field("at_fault"), f"only a forfeit has a side at fault ({decided})")
    else:
        at_fault = None
    if r.data.get("at_forfeit") is not None and not forfeit:
        raise EntryError(r.field("at_forfeit"), "only a forfeit has a score at that moment")
    return Result(
        r.whole("home", 0, MAX_GOALS if forfeit else MAX_SCORE),
        r.whole("away", 0, MAX_GOALS if forfeit else MAX_SCORE),
        decided,
        at_fault,
        r.pair("at_forfeit", 0, MAX_SCORE),
    )
