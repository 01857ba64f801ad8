"""The match engine: a state machine told the time and the operator's commands, answering with
cues. It never reads a clock and never sleeps, so live runs, renders and tests drive the very
same code; `now` is whatever time base the caller uses (monotonic seconds, file seconds).

    idle → prestart → running ⇄ stopped → break → running … → waiting → overtime …
         → shootout ⇄ shot → finished

Every cue is due at an absolute deadline computed from the period clock's mapping; a command
moves the mapping, never a sum of ticks.

Stopped-time games (ball hockey) add, when their profile asks for them, a penalty box whose
penalties end at a play time of the game clock (so they stop with it and are frozen in the
breaks), a time-out with its own countdown while the clock is stopped, a correction of the
game clock, the penalty shot, and the shoot-out's score, which ends the match once it is
decided.

Every profile keeps the score (rules/score.py): goals with their time and scorer, kept through
a replay from the start (ITHF 4.5); a no-show countdown (ball hockey rule 5) may run before
the start."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from timekeeper.rules.clock import PeriodClock
from timekeeper.rules.commands import (
    MAX_ADD,
    SCORE_ACTIONS,
    TEAM_ACTIONS,
    Action,
    Command,
    Refused,
)
from timekeeper.rules.penalties import PenaltyBox
from timekeeper.rules.profile import Period, Profile
from timekeeper.rules.score import MAX_GOALS, Tally, give_back, power_play_goal
from timekeeper.rules.shootout import ShootoutScore
from timekeeper.rules.stoppedtime import StoppedTime, TeamStatus


class State(StrEnum):
    IDLE = "idle"  # waiting for START
    PRESTART = "prestart"  # the pre-start signal has sounded, counting down to the start
    RUNNING = "running"
    STOPPED = "stopped"  # clock stopped by the operator (ITHF 10.1)
    BREAK = "break"  # timed intermission between periods
    WAITING = "waiting"  # a period is over; NEXT starts the next part (overtime: on a draw)
    SHOOTOUT = "shootout"  # between shots; NEXT starts a shot, FINISH ends the match
    SHOT = "shot"  # a shot's time limit is running
    FINISHED = "finished"


@dataclass(frozen=True)
class Cue:
    """A sound to start (or, with `stop`, the melody to stop) at `due` on the caller's time base."""

    name: str
    due: float
    period: int = 0  # 1-based part of the match; 0 before the first
    play_time: float = 0.0  # of that period, at `due`
    count: int = 1  # marks: how many beeps
    offset: float = 0.0  # melody: where in the tune to start
    length: float = 0.0  # melody: how long the whole melody window is
    stop: bool = False
    remaining: float | None = None  # play time left in the period at `due` (timed periods)
    detail: str = ""  # penalty_end / timeout_end: whose ("home #2 17 minor")


@dataclass(frozen=True)
class Status:
    profile: str
    title: str
    state: str
    period: int  # 1-based; 0 before the match
    periods: int  # regulation periods
    part: str  # "period 2", "overtime", "shoot-out", ""
    play_time: float
    remaining: float | None  # of the period's play time; None when untimed or none
    added: float
    countdown: float | None  # to the start, the end of a break, or of a shot
    melody: bool
    shot: int = 0  # shots taken in the shoot-out
    series: int = 0
    waiting_for: str = ""  # what NEXT / START would do now
    # stopped-time games only (None otherwise)
    teams: dict[str, TeamStatus] | None = None
    timeout: str | None = None  # the team whose time-out is running
    timeout_countdown: float | None = None
    penalty_shot: str | None = None  # the team taking a penalty shot (rule 15), clock stopped
    # every profile: the score, home and away, and its goals in order (each team, period,
    # play_time, player)
    score: dict[str, int] = field(default_factory=lambda: {"home": 0, "away": 0})
    goals: list[dict] = field(default_factory=list)
    shootout_score: str = ""  # in a shoot-out with entered results: "home 2/3 away 1/3"
    # the box's, not the match's: MUTE (ceremonies) silences its cues (the engine says False;
    # the live runner fills it in)
    muted: bool = False

    def to_dict(self) -> dict:
        """The status as JSON data: the one form that `ctl status`, the web pages, the hall
        and every reply carry, so that a field exists everywhere or nowhere."""
        from dataclasses import asdict

        return asdict(self)


@dataclass(frozen=True)
class Snapshot:
    """What a match must remember across a crash or onto another box: plain data, so that
    the journal can store it as JSON. `period` indexes profile.periods (-1: none yet)."""

    profile: str
    state: str
    period: int = -1
    play_time: float = 0.0
    added: float = 0.0
    shots: int = 0
    shootout: bool = False
    extra: dict | None = None  # ball hockey: penalties, time-outs used, shoot-out score
    score: dict | None = None  # the goals (and a Polish shoot-out's score); None in old journals


