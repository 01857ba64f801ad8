"""The score: every goal with its time and, if given, its scorer — in every profile. It is a
record, not a rule signal: no cue sounds for it unless a pack has a `goal` cue. Two rules
do read it: a ball-hockey power-play goal ends a running minor of the short-handed team
(`power_play_goal_ends_minor`), and a replay from the start keeps it (ITHF 4.5).

Beside the goals it keeps the shoot-out's score of a profile without a penalty box (Polish
disc hockey), so that its shoot-out too ends by itself once decided; a ball-hockey match
keeps that score with its penalties (`StoppedTime`), as before.

Plain data (`to_dict`/`from_dict`), so that the journal can keep it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from timekeeper.rules.penalties import RUNNING, TEAMS, PenaltyBox
from timekeeper.rules.shootout import ShootoutScore

MAX_PLAYER = 16  # characters of a scorer's number or name kept


@dataclass(frozen=True)
class Goal:
    team: str  # home | away
    period: int  # 1-based part of the match (as on the status line)
    play_time: float  # of that part, when the goal was entered
    player: str = ""


@dataclass
class Tally:
    goals: list[Goal] = field(default_factory=list)
    shootout: ShootoutScore | None = None  # profiles without a penalty box only

    def add(self, team: str, period: int, play_time: float, player: str = "") -> Goal:
        goal = Goal(team, period, round(play_time, 3), player[:MAX_PLAYER])
        self.goals.append(goal)
        return goal

    def undo(self, team: str) -> Goal | None:
        """Take back the team's latest goal (None: it has none)."""
        for i in range(len(self.goals) - 1, -1, -1):
            if self.goals[i].team == team:
                return self.goals.pop(i)
        return None

    def score(self) -> dict[str, int]:
        return {team: sum(1 for g in self.goals if g.team == team) for team in TEAMS}

    def text(self) -> str:
        """`2:1`, home first."""
        score = self.score()
        return f"{score['home']}:{score['away']}"

    def to_dict(self) -> dict:
        return {"goals": [asdict(g) for g in self.goals],
                "shootout": self.shootout.to_dict() if self.shootout else None}

    @classmethod
    def from_dict(cls, data: dict, shootout: ShootoutScore | None = None) -> Tally:
        """`shootout`: the fresh score to fill from the data (None: the profile keeps none)."""
        goals = []
        for g in data.get("goals") or []:
            if g.get("team") not in TEAMS:
                raise ValueError(f"a goal of an unknown team: {g!r}")
            goals.append(Goal(g["team"], int(g["period"]), float(g["play_time"]),
                              str(g.get("player", ""))[:MAX_PLAYER]))
        saved = data.get("shootout")
        if shootout is not None and saved:
            shootout = ShootoutScore.from_dict(saved)
        return cls(goals, shootout)


def short_handed(box: PenaltyBox, scorer: str) -> str | None:
    """The team a goal by `scorer` was scored against while it had fewer players on the
    field (more penalties holding places), or None: the scorer was not on a power play."""
    other = TEAMS[1 - TEAMS.index(scorer)]
    if len(box.of(other, RUNNING)) > len(box.of(scorer, RUNNING)):
        return other
    return None
