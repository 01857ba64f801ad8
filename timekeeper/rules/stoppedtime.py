"""What a stopped-time match (ball hockey) keeps beside the game clock: the penalty box, the
time-outs, a penalty shot being taken and the shoot-out's score — all plain data
(`to_dict`/`from_dict`), so that a journal can keep it —, the operator's commands that only
change it (penalties, time-outs, the penalty shot's bookkeeping), and how it reads on the
status line and in `ctl status`. The engine decides when they apply; these say whether the
match's own record allows them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from timekeeper.rules.commands import Refused
from timekeeper.rules.penalties import GAME, RUNNING, TEAMS, WAITING, PenaltyBox
from timekeeper.rules.profiletypes import Profile, Timeout
from timekeeper.rules.shootout import ShootoutScore

MAX_PENALTIES_HELD = 30  # per team at once (running, waiting, out for the match): each
# command looks at all of them, and no real match comes near it


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

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["box"] = self.box.to_dict()
        out["score"] = self.score.to_dict() if self.score else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoppedTime:
        score = data.get("score")
        return cls(
            **{
                **data,
                "box": PenaltyBox.from_dict(data["box"]),
                "score": ShootoutScore.from_dict(score) if score else None,
            }
        )

    # ------------------------------------------------------------ the penalty box

    def add_penalty(
        self,
        team: str,
        kinds: tuple[str, ...],
        lengths: dict[str, float],
        play: float | None,
        player: str,
    ) -> None:
        held = sum(1 for p in self.box.penalties if p.team == team)
        if held >= MAX_PENALTIES_HELD:
            raise Refused(
                f"{team} has {held} penalties in the box already, the most a match "
                "keeps; remove TEAM [ID] takes one entered by mistake"
            )
        self.box.add(team, kinds, lengths, play, player)

    def release(self, team: str, play: float | None) -> None:
        """A power-play goal against `team` ends its running minor."""
        if self.box.release(team, play) is None:
            raise Refused(f"{team} has no running minor penalty to release")

    def remove(self, team: str, ref: int | None, play: float | None) -> None:
        """A penalty entered by mistake (`ref`: its id; None: the team's latest)."""
        if self.box.remove(team, ref, play) is None:
            which = f"no penalty #{ref}" if ref is not None else "no penalty"
            raise Refused(f"{team} has {which} to remove")

    # ------------------------------------------------------------ time-outs

    def timeouts_left(self, team: str, rules: Timeout) -> Refused | None:
        """None where `team` has a time-out left, else why not (said before the state)."""
        if self.timeouts_used[team] >= rules.per_team:
            return Refused(f"{team} has taken its time-out already ({rules.per_team} per match)")
        return None

    def take_timeout(self, team: str, rules: Timeout, now: float) -> None:
        """Rule 26: a team's time-out (`timeouts_left`), while the clock is stopped (the
        engine's table takes it only then), one per stoppage; it ends at its own deadline."""
        if (used_up := self.timeouts_left(team, rules)) is not None:
            raise used_up
        if self.timeout_team is not None:
            raise Refused(f"{self.timeout_team}'s time-out is running")
        if self.penalty_shot is not None:
            raise Refused(f"{self.penalty_shot}'s penalty shot is being taken")
        if self.timeout_stoppage == self.stoppage:
            raise Refused(
                "one time-out per stoppage (rule 26): the other team took one in this stoppage"
            )
        self.timeouts_used[team] += 1
        self.timeout_team, self.timeout_until = team, now + rules.length
        self.timeout_stoppage = self.stoppage

    def end_timeout(self) -> str | None:
        """The running time-out is over (its time is up, or play goes on): whose it was."""
        team, self.timeout_team, self.timeout_until = self.timeout_team, None, None
        return team

    # ------------------------------------------------------------ the penalty shot

    def start_penalty_shot(self, team: str) -> None:
        """Rule 15 / 17f, taken while the game clock is stopped (the engine checks that)."""
        if self.penalty_shot is not None:
            raise Refused(f"{self.penalty_shot}'s penalty shot is being taken")
        if self.timeout_team is not None:
            raise Refused(f"{self.timeout_team}'s time-out is running")
        self.penalty_shot = team

    def end_penalty_shot(self, team: str | None = None) -> str:
        """The penalty shot is over (its result for `team` entered, or NEXT): whose it was."""
        taker = self.penalty_shot
        assert taker is not None
        if team is not None and team != taker:
            raise Refused(f"the penalty shot is {taker}'s")
        self.penalty_shot = None
        return taker

    def status(
        self, profile: Profile, play: float | None, now: float, shootout: bool
    ) -> dict[str, Any]:
        """The Status fields of a stopped-time match at `now` (`play`: the period's play time,
        None between periods)."""
        teams = {}
        for team in TEAMS:
            shown = [
                PenaltyStatus(
                    p.id,
                    "+".join(p.kinds),
                    p.player,
                    p.state,
                    None if p.state == GAME else round(p.left_at(play), 3),
                )
                for state in (RUNNING, WAITING, GAME)
                for p in self.box.of(team, state)
            ]
            left = profile.timeout.per_team - self.timeouts_used[team] if profile.timeout else 0
            score = ""
            if self.score is not None and shootout:
                score = f"{self.score.goals[team]}/{self.score.attempts[team]}"
            teams[team] = TeamStatus(shown, left, score)
        countdown = None
        if self.timeout_until is not None:
            countdown = round(max(0.0, self.timeout_until - now), 3)
        return {
            "teams": teams,
            "timeout": self.timeout_team,
            "timeout_countdown": countdown,
            "penalty_shot": self.penalty_shot,
        }