@dataclass
class _Match:
    """What one match has done so far (reset makes a new one)."""

    index: int = -1  # into profile.periods
    clock: PeriodClock | None = None
    next_mark: int = 0
    melody_on: bool = False
    deadline_at: float | None = None  # prestart → start, break end, shot end
    warned: bool = False
    shots: int = 0
    shootout: bool = False  # the shoot-out has begun: cues belong to it, not to a period
    extra: StoppedTime | None = None  # penalties, time-outs, shoot-out score (ball hockey)
    tally: Tally = field(default_factory=Tally)  # the goals
    no_show_until: float | None = None  # before the start: the no-show countdown's end


class Engine:
    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.state = State.IDLE
        self.m = self._new_match()

    # ------------------------------------------------------------------ public API

    @property
    def period(self) -> Period | None:
        return self.profile.periods[self.m.index] if self.m.index >= 0 else None

    def next_deadline(self) -> float | None:
        """When the engine next has something to do unless a command comes first."""
        s, m = self.state, self.m
        if s in (State.PRESTART, State.SHOT):
            return m.deadline_at
        if s is State.BREAK:
            warning = self.profile.intermission.warning if self.profile.intermission else None
            if warning is not None and not m.warned and m.deadline_at is not None:
                return m.deadline_at - warning
            return m.deadline_at
        if s is State.RUNNING and m.clock is not None:
            times = [t for t in self._running_deadlines() if t is not None]
            return min(times) if times else None
        if s is State.STOPPED and m.extra is not None:
            return m.extra.timeout_until
        if s is State.IDLE:
            return m.no_show_until
        return None

    def advance(self, now: float) -> list[Cue]:
        """Everything that came due up to `now`, each at its own exact deadline."""
        cues: list[Cue] = []
        while (due := self.next_deadline()) is not None and due <= now:
            cues += self._fire(due)
        return cues

    def handle(self, command: Command, now: float) -> list[Cue]:
        """Apply an operator command at `now`. Raises Refused (with `.cues` that came due
        before it) when the command does not apply; nothing is changed then."""
        cues = self.advance(now)
        try:
            return cues + self._apply(command, now)
        except Refused as refusal:
            refusal.cues = cues
            raise

    def status(self, now: float) -> Status:
        m, p, s = self.m, self.period, self.state
        clock = m.clock
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
            play_time=round(_played(clock, now), 3) if clock and not m.shootout else 0.0,
            remaining=_round(clock.remaining(now)) if clock and not m.shootout else None,
            added=clock.added if clock and not m.shootout else 0.0,
            countdown=_round(countdown),
            melody=m.melody_on,
            shot=m.shots,
            series=series,
            waiting_for=self._waiting_for(),
            **self._stopped_time_status(now),
            score=m.tally.score(),
            goals=[goal.public() for goal in m.tally.goals],
            shootout_score=self._shootout_text(),
        )

    def snapshot(self, now: float) -> Snapshot:
        m, clock = self.m, self.m.clock
        extra = None
        if m.extra is not None:  # a running time-out is not kept: its end is on our clock
            extra = m.extra.to_dict() | {"timeout_team": None, "timeout_until": None,
                                         "penalty_shot": None}
        return Snapshot(self.profile.key, self.state.value, m.index,
                        round(_played(clock, now), 3) if clock else 0.0,
                        clock.added if clock else 0.0, m.shots, m.shootout, extra,
                        m.tally.to_dict())

    def restore(self, snap: Snapshot) -> None:
        """Continue a match from a snapshot, with the clock stopped and its goals kept: after a
        crash or a power cut the referee may resume it where it stopped, or REPLAY it from the
        start with the goals kept, which is what ITHF 4.5 says of a match a timer failure
        interrupted. A countdown (pre-start, break, shot, no-show) is not resumed: the
        pre-start begins again, a break waits for NEXT, a shot is taken again. Raises
        ValueError for a snapshot that does not fit this profile."""
        periods = self.profile.periods
        self.state, self.m = State.IDLE, self._new_match()
        if snap.score is not None and snap.state != State.FINISHED.value:
            try:
                self.m.tally = Tally.from_dict(snap.score, self.m.tally.shootout)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"the goals could not be read ({exc!r})") from None
        state = State(snap.state)
        if state in (State.IDLE, State.PRESTART, State.FINISHED) or snap.period < 0:
            return
        if snap.period >= len(periods):
            raise ValueError(f"period {snap.period + 1} does not exist in {self.profile.key} "
                             f"({len(periods)} part{'' if len(periods) == 1 else 's'})")
        p = periods[snap.period]
        total = None if p.length is None else p.length + snap.added
        if snap.play_time < 0 or snap.added < 0 or (total is not None and snap.play_time > total):
            raise ValueError(f"play time {snap.play_time:g} s does not fit {p.name}")
        m = self.m
        m.index, m.shots = snap.period, snap.shots
        if m.extra is not None and snap.extra is not None:
            try:
                m.extra = StoppedTime.from_dict(snap.extra | {"timeout_team": None,
                                                              "timeout_until": None,
                                                              "penalty_shot": None})
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ValueError(f"the penalties could not be read ({exc!r})") from None
        m.clock = PeriodClock.stopped_at(p.length, snap.play_time, snap.added)
        if snap.shootout or state in (State.SHOOTOUT, State.SHOT):
            if self.profile.shootout is None:
                raise ValueError(f"{self.profile.key} has no shoot-out")
            self.state, m.shootout = State.SHOOTOUT, True
            return
        if state in (State.BREAK, State.WAITING) or (total is not None
                                                     and snap.play_time >= total):
            # the period was over: wait for NEXT (a break's countdown is not resumed)
            m.clock = PeriodClock.stopped_at(p.length, total or snap.play_time, snap.added)
            m.next_mark = len(p.marks)
            self.state = State.WAITING if state is not State.STOPPED and state is not \
                State.RUNNING else self._after_period()
            m.shootout = self.state is State.SHOOTOUT
            return
        self.state = State.STOPPED
        self._rearm_marks()  # the clock comes back as a correction: every mark still ahead

    # ------------------------------------------------------------------ commands

    def _apply(self, command: Command, now: float) -> list[Cue]:
        a, s = command.action, self.state
        if a is Action.RESET:
            return self._reset(now)
        if a is Action.GO:
            a = Action.START if s in (State.IDLE, State.FINISHED) else Action.NEXT
        if a in SCORE_ACTIONS:
            return self._score_command(command, now)
        if a is Action.REPLAY:
            return self._replay(now)
        if a is Action.NO_SHOW:
            return self._no_show(command.seconds or 0.0, now)
        if a is Action.START and s in (State.IDLE, State.FINISHED):
            return self._begin_match(now)
        if a is Action.START and s not in (State.WAITING, State.BREAK, State.SHOOTOUT):
            # START only ever starts something: it never ends a sudden death or a shot
            raise Refused(self._refusal("already started", now, reset=True))
        if a in (Action.START, Action.NEXT):
            return self._next(now)
        if a is Action.TOGGLE and s is State.PRESTART:
            raise Refused(self._refusal("nothing to stop or resume yet", now))
        if a is Action.TOGGLE:
            return self._pause(now) if s is State.RUNNING else self._resume(now)
        if a is Action.PAUSE:
            return self._pause(now)
        if a is Action.RESUME:
            return self._resume(now)
        if a is Action.ADD:
            return self._add(command.seconds, now)
        if a is Action.FINISH:
            return self._finish(now)
        if a is Action.SET:
            return self._set_clock(command.seconds or 0.0, now)
        if a in TEAM_ACTIONS:
            return self._stopped_time_command(command, now)
        raise Refused(f"{a.value} is not an engine command")

    def _new_match(self) -> _Match:
        p = self.profile
        score = ShootoutScore(p.shootout.first, p.shootout.then) if p.shootout else None
        if p.penalties is None and p.timeout is None:
            return _Match(tally=Tally(shootout=score))  # a Polish shoot-out's score
        box = PenaltyBox(p.penalties.running if p.penalties else 2)
        return _Match(extra=StoppedTime(box, score))

    def _begin_match(self, now: float) -> list[Cue]:
        kept = self.m.tally.goals if self.state is State.IDLE else []  # a replay's goals
        self.m = self._new_match()
        self.m.tally.goals = list(kept)
        if self.profile.prestart > 0:
            self.state = State.PRESTART
            self.m.deadline_at = now + self.profile.prestart
            return [Cue("prestart", now)]
        return self._start_period(0, now)

    def _next(self, now: float) -> list[Cue]:
        s, p = self.state, self.period
        if s is State.IDLE:
            raise Refused(f"the match has not begun; {_PRESS_START} begins it")
        if s is State.FINISHED:
            raise Refused(f"the match is over; {_PRESS_START} begins the next one")
        if s is State.PRESTART:
            raise Refused(self._refusal("nothing to go on to", now))
        more = self.m.index + 1 < len(self.profile.periods)
        if s is State.BREAK or (s is State.WAITING and more):
            return self._start_period(self.m.index + 1, now)
        if s is State.WAITING and self.profile.shootout is None:
            raise Refused(f"the match is over; {_PRESS_START} begins the next one")
        if s is State.WAITING:  # after the last period: the shoot-out
            self.state, self.m.shootout = State.SHOOTOUT, True
            return []
        if self._penalty_shot_team() is not None:  # taken, its result not entered
            return self._end_penalty_shot(now)
        if s in (State.RUNNING, State.STOPPED) and p is not None:
            if p.sudden_death:
                return self._end_period(now, decided=True)
            raise Refused(f"{_the(p.name)} is still being played; NEXT comes after its end"
                          + (f" ({_PRESS_RESUME} goes on)" if s is State.STOPPED else ""))
        if s is State.SHOOTOUT:
            return self._start_shot(now)
        if s is State.SHOT:  # the shot was taken before its limit: no signal needed
            if self.m.extra is not None and self.m.extra.score is not None:
                raise Refused(f"enter the attempt's result: {_PRESS_ATTEMPT}")
            self.m.shots += 1
            self.m.deadline_at = None
            self.state = State.SHOOTOUT
            return []
        raise Refused(self._refusal("nothing to go on to", now))

    def _finish(self, now: float) -> list[Cue]:
        s, p = self.state, self.period
        if s is State.WAITING and p is not None and self.m.index + 1 >= self.profile.regulation:
            self.state = State.FINISHED  # decided in regulation: the end signal has sounded
            return []
        if s in (State.SHOOTOUT, State.SHOT):
            if s is State.SHOT:
                self.m.shots += 1
            self.state = State.FINISHED
            return [self._cue("end", now)]
        if s in (State.RUNNING, State.STOPPED) and p is not None and p.overtime:
            if not p.sudden_death:
                raise Refused(f"{_the(p.name)} is played in full, it is not sudden death; "
                              "FINISH comes after its end (if decided) or in the sudden death")
            return self._end_period(now, decided=True)
        if p is not None and s in (State.RUNNING, State.STOPPED):
            raise Refused("finish ends a match after regulation (overtime, shoot-out); "
                          f"{_the(p.name)} is still being played")
        raise Refused(f"finish ends a match after regulation (overtime, shoot-out), "
                      f"not {_DOING[s]}")

    def _reset(self, now: float) -> list[Cue]:
        cues = self._melody_stop(now)
        self.state, self.m = State.IDLE, self._new_match()
        return cues

    def _pause(self, now: float) -> list[Cue]:
        if self.state is not State.RUNNING or self.m.clock is None:
            raise Refused(self._refusal("the clock is not running", now))
        self.m.clock.stop(now)
        self.state = State.STOPPED
        if self.m.extra is not None:
            self.m.extra.stoppage += 1
        return self._melody_stop(now) + self._feedback("pause", now)

    def _resume(self, now: float) -> list[Cue]:
        if self.state is not State.STOPPED or self.m.clock is None:
            raise Refused(self._refusal("the clock is not stopped", now))
        if (team := self._penalty_shot_team()) is not None:
            raise Refused(f"{team}'s penalty shot is being taken; enter its result (attempt "
                          f"{team} goal|miss) or end it with NEXT first")
        clock = self.m.clock
        if self.m.extra is not None:  # play goes on: a time-out still running is over
            self.m.extra.timeout_team = self.m.extra.timeout_until = None
        if clock.remaining(now) == 0:  # time was taken back to zero while stopped
            clock.start(now)
            return self._end_period(now)
        clock.start(now)
        self.state = State.RUNNING
        return self._feedback("resume", now) + self._melody_sync(now)

    def _add(self, seconds: float | None, now: float) -> list[Cue]:
        clock = self.m.clock
        if self.state not in (State.RUNNING, State.STOPPED) or clock is None:
            raise Refused(self._refusal("no period is being played", now))
        if clock.length is None:
            raise Refused(f"{_the(self.period.name) if self.period else 'the period'} is untimed")
        step = self.profile.add_step if seconds is None else seconds
        if not abs(step) <= MAX_ADD:
            raise Refused(f"add takes at most {MAX_ADD:g} seconds either way")
        if step > 0 and clock.added + step > MAX_ADD:  # a sane range the journal can check
            raise Refused(f"at most {MAX_ADD:g} s may be added to a period "
                          f"({clock.added:g} s already)")
        x = self.m.extra
        # a stopped-time game clock is corrected both ways (rule 1, net time): time taken back
        # beyond the added time is play that the clock missed, so play time moves on
        played = clock.play_time(now)
        change = clock.add(step, now, missed_play=x is not None)
        if change == 0:
            if step > 0:
                raise Refused("nothing to add")
            raise Refused("no time left to take back" if x is not None else
                          "no added time to take back (in gross time only added time is "
                          "taken back; SET corrects the clock while it is stopped)")
        cues = self._feedback("time_added", now)  # taking time back is answered too
        self._rearm_marks(now)
        if x is not None:  # the penalties move with the game clock, as after SET
            x.box.give_back(change - (played - clock.play_time(now)), clock.play_time(now))
            for _, penalty in x.box.expire(clock.play_time(now)):
                if self.state is State.RUNNING:  # on the ice it ends now; stopped: silently
                    cues.append(self._cue("penalty_end", now, detail=penalty.label))
        if self.state is State.RUNNING:
            if clock.remaining(now) == 0:
                return cues + self._end_period(now)
            cues += self._melody_stop(now) + self._melody_sync(now)
        return cues

    # ------------------------------------------------------------------ deadlines

    def _running_deadlines(self) -> list[float | None]:
        m, p = self.m, self.period
        assert m.clock is not None and p is not None
        times = [m.clock.when_remaining(0.0)]
        if m.extra is not None and (expiry := m.extra.box.next_expiry()) is not None:
            times.append(m.clock.when_played(expiry))
        if m.next_mark < len(p.marks):
            times.append(m.clock.when_remaining(p.marks[m.next_mark].remaining))
        if p.melody and not m.melody_on:
            times.append(m.clock.when_remaining(p.melody))
        return times

    def _fire(self, t: float) -> list[Cue]:
        s, m = self.state, self.m
        if s is State.PRESTART:
            return self._start_period(0, t)
        if s is State.SHOT:
            m.shots += 1
            m.deadline_at = None
            self.state = State.SHOOTOUT
            return [self._cue("shot_end", t)]
        if s is State.IDLE:  # the no-show countdown is over (ball hockey rule 5)
            m.no_show_until = None
            return [self._cue("forfeit", t, detail="no-show")]
        if s is State.STOPPED:
            assert m.extra is not None
            team, m.extra.timeout_team, m.extra.timeout_until = m.extra.timeout_team, None, None
            return [self._cue("timeout_end", t, detail=team or "")]
        if s is State.BREAK:
            assert m.deadline_at is not None
            cues = []
            if not m.warned and self.profile.intermission.warning is not None:  # type: ignore[union-attr]
                m.warned = True
                cues.append(self._cue("break_warning", t))
                if t < m.deadline_at:
                    return cues
            if self.profile.periods[m.index + 1].starts == "auto":
                return cues + self._start_period(m.index + 1, t)
            self.state, m.deadline_at = State.WAITING, None
            return cues
        return self._fire_running(t)

    def _fire_running(self, t: float) -> list[Cue]:
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

    # ------------------------------------------------------------------ transitions

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
            played = _played(m.clock, now)
            m.extra.box.expire(played)
            m.extra.box.freeze(played)
            m.extra.timeout_team = m.extra.timeout_until = None
        last = m.index + 1 >= len(self.profile.periods)
        if decided:
            self.state = State.FINISHED
            return [*cues, self._cue("end", now)]
        cues.append(self._cue(p.end_cue, now))
        if not p.overtime and m.index + 1 < self.profile.regulation:
            brk = self.profile.intermission
            if brk is not None:
                self.state, m.deadline_at, m.warned = State.BREAK, now + brk.length, False
            elif self.profile.periods[m.index + 1].starts == "auto":
                return cues + self._start_period(m.index + 1, now)
            else:
                self.state = State.WAITING
        elif not last:
            self.state = State.WAITING  # overtime (on a draw) or the next overtime part
        elif self.profile.shootout is None:
            self.state = State.FINISHED
        else:  # straight to the shoot-out if it must follow, else NEXT on a draw
            self.state = State.SHOOTOUT if p.end_cue == "period_end" else State.WAITING
            m.shootout = self.state is State.SHOOTOUT
        return cues

    def _after_period(self) -> State:
        """Where a match stands once the current period's time is up (no break, no cues):
        for a match resumed at the very end of a period."""
        i, p, periods = self.m.index, self.period, self.profile.periods
        assert p is not None
        if i + 1 < len(periods):
            return State.WAITING
        if self.profile.shootout is None:
            return State.FINISHED
        return State.SHOOTOUT if p.end_cue == "period_end" else State.WAITING

    def _start_shot(self, now: float) -> list[Cue]:
        assert self.profile.shootout is not None
        self.state = State.SHOT
        limit = self.profile.shootout.shot
        if limit is None:  # untimed: the attempt's result (or NEXT) ends it
            self.m.deadline_at = None
            return []
        self.m.deadline_at = now + limit
        return [self._cue("shot_start", now)]

    # ------------------------------------------------------------------ stopped-time games

    def _stopped_time_command(self, command: Command, now: float) -> list[Cue]:
        a, s, x = command.action, self.state, self.m.extra
        if x is None:
            what = "shoot-out score" if a is Action.ATTEMPT else "penalties or time-outs"
            raise Refused(f"the profile {self.profile.key} has no {what} (a stopped-time "
                          "profile such as hokejbal has)")
        if s is State.IDLE:
            raise Refused(f"the match has not begun; {_PRESS_START} begins it")
        if s is State.FINISHED:
            raise Refused("the match is over")
        if a is Action.TIMEOUT:
            return self._timeout(command.team, now)
        if self.profile.penalties is None:
            raise Refused(f"the profile {self.profile.key} has no penalties")
        if a is Action.PENALTY_SHOT:
            return self._penalty_shot(command.team, now)
        play = self._box_play(now)
        if a is Action.PENALTY:
            held = sum(1 for p in x.box.penalties if p.team == command.team)
            if held >= MAX_PENALTIES_HELD:
                raise Refused(f"{command.team} has {held} penalties in the box already, the "
                              f"most a match keeps; remove TEAM [ID] takes one entered by "
                              "mistake")
            x.box.add(command.team, command.kinds, self.profile.penalties.lengths, play,
                      command.player)
            return []
        if a is Action.RELEASE:
            if x.box.release(command.team, play) is None:
                raise Refused(f"{command.team} has no running minor penalty to release")
            return []
        if x.box.remove(command.team, command.ref, play) is None:  # REMOVE
            which = f"no penalty #{command.ref}" if command.ref is not None else "no penalty"
            raise Refused(f"{command.team} has {which} to remove")
        return []

    def _box_play(self, now: float) -> float | None:
        """Play time of the period being played; None between periods (penalties frozen)."""
        clock = self.m.clock
        if self.state in (State.RUNNING, State.STOPPED) and clock is not None:
            return _played(clock, now)
        return None

    def _timeout(self, team: str, now: float) -> list[Cue]:
        x, rules = self.m.extra, self.profile.timeout
        assert x is not None
        if rules is None:
            raise Refused(f"the profile {self.profile.key} has no time-outs")
        if x.timeouts_used[team] >= rules.per_team:
            raise Refused(f"{team} has taken its time-out already ({rules.per_team} per match)")
        if self.state is not State.STOPPED:
            raise Refused(self._refusal("a time-out is taken while the clock is stopped, not",
                                        now, doing_bare=True))
        if x.timeout_team is not None:
            raise Refused(f"{x.timeout_team}'s time-out is running")
        if x.penalty_shot is not None:
            raise Refused(f"{x.penalty_shot}'s penalty shot is being taken")
        if x.timeout_stoppage == x.stoppage:
            raise Refused("one time-out per stoppage (rule 26): the other team took one in "
                          "this stoppage")
        x.timeouts_used[team] += 1
        x.timeout_team, x.timeout_until = team, now + rules.length
        x.timeout_stoppage = x.stoppage
        return []

    def _set_clock(self, left: float, now: float) -> list[Cue]:
        """Time correction: the period's time left is `left` from now; running penalties
        move by the same amount (those it serves end at once, silently: play is stopped, and
        a correction is no penalty's end on the ice). Every profile has it: a rod-hockey
        match can so be resumed where a failed timer stopped, if the referee accepts that
        (ITHF 4.5 itself says such a match is replayed from the start: REPLAY)."""
        clock, x = self.m.clock, self.m.extra
        if self.state is not State.STOPPED or clock is None:
            raise Refused(self._refusal("the game clock is corrected while it is stopped, not",
                                        now, doing_bare=True))
        if clock.total is None:
            raise Refused("an untimed period has no clock to correct")
        if not 0 <= left <= clock.total:
            raise Refused(f"the time left must be between 0:00 and {_mss(clock.total)} "
                          f"(got {_mss(left)})")
        old = clock.play_time(now)
        clock.set_play_time(clock.total - left)
        self._rearm_marks(now)
        if x is None:
            return []
        x.box.shift(old, clock.total - left)
        x.box.expire(clock.play_time(now))
        return []

    def _attempt(self, team: str, scored: bool, now: float) -> list[Cue]:
        """A shoot-out attempt's result (or a penalty shot's: `_penalty_shot_result`)."""
        m = self.m
        if self._penalty_shot_team() is not None:
            return self._penalty_shot_result(team, scored, now)
        score = self._shootout_score()
        if score is None:
            raise Refused(f"the profile {self.profile.key} has no shoot-out score (it has no "
                          "shoot-out)")
        if self.state not in (State.SHOOTOUT, State.SHOT):
            raise Refused(f"attempts are entered in the shoot-out, not {_DOING[self.state]}")
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

    def _shootout_text(self) -> str:
        score = self._shootout_score()
        if not self.m.shootout or score is None or not any(score.attempts.values()):
            return ""
        return score.text()

    def _shootout_score(self) -> ShootoutScore | None:
        """Ball hockey keeps it with its penalties; the other profiles with their goals."""
        x = self.m.extra
        return x.score if x is not None else self.m.tally.shootout

    def _stopped_time_status(self, now: float) -> dict:
        x = self.m.extra
        if x is None:
            return {}
        return x.status(self.profile, self._box_play(now), now, self.m.shootout)

    # ------------------------------------------------------------------ the score (every profile)

    def _score_command(self, command: Command, now: float) -> list[Cue]:
        a, s, team = command.action, self.state, command.team
        if s is State.IDLE and not (a is Action.UNDO_GOAL and self.m.tally.goals):
            raise Refused("the match has not begun; START begins it")
        if a is Action.UNDO_GOAL:
            return self._undo_goal(team, now)
        scored = a is Action.ATTEMPT and command.scored
        if a is Action.GOAL and (self._penalty_shot_team() is not None or s in (
                State.SHOOTOUT, State.SHOT)):
            scored, a = True, Action.ATTEMPT  # `goal` (key g) of a shot: a scored attempt
        if s is State.FINISHED and (a is Action.ATTEMPT or self.m.shootout):
            raise Refused("the match is over")
        if a is Action.ATTEMPT:
            return self._attempt(team, scored, now)
        if s is State.PRESTART:
            raise Refused("the match has not started yet (pre-start countdown)")
        return self._goal(team, command.player, now)

    def _goal(self, team: str, player: str, now: float) -> list[Cue]:
        """A goal, at the period's play time now. Entered late (in the break, after the end)
        it counts for the part just played; only one scored in play may end a minor."""
        m, rules = self.m, self.profile.penalties
        if m.tally.score()[team] >= MAX_GOALS:
            raise Refused(f"{team} has {MAX_GOALS} goals already; undo-goal takes one back")
        clock = None if m.shootout else m.clock
        play, ended = self._box_play(now), None
        if rules is not None and rules.power_play_goal_ends_minor and play is not None:
            assert m.extra is not None
            ended = power_play_goal(m.extra.box, team, play)
        m.tally.add(team, self._part_number(), _played(clock, now) if clock else 0.0, player,
                    ended[1] if ended else None)
        detail = f"{team}{f' #{player}' if player else ''} {m.tally.text()}"
        if ended is not None:
            detail += f", ends {ended[0].label}"
        return [self._cue("goal", now, detail=detail)]

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

    def _replay(self, now: float) -> list[Cue]:
        """ITHF 4.5: a match that must be replayed (a timer failure) is played again from the
        start, and both players keep the goals already scored. START then begins it."""
        if self.state not in (State.STOPPED, State.WAITING, State.BREAK, State.SHOOTOUT):
            raise Refused(f"replay starts a match again once its clock is stopped, not "
                          f"{_DOING[self.state]}")
        cues = self._melody_stop(now)
        goals = self.m.tally.goals
        self.state, self.m = State.IDLE, self._new_match()
        self.m.tally.goals = goals
        return cues

    def _no_show(self, passed: float, now: float) -> list[Cue]:
        """Ball hockey rule 5: a team not there 5 minutes after the scheduled start forfeits.
        Counted from the scheduled start (`passed` seconds ago); `forfeit` sounds at its end,
        and START (the team came) ends the countdown."""
        limit = self.profile.no_show
        if limit is None:
            raise Refused(f"the profile {self.profile.key} has no no-show countdown "
                          "(no_show: SECONDS)")
        if self.state not in (State.IDLE, State.FINISHED):
            raise Refused(f"the no-show countdown runs before a match, not {_DOING[self.state]}")
        if not 0 <= passed < limit:
            raise Refused(f"the time since the scheduled start must be under {_mss(limit)} "
                          f"(got {_mss(passed)})")
        if self.state is State.FINISHED:  # it is the next match's
            self.state, self.m = State.IDLE, self._new_match()
        self.m.no_show_until = now + limit - passed
        return []

    # ------------------------------------------------------------------ the penalty shot

    def _penalty_shot_team(self) -> str | None:
        return self.m.extra.penalty_shot if self.m.extra is not None else None

    def _penalty_shot(self, team: str, now: float) -> list[Cue]:
        """Rule 15 / 17f: a penalty shot, taken while the game clock is stopped. The seed sets
        no time limit: its result (attempt TEAM goal|miss) or NEXT ends it, with `shot_end`."""
        x = self.m.extra
        assert x is not None
        if self.state is not State.STOPPED:
            raise Refused(f"a penalty shot is taken while the clock is stopped, not "
                          f"{_DOING[self.state]}")
        if x.penalty_shot is not None:
            raise Refused(f"{x.penalty_shot}'s penalty shot is being taken")
        if x.timeout_team is not None:
            raise Refused(f"{x.timeout_team}'s time-out is running")
        x.penalty_shot = team
        return [self._cue("shot_start", now, detail=f"{team} penalty shot")]

    def _penalty_shot_result(self, team: str, scored: bool, now: float) -> list[Cue]:
        x = self.m.extra
        assert x is not None and x.penalty_shot is not None
        if team != x.penalty_shot:
            raise Refused(f"the penalty shot is {x.penalty_shot}'s")
        cues = self._end_penalty_shot(now, "goal" if scored else "miss")
        if not scored:
            return cues
        # a goal, but no power-play goal: no penalty ends by it
        self.m.tally.add(team, self._part_number(), _played(self.m.clock, now)
                         if self.m.clock else 0.0, "")
        return [*cues, self._cue("goal", now, detail=f"{team} penalty shot "
                                                    f"{self.m.tally.text()}")]

    def _end_penalty_shot(self, now: float, result: str = "ended") -> list[Cue]:
        x = self.m.extra
        assert x is not None
        team, x.penalty_shot = x.penalty_shot, None
        return [self._cue("shot_end", now, detail=f"{team} penalty shot {result}")]

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

    def _melody_stop(self, now: float) -> list[Cue]:
        if not self.m.melody_on:
            return []
        self.m.melody_on = False
        return [self._cue("last30", now, stop=True)]

    # ------------------------------------------------------------------ helpers

    def _rearm_marks(self, now: float = 0.0) -> None:
        """After any correction of the clock (SET, ADD either way, a match restored): every
        mark whose time has not passed at the new clock is still to sound, including one due
        at the very instant play resumes; the marks already passed are not sounded late."""
        p, clock = self.period, self.m.clock
        assert p is not None and clock is not None
        left = clock.remaining(now)
        if left is None:
            return
        self.m.next_mark = next((i for i, mk in enumerate(p.marks)
                                 if mk.remaining <= left + _SAME_INSTANT), len(p.marks))

    def _feedback(self, name: str, now: float) -> list[Cue]:
        return [self._cue(name, now)] if name in self.profile.feedback else []

    def _cue(self, name: str, due: float, **kw: float | int | bool | str) -> Cue:
        clock = None if self.m.shootout else self.m.clock
        play = _played(clock, due) if clock else 0.0
        left = clock.total - play if clock and clock.total is not None else None
        return Cue(name, due, self._part_number(), round(play, 6),  # type: ignore[arg-type]
                   remaining=None if left is None else round(left, 6), **kw)

    def _part_number(self) -> int:
        """1-based over the periods, overtime parts, and the shoot-out after them."""
        if self.m.shootout:
            return len(self.profile.periods) + 1
        return self.period.number if self.period else 0

    def _refusal(self, head: str, now: float, reset: bool = False,
                 doing_bare: bool = False) -> str:
        """A refusal that says what to press now: `head (while the clock is stopped):
        STOP/RESUME (SPACE, ctl resume) goes on`. `reset`: also how to start over."""
        s = self.state
        doing = _DOING[s] if s is not State.PRESTART else "the start is counting down"
        doing = f" {_DOING[s]}" if doing_bare else f" ({doing})"
        tail = f"; {_PRESS_RESET} starts over" if reset and s is not State.PRESTART else ""
        return f"{head}{doing}: {self._what_now(now)}{tail}"

    def _what_now(self, now: float) -> str:
        """Which press goes on from here, naming every control (button, key, ctl)."""
        s, m = self.state, self.m
        if s is State.IDLE:
            return f"{_PRESS_START} begins the match"
        if s is State.FINISHED:
            return f"{_PRESS_START} begins the next match"
        if s is State.PRESTART:
            left = math.ceil(max(0.0, (m.deadline_at or now) - now) - 1e-9)
            return (f"the start signal comes by itself in {left} s (START and SPACE do nothing "
                    f"until then); {_PRESS_RESET} calls it off")
        if s is State.RUNNING:
            return f"{_PRESS_PAUSE} stops the clock"
        if s is State.STOPPED:
            return f"{_PRESS_RESUME} goes on"
        if s in (State.BREAK, State.WAITING):
            part = self._waiting_for().removeprefix("next: ")
            text = f"{_PRESS_NEXT} starts {_the(part)}"
            if s is State.WAITING and m.index + 1 >= self.profile.regulation:
                text += f" (on a draw), {_PRESS_FINISH} ends the match"
            return text
        scored = m.extra is not None and m.extra.score is not None
        if scored:
            return f"enter each attempt: {_PRESS_ATTEMPT}"
        if s is State.SHOOTOUT:
            return f"{_PRESS_NEXT} starts the next shot, {_PRESS_FINISH} ends the shoot-out"
        return f"{_PRESS_NEXT} ends the shot early, {_PRESS_FINISH} ends the shoot-out"

    def _waiting_for(self) -> str:
        s, i, periods = self.state, self.m.index, self.profile.periods
        if s in (State.IDLE, State.FINISHED):
            return "start"
        if s in (State.WAITING, State.BREAK) and i + 1 < len(periods):
            return f"next: {periods[i + 1].name}"
        if s is State.WAITING:
            return "next: shoot-out"
        if s is State.SHOOTOUT:
            return "next: shot"
        return ""


