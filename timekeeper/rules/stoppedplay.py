"""The engine's part for stopped-time games (ball hockey) that needs the match's state:
penalties, time-outs and the penalty shot are checked against the profile and the state here,
and kept in the match's StoppedTime record (rules/stoppedtime.py)."""

from __future__ import annotations

from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.match import Cue, MatchCore


class StoppedPlay(MatchCore):
    """Penalties, time-outs and the penalty shot, as commands to the match (the engine's
    table sends them here once the match has begun, the time-outs and the penalty shot only
    while the clock is stopped)."""

    def _needs_stopped_time(self, command: Command) -> Refused | None:
        """The profile must have them (and the team a time-out left), whatever the state."""
        key, x, rules = self.profile.key, self.m.extra, self.profile.timeout
        if x is None:
            return Refused(
                f"the profile {key} has no penalties or time-outs (a stopped-time "
                "profile such as hokejbal has)"
            )
        if command.action is Action.TIMEOUT:
            return (
                x.timeouts_left(command.team, rules)
                if rules
                else Refused(f"the profile {key} has no time-outs")
            )
        return None if self.profile.penalties else Refused(f"the profile {key} has no penalties")

    def _penalty_command(self, command: Command, now: float) -> list[Cue]:
        """A penalty given, released (a power-play goal) or removed (entered by mistake)."""
        a, x, team, rules = command.action, self.m.extra, command.team, self.profile.penalties
        assert x is not None and rules is not None
        play = self._box_play(now)
        if a is Action.PENALTY:
            x.add_penalty(team, command.kinds, rules.lengths, play, command.player)
        elif a is Action.RELEASE:
            x.release(team, play)
        else:
            x.remove(team, command.ref, play)
        return []

    def _timeout(self, command: Command, now: float) -> list[Cue]:
        rules = self.profile.timeout
        assert self.m.extra is not None and rules is not None
        self.m.extra.take_timeout(command.team, rules, now)
        return []

    def _penalty_shot(self, command: Command, now: float) -> list[Cue]:
        """Rule 15 / 17f: a penalty shot, taken while the game clock is stopped. The seed sets
        no time limit: its result (attempt TEAM goal|miss) or NEXT ends it, with `shot_end`."""
        assert self.m.extra is not None
        team = command.team
        self.m.extra.start_penalty_shot(team)
        return [self._cue("shot_start", now, detail=f"{team} penalty shot")]
