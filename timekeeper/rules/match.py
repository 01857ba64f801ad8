"""What a match is made of, as the engine's parts share it: its states, the cues it answers
with, what it tells (Status) and remembers (Snapshot), what one match has done so far
(Match), and `MatchCore`, the few things every part of the engine asks of the match (the
period being played, a cue at a time, the play time the penalties follow)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from timekeeper.rules.clock import PeriodClock
from timekeeper.rules.penalties import PenaltyBox
from timekeeper.rules.profiletypes import Period, Profile
from timekeeper.rules.score import Goal, Tally
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


NO_NAMES = {"home": "", "away": ""}

# what the match is doing, as a refusal says it ("…, not during the break")
DOING = {
    State.IDLE: "before the match",
    State.PRESTART: "during the pre-start countdown",
    State.RUNNING: "while the clock runs",
    State.STOPPED: "while the clock is stopped",
    State.BREAK: "during the break",
    State.WAITING: "between the parts of the match",
    State.SHOOTOUT: "between shots",
    State.SHOT: "during a shot",
    State.FINISHED: "after the end",
}


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
    # once finished, how the match was decided: regulation, overtime, sudden_death or
    # shootout, from the profile's typed parts ("" before the end)
    decided: str = ""
    # the part being played is a sudden death (the next goal ends the match): the screens
    # say "sudden death" rather than "running"
    sudden_death: bool = False
    # stopped-time games only (None otherwise)
    teams: dict[str, TeamStatus] | None = None
    timeout: str | None = None  # the team whose time-out is running
    timeout_countdown: float | None = None
    penalty_shot: str | None = None  # the team taking a penalty shot (rule 15), clock stopped
    # every profile: the score, home and away, and its goals in order (each team, period,
    # play_time, player)
    score: dict[str, int] = field(default_factory=lambda: {"home": 0, "away": 0})
    goals: list[dict[str, Any]] = field(default_factory=list)
    shootout_score: str = ""  # in a shoot-out with entered results: "home 2/3 away 1/3"
    # the box's, not the match's: MUTE (ceremonies) silences its cues (the engine says False;
    # the live runner fills it in)
    muted: bool = False
    # the sides' names, home and away (a player in rod hockey, a team in ball hockey; "": none,
    # screens say HOME / AWAY)
    names: dict[str, str] = field(default_factory=lambda: dict(NO_NAMES))
    # the shoot-out's attempts in order ({"team", "goal"}), where results are entered: the
    # screens show each (✓/✗) and whose turn it is
    shootout_attempts: list[dict[str, Any]] = field(default_factory=list)
    # the box's, not the match's: hall commands held for an instant ahead, in order
    # ({"command": "start", "in": seconds}); the engine says none, the live runner fills it in
    scheduled: list[dict[str, Any]] = field(default_factory=list)
    # the box's, not the match's: why its sound is not heard now ("": it is), e.g. the card
    # lost and being reopened; the clock goes on meanwhile (the live runner fills it in)
    audio_fault: str = ""
    # the box's, not the match's: it runs SILENT (no sound card: every cue logged, none heard)
    silent: bool = False
    # the box's, where it joins a hall: the result its table holds for the desk ({"id",
    # "match", "score", "confirmed"}; None: none), for its operator to confirm
    hall_result: dict[str, object] | None = None
    # the box's, where it joins a hall: the pairing held for after the match on the table
    # ({"match", "home", "away"}; None: none), shown as "next: HOME – AWAY"
    next_pairing: dict[str, object] | None = None
    # the box's, where it plays a series (best of N: the desk's pairing, or run --best-of): the
    # game on the table, played now or next ({"best_of", "game", "home_wins", "away_wins",
    # "winner": "home" | "away" | None, "match"}; None: single matches)
    match_series: dict[str, object] | None = None
    # the profile's, for the screens: ADD's step (the operator page's ± buttons; ADD without
    # seconds takes it), the first period's length (an idle display shows it; None:
    # untimed) and whether the last minute shows tenths
    add_step: float = 10.0
    length: float | None = None
    tenths: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The status as JSON data: the one form that `ctl status`, the web pages, the hall
        and every reply carry, so that a field exists everywhere or nowhere."""
        return asdict(self)


@dataclass(frozen=True)
class Snapshot:
    """What a match must remember across a crash or onto another box: plain data, so that
    the journal can store it as JSON. `index` is the period's index into profile.periods
    (0-based; -1: none yet), where Status.period is its 1-based number."""

    profile: str
    state: str
    index: int = -1
    play_time: float = 0.0
    added: float = 0.0
    shots: int = 0
    shootout: bool = False
    extra: dict[str, Any] | None = None  # ball hockey: penalties, time-outs used, shoot-out score
    score: dict[str, Any] | None = None  # the goals (and a Polish shoot-out's); None: old journals
    names: dict[str, Any] | None = None  # the sides' names, home and away; None in old journals


