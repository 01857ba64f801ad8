"""What comes due by itself, and the parts of a match: the engine's deadlines and what
happens at each (its `DUE` table names them), a period started and ended, the breaks between,
the last-30 melody. Apart from rules/engine.py so that the table there stays readable; the
engine is the only subclass."""

from __future__ import annotations

from timekeeper.rules.clock import PeriodClock
from timekeeper.rules.match import Cue, MatchCore, State, played


class Periods(MatchCore):
    """The engine's clockwork: deadlines, periods and the melody."""

    # ------------------------------------------------------------------ deadlines

    def _countdown_end(self) -> float | None:
        return self.m.deadline_at

    def _break_deadline(self) -> float | None:
        """The break's warning, then its end."""
        m, brk = self.m, self.profile.intermission
        warning = brk.warning if brk else None
        if warning is not None and not m.warned and m.deadline_at is not None:
            return m.deadline_at - warning
        return m.deadline_at

    def _play_deadline(self) -> float | None:
        """The next of the period's end, a penalty served, a mark and the melody."""
        m, p = self.m, self.period
        if m.clock is None:
            return None
        assert p is not None
        times = [m.clock.when_remaining(0.0)]
        if m.extra is not None and (expiry := m.extra.box.next_expiry()) is not None:
            times.append(m.clock.when_played(expiry))
        if m.next_mark < len(p.marks):
            times.append(m.clock.when_remaining(p.marks[m.next_mark].remaining))
        if p.melody and not m.melody_on:
            times.append(m.clock.when_remaining(p.melody))
        return min((t for t in times if t is not None), default=None)

    def _timeout_deadline(self) -> float | None:
        return self.m.extra.timeout_until if self.m.extra is not None else None

    def _no_show_deadline(self) -> float | None:
        return self.m.no_show_until

    def _prestart_over(self, t: float) -> list[Cue]:
        return self._start_period(0, t)

    def _shot_over(self, t: float) -> list[Cue]:
        self._shot_taken()
        return [self._cue("shot_end", t)]

    def _no_show_over(self, t: float) -> list[Cue]:
        """The no-show countdown is over (ball hockey rule 5)."""
        self.m.no_show_until = None
        return [self._cue("forfeit", t, detail="no-show")]

    def _timeout_over(self, t: float) -> list[Cue]:
        assert self.m.extra is not None
        return [self._cue("timeout_end", t, detail=self.m.extra.end_timeout() or "")]

    def _break_due(self, t: float) -> list[Cue]:
        """The break's warning, then its end: the next period starts by itself or waits."""
        m, brk = self.m, self.profile.intermission
        assert m.deadline_at is not None and brk is not None
        cues = []
        if not m.warned and brk.warning is not None:
            m.warned = True
            cues.append(self._cue("break_warning", t))
            if t < m.deadline_at:
                return cues
        if self.profile.periods[m.index + 1].starts == "auto":
            return cues + self._start_period(m.index + 1, t)
        self.state, m.deadline_at = State.WAITING, None
        return cues

    def _play_due(self, t: float) -> list[Cue]:
        """The marks, the melody, penalties served and the period's end, each when due."""
        m, p = self.m, self.period
        assert m.clock is not None and p is not None
        cues: list[Cue] = []
        while m.next_mark < len(p.marks):
            mark = p.marks[m.next_mark]
            due = m.clock.when_remaining(mark.remaining)
            if due is None or due > t:
                break
            cues.append(self._cue(mark.cue, due, count=mark.count))
            m.next_mark += 1
        cues += self._melody_sync(t, due_only=True)
        end = m.clock.when_remaining(0.0)
        if m.extra is not None:  # a penalty served exactly at the end ends with the period
            until = t if end is None else min(t, end)
            for play, penalty in m.extra.box.expire(m.clock.play_time(until)):
                due = m.clock.when_played(play)
                assert due is not None
                if end is None or due < end - 1e-9:
                    cues.append(self._cue("penalty_end", due, detail=penalty.label))
        if end is not None and end <= t:
            cues += self._end_period(end)
        return cues

    # ------------------------------------------------------------------ periods

    def _start_period(self, index: int, now: float) -> list[Cue]:
        p = self.profile.periods[index]
        self.m.index, self.m.clock = index, PeriodClock(p.length)
        self.m.next_mark, self.m.melody_on, self.m.deadline_at = 0, False, None
        self.m.warned = False
        self.m.clock.start(now)
        self.state = State.RUNNING
        if self.m.extra is not None:
            self.m.extra.box.thaw(0.0)
        return [self._cue("start", now)]

    def _end_period(self, now: float, decided: bool = False) -> list[Cue]:
        """The period's play time is used up (or, `decided`, a sudden-death goal ended it)."""
        m, p = self.m, self.period
        assert m.clock is not None and p is not None
        cues = self._melody_stop(now)
        m.clock.stop(now)
        m.next_mark = len(p.marks)
        if m.extra is not None:  # frozen until the next part of the match
            play = played(m.clock, now)
            m.extra.box.expire(play)
            m.extra.box.freeze(play)
            m.extra.end_timeout()
        stand = self._after_period()
        if decided or (stand is State.SHOOTOUT and self.decided_score() is not None):
            # a sudden death's goal, or a score no shoot-out is played for: the end signal
            self.state = State.FINISHED
            return [*cues, self._cue("end", now)]
        cues.append(self._cue(p.end_cue, now))
        if stand is State.WAITING and not p.overtime and m.index + 1 < self.profile.regulation:
            return cues + self._between_periods(now)
        self._stand(stand)
        return cues

    def _between_periods(self, now: float) -> list[Cue]:
        """Between regulation periods: the break, or the next period at once, or NEXT."""
        brk = self.profile.intermission
        if brk is not None:
            self.state, self.m.deadline_at, self.m.warned = State.BREAK, now + brk.length, False
            return []
        if self.profile.periods[self.m.index + 1].starts == "auto":
            return self._start_period(self.m.index + 1, now)
        self.state = State.WAITING
        return []

    # ------------------------------------------------------------------ the last-30 melody

    def _melody_sync(self, now: float, due_only: bool = False) -> list[Cue]:
        """Start the melody if the running clock is inside the melody window. The tune's
        position always equals the play time elapsed in the window, so it tracks every
        pause and every second added or taken back."""
        m, p = self.m, self.period
        if p is None or not p.melody or m.melody_on or self.state is not State.RUNNING:
            return []
        assert m.clock is not None
        start_at = m.clock.when_remaining(p.melody)
        if start_at is None or start_at > now:
            return []
        remaining = m.clock.remaining(now) or 0.0
        if remaining <= 0:
            return []
        offset = 0.0 if due_only else max(0.0, p.melody - remaining)
        m.melody_on = True
        return [self._cue("last30", start_at if due_only else now, offset=offset, length=p.melody)]

    def _feedback(self, name: str, now: float) -> list[Cue]:
        return [self._cue(name, now)] if name in self.profile.feedback else []

    def _shot_taken(self) -> None:
        """A shot of the shoot-out is over (its time ran out, or it was ended early)."""
        self.m.shots += 1
        self.m.deadline_at = None
        self.state = State.SHOOTOUT
