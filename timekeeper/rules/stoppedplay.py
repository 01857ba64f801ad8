"""The engine's part for stopped-time games (ball hockey) that needs the match's state:
penalties, time-outs and the penalty shot are checked against the profile and the state here,
and kept in the match's StoppedTime record (rules/stoppedtime.py)."""

from __future__ import annotations

from timekeeper.rules.commands import Action, Command, Hint, Refused
from timekeeper.rules.match import DOING, Cue, MatchCore, State


class StoppedPlay(MatchCore):
    """Penalties, time-outs and the penalty shot, as commands to the match."""

    def _stopped_time_command(self, command: Command, now: float) -> list[Cue]:
        """Penalties, time-outs and the penalty shot: the profile must have them, and a
        match must be under way; StoppedTime says whether its record allows them."""
        a, x, team = command.action, self.m.extra, command.team
        if x is None:
            what = "shoot-out score" if a is Action.ATTEMPT else "penalties or time-outs"
            raise Refused(f"the profile {self.profile.key} has no {what} (a stopped-time "
                          "profile such as hokejbal has)")
        if self.state is State.IDLE:
            raise Refused("the match has not begun", Hint.BEGIN)
        if self.state is State.FINISHED:
            raise Refused("the match is over")
        if a is Action.TIMEOUT:
            return self._timeout(team, now)
        if self.profile.penalties is None:
            raise Refused(f"the profile {self.profile.key} has no penalties")
        if a is Action.PENALTY_SHOT:
            return self._penalty_shot(team, now)
        play = self._box_play(now)
        if a is Action.PENALTY:
            x.add_penalty(team, command.kinds, self.profile.penalties.lengths, play,
                          command.player)
        elif a is Action.RELEASE:
            x.release(team, play)
        else:
            x.remove(team, command.ref, play)
        return []

    def _timeout(self, team: str, now: float) -> list[Cue]:
        rules = self.profile.timeout
        assert self.m.extra is not None
        if rules is None:
            raise Refused(f"the profile {self.profile.key} has no time-outs")
        not_stopped = None if self.state is State.STOPPED else self._refused(
            "a time-out is taken while the clock is stopped, not", bare=True)
        self.m.extra.take_timeout(team, rules, now, not_stopped)
        return []

    def _penalty_shot(self, team: str, now: float) -> list[Cue]:
        """Rule 15 / 17f: a penalty shot, taken while the game clock is stopped. The seed sets
        no time limit: its result (attempt TEAM goal|miss) or NEXT ends it, with `shot_end`."""
        assert self.m.extra is not None
        if self.state is not State.STOPPED:
            raise Refused(f"a penalty shot is taken while the clock is stopped, not "
                          f"{DOING[self.state]}")
        self.m.extra.start_penalty_shot(team)
        return [self._cue("shot_start", now, detail=f"{team} penalty shot")]