@dataclass
class Match:
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
    decider: Goal | None = None  # the goal that ended a sudden death (undo-goal reopens it)
    # ended by FINISH as decided while it waited for its next part: a goal entered after
    # (or taken back) that makes it a draw has it wait for that part again
    decided_waiting: bool = False


class MatchCore:
    """The match state every part of the engine shares, and what they all ask of it.
    `names` are the sides' (home, away; "": none): the pairing, not one match's record, so
    they outlive `m` — a reset or a new match after the end keeps them until new names come."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.state = State.IDLE
        self.m = self._new_match()
        self.names = dict(NO_NAMES)

    @property
    def period(self) -> Period | None:
        return self.profile.periods[self.m.index] if self.m.index >= 0 else None

    def _new_match(self) -> Match:
        p = self.profile
        score = ShootoutScore(p.shootout.first, p.shootout.then) if p.shootout else None
        if p.penalties is None and p.timeout is None:
            return Match(tally=Tally(shootout=score))  # a Polish shoot-out's score
        box = PenaltyBox(p.penalties.running if p.penalties else 2)
        return Match(extra=StoppedTime(box, score))

    def _after_period(self) -> State:
        """Where a match stands once the current period's time is up, before any break: the
        next part waits for NEXT, or the match is over, or its shoot-out follows (straight
        away if it must, else on a draw: NEXT)."""
        p = self.period
        assert p is not None
        if self.m.index + 1 < len(self.profile.periods):
            return State.WAITING
        if self.profile.shootout is None:
            return State.FINISHED
        return State.SHOOTOUT if p.end_cue == "period_end" else State.WAITING

    def decided_score(self) -> str | None:
        """The score (`2:1`) where goals are kept (one at least entered) and one side leads;
        None on a draw, or where the operator enters no goals. An overtime or a shoot-out is
        played only on a draw (Polish XVI.1, Slovak rule 1, ITHF 4.8, Radegast play-off)."""
        score = self.m.tally.score()
        if not self.m.tally.goals or score["home"] == score["away"]:
            return None
        return self.m.tally.text()

    def _stand(self, state: State) -> None:
        """Enter `state` after a period; the shoot-out's cues are its own, not a period's."""
        self.state, self.m.shootout = state, state is State.SHOOTOUT

    def _rearm_marks(self, now: float = 0.0) -> None:
        """After any correction of the clock (SET, ADD either way, a match restored): every
        mark whose time has not passed at the new clock is still to sound, including one due
        at the very instant play resumes; the marks already passed are not sounded late."""
        p, clock = self.period, self.m.clock
        assert p is not None and clock is not None
        left = clock.remaining(now)
        if left is None:
            return
        self.m.next_mark = next(
            (i for i, mk in enumerate(p.marks) if mk.remaining <= left + SAME_INSTANT), len(p.marks)
        )

    def _melody_stop(self, now: float) -> list[Cue]:
        if not self.m.melody_on:
            return []
        self.m.melody_on = False
        return [self._cue("last30", now, stop=True)]

    def _cue(self, name: str, due: float, **kw: Any) -> Cue:
        clock = None if self.m.shootout else self.m.clock
        play = played(clock, due) if clock else 0.0
        left = clock.total - play if clock and clock.total is not None else None
        return Cue(
            name,
            due,
            self._part_number(),
            round(play, 6),
            remaining=None if left is None else round(left, 6),
            **kw,
        )

    def _part_number(self) -> int:
        """1-based over the periods, overtime parts, and the shoot-out after them."""
        if self.m.shootout:
            return len(self.profile.periods) + 1
        return self.period.number if self.period else 0

    def _box_play(self, now: float) -> float | None:
        """Play time of the period being played; None between periods (penalties frozen)."""
        clock = self.m.clock
        if self.state in (State.RUNNING, State.STOPPED) and clock is not None:
            return played(clock, now)
        return None

    def _shootout_score(self) -> ShootoutScore | None:
        """Ball hockey keeps it with its penalties; the other profiles with their goals."""
        x = self.m.extra
        return x.score if x is not None else self.m.tally.shootout


SAME_INSTANT = 1e-6  # a mark this close to the corrected clock is due as play resumes


def the(name: str) -> str:
    """'the match', 'the overtime', but 'period 2', 'overtime 1'."""
    return name if name[-1].isdigit() else f"the {name}"


def played(clock: PeriodClock, now: float) -> float:
    """Play time, never past the period's total (a status asked for between a deadline and
    the engine being told of it must not show 5:00.3 of a 5:00 match), nor below 0 (the
    runner hands a start over ahead of its instant: a box stopped in those milliseconds
    journals 0:00 played, which it can resume, not -0.015 s, which it would set aside)."""
    total = clock.total
    play = max(0.0, clock.play_time(now))
    return play if total is None else min(play, total)


def mss(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}" + (f"{seconds - whole:.1f}"[1:] if seconds % 1 else "")
