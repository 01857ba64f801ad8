"""The pairing message: the desk tells a table the match it plays next — the round, the
match's id and stage, the names, the match profile and whether it needs a winner — on
`timekeeper/HALL/TABLE/pairing`, retained, so that a box that starts (or restarts) late still
learns its match.

Everything from the bus is hostile until checked: a pairing is small, flat (no nesting) and
every field has a type, a length and a range."""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass

from timekeeper.hall.bus.messages import BadMessage, topic
from timekeeper.rules.commands import MAX_NAME, check_name
from timekeeper.rules.series import BEST_OF, MAX_GAMES, Series, SeriesError, needed

MAX_PAIRING = 1024  # bytes: a pairing is about 250
MAX_TEXT = 48  # characters of a stage (or of a goal's or a penalty's text in a result)
# a name: as the box's engine takes a side's name (rules/commands.check_name, at most MAX_NAME
# characters), which the tournament file checks its players' names with at load
MAX_ROUND = 999
_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_MATCH = re.compile(r"[A-Za-z0-9._-]{1,16}")
_PROFILE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
FIELDS = ("id", "round", "match", "stage", "home", "away", "profile", "sent")
OPTIONAL = ("knockout",)  # sent only when true: a group pairing is as it always was
# sent only for a game of a series (best_of > 1; docs/hall.md): how many games it is played
# over, the game this pairing starts, and the games each side has won before it
SERIES = ("best_of", "game", "home_wins", "away_wins")


def pairing_topic(hall: str, table: str) -> str:
    return topic(hall, table, "pairing")


@dataclass(frozen=True)
class Pairing:
    id: str  # this call of the match (a new one if the round is called again)
    round: int
    match: str  # the tournament's match id: A.3, SF1, F …
    stage: str  # "group A", "semi-final 1" …
    home: str
    away: str
    profile: str  # the match profile the table plays it with
    sent: float  # the desk's wall clock when called
    knockout: bool = False  # the match needs a winner: decided in regulation, it is over
    best_of: int = 1  # a series of this many games (rules/series.py); 1: one match
    game: int = 1  # the series' game this pairing starts (1..best_of)
    home_wins: int = 0  # games the home side won before it
    away_wins: int = 0

    def to_json(self) -> bytes:
        body = asdict(self)
        if not self.knockout:
            del body["knockout"]
        if not self.series:
            for key in SERIES:
                del body[key]
        return json.dumps(body, ensure_ascii=False).encode()

    @property
    def sides(self) -> str:
        return f"{self.home} – {self.away}"

    @property
    def series(self) -> bool:
        """A game of a series (best of 3 … 9), not a single match."""
        return self.best_of > 1

    @property
    def series_game(self) -> int | None:
        """The game a result of this pairing names: its game; None for a single match (a
        series of one, whose result and ledger entry name no game)."""
        return self.game if self.series else None

    def called(self) -> Series:
        """The series as this pairing calls it: its game next, the wins before it."""
        return Series.called(self.best_of, self.game, self.home_wins, self.away_wins)


def parse_pairing(payload: bytes) -> Pairing:
    """Check and parse one pairing; BadMessage says what is wrong with it."""
    if len(payload) > MAX_PAIRING:
        raise BadMessage(f"pairing of {len(payload)} bytes (at most {MAX_PAIRING})")
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BadMessage("a pairing is a JSON object") from None
    if not isinstance(data, dict) or not set(FIELDS) <= set(data) <= {*FIELDS, *OPTIONAL, *SERIES}:
        raise BadMessage(
            f"a pairing has exactly the fields {', '.join(FIELDS)} "
            f"(and maybe {', '.join(OPTIONAL)}; a series' game also {', '.join(SERIES)})"
        )
    if any(isinstance(v, dict | list) for v in data.values()):  # depth 1: nothing nested
        raise BadMessage("a pairing's fields are plain values")
    if not isinstance(data["id"], str) or not _ID.fullmatch(data["id"]):
        raise BadMessage("id must be 1-64 letters, digits or ._:-")
    if not isinstance(data["match"], str) or not _MATCH.fullmatch(data["match"]):
        raise BadMessage("match must be a match id (1-16 letters, digits, ._-)")
    if not isinstance(data["profile"], str) or not _PROFILE.fullmatch(data["profile"]):
        raise BadMessage("profile must be a profile's name")
    number = data["round"]
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_ROUND:
        raise BadMessage(f"round must be 1-{MAX_ROUND}")
    stage = data["stage"]
    if not isinstance(stage, str) or len(stage) > MAX_TEXT or not stage.isprintable():
        raise BadMessage(f"stage must be text of at most {MAX_TEXT} characters")
    for key in ("home", "away"):
        if not _name(data[key]):
            raise BadMessage(
                f"{key} must be a name as the box shows it: at most {MAX_NAME} printable characters"
            )
    sent = data["sent"]
    if isinstance(sent, bool) or not isinstance(sent, int | float) or not math.isfinite(sent):
        raise BadMessage("sent must be a number")
    knockout = data.get("knockout", False)
    if not isinstance(knockout, bool):
        raise BadMessage("knockout must be true or false")
    series = _series(data)
    return Pairing(
        data["id"],
        number,
        data["match"],
        data["stage"],
        data["home"],
        data["away"],
        data["profile"],
        float(sent),
        knockout,
        *series,
    )


def _name(value: object) -> bool:
    try:
        return isinstance(value, str) and check_name(value) == value
    except ValueError:
        return False


def _series(data: dict) -> tuple[int, int, int, int]:
    """A series' four fields (all or none): best of an odd 3..9, the game 1..best_of, and each
    side's wins before it, neither already enough to have won."""
    given = [key for key in SERIES if key in data]
    if not given:
        return (1, 1, 0, 0)  # (a single match)
    if len(given) != len(SERIES):
        raise BadMessage(f"a series' pairing has all of {', '.join(SERIES)}")
    values = [data[key] for key in SERIES]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise BadMessage(f"{', '.join(SERIES)} must be whole numbers")
    best_of, game, home, away = values
    if best_of not in BEST_OF or best_of == 1:
        raise BadMessage(f"best_of must be odd, 3-{MAX_GAMES}")
    if not 1 <= game <= best_of:
        raise BadMessage(f"game must be 1-{best_of} (best_of)")
    if not (0 <= home < needed(best_of) and 0 <= away < needed(best_of)):
        raise BadMessage(
            f"home_wins and away_wins must be under {needed(best_of)} each "
            "(the series is not yet won)"
        )
    try:
        Series.called(best_of, game, home, away)
    except SeriesError as exc:
        raise BadMessage(f"game: {exc}") from None
    return (best_of, game, home, away)
