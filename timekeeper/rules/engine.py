"""The match engine: a state machine told the time and the operator's commands, answering with
cues. It never reads a clock and never sleeps, so live runs, renders and tests drive the very
same code; `now` is whatever time base the caller uses (monotonic seconds, file seconds).

`TRANSITIONS` (at the end) is its state diagram as a table, one row an arrow (source, command,
guards, targets, handler; rules/transitions.py reads it), drawn here from it: `[…]` a guard,
`(time)` what comes due by itself (`DUE`), `|` where it may lead (commands that keep the state
are not drawn). A command with no row in the state is refused with the reason, and the prompt
says what to press instead (show/prompts.py words it from the same rows: the rules name no key).

    <!-- states: drawn by scripts/draw_states.py -->
    idle      start → prestart | running
    prestart  (countdown) → running
    running   next [sudden death] → finished;
              add, (time) → break | waiting | shootout | finished;
              finish [overtime, sudden death] → finished; toggle, pause → stopped;
              goal → finished
    stopped   next [sudden death] → finished; finish [overtime, sudden death] → finished;
              toggle, resume [no penalty shot] → running | break | waiting | shootout | finished;
              replay → idle; goal → finished; attempt [a penalty shot] → finished
    break     start, next → running; replay → idle; (time) → running | waiting
    waiting   start, next [on a draw, a part follows] → running;
              start, next [on a draw, a shoot-out] → shootout;
              finish [after regulation] → finished; replay → idle
    shootout  start, next → shot; finish, goal, attempt → finished; replay → idle
    shot      next [no result to enter] → shootout; finish → finished;
              goal, attempt → shootout | finished; (time) → shootout
    finished  start → prestart | running; no-show → idle; goal [no shoot-out] → waiting;
              undo-goal → stopped | waiting
    any       reset → idle
    <!-- /states -->

Every cue is due at an absolute deadline computed from the period clock's mapping; a command
moves the mapping, never a sum of ticks.

Stopped-time games (ball hockey) add, where their profile asks, penalties that run with the
game clock (frozen in the breaks), time-outs, the penalty shot and an entered shoot-out score
(rules/stoppedtime.py). Every profile keeps the score (rules/scoring.py), through a replay
from the start too (ITHF 4.5): a goal in a sudden death ends the match, and where goals are
kept an overtime or a shoot-out is played only on a draw. A no-show countdown (ball hockey
rule 5) may run before the start. Status, snapshot and restore: rules/reporting.py."""

from __future__ import annotations

from collections.abc import Callable

from timekeeper.rules.clock import PeriodClock
from timekeeper.rules.commands import (
    MAX_ADD,
    TEAM_ACTIONS,
    USAGE,
    Action,
    Command,
    Hint,
    Refused,
    check_name,
)
from timekeeper.rules.guards import Guards
from timekeeper.rules.match import Cue, Snapshot, State, Status, mss, played, the
from timekeeper.rules.periods import Periods
from timekeeper.rules.reporting import Reporting
from timekeeper.rules.stoppedplay import StoppedPlay
from timekeeper.rules.stoppedtime import MAX_PENALTIES_HELD
from timekeeper.rules.transitions import Guard, Refusal, Row, Table, refused, rows

__all__ = ["MAX_PENALTIES_HELD", "Cue", "Engine", "Snapshot", "State", "Status"]


