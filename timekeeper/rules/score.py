"""The score: every goal with its time and, if given, its scorer — in every profile. It is a
record, not a rule signal: no cue sounds for it unless a pack has a `goal` cue. Rules read
it: a goal in a sudden death ends the match, an overtime is played only on a draw, and a
replay from the start keeps it (ITHF 4.5). Where a profile turns it on (ice-hockey practice;
ball hockey's rule 30 d keeps every penalty being served), a power-play goal ends a running
minor of the short-handed team (`power_play_goal_ends_minor`).

Beside the goals it keeps the shoot-out's score of a profile without a penalty box (Polish
disc hockey), so that its shoot-out too ends by itself once decided; a ball-hockey match
keeps that score with its penalties (`StoppedTime`), as before.

Plain data (`to_dict`/`from_dict`), so that the journal can keep it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from timekeeper.rules.penalties import RUNNING, TEAMS, Penalty, PenaltyBox
from timekeeper.rules.shootout import ShootoutScore

MAX_PLAYER = 16  # characters of a scorer's number or name kept
MAX_GOALS = 99  # per team and match: more is a stuck key or a flood, never hockey


@dataclass(frozen=True)
class Goal:
    team: str  # home | away
    period: int  # 1-based part of the match (as on the status line)
    play_time: float  # of that part, when the goal was entered
    player: str = ""
    # a power-play goal: the short-handed team's penalties as they were before it ended a
    # minor, so that undo-goal can give the minor back
    released: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        """What `ctl status` shows of it."""
        return {
            "team": self.team,
            "period": self.period,
            "play_time": self.play_time,
            "player": self.player,
        }


@dataclass
class Tally:
    goals: list[Goal] = field(default_factory=list)
    shootout: ShootoutScore | None = None  # profiles without a penalty box only

    def add(
        self,
        team: str,
        period: int,
        play_time: float,
        player: str = "",
        released: dict[str, Any] | None = None,
    ) -> Goal:
        goal = Goal(team, period, round(play_time, 3), player[:MAX_PLAYER], released)
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "goals": [asdict(g) for g in self.goals],
            "shootout": self.shootout.to_dict() if self.shootout else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], shootout: ShootoutScore | None = None) -> Tally:
        """`shootout`: the fresh score to fill from the data (None: the profile keeps none)."""
        goals = []
        for g in data.get("goals") or []:
            if g.get("team") not in TEAMS:
                raise ValueError(f"a goal of an unknown team: {g!r}")
            released = g.get("released")
            goals.append(
                Goal(
                    g["team"],
                    int(g["period"]),
                    float(g["play_time"]),
                    str(g.get("player", ""))[:MAX_PLAYER],
                    released if isinstance(released, dict) else None,
                )
            )
        saved = data.get("shootout")
        if shootout is not None and saved:
            shootout = ShootoutScore.from_dict(saved)
        return cls(goals, shootout)


def power_play_goal(
    box: PenaltyBox, scorer: str, play: float
) -> tuple[Penalty, dict[str, Any]] | None:
    """A goal by `scorer` at play time `play`: if the other team had fewer players on the
    field, its running minor with the least time left ends (`PenaltyBox.release`). Returns
    that penalty and what `give_back` needs to undo it; None if no minor ended."""
    against = short_handed(box, scorer)
    if against is None:
        return None
    before = [asdict(p) for p in box.penalties if p.team == against]
    ended = box.release(against, play)
    if ended is None:
        return None
    return ended, {"team": against, "penalties": before}


def give_back(box: PenaltyBox, released: dict[str, Any], play: float) -> bool:
    """Undo a power-play goal's release: the team's penalties go back to where they were
    before it (their time running on as if never ended), provided that none of them was
    entered, removed or served since; False (nothing changed) otherwise."""
    team, before = released["team"], released["penalties"]
    ids_then = {p["id"] for p in before}
    ids_now = {p.id for p in box.penalties if p.team == team}
    if not ids_now <= ids_then or len(ids_then - ids_now) > 1:
        return False
    others = [p for p in box.penalties if p.team != team]
    restored = [
        Penalty(**{**p, "kinds": tuple(p["kinds"]), "segments": tuple(p["segments"])})
        for p in before
    ]
    box.penalties = sorted(others + restored, key=lambda p: p.id)
    box.expire(play)  # whatever was served meanwhile ends now, silently (play is stopped)
    return True


def short_handed(box: PenaltyBox, scorer: str) -> str | None:
    """The team a goal by `scorer` was scored against while it had fewer players on the
    field (more penalties holding places), or None: the scorer was not on a power play."""
    other = TEAMS[1 - TEAMS.index(scorer)]
    if len(box.of(other, RUNNING)) > len(box.of(scorer, RUNNING)):
        return other
    return None
