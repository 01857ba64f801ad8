"""The result message: a box tells the desk how its match ended — the score, how it was
decided, the goals (time and player) and the penalties — on `timekeeper/HALL/TABLE/result`,
retained (a desk that starts later still finds it), with the id of the pairing it answers,
so that the desk applies it once however often it arrives.

Made from the box's finished status (`from_status`, the one status: `Status.to_dict()`, whose
`decided` the engine says from the profile's typed parts);
checked on the desk like any bus message: a size, a depth, lengths and ranges."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from timekeeper.hall.bus.messages import BadMessage, topic
from timekeeper.hall.bus.pairing import MAX_TEXT, Pairing, parse_pairing
from timekeeper.rules.decision import DECISIONS

MAX_RESULT = 4000  # bytes: under the broker's 4 KB packet limit; 40 goals are about 3 KB
MAX_DEPTH = 3  # {"goals": [{"team": …}]}: nothing deeper is ever sent
MAX_GOALS = 198  # 99 a side (the engine's own limit)
MAX_PENALTIES = 60
FIELDS = ("pairing", "table", "score", "decided", "goals", "penalties", "finished", "confirmed")
OPTIONAL = ("game",)  # sent only for a game of a series: which game of it this result is


def result_topic(hall: str, table: str) -> str:
    return topic(hall, table, "result")


@dataclass(frozen=True)
class MatchResult:
    pairing: Pairing  # the match it answers (its id is the result's id)
    table: str
    score: tuple[int, int]  # home, away; a shoot-out's winner with one goal more
    decided: str  # one of DECISIONS (rules/decision.py: the engine's own words)
    goals: tuple[dict, ...]  # {"team", "period", "play_time", "player"}
    penalties: tuple[dict, ...]  # {"team", "kinds", "player"}
    finished: float  # the box's wall clock when it was made
    confirmed: bool = False  # the table's operator has confirmed it (`ctl result confirm`)
    game: int | None = None  # the series' game it ends (its pairing's); None: a single match

    @property
    def id(self) -> str:
        return self.pairing.id

    @property
    def series_game(self) -> int | None:
        """The series' game it ends (its own `game`, else its pairing's); None: one match
        (only a series' result names a game: `parse_result`, `from_status`)."""
        return self.game or self.pairing.series_game

    @property
    def score_text(self) -> str:
        return f"{self.score[0]}:{self.score[1]}"

    def to_json(self) -> bytes:
        body = asdict(self)
        body["pairing"] = json.loads(self.pairing.to_json())
        body["score"] = list(self.score)
        if self.game is None:
            del body["game"]
        return json.dumps(body, ensure_ascii=False).encode()


def from_status(pairing: Pairing, table: str, status: dict, finished: float) -> MatchResult:
    """The result of a finished match (a series' game: the pairing's), from the box's status."""
    game = pairing.series_game
    score = status.get("score") or {}
    home, away = int(score.get("home", 0)), int(score.get("away", 0))
    attempts = status.get("shootout_attempts") or []
    # the engine's own fact (the part it ended in: rules/reporting.py), never a part's name
    decided = status.get("decided") or "regulation"
    if decided == "shootout":
        scored = {
            side: sum(1 for a in attempts if a.get("team") == side and a.get("goal"))
            for side in ("home", "away")
        }
        if home == away and scored["home"] != scored["away"]:
            home, away = (home + 1, away) if scored["home"] > scored["away"] else (home, away + 1)
    goals = tuple(
        {
            "team": g.get("team"),
            "period": int(g.get("period", 0)),
            "play_time": round(float(g.get("play_time", 0.0)), 3),
            "player": str(g.get("player", ""))[:16],
        }
        for g in (status.get("goals") or [])[:MAX_GOALS]
    )
    penalties = tuple(
        {
            "team": team,
            "kinds": str(p.get("kinds", ""))[:32],
            "player": str(p.get("player", ""))[:16],
        }
        for team, side in (status.get("teams") or {}).items()
        for p in (side.get("penalties") or [])
    )[:MAX_PENALTIES]
    result = MatchResult(
        pairing, table, (home, away), decided, goals, penalties, finished, game=game
    )
    while len(result.to_json()) > MAX_RESULT and (result.goals or result.penalties):
        # (a flood of goals: the score stands, the details that do not fit are left out)
        result = MatchResult(
            pairing,
            table,
            (home, away),
            decided,
            result.goals[:-1] if result.goals else (),
            result.penalties[:-1],
            finished,
            game=game,
        )
    return result


def _depth(value: object, level: int = 0) -> int:
    if isinstance(value, dict):
        return max([level + 1, *(_depth(v, level + 1) for v in value.values())])
    if isinstance(value, list):
        return max([level + 1, *(_depth(v, level + 1) for v in value)])
    return level


def parse_result(payload: bytes) -> MatchResult:
    """Check and parse one result; BadMessage says what is wrong with it."""
    if len(payload) > MAX_RESULT:
        raise BadMessage(f"result of {len(payload)} bytes (at most {MAX_RESULT})")
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BadMessage("a result is a JSON object") from None
    if not isinstance(data, dict) or not set(FIELDS) <= set(data) <= {*FIELDS, *OPTIONAL}:
        raise BadMessage(
            f"a result has exactly the fields {', '.join(FIELDS)} (and a series' game: game)"
        )
    if _depth(data) > MAX_DEPTH:
        raise BadMessage(f"a result is nested at most {MAX_DEPTH} deep")
    pairing = parse_pairing(json.dumps(data["pairing"]).encode())
    table = data["table"]
    if not isinstance(table, str) or not 1 <= len(table) <= 32:
        raise BadMessage("table must be a table's name")
    score = data["score"]
    if (
        not isinstance(score, list)
        or len(score) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 99 for n in score)
    ):
        raise BadMessage("score must be [home, away], each 0-99")
    if data["decided"] not in DECISIONS:
        raise BadMessage(f"decided is one of {', '.join(DECISIONS)}")
    goals, penalties = data["goals"], data["penalties"]
    if not isinstance(goals, list) or len(goals) > MAX_GOALS or not all(_goal(g) for g in goals):
        raise BadMessage(f"goals: at most {MAX_GOALS} of {{team, period, play_time, player}}")
    if (
        not isinstance(penalties, list)
        or len(penalties) > MAX_PENALTIES
        or not all(_penalty(p) for p in penalties)
    ):
        raise BadMessage(f"penalties: at most {MAX_PENALTIES} of {{team, kinds, player}}")
    finished = data["finished"]
    if (
        isinstance(finished, bool)
        or not isinstance(finished, int | float)
        or not math.isfinite(finished)
    ):
        raise BadMessage("finished must be a number")
    if not isinstance(data["confirmed"], bool):
        raise BadMessage("confirmed must be true or false")
    game = data.get("game")
    if "game" in data and (
        isinstance(game, bool)
        or not isinstance(game, int)
        or not pairing.series
        or not 1 <= game <= pairing.best_of
    ):
        raise BadMessage("game must be 1-best_of, and only for a series' pairing")
    return MatchResult(
        pairing,
        table,
        (score[0], score[1]),
        data["decided"],
        tuple(goals),
        tuple(penalties),
        float(finished),
        data["confirmed"],
        game,
    )


def _goal(g: object) -> bool:
    return (
        isinstance(g, dict)
        and set(g) == {"team", "period", "play_time", "player"}
        and g["team"] in ("home", "away")
        and isinstance(g["period"], int)
        and 0 <= g["period"] <= 99
        and isinstance(g["play_time"], int | float)
        and math.isfinite(g["play_time"])
        and isinstance(g["player"], str)
        and len(g["player"]) <= MAX_TEXT
    )


def _penalty(p: object) -> bool:
    return (
        isinstance(p, dict)
        and set(p) == {"team", "kinds", "player"}
        and p["team"] in ("home", "away")
        and isinstance(p["kinds"], str)
        and len(p["kinds"]) <= MAX_TEXT
        and isinstance(p["player"], str)
        and len(p["player"]) <= MAX_TEXT
    )
