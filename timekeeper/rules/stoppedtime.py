"""What a stopped-time match (ball hockey) keeps beside the game clock: the penalty box, the
time-outs, a penalty shot being taken and the shoot-out's score — all plain data
(`to_dict`/`from_dict`), so that a journal can keep it — and how it reads on the status line
and in `ctl status`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from timekeeper.rules.penalties import GAME, RUNNING, TEAMS, WAITING, PenaltyBox
from timekeeper.rules.profile import Profile
from timekeeper.rules.shootout import ShootoutScore


@dataclass(frozen=True)
class PenaltyStatus:
    id: int
    kinds: str  # "minor", "minor+minor+personal", "major+game"
    player: str
    state: str  # running | waiting | game (out for the rest of the match)
    remaining: float | None  # of the timed part; None once only the game misconduct is left


@dataclass(frozen=True)
class TeamStatus:
    penalties: list[PenaltyStatus]  # running first, then waiting, then game misconducts
    timeouts_left: int
    shootout: str  # "2/3": goals / attempts in the shoot-out ("" before it)


@dataclass
class StoppedTime:
    """A stopped-time match's own state, all plain data (`to_dict`/`from_dict`) so that it
    can be journaled: the penalty box, the time-outs and the shoot-out score."""

    box: PenaltyBox
    score: ShootoutScore | None
    timeouts_used: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TEAMS, 0))
    timeout_team: str | None = None  # whose time-out is running
    timeout_until: float | None = None  # on the caller's time base
    stoppage: int = 0  # counts the clock's stops (one time-out per stoppage, rule 26)
    timeout_stoppage: int = -1  # the stoppage in which the last time-out was taken
    penalty_shot: str | None = None  # the team taking a penalty shot (rule 15), clock stopped

    def to_dict(self) -> dict:
        out = asdict(self)
        out["box"] = self.box.to_dict()
        out["score"] = self.score.to_dict() if self.score else None
        return out

    @classmethod
    def from_dict(cls, data: dict) -> StoppedTime:
        score = data.get("score")
        return cls(**{**data, "box": PenaltyBox.from_dict(data["box"]),
                      "score": ShootoutScore.from_dict(score) if score else None})

    def status(self, profile: Profile, play: float | None, now: float,
               shootout: bool) -> dict:
        """The Status fields of a stopped-time match at `now` (`play`: the period's play time,
        None between periods)."""
        teams = {}
        for team in TEAMS:
            shown = [PenaltyStatus(p.id, "+".join(p.kinds), p.player, p.state,
                                   None if p.state == GAME else round(p.left_at(play), 3))
                     for state in (RUNNING, WAITING, GAME) for p in self.box.of(team, state)]
            left = profile.timeout.per_team - self.timeouts_used[team] if profile.timeout else 0
            score = ""
            if self.score is not None and shootout:
                score = f"{self.score.goals[team]}/{self.score.attempts[team]}"
            teams[team] = TeamStatus(shown, left, score)
        countdown = None
        if self.timeout_until is not None:
            countdown = round(max(0.0, self.timeout_until - now), 3)
        return {"teams": teams, "timeout": self.timeout_team, "timeout_countdown": countdown,
                "penalty_shot": self.penalty_shot}
