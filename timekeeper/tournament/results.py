"""A match's result: the score, how it was decided, and a forfeit's score by the rule set.

Checked once when typed in, against the rule set and the stage (a group draw stands in one
rule set and is impossible in another; a knock-out match always has a winner), so that the
ledger holds only results the standings can use."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from timekeeper.rules.decision import ANY, EXTRA, OPTION, DecisionError, Decisions
from timekeeper.rules.series import DECIDED
from timekeeper.tournament.rulesets import RuleSet

_SCORE = re.compile(r"^\s*(\d{1,2})\s*[:\-]\s*(\d{1,2})\s*$")


class ResultError(ValueError):
    """A result the rule set cannot take; the message says why and what to type."""


@dataclass(frozen=True)
class Result:
    home: int
    away: int
    decided: str = "regulation"  # one of DECIDED
    at_fault: str | None = None  # a forfeit: the side that forfeited, home or away
    at_forfeit: tuple[int, int] | None = None  # a forfeit: the score at that moment

    @property
    def winner(self) -> str | None:
        if self.decided == "series" and self.at_fault is not None:  # a walkover
            return "away" if self.at_fault == "home" else "home"
        return None if self.home == self.away else "home" if self.home > self.away else "away"

    def text(self) -> str:
        if self.decided == "series":  # a series' result: its score in games (series.py)
            walkover = f", walkover ({self.at_fault} at fault)" if self.at_fault else ""
            return f"{self.home}:{self.away} in games{walkover}"
        suffix = {"overtime": " OT", "sudden_death": " SD", "shootout": " SO"}.get(self.decided, "")
        if self.decided == "forfeit":
            suffix = f" forfeit ({self.at_fault} at fault"
            if self.at_forfeit is not None:
                suffix += f", {self.at_forfeit[0]}:{self.at_forfeit[1]} at that moment"
            suffix += ")"
        return f"{self.home}:{self.away}{suffix}"

    def to_json(self) -> dict[str, Any]:
        return {
            "home": self.home,
            "away": self.away,
            "decided": self.decided,
            "at_fault": self.at_fault,
            "at_forfeit": list(self.at_forfeit) if self.at_forfeit else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        at = data.get("at_forfeit")
        return cls(
            int(data["home"]),
            int(data["away"]),
            str(data.get("decided", "regulation")),
            data.get("at_fault"),
            (int(at[0]), int(at[1])) if at else None,
        )


def parse_score(text: str) -> tuple[int, int]:
    found = _SCORE.match(text)
    if not found:
        raise ResultError(f"a score is HOME:AWAY, e.g. 3:1, not {text!r}")
    return int(found.group(1)), int(found.group(2))


def _pair(score: str | tuple[int, int]) -> tuple[int, int]:
    return parse_score(score) if isinstance(score, str) else score


def make(
    rules: RuleSet,
    knockout: bool,
    score: str | tuple[int, int] | None,
    decided: str = "regulation",
    at_fault: str | None = None,
    decisions: Decisions = ANY,
    written: bool = False,
) -> Result:
    """A Result the rule set accepts for a group (`knockout` False) or a knock-out match:
    `typed`, then `judge`d."""
    return judge(rules, knockout, typed(rules, score, decided, at_fault), decisions, written)


def typed(
    rules: RuleSet,
    score: str | tuple[int, int] | None,
    decided: str = "regulation",
    at_fault: str | None = None,
) -> Result:
    """The Result as typed, not judged yet. A forfeit takes the score at that moment, if the
    match had started (Radegast adds it to the 0:5 when the side not at fault led or drew);
    the others take the final score, a shoot-out's winner with one goal more (as ice hockey
    writes it: 3:2 SO). `score`: typed text, or a pair a reader checked already (a result
    message from a table): never parsed twice."""
    if decided not in DECIDED:
        raise ResultError(f"decided is one of {', '.join(DECIDED)}, not {decided!r}")
    if decided == "forfeit" or at_fault is not None:
        if at_fault not in ("home", "away"):
            raise ResultError("a forfeit names the side at fault: --forfeit home|away")
        moment = _pair(score) if score else None
        home, away = rules.forfeit_score(at_fault, *(moment or (None, None)))
        return Result(home, away, "forfeit", at_fault, moment)
    if score is None:
        raise ResultError("the score, please (e.g. 3:1)")
    home, away = _pair(score)
    return Result(home, away, decided)


def judge(
    rules: RuleSet,
    knockout: bool,
    result: Result,
    decisions: Decisions = ANY,
    written: bool = False,
) -> Result:
    """`result` if the rule set takes it for a group (`knockout` False) or a knock-out
    match, judged on its score as a pair. `decisions`: how the match's profile can be
    decided past regulation (rules/decision.py, the one check of it); `written`: a result
    read again from the ledger."""
    home, away, decided = result.home, result.away, result.decided
    if decided not in DECIDED:
        raise ResultError(f"decided is one of {', '.join(DECIDED)}, not {decided!r}")
    if decided == "forfeit":
        if result.at_fault not in ("home", "away"):
            raise ResultError("a forfeit names the side at fault: --forfeit home|away")
        moment = result.at_forfeit or (None, None)
        if (home, away) != rules.forfeit_score(result.at_fault, *moment):
            due = typed(rules, result.at_forfeit, "forfeit", result.at_fault)
            raise ResultError(f"not {rules.key}'s forfeit ({due.text()})")
        return result
    if result.at_fault is not None or result.at_forfeit is not None:
        raise ResultError(f"{decided} is no forfeit: it has no side at fault")
    if home == away:
        if knockout and decided in EXTRA:
            _check(decisions, decided, home + 1, away, written)  # an option it has, first
            option = OPTION[decided]
            raise ResultError(
                f"{home}:{away} {option} has no winner: a knock-out match decided in "
                f"{decided.replace('_', ' ')} is typed with the score at its end, the "
                f"deciding goal included (e.g. {home + 1}:{away} {option})"
            )
        if knockout:
            raise ResultError(
                f"a knock-out match has a winner: {home}:{away} needs "
                f"{decisions.past_regulation()} with the deciding goal"
            )
        if decided != "regulation":
            raise ResultError(f"{home}:{away} is a draw; overtime or a shoot-out has a winner")
        if not rules.group_draws:
            raise ResultError(
                f"a group match has no draw in {rules.key}: a {home}:{away} goes "
                f"to {decisions.past_regulation().replace(' or ', ' and ')}"
            )
    if decided in EXTRA and not knockout and rules.group_draws:
        raise ResultError(
            f"group matches in {rules.key} are not extended (a draw stands):"
            " type the score after regulation time"
        )
    _check(decisions, decided, home, away, written)
    return result


def _check(decisions: Decisions, decided: str, home: int, away: int, written: bool) -> None:
    try:
        decisions.check(decided, home, away, written)
    except DecisionError as exc:
        raise ResultError(str(exc)) from None
