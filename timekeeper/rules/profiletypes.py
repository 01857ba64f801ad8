"""What a profile is once loaded: immutable, typed objects (built and checked by
rules/profile.py), all the engine reads of a rule set's timing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# the cues that answer the operator's presses (a profile's `feedback:`; packs keep them softer)
FEEDBACK_CUES = ("pause", "resume", "time_added")


@dataclass(frozen=True)
class Mark:
    """A time mark: sounded `count` times when `remaining` seconds of the period are left."""

    remaining: float
    count: int
    cue: str  # "minute" (also for marks every N seconds) or "third"


@dataclass(frozen=True)
class Period:
    number: int  # 1-based over regulation and overtime
    name: str  # "period 2", "overtime 1", "match"
    overtime: bool
    length: float | None  # None: untimed (sudden death until the operator ends it)
    marks: tuple[Mark, ...]  # most remaining first
    melody: float  # seconds of last-N melody, 0 for none
    sudden_death: bool  # a goal entered while it runs (or NEXT, FINISH) ends the match
    starts: str  # "operator" (waits for START/NEXT) or "auto" (straight after the break)
    end_cue: str  # "end" closes the match, "period_end" when another part must follow


@dataclass(frozen=True)
class Break:
    length: float
    warning: float | None  # break_warning this many seconds before the break ends


@dataclass(frozen=True)
class Shootout:
    first: int  # shots each in the first series
    then: int  # shots each in every later series
    shot: float | None  # time limit of one shot; None: untimed (the result ends it)

    def describe(self, taken: int) -> tuple[int, int]:
        """(series, shot within series), both 1-based, of the shot after `taken` shots."""
        first = 2 * self.first
        if taken < first:
            return 1, taken + 1
        return 2 + (taken - first) // (2 * self.then), (taken - first) % (2 * self.then) + 1


@dataclass(frozen=True)
class Penalties:
    """Stopped-time games: penalty lengths by kind (a game misconduct has none: the rest of
    the match) and how many of a team's penalties run at once (the rest wait)."""

    minor: float
    major: float
    personal: float
    running: int
    match: float = 300.0  # rule 17e's match penalty: the team's time short (the seed is silent)
    # ice-hockey practice, for a league that plays it; ball hockey's rule 30 d keeps every
    # penalty being served, and its seed never lets a goal end one: off by default
    power_play_goal_ends_minor: bool = False

    @property
    def lengths(self) -> dict[str, float]:
        return {
            "minor": self.minor,
            "major": self.major,
            "personal": self.personal,
            "match": self.match,
        }


@dataclass(frozen=True)
class Timeout:
    length: float
    per_team: int  # per match


@dataclass(frozen=True)
class Profile:
    key: str  # the name it is selected by
    title: str
    source: Path
    follows: str | None
    add_step: float
    prestart: float  # lead of the pre-start signal before the first start; 0: none
    feedback: frozenset[str]  # which of pause / resume / time_added a press is answered with
    periods: tuple[Period, ...]
    regulation: int  # how many of `periods` are regulation periods
    intermission: Break | None  # between regulation periods
    shootout: Shootout | None
    penalties: Penalties | None = None
    timeout: Timeout | None = None
    description: str = ""  # what the profile is, its rules, and the aids it adds to them
    # ITHF 4.6 (a player not ready 30 s after the start of the match): a `forfeit` cue, a
    # mark at 30 s of the first period's play
    forfeit_signal: bool = False
    no_show: float | None = None  # rule 5: `no-show` counts this long from the scheduled start
    # the display page: tenths of a second under the last minute (ice-hockey practice; rod
    # hockey's clock is its sound, whole seconds)
    tenths: bool = False

    @property
    def cue_names(self) -> set[str]:
        """Every cue this profile can ask for (packs are checked against it at start-up)."""
        names = {"start", "end"}
        if self.prestart:
            names.add("prestart")
        names |= self.feedback
        for p in self.periods:
            names.add(p.end_cue)
            names |= {m.cue for m in p.marks}
            if p.melody:
                names.add("last30")
        if self.intermission and self.intermission.warning is not None:
            names.add("break_warning")
        if self.shootout and self.shootout.shot is not None:
            names |= {"shot_start", "shot_end"}
        if self.penalties:
            names.add("penalty_end")
        if self.timeout:
            names.add("timeout_end")
        if self.penalties:  # the penalty shot (rule 15, 17f)
            names |= {"shot_start", "shot_end"}
        if self.forfeit_signal or self.no_show:
            names.add("forfeit")
        return names
