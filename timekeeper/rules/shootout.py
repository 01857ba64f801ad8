"""Shoot-out score-keeping: who took an attempt and who scored, so the engine can tell the
moment the shoot-out is decided — inside the first series as soon as one side cannot be
caught (3 each: 2:0 after two each is over), after that at the end of any series of `then`
each that one side alone won."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from timekeeper.rules.penalties import TEAMS


@dataclass
class ShootoutScore:
    first: int  # attempts each in the first series
    then: int  # attempts each in every later series
    attempts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TEAMS, 0))
    goals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TEAMS, 0))
    opener: str | None = None  # the team that shot first: the order is kept throughout
    # every attempt in order, [team, scored] (the screens show each; older journals lack it)
    sequence: list[list[Any]] = field(default_factory=list)

    def next_team(self) -> str | None:
        """Whose attempt is next (None: either, before the first)."""
        if self.opener is None:
            return None
        taken = sum(self.attempts.values())
        return self.opener if taken % 2 == 0 else _other(self.opener)

    def check(self, team: str) -> str | None:
        """Why `team` may not take the next attempt (None: it may). Teams alternate strictly
        in the order of the first attempt, and nobody shoots once it is decided."""
        if self.winner() is not None:
            return f"the shoot-out is decided ({self.text()})"
        turn = self.next_team()
        if turn is not None and team != turn:
            return f"it is {turn}'s turn ({self.text()})"
        return None

    def record(self, team: str, scored: bool) -> None:
        if self.opener is None:
            self.opener = team
        self.attempts[team] += 1
        self.goals[team] += int(scored)
        self.sequence.append([team, scored])

    def series_end(self) -> int:
        """Attempts each by the end of the series being shot."""
        end = self.first
        a, b = (self.attempts[t] for t in TEAMS)
        while max(a, b) > end or (a == b == end and self._tied()):
            end += self.then
        return end

    def winner(self) -> str | None:
        end = self.series_end()
        for team in TEAMS:
            other = _other(team)
            if self.goals[team] > self.goals[other] + (end - self.attempts[other]):
                return team
        return None

    def text(self) -> str:
        return " ".join(f"{t} {self.goals[t]}/{self.attempts[t]}" for t in TEAMS)

    def attempts_shown(self) -> list[dict[str, Any]]:
        """Each attempt in order, for the screens: {"team": "home", "goal": True}."""
        return [{"team": team, "goal": bool(scored)} for team, scored in self.sequence]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ShootoutScore:
        return cls(**data)

    def _tied(self) -> bool:
        return self.goals["home"] == self.goals["away"]


def _other(team: str) -> str:
    return TEAMS[1 - TEAMS.index(team)]
