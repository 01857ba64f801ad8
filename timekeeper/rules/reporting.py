"""The engine's reports of a match: the Status it tells at a time (the match's part of the
one status that screens, `ctl status`, the web and the hall carry; the live runner adds the
box's facts), the Snapshot it is journaled as, and the restore of a match from one (after a
crash, a power cut, or onto another box)."""

from __future__ import annotations

from typing import Any

from timekeeper.rules.clock import PeriodClock
from timekeeper.rules.commands import check_name
from timekeeper.rules.match import NO_NAMES, MatchCore, Snapshot, State, Status, played
from timekeeper.rules.score import Tally
from timekeeper.rules.stoppedtime import StoppedTime

# a running time-out, a penalty shot being taken: not kept, their ends are on our clock
_NOT_KEPT = {"timeout_team": None, "timeout_until": None, "penalty_shot": None}


class Reporting(MatchCore):
    """The engine's part that tells and remembers where the match stands."""

    def status(self, now: float) -> Status:
        m, p, s = self.m, self.period, self.state
        clock = None if m.shootout else m.clock
        countdown = None
        if s in (State.PRESTART, State.BREAK, State.SHOT) and m.deadline_at is not None:
            countdown = max(0.0, m.deadline_at - now)
        if s is State.IDLE and m.no_show_until is not None:
            countdown = max(0.0, m.no_show_until - now)
        series = 0
        if self.profile.shootout and s in (State.SHOOTOUT, State.SHOT):
            series = self.profile.shootout.describe(m.shots)[0]
        return Status(
            profile=self.profile.key,
            title=self.profile.title,
            state=s.value,
            period=self._part_number(),
            periods=self.profile.regulation,
            part="shoot-out" if m.shootout else (p.name if p else ""),
            play_time=round(played(clock, now), 3) if clock else 0.0,
            remaining=_round(clock.remaining(now)) if clock else None,
            added=clock.added if clock else 0.0,
            countdown=_round(countdown),
            melody=m.melody_on,
            shot=m.shots,
            series=series,
            waiting_for=self._waiting_for(),
            decided=self._decided_by(now),
            sudden_death=self._in_sudden_death(),
            **self._stopped_time_status(now),
            score=m.tally.score(),
            goals=[goal.public() for goal in m.tally.goals],
            shootout_score=self._shootout_text(),
            names=dict(self.names),
            shootout_attempts=self._shootout_attempts(),
            add_step=self.profile.add_step,
            length=self.profile.periods[0].length,
            tenths=self.profile.tenths,
        )

    def _in_sudden_death(self) -> bool:
        """A part that one goal ends is being played (or stopped in)."""
        p = self.period
        return (
            self.state in (State.RUNNING, State.STOPPED)
            and not self.m.shootout
            and p is not None
            and p.sudden_death
        )

    def _decided_by(self, now: float) -> str:
        """How a finished match was decided, from the part it ended in: the shoot-out, a
        sudden death ended before its time (by its goal, or NEXT/FINISH for it), another
        overtime, else regulation (the hall's result carries it home)."""
        m, p = self.m, self.period
        if self.state is not State.FINISHED:
            return ""
        if m.shootout:
            return "shootout"
        if p is None or not p.overtime:
            return "regulation"
        left = m.clock.remaining(now) if m.clock is not None else None
        return "sudden_death" if p.sudden_death and (left is None or left > 0) else "overtime"

    def snapshot(self, now: float) -> Snapshot:
        m, clock = self.m, self.m.clock
        extra = None if m.extra is None else m.extra.to_dict() | _NOT_KEPT
        return Snapshot(
            self.profile.key,
            self.state.value,
            m.index,
            round(played(clock, now), 3) if clock else 0.0,
            clock.added if clock else 0.0,
            m.shots,
            m.shootout,
            extra,
            m.tally.to_dict(),
            dict(self.names),
        )

    def restore(self, snap: Snapshot) -> None:
        """Continue a match from a snapshot, with the clock stopped and its goals kept: after a
        crash or a power cut the referee may resume it where it stopped, or REPLAY it from the
        start with the goals kept, which is what ITHF 4.5 says of a match a timer failure
        interrupted. A countdown (pre-start, break, shot, no-show) is not resumed: the
        pre-start begins again, a break waits for NEXT, a shot is taken again. Raises
        ValueError for a snapshot that does not fit this profile."""
        self.state, self.m = State.IDLE, self._new_match()
        self.names = _names_of(snap.names)  # whatever the state: the pairing it was
        if snap.score is not None and snap.state != State.FINISHED.value:
            try:
                self.m.tally = Tally.from_dict(snap.score, self.m.tally.shootout)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"the goals could not be read ({exc!r})") from None
        state = State(snap.state)
        if state in (State.IDLE, State.PRESTART, State.FINISHED) or snap.index < 0:
            return
        total = self._restore_period(snap)
        if snap.shootout or state in (State.SHOOTOUT, State.SHOT):
            if self.profile.shootout is None:
                raise ValueError(f"{self.profile.key} has no shoot-out")
            self._stand(State.SHOOTOUT)
        elif state in (State.BREAK, State.WAITING) or (
            total is not None and snap.play_time >= total
        ):
            self._restore_over(snap, total, state)
        else:
            self.state = State.STOPPED
            self._rearm_marks()  # the clock comes back as a correction: every mark still ahead

    def _restore_period(self, snap: Snapshot) -> float | None:
        """The period, its stopped clock and its penalties from `snap`: its play time's total."""
        periods, m = self.profile.periods, self.m
        if snap.index >= len(periods):
            raise ValueError(
                f"period {snap.index + 1} does not exist in {self.profile.key} "
                f"({len(periods)} part{'' if len(periods) == 1 else 's'})"
            )
        p = periods[snap.index]
        total = None if p.length is None else p.length + snap.added
        if snap.play_time < 0 or snap.added < 0 or (total is not None and snap.play_time > total):
            raise ValueError(f"play time {snap.play_time:g} s does not fit {p.name}")
        m.index, m.shots = snap.index, snap.shots
        if m.extra is not None and snap.extra is not None:
            try:
                m.extra = StoppedTime.from_dict(snap.extra | _NOT_KEPT)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"the penalties could not be read ({exc!r})") from None
        m.clock = PeriodClock.stopped_at(p.length, snap.play_time, snap.added)
        return total

    def _restore_over(self, snap: Snapshot, total: float | None, state: State) -> None:
        """The period was over: wait for NEXT (a break's countdown is not resumed)."""
        p = self.period
        assert p is not None
        self.m.clock = PeriodClock.stopped_at(p.length, total or snap.play_time, snap.added)
        self.m.next_mark = len(p.marks)
        in_play = state in (State.STOPPED, State.RUNNING)  # its time was up, not yet told
        self._stand(self._after_period() if in_play else State.WAITING)

    def _waiting_for(self) -> str:
        """What START/NEXT would do now: the engine's table says (Engine._waiting_for)."""
        raise NotImplementedError

    def _shootout_text(self) -> str:
        score = self._shootout_score()
        if not self.m.shootout or score is None or not any(score.attempts.values()):
            return ""
        return score.text()

    def _shootout_attempts(self) -> list[dict[str, Any]]:
        score = self._shootout_score()
        return score.attempts_shown() if self.m.shootout and score is not None else []

    def _stopped_time_status(self, now: float) -> dict[str, Any]:
        x = self.m.extra
        if x is None:
            return {}
        return x.status(self.profile, self._box_play(now), now, self.m.shootout)


def _names_of(saved: dict[str, Any] | None) -> dict[str, str]:
    """A snapshot's names, checked as a command's are (None: a journal from before them)."""
    if saved is None:
        return dict(NO_NAMES)
    try:
        if (
            not isinstance(saved, dict)
            or set(saved) != set(NO_NAMES)
            or not all(
                isinstance(name, str) and check_name(name) == name for name in saved.values()
            )
        ):
            raise ValueError("not a name as kept")
    except ValueError as exc:
        raise ValueError(f"the names could not be read ({saved!r:.80}: {exc})") from None
    return {team: saved[team] for team in NO_NAMES}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
