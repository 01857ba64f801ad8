"""The engine's score keeping, every profile's: goals with their time and scorer (where a
profile turns it on, a power-play goal ends a minor), a goal taken back, a shoot-out's
attempts and a penalty shot's result. They change no clock, so they apply in almost any
state; the engine's table sends every score command here (the engine ends a sudden death on
a goal)."""

from __future__ import annotations

from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.match import Cue, MatchCore, State, played
from timekeeper.rules.score import MAX_GOALS, give_back, power_play_goal


class Scoring(MatchCore):
    """The engine's part that keeps the score."""

    def _score_command(self, command: Command, now: float) -> list[Cue]:
        """In the states the engine's table sends each score command here from."""
        a, s, team = command.action, self.state, command.team
        if a is Action.UNDO_GOAL:
            return self._undo_goal(team, now)
        scored = a is Action.ATTEMPT and command.scored
        if a is Action.GOAL and (
            self._penalty_shot_team() is not None or s in (State.SHOOTOUT, State.SHOT)
        ):
            scored, a = True, Action.ATTEMPT  # `goal` (key g) of a shot: a scored attempt
        if a is Action.ATTEMPT:
            return self._attempt(team, scored, now)
        return self._goal(team, command.player, now)

    # ------------------------------------------------------------------ the table's guards

    def _needs_shootout_score(self, command: Command) -> Refused | None:
        if self._shootout_score() is None and self._penalty_shot_team() is None:
            return Refused(
                f"the profile {self.profile.key} has no shoot-out score (it has no shoot-out)"
            )
        return None

    def _no_shootout(self) -> Refused | None:
        """A goal entered late, after the end, counts; not after a shoot-out."""
        return Refused("the match is over") if self.m.shootout else None

    def _goals_kept(self) -> Refused | None:
        """Before the start, only a replay's goals kept may be taken back."""
        return None if self.m.tally.goals else Refused("the match has not begun; START begins it")

    def _goal(self, team: str, player: str, now: float) -> list[Cue]:
        """A goal, at the period's play time now. Entered late (in the break, after the end)
        it counts for the part just played; only one scored in play may end a minor."""
        m, rules = self.m, self.profile.penalties
        if m.tally.score()[team] >= MAX_GOALS:
            raise Refused(f"{team} has {MAX_GOALS} goals already; undo-goal takes one back")
        play, ended = self._box_play(now), None
        if rules is not None and rules.power_play_goal_ends_minor and play is not None:
            assert m.extra is not None
            ended = power_play_goal(m.extra.box, team, play)
        m.tally.add(
            team, self._part_number(), self._goal_time(now), player, ended[1] if ended else None
        )
        detail = f"{team}{f' #{player}' if player else ''} {m.tally.text()}"
        if ended is not None:
            detail += f", ends {ended[0].label}"
        return [self._cue("goal", now, detail=detail)]

    def _goal_time(self, now: float) -> float:
        clock = None if self.m.shootout else self.m.clock
        return played(clock, now) if clock else 0.0

    def _undo_goal(self, team: str, now: float) -> list[Cue]:
        """The team's latest goal was entered by mistake: it goes, and a minor it ended comes
        back, with its time running on as if never ended (while its part is still played)."""
        goal = self.m.tally.undo(team)
        if goal is None:
            raise Refused(f"{team} has no goal to take back")
        play = self._box_play(now)
        if goal.released and play is not None and goal.period == self._part_number():
            assert self.m.extra is not None
            give_back(self.m.extra.box, goal.released, play)
        return []

    def _attempt(self, team: str, scored: bool, now: float) -> list[Cue]:
        """A shoot-out attempt's result (or a penalty shot's: `_penalty_shot_result`)."""
        m = self.m
        if self._penalty_shot_team() is not None:
            return self._penalty_shot_result(team, scored, now)
        score = self._shootout_score()
        assert score is not None  # (the table's needs)
        if (why := score.check(team)) is not None:
            raise Refused(why)
        recorded = sum(score.attempts.values())
        if self.state is State.SHOT or recorded >= m.shots:
            m.shots += 1  # the attempt being shot (or one entered without NEXT)
        m.deadline_at, self.state = None, State.SHOOTOUT
        score.record(team, scored)
        if score.winner() is None:
            return []
        self.state = State.FINISHED
        return [self._cue("end", now)]

    # ------------------------------------------------------------------ the penalty shot

    def _penalty_shot_team(self) -> str | None:
        return self.m.extra.penalty_shot if self.m.extra is not None else None

    def _penalty_shot_result(self, team: str, scored: bool, now: float) -> list[Cue]:
        """Its result ends it; a goal counts, but as no power-play goal: no penalty ends."""
        cues = self._end_penalty_shot(now, "goal" if scored else "miss", team)
        if not scored:
            return cues
        self.m.tally.add(team, self._part_number(), self._goal_time(now), "")
        return [*cues, self._cue("goal", now, detail=f"{team} penalty shot {self.m.tally.text()}")]

    def _end_penalty_shot(
        self, now: float, result: str = "ended", team: str | None = None
    ) -> list[Cue]:
        assert self.m.extra is not None
        taker = self.m.extra.end_penalty_shot(team)
        return [self._cue("shot_end", now, detail=f"{taker} penalty shot {result}")]
