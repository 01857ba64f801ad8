"""The conditions the engine's table checks beside the state (its guards: rules/engine.py
at the end), and what a profile must have for a command (its needs). Each gives the refusal
when it does not hold, None when it does, or False for the event's own refusal where it has
no row (`NOT_NOW`)."""

from __future__ import annotations

from typing import Literal

from timekeeper.rules.commands import Command, Hint, Refused
from timekeeper.rules.match import State, the
from timekeeper.rules.scoring import Scoring


class Guards(Scoring):
    """The engine's own guards and needs (Scoring and StoppedPlay keep those of the score and
    of stopped time beside their commands)."""

    def _needs_no_show(self, command: Command) -> Refused | None:
        if self.profile.no_show is not None:
            return None
        return Refused(
            f"the profile {self.profile.key} has no no-show countdown (no_show: SECONDS)"
        )

    def _no_penalty_shot(self) -> Refused | None:
        if (team := self._penalty_shot_team()) is None:
            return None
        return Refused(
            f"{team}'s penalty shot is being taken; enter its result (attempt "
            f"{team} goal|miss) or end it with NEXT first"
        )

    def _a_penalty_shot(self) -> Literal[False] | None:
        """A penalty shot is being taken (NEXT ends it, ATTEMPT enters its result)."""
        return None if self._penalty_shot_team() is not None else False

    def _sudden_death(self) -> Refused | None:
        p = self.period
        assert p is not None
        return (
            None
            if p.sudden_death
            else Refused(
                f"{the(p.name)} is still being played; NEXT comes after its end",
                Hint.RESUME if self.state is State.STOPPED else None,
            )
        )

    def _an_overtime(self) -> Refused | None:
        p = self.period
        assert p is not None
        return (
            None
            if p.overtime
            else Refused(
                f"finish ends a match after regulation (overtime, shoot-out); {the(p.name)} is "
                "still being played"
            )
        )

    def _finish_in_sudden_death(self) -> Refused | None:
        p = self.period
        assert p is not None
        return (
            None
            if p.sudden_death
            else Refused(
                f"{the(p.name)} is played in full, it is not sudden death; FINISH comes after "
                "its end (if decided) or in the sudden death"
            )
        )

    def _a_draw(self) -> Refused | None:
        """After regulation an overtime or the shoot-out is played only on a draw where goals
        are kept (a box whose operator enters none leaves it to him: NEXT or FINISH)."""
        if self.m.index + 1 < self.profile.regulation or (score := self.decided_score()) is None:
            return None
        what = (
            self.profile.periods[self.m.index + 1].name
            if self.m.index + 1 < len(self.profile.periods)
            else "shoot-out"
        )
        return Refused(f"the score is {score}, not a draw: no {what}", Hint.FINISH)

    def _part_follows(self) -> Refused | None:
        return (
            None
            if self.m.index + 1 < len(self.profile.periods)
            else Refused("the match is over", Hint.BEGIN_NEXT)
        )

    def _shootout_follows(self) -> Refused | None:
        return (
            None
            if self.profile.shootout is not None
            else Refused("the match is over", Hint.BEGIN_NEXT)
        )

    def _after_regulation(self) -> Literal[False] | None:
        return None if self.m.index + 1 >= self.profile.regulation else False

    def _no_result_entered(self) -> Refused | None:
        """Where the shoot-out's attempts are entered, the result ends a shot, not NEXT."""
        if self.m.extra is not None and self.m.extra.score is not None:
            return Refused("enter the attempt's result", Hint.ATTEMPT)
        return None