class Engine(Reporting, Guards, StoppedPlay, Periods):
    """The match: `Engine(profile)`, then `handle(command, now)` and `advance(now)`."""

    # ------------------------------------------------------------------ public API
    # (status, snapshot and restore: Reporting)

    def next_deadline(self) -> float | None:
        """When the engine next has something to do unless a command comes first."""
        due = DUE.get(self.state)
        return due[0](self) if due is not None else None

    def advance(self, now: float) -> list[Cue]:
        """Everything that came due up to `now`, each at its own exact deadline."""
        cues: list[Cue] = []
        while (due := self.next_deadline()) is not None and due <= now:
            cues += DUE[self.state][1](self, due)
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

    def _apply(self, command: Command, now: float) -> list[Cue]:
        action = command.action
        if action is Action.GO:  # the START/NEXT button
            action = Action.START if self.state in (State.IDLE, State.FINISHED) else Action.NEXT
        handler = TRANSITIONS.row(self, action, command).handler
        assert handler is not None  # (a refusal row raises)
        return handler(self, command, now)

    def _waiting_for(self) -> str:
        """What START/NEXT would do now (Status.waiting_for), as the table says."""
        i, periods = self.m.index, self.profile.periods
        return TRANSITIONS.then(self, periods[i + 1].name if i + 1 < len(periods) else "shoot-out")

    # ------------------------------------------------------------------ before the match

    def _begin_match(self, command: Command, now: float) -> list[Cue]:
        kept = self.m.tally.goals if self.state is State.IDLE else []  # a replay's goals
        self.m = self._new_match()
        self.m.tally.goals = list(kept)
        if self.profile.prestart > 0:
            self.state = State.PRESTART
            self.m.deadline_at = now + self.profile.prestart
            return [Cue("prestart", now)]
        return self._start_period(0, now)

    def _no_show(self, command: Command, now: float) -> list[Cue]:
        """Ball hockey rule 5: a team not there 5 minutes after the scheduled start forfeits.
        Counted from the scheduled start (`seconds` ago); `forfeit` sounds at its end, and
        START (the team came) ends the countdown."""
        limit, passed = self.profile.no_show, command.seconds or 0.0
        assert limit is not None  # (the table's needs)
        if not 0 <= passed < limit:
            raise Refused(
                f"the time since the scheduled start must be under {mss(limit)} (got {mss(passed)})"
            )
        if self.state is State.FINISHED:  # it is the next match's
            self.state, self.m = State.IDLE, self._new_match()
        self.m.no_show_until = now + limit - passed
        return []

    def _reset(self, command: Command, now: float) -> list[Cue]:
        cues = self._melody_stop(now)
        self.state, self.m = State.IDLE, self._new_match()
        return cues

    def name_sides(self, home: str, away: str) -> None:
        """The sides' names (checked: `check_name`), e.g. the config's defaults at start."""
        self.names = {"home": check_name(home), "away": check_name(away)}

    def _names(self, command: Command, now: float) -> list[Cue]:
        """NAMES, in any state: a new pairing before the start or after the end, a name
        corrected during the match. No cue: it changes no clock."""
        if command.names is None:
            raise Refused(f"names takes two names; usage: {USAGE[Action.NAMES]}")
        try:
            self.name_sides(*command.names)
        except ValueError as exc:  # (a pairing's names, from the bus: refused, never a crash)
            raise Refused(str(exc)) from None
        return []

    def _replay(self, command: Command, now: float) -> list[Cue]:
        """ITHF 4.5: a match that must be replayed (a timer failure) is played again from the
        start, and both players keep the goals already scored. START then begins it."""
        cues = self._melody_stop(now)
        goals = self.m.tally.goals
        self.state, self.m = State.IDLE, self._new_match()
        self.m.tally.goals = goals
        return cues

    # ------------------------------------------------------------------ in play

    def _pause(self, command: Command, now: float) -> list[Cue]:
        assert self.m.clock is not None
        self.m.clock.stop(now)
        self.state = State.STOPPED
        if self.m.extra is not None:
            self.m.extra.stoppage += 1
        return self._melody_stop(now) + self._feedback("pause", now)

    def _resume(self, command: Command, now: float) -> list[Cue]:
        clock = self.m.clock
        assert clock is not None
        if self.m.extra is not None:  # play goes on: a time-out still running is over
            self.m.extra.end_timeout()
        clock.start(now)
        if clock.remaining(now) == 0:  # time was taken back to zero while stopped
            return self._end_period(now)
        self.state = State.RUNNING
        return self._feedback("resume", now) + self._melody_sync(now)

    def _add(self, command: Command, now: float) -> list[Cue]:
        """ADD (or take back) play time. A stopped-time game clock is corrected both ways
        (rule 1, net time): time taken back beyond the added time is play the clock missed,
        so play time moves on, and the penalties with it."""
        clock, x = self.m.clock, self.m.extra
        assert clock is not None
        step = self._add_step(command, clock)
        before = clock.play_time(now)
        change = clock.add(step, now, missed_play=x is not None)
        if change == 0:
            if step > 0:
                raise Refused("nothing to add")
            raise Refused(
                "no time left to take back"
                if x is not None
                else "no added time to take back (in gross time only added time is "
                "taken back; SET corrects the clock while it is stopped)"
            )
        cues = self._feedback("time_added", now)  # taking time back is answered too
        self._rearm_marks(now)
        if x is not None:  # the penalties move with the game clock, as after SET
            x.box.give_back(change - (before - clock.play_time(now)), clock.play_time(now))
            for _, penalty in x.box.expire(clock.play_time(now)):
                if self.state is State.RUNNING:  # on the ice it ends now; stopped: silently
                    cues.append(self._cue("penalty_end", now, detail=penalty.label))
        if self.state is not State.RUNNING:
            return cues
        if clock.remaining(now) == 0:
            return cues + self._end_period(now)
        return cues + self._melody_stop(now) + self._melody_sync(now)

    def _add_step(self, command: Command, clock: PeriodClock) -> float:
        """ADD's signed amount: its seconds, or one step of this engine's profile."""
        if clock.length is None:
            raise Refused(f"{the(self.period.name) if self.period else 'the period'} is untimed")
        seconds = command.seconds
        step = command.sign * self.profile.add_step if seconds is None else seconds
        if not abs(step) <= MAX_ADD:
            raise Refused(f"add takes at most {MAX_ADD:g} seconds either way")
        if step > 0 and clock.added + step > MAX_ADD:  # a sane range the journal can check
            raise Refused(
                f"at most {MAX_ADD:g} s may be added to a period ({clock.added:g} s already)"
            )
        return step

    def _set_clock(self, command: Command, now: float) -> list[Cue]:
        """Time correction: the period's time left is `seconds` from now; running penalties
        move by the same amount (those it serves end at once, silently: play is stopped, and
        a correction is no penalty's end on the ice). Every profile has it: a rod-hockey
        match can so be resumed where a failed timer stopped, if the referee accepts that
        (ITHF 4.5 itself says such a match is replayed from the start: REPLAY)."""
        clock, x, left = self.m.clock, self.m.extra, command.seconds or 0.0
        assert clock is not None
        if clock.total is None:
            raise Refused("an untimed period has no clock to correct")
        if not 0 <= left <= clock.total:
            raise Refused(
                f"the time left must be between 0:00 and {mss(clock.total)} (got {mss(left)})"
            )
        old = clock.play_time(now)
        clock.set_play_time(clock.total - left)
        self._rearm_marks(now)
        if x is not None:
            x.box.shift(old, clock.total - left)
            x.box.expire(clock.play_time(now))
        return []

    def _shot_ended(self, command: Command, now: float) -> list[Cue]:
        """NEXT during a penalty shot: taken, its result not entered."""
        return self._end_penalty_shot(now)

    def _decided(self, command: Command, now: float) -> list[Cue]:
        """NEXT or FINISH in a sudden death: the deciding goal was scored."""
        return self._end_period(now, decided=True)

    # ------------------------------------------------------------------ between the parts

    def _next_period(self, command: Command, now: float) -> list[Cue]:
        return self._start_period(self.m.index + 1, now)

    def _to_shootout(self, command: Command, now: float) -> list[Cue]:
        self._stand(State.SHOOTOUT)
        return []

    def _finish_waiting(self, command: Command, now: float) -> list[Cue]:
        self.state = State.FINISHED  # decided in regulation: the end signal has sounded
        self.m.decided_waiting = True
        return []

    # ------------------------------------------------------------------ the shoot-out

    def _start_shot(self, command: Command, now: float) -> list[Cue]:
        assert self.profile.shootout is not None
        self.state = State.SHOT
        limit = self.profile.shootout.shot
        if limit is None:  # untimed: the attempt's result (or NEXT) ends it
            self.m.deadline_at = None
            return []
        self.m.deadline_at = now + limit
        return [self._cue("shot_start", now)]

    def _end_shot_early(self, command: Command, now: float) -> list[Cue]:
        """The shot was taken before its limit: no signal needed."""
        self._shot_taken()
        return []

    def _finish_shootout(self, command: Command, now: float) -> list[Cue]:
        if self.state is State.SHOT:
            self.m.shots += 1
        self.state = State.FINISHED
        return [self._cue("end", now)]

    # ------------------------------------------------------------------ the score

    def _score(self, command: Command, now: float) -> list[Cue]:
        """Goals, their undo and the attempts (Scoring). A goal in a sudden death ends the
        match at once with the end signal (Polish III.2, XVI.1; Slovak rule 1; ITHF 4.8;
        Radegast play-off); undo-goal of that goal reopens the sudden death, its clock
        stopped where the goal stopped it."""
        m, before = self.m, len(self.m.tally.goals)
        if command.action is Action.UNDO_GOAL and self._takes_back_the_decider(command.team):
            self._reopen(now)  # first, so that what the goal changed is given back in play
        sudden = self._in_sudden_death()
        cues = self._score_command(command, now)
        if sudden and len(m.tally.goals) > before:
            m.decider = m.tally.goals[-1]
            return cues + self._end_period(now, decided=True)
        if self.state is State.FINISHED and m.decided_waiting and self.decided_score() is None:
            # (the box ends a knock-out match decided at the end of regulation by itself: a
            # goal at the buzzer entered a moment later is an equaliser, not a lost match)
            self.state, m.decided_waiting = State.WAITING, False
        return cues

    def _takes_back_the_decider(self, team: str) -> bool:
        """Undo-goal of `team` would take back the goal that ended the sudden death."""
        decider = self.m.decider
        if self.state is not State.FINISHED or decider is None or decider.team != team:
            return False
        return next(g for g in reversed(self.m.tally.goals) if g.team == team) is decider

    def _reopen(self, now: float) -> None:
        """The goal that ended the sudden death was entered by mistake: play goes on from
        where it stopped, the clock stopped (STOP/RESUME resumes it); its marks and its
        penalties are where they were."""
        m = self.m
        assert m.clock is not None
        m.decider, self.state = None, State.STOPPED
        self._rearm_marks(now)
        if m.extra is not None:
            m.extra.box.thaw(played(m.clock, now))


