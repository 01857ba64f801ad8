"""The period clock: a mapping from the runner's time to play time, never a tick counter.

While the clock runs, play time is `base + (now - anchor)`; stopping folds the run into
`base`, adding time raises the period's total. Deadlines are computed from the mapping, so a
pause or added time moves every cue still to come, and nothing accumulates rounding."""

from __future__ import annotations


class PeriodClock:
    def __init__(self, length: float | None) -> None:
        self.length = length  # None: untimed, counts up only
        self.added = 0.0
        self._base = 0.0  # play time before the current run
        self._anchor: float | None = None  # when the current run began

    @classmethod
    def stopped_at(cls, length: float | None, play_time: float, added: float = 0.0) -> PeriodClock:
        """A stopped clock at `play_time` (a match resumed from its journal)."""
        clock = cls(length)
        clock._base, clock.added = play_time, added
        return clock

    @property
    def running(self) -> bool:
        return self._anchor is not None

    def play_time(self, now: float) -> float:
        return self._base + (now - self._anchor if self._anchor is not None else 0.0)

    @property
    def total(self) -> float | None:
        return None if self.length is None else self.length + self.added

    def remaining(self, now: float) -> float | None:
        total = self.total
        return None if total is None else max(0.0, total - self.play_time(now))

    def start(self, now: float) -> None:
        if self._anchor is None:
            self._anchor = now

    def stop(self, now: float) -> None:
        if self._anchor is not None:
            self._base += now - self._anchor
            self._anchor = None

    def add(self, seconds: float, now: float, missed_play: bool = False) -> float:
        """Add (or take back) play time; the added total never goes below zero and the
        remaining time never below zero. With `missed_play` (a stopped-time clock that did
        not run while play went on) time taken back beyond the added time is play time the
        clock missed: play time moves on by it. Returns the change of the time left."""
        if self.length is None:
            return 0.0
        left = self.remaining(now) or 0.0
        change = max(seconds, -left if missed_play else max(-self.added, -left))
        from_added = max(change, -self.added)
        self.added += from_added
        self._base -= change - from_added  # play the clock missed (missed_play only)
        return change

    def set_play_time(self, play: float) -> None:
        """Correct the clock while it is stopped (a timekeeper's correction)."""
        assert self._anchor is None, "correct a stopped clock only"
        self._base = play

    def when_played(self, play: float) -> float | None:
        """The runner's time at which `play` seconds will have been played (running only)."""
        if self._anchor is None:
            return None
        return self._anchor + play - self._base

    def when_remaining(self, remaining: float) -> float | None:
        """The runner's time at which `remaining` seconds will be left (running clocks only).
        Never before the run began: a mark due at the very instant play resumes (after time
        was added while stopped) must not come out a rounding error before the resume."""
        if self._anchor is None or self.length is None:
            return None
        return max(self._anchor, self._anchor + (self.length + self.added - self._base) - remaining)