MAX_PENALTIES_HELD = 30  # per team at once (running, waiting, out for the match): each
# command looks at all of them, and no real match comes near it
_SAME_INSTANT = 1e-6  # a mark this close to the corrected clock is due as play resumes

_DOING = {
    State.IDLE: "before the match", State.PRESTART: "during the pre-start countdown",
    State.RUNNING: "while the clock runs", State.STOPPED: "while the clock is stopped",
    State.BREAK: "during the break", State.WAITING: "between the parts of the match",
    State.SHOOTOUT: "between shots", State.SHOT: "during a shot",
    State.FINISHED: "after the end",
}


# The controls, named as the operator meets them: button, then key, then `timekeeper ctl`.
_PRESS_START = "START/NEXT (s/Enter, ctl start)"
_PRESS_NEXT = "START/NEXT (n, ctl next)"
_PRESS_PAUSE = "STOP/RESUME (SPACE, ctl pause)"
_PRESS_RESUME = "STOP/RESUME (SPACE, ctl resume)"
_PRESS_RESET = "RESET (r r, ctl reset, or hold START/NEXT)"
_PRESS_FINISH = "FINISH (f, ctl finish, or hold STOP/RESUME)"
_PRESS_ATTEMPT = "h g, h m, a g or a m (ctl attempt TEAM goal|miss)"


def _the(name: str) -> str:
    """'the match', 'the overtime', but 'period 2', 'overtime 1'."""
    return name if name[-1].isdigit() else f"the {name}"


def _played(clock: PeriodClock, now: float) -> float:
    """Play time, never past the period's total (a status asked for between a deadline and
    the engine being told of it must not show 5:00.3 of a 5:00 match)."""
    total = clock.total
    played = clock.play_time(now)
    return played if total is None else min(played, total)


def _mss(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}" + (f"{seconds - whole:.1f}"[1:] if seconds % 1 else "")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