S, A, E = State, Action, Engine
BEGUN = (S.PRESTART, S.RUNNING)
PLAYED_ON = (S.RUNNING, S.BREAK, S.WAITING, S.SHOOTOUT, S.FINISHED)  # (time taken back to 0)
PLAY, EVERY = (S.RUNNING, S.STOPPED), tuple(State)
UNDER_WAY = tuple(s for s in State if s not in (S.IDLE, S.FINISHED))
NOT_BEGUN = Refusal("the match has not begun", Hint.BEGIN, doing=False)
OVER = Refusal("the match is over", None, doing=False)
G = Guard
# what comes due by itself, by state: when, what happens then, and (drawn) where it leads
DUE: dict[
    State,
    tuple[
        Callable[[Engine], float | None],
        Callable[[Engine, float], list[Cue]],
        str,
        tuple[State, ...],
    ],
] = {
    S.PRESTART: (E._countdown_end, E._prestart_over, "countdown", (S.RUNNING,)),
    S.RUNNING: (E._play_deadline, E._play_due, "time", PLAYED_ON),
    S.STOPPED: (E._timeout_deadline, E._timeout_over, "time-out", (S.STOPPED,)),
    S.BREAK: (E._break_deadline, E._break_due, "time", (S.RUNNING, S.WAITING)),
    S.SHOT: (E._countdown_end, E._shot_over, "time", (S.SHOOTOUT,)),
    S.IDLE: (E._no_show_deadline, E._no_show_over, "no-show", (S.IDLE,)),
}
# no row in this state: the event's refusal (START never ends a sudden death or a shot)
NOT_NOW = {
    A.START: Refusal("already started", reset=True),
    A.TOGGLE: Refusal("the clock is not stopped"),
    A.PAUSE: Refusal("the clock is not running"),
    A.RESUME: Refusal("the clock is not stopped"),
    A.ADD: Refusal("no period is being played"),
    A.SET: Refusal("the game clock is corrected while it is stopped, not", bare=True),
    A.TIMEOUT: Refusal("a time-out is taken while the clock is stopped, not", bare=True),
    **{
        a: Refusal(f"{reason}, not", None, bare=True)
        for a, reason in (
            (A.FINISH, "finish ends a match after regulation (overtime, shoot-out)"),
            (A.REPLAY, "replay starts a match again once its clock is stopped"),
            (A.NO_SHOW, "the no-show countdown runs before a match"),
            (A.ATTEMPT, "attempts are entered in the shoot-out"),
            (A.PENALTY_SHOT, "a penalty shot is taken while the clock is stopped"),
        )
    },
}
# what the profile must have for a command, whatever the state (so said first)
NEEDS: dict[Action, Callable[[Engine, Command], Refused | None]] = {
    A.NO_SHOW: E._needs_no_show,
    A.ATTEMPT: E._needs_shootout_score,
    **{a: E._needs_stopped_time for a in TEAM_ACTIONS},
}
DRAW, OVERTIME = G("on a draw", E._a_draw), G("overtime", E._an_overtime)
NO_PENALTY_SHOT = G("no penalty shot", E._no_penalty_shot)
PENALTY_SHOT = G("a penalty shot", E._a_penalty_shot)
SUDDEN_DEATH = G("sudden death", E._sudden_death)
# The state diagram, one row an arrow: (source, event, targets, handler, guards), or a
# refusal; `then`: what START/NEXT does there (Status.waiting_for); `says`: the prompt's words.
TRANSITIONS = Table(
    [
        *rows([S.IDLE], [A.START], E._begin_match, BEGUN, then="start", says="begins the match"),
        *rows(
            [S.FINISHED],
            [A.START],
            E._begin_match,
            BEGUN,
            then="start",
            says="begins the next match",
        ),
        *refused([S.IDLE], [A.NEXT], NOT_BEGUN),
        *refused([S.PRESTART], [A.NEXT], Refusal("nothing to go on to")),
        *refused([S.PRESTART], [A.TOGGLE], Refusal("nothing to stop or resume yet")),
        *rows(PLAY, [A.NEXT], E._shot_ended, guards=(PENALTY_SHOT,)),
        *rows(PLAY, [A.NEXT], E._decided, (S.FINISHED,), guards=(SUDDEN_DEATH,)),
        *rows([S.RUNNING], [A.ADD], E._add, PLAYED_ON),
        *rows([S.STOPPED], [A.ADD], E._add),
        *rows(
            PLAY,
            [A.FINISH],
            E._decided,
            (S.FINISHED,),
            guards=(OVERTIME, G("sudden death", E._finish_in_sudden_death)),
        ),
        *rows([S.RUNNING], [A.TOGGLE], E._pause, (S.STOPPED,)),
        *rows([S.RUNNING], [A.PAUSE], E._pause, (S.STOPPED,), says="stops the clock"),
        *rows([S.STOPPED], [A.TOGGLE], E._resume, PLAYED_ON, guards=(NO_PENALTY_SHOT,)),
        *rows(
            [S.STOPPED], [A.RESUME], E._resume, PLAYED_ON, guards=(NO_PENALTY_SHOT,), says="goes on"
        ),
        *rows([S.STOPPED], [A.SET], E._set_clock),
        *rows([S.BREAK], [A.START], E._next_period, (S.RUNNING,), then="next: {next}"),
        *rows([S.BREAK], [A.NEXT], E._next_period, (S.RUNNING,), says="starts {next}"),
        *[
            Row(
                S.WAITING,
                a,
                (to,),
                handler,
                (DRAW, follows),
                then="next: {next}",
                says="starts {next}" if a is A.NEXT else "",
            )
            for to, handler, follows in (
                (S.RUNNING, E._next_period, G("a part follows", E._part_follows)),
                (S.SHOOTOUT, E._to_shootout, G("a shoot-out", E._shootout_follows)),
            )
            for a in (A.START, A.NEXT)
        ],
        *rows(
            [S.WAITING],
            [A.FINISH],
            E._finish_waiting,
            (S.FINISHED,),
            then="finish",
            says="ends the match",
            guards=(G("after regulation", E._after_regulation),),
        ),
        *rows([S.SHOOTOUT], [A.START], E._start_shot, (S.SHOT,), then="next: shot"),
        *rows([S.SHOOTOUT], [A.NEXT], E._start_shot, (S.SHOT,), says="starts the next shot"),
        *rows(
            [S.SHOT],
            [A.NEXT],
            E._end_shot_early,
            (S.SHOOTOUT,),
            says="ends the shot early",
            guards=(G("no result to enter", E._no_result_entered),),
        ),
        *rows(
            [S.SHOOTOUT, S.SHOT],
            [A.FINISH],
            E._finish_shootout,
            (S.FINISHED,),
            says="ends the shoot-out",
        ),
        *refused(
            [S.FINISHED], [A.NEXT], Refusal("the match is over", Hint.BEGIN_NEXT, doing=False)
        ),
        *rows(EVERY, [A.RESET], E._reset, (S.IDLE,)),
        *rows((S.STOPPED, S.WAITING, S.BREAK, S.SHOOTOUT), [A.REPLAY], E._replay, (S.IDLE,)),
        *rows((S.IDLE, S.FINISHED), [A.NO_SHOW], E._no_show, (S.IDLE,)),
        *rows(EVERY, [A.NAMES], E._names),
        # the score: goals and their undo in (almost) any state, the attempts in the shoot-out
        *refused(
            [S.IDLE],
            [A.GOAL, A.ATTEMPT],
            Refusal("the match has not begun; START begins it", None, doing=False),
        ),
        *refused(
            [S.PRESTART],
            [A.GOAL],
            Refusal("the match has not started yet (pre-start countdown)", None, doing=False),
        ),
        *rows([S.RUNNING], [A.GOAL], E._score, (S.RUNNING, S.FINISHED)),
        *rows([S.STOPPED], [A.GOAL], E._score, (S.STOPPED, S.FINISHED)),
        *rows((S.BREAK, S.WAITING), [A.GOAL], E._score),
        *rows(
            [S.FINISHED],
            [A.GOAL],
            E._score,
            (S.FINISHED, S.WAITING),
            guards=(G("no shoot-out", E._no_shootout),),
        ),
        *rows((S.SHOOTOUT, S.SHOT), [A.GOAL, A.ATTEMPT], E._score, (S.SHOOTOUT, S.FINISHED)),
        *rows([S.STOPPED], [A.ATTEMPT], E._score, (S.STOPPED, S.FINISHED), guards=(PENALTY_SHOT,)),
        *refused([S.FINISHED], [A.ATTEMPT], OVER),
        *rows([S.IDLE], [A.UNDO_GOAL], E._score, guards=(G("goals kept", E._goals_kept),)),
        *rows(UNDER_WAY, [A.UNDO_GOAL], E._score),
        *rows([S.FINISHED], [A.UNDO_GOAL], E._score, (S.FINISHED, S.STOPPED, S.WAITING)),
        # stopped-time games: penalties, time-outs and the penalty shot once the match has begun
        *refused([S.IDLE], TEAM_ACTIONS, NOT_BEGUN),
        *refused([S.FINISHED], TEAM_ACTIONS, OVER),
        *rows(UNDER_WAY, (A.PENALTY, A.RELEASE, A.REMOVE), E._penalty_command),
        *rows([S.STOPPED], [A.TIMEOUT], E._timeout),
        *rows([S.STOPPED], [A.PENALTY_SHOT], E._penalty_shot),
    ],
    NOT_NOW,
    NEEDS,
    {s: (label, targets) for s, (_, _, label, targets) in DUE.items()},
)
del S, A, E, G, BEGUN, PLAYED_ON, PLAY, EVERY, UNDER_WAY, NOT_BEGUN, OVER
