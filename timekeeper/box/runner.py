"""The live runner: the one place that reads the monotonic clock for the match's timing.

It sleeps on the command queue until the engine's next deadline or the next command,
whichever comes first, tells the engine the time, hands the cues to the outputs and tells its
listeners what happened. Controls (keyboard, ctl socket, buttons) only ever put commands on
the queue. (Other readers of time.monotonic() time I/O, never the match: the ctl socket's
read deadline, the web's rate limits, the desk's wait for answers; the stream's callback
reads this runner's own clock, handed to it.)

`run()` is the live loop; each of its turns is `step()`, and `wake_at()` says when the next
turn is due, so that a test can drive it on a clock of its own, a match in milliseconds."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from timekeeper.box.failalone import FailAlone
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Cue, Engine, Status
from timekeeper.show import prompts
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.listener import RunnerListener
from timekeeper.sound.output import Output

if TYPE_CHECKING:
    from timekeeper.box.series import SeriesPlay

log = logging.getLogger(__name__)

MAX_WAIT = 3600.0  # s: a wait is computed anew anyway, and huge ones overflow the OS timeout
BETWEEN = ("idle", "finished")  # no match under way: the engine may be replaced
MAX_SCHEDULED = 4  # commands held for an instant ahead (the hall's): a few, never a queue


class Runner:
    def __init__(
        self,
        engine: Engine,
        outputs: list[Output],
        events: EventLog | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine, self.outputs, self.events, self.clock = engine, outputs, events, clock
        # told what happens (the events log first: a cue is on record before it is shown),
        # and woken at their own deadlines (`next_due`, `fire`), as the outputs are
        self.listeners: list[RunnerListener] = [] if events is None else [events]
        # SimpleQueue: its put() is reentrant, so a signal handler may submit QUIT while this
        # very thread is inside get() (a queue.Queue deadlocks on its own lock there)
        # Each command goes with the runner's clock at submit: the time it was given
        # and who gave it (`by`: the operator, else the box itself, named in the log)
        self._queue: queue.SimpleQueue[tuple[Command | None, Future | None, float | None, str]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self.exited = threading.Event()  # the loop has ended (after a QUIT)
        # Outputs with a lead get cues that much early, so the engine is told a time up to
        # `lead` ahead of the clock; `_told` keeps the engine's time from ever going back
        # (a command in that window is applied at the look-ahead time, at most `lead` late).
        self.lead = max((output.lead for output in outputs), default=0.0)
        self._told = float("-inf")
        # the engine time of the last change: a status is never from before it (a start at
        # the look-ahead time must not show a negative play time), but otherwise it is taken
        # at the clock, not at the look-ahead time (screens would run up to `lead` early)
        self._settled = float("-inf")
        # MUTE (ceremonies): the outputs get no sounding cue, only stops of a melody; the
        # listeners (relays, lamp, screens) still hear of every cue
        self.muted = False
        self.audio_fault = ""  # why the sound is not heard now (an output's fault), "": it is
        self.silent = False  # no sound card (SILENT): no cue is ever heard
        # the result this table holds for the hall's desk (tablematch.MatchLink's, where the
        # box joins a hall): a box fact of the status, for its operator to confirm
        self.hall_result: Callable[[], dict | None] = lambda: None
        self.hall_next: Callable[[], dict | None] = lambda: None
        # the series the table plays (box/series.py; None: single matches): it counts a game
        # that ends before any status goes out (the reply to the command that ended it
        # included), is shown in the status, and a won one refuses a further game's start
        self.series: SeriesPlay | None = None
        self._last_state: str | None = None
        self._fails = FailAlone()
        # commands to apply at an instant of this clock (a hall start): (at, n, command, future)
        self._scheduled: list[tuple[float, int, Command, Future]] = []
        self._order = itertools.count()
        self._next_engine: Engine | None = None  # the next match's (another profile)

    def submit(self, command: Command, at: float | None = None, by: str = "operator") -> Future:
        """Queue a command from any thread; the future gets the status after it, or Refused.
        The command is applied at the time it was given (now, on the runner's clock), however
        long it waits in the queue (never earlier than the engine was already told).
        A sender that cancels the future in time (`future.cancel()` is True) knows that the
        command will never be applied: the runner drops it when it comes to it.
        With `at` (on this runner's clock) it is applied at that very instant instead: a hall
        start, whose cues must sound at the same instant on every box. The runner looks ahead
        by its lead for it as for any deadline, so its cues are placed to the sample; an `at`
        already past is applied at once. At most MAX_SCHEDULED wait at once: one more is
        refused (Refused says which are waiting); `cancel_scheduled()` and a reset clear them,
        and the status lists them (`scheduled`)."""
        future: Future = Future()
        if at is None:
            self._queue.put((command, future, self.clock(), by))
            return future
        with self._lock:
            if len(self._scheduled) >= MAX_SCHEDULED:
                waiting = ", ".join(w["command"] for w in self._waiting(self.clock()))
                future.set_exception(
                    Refused(
                        f"this table already holds {MAX_SCHEDULED} scheduled commands ({waiting});"
                        f" a reset or `hall cancel` clears them"
                    )
                )
                return future
            heapq.heappush(self._scheduled, (at, next(self._order), command, future))
        self._queue.put((None, None, None, ""))  # wake the loop: its wait is computed anew
        return future

    def cancel_scheduled(self, why: str) -> list[str]:
        """Call off every command held for an instant ahead (any thread): each one's future
        gets Refused(`why`); returns what was called off (for the log and the reply)."""
        with self._lock:
            called_off, self._scheduled = sorted(self._scheduled), []
        for *_, future in called_off:
            if future.set_running_or_notify_cancel():
                future.set_exception(Refused(f"called off: {why}"))
        if called_off:
            log.info(
                "scheduled %s called off: %s", ", ".join(str(c) for _, _, c, _ in called_off), why
            )
            self._queue.put((None, None, None, ""))  # (its wait is computed anew)
        return [str(command) for _, _, command, _ in called_off]

    def replace_engine(self, engine: Engine) -> None:
        """Play the next match with `engine` (another profile: the hall's pairing asks for
        it). Any thread may ask; the runner's own thread swaps at its next turn, and only
        between matches (idle or finished): asked during a match, it waits for its end.
        The sides' names go over; the listeners hear `engine_replaced`, then the status."""
        with self._lock:
            self._next_engine = engine
        self._queue.put((None, None, None, ""))  # (a turn at once)

    def _swap_engine(self) -> None:  # (on the runner's thread, at the top of a turn)
        with self._lock:
            if self._next_engine is None or self.engine.state.value not in BETWEEN:
                return
            engine, self._next_engine = self._next_engine, None
            engine.names = dict(self.engine.names)
            self.engine = engine
        log.info("the next match is played with profile %s", engine.profile.key)
        self._tell("engine_replaced", engine)
        status, now = self.status(), self.clock()
        self._last_state = status.state
        self._tell("state_changed", status)
        self._tell("match_changed", status, now)

    def status(self) -> Status:
        """The one status of the box: what every screen, reply, the hall and the events log
        get (`ctl status`, `/api/status`, the pages' WebSocket, the hall's retained status)."""
        with self._lock:
            return self._status(max(self.clock(), self._settled))

    def _status(self, now: float) -> Status:  # (under the lock)
        """The engine's status (the match and its profile's facts) with the box's facts:
        the one place they are added."""
        status = self.engine.status(now)
        over = self.series is not None and self.series.over(status.state)
        return dataclasses.replace(
            status,
            waiting_for="" if over else status.waiting_for,  # (START takes no further game)
            muted=self.muted,
            scheduled=self._waiting(now),
            audio_fault=self.audio_fault,
            silent=self.silent,
            hall_result=self.hall_result(),
            next_pairing=self.hall_next(),
            match_series=None if self.series is None else self.series.shown(),
        )

    def _waiting(self, now: float) -> list[dict]:  # (under the lock)
        return [
            {"command": str(command), "in": round(max(0.0, at - now), 3)}
            for at, _, command, _ in sorted(self._scheduled)
        ]

    # ------------------------------------------------------------------ the loop

    def run(self) -> None:
        """Serve until a QUIT command: sleep on the queue until the next wake, then step."""
        while True:
            wake = self.wake_at()
            timeout = None if wake is None else min(MAX_WAIT, max(0.0, wake - self.clock()))
            try:
                command, future, given, by = self._queue.get(timeout=timeout)
            except queue.Empty:
                command, future, given, by = None, None, None, ""
            if not self.step(command, given, future, by or "operator"):
                break
        self.exited.set()

    def wake_at(self) -> float | None:
        """When the next turn is due on the runner's clock without a command (None: only a
        command wakes it): the engine's next deadline less the lead (cues go out early), the
        first scheduled command's instant less the lead, or an output's or a listener's due."""
        with self._lock:
            deadline = self.engine.next_deadline()
        ahead = None if deadline is None else deadline - self.lead
        first = self._scheduled[0][0] - self.lead if self._scheduled else None
        wakes = [t for t in (ahead, first, *self._timer_dues()) if t is not None]
        return min(wakes) if wakes else None

    def step(
        self,
        command: Command | None = None,
        given: float | None = None,
        future: Future | None = None,
        by: str = "operator",
    ) -> bool:
        """One turn: apply `command`, given at `given` on the runner's clock (None: now), or
        with no command, what is due by now plus the lead and a scheduled command whose
        instant has come; hand the cues to the outputs, tell the listeners, fire what is due
        (then tell a fault of the sound that came or went), answer `future`. False once a
        QUIT has ended the loop."""
        if self._next_engine is not None:
            self._swap_engine()
        scheduled = (
            command is None
            and bool(self._scheduled)
            and self._scheduled[0][0] - self.lead <= self.clock()
        )
        if scheduled:  # its instant is the time it was given
            with self._lock:
                given, _, command, future = heapq.heappop(self._scheduled)
        if command is not None and command.action is Action.QUIT:
            status = self.status()  # the journal keeps the exact time of a shutdown
            self._tell("match_changed", status, self.clock())
            if future:
                future.set_result(status)
            return False
        if future is not None and not future.set_running_or_notify_cancel():
            log.info("%s dropped: not applied within its deadline", command)
            return True  # its sender gave up on it (ctl's deadline): never applied late
        if command is not None and command.action in (Action.MUTE, Action.UNMUTE):
            self._mute(command.action is Action.MUTE, future)
            return True
        now = self._engine_time(ahead=command is None, given=given)
        refusal = None
        with self._lock:  # handle() plays out what came due first, refused or not
            before = self.engine.state
            if command is None:
                cues = self.engine.advance(now)
            else:
                try:
                    if self.series is not None and (
                        why := self.series.refusal(command, before.value, self.engine.names)
                    ):
                        won = Refused(why)  # (a won series: no further game)
                        won.cues = self.engine.advance(now)
                        raise won
                    cues = self.engine.handle(command, now)
                except Refused as exc:  # worded for the operator: what to press now
                    cues, refusal = exc.cues, prompts.complete(exc, self.engine.status(now))
            status = self._status(now)
            if cues or command is not None or self.engine.state != before:
                self._settled = now  # (in the lock: no status from before the change)
        applied = command is not None and refusal is None
        if self.series is not None and (cues or applied or status.state != self._last_state):
            # a game that ended is counted before anyone is told (the reply, the screens)
            self._fails.call("SeriesPlay.match_changed", self.series.match_changed, status, now)
            status = dataclasses.replace(status, match_series=self.series.shown())
        self._dispatch(cues, status)
        changed = bool(cues)
        if refusal is not None:
            log.info("%s refused: %s", command, refusal)
        elif command is not None:  # the record a scorekeeper can look back on
            log.info("%s: %s%s", by, command, " (scheduled)" if scheduled else "")
            if command.action is Action.RESET and self._scheduled:
                self.cancel_scheduled(f"the {'scheduled ' if scheduled else ''}reset")
                with self._lock:
                    status = self._status(now)
            self._tell("command_applied", command, scheduled, status)
            changed = True
        if status.state != self._last_state:
            self._last_state, changed = status.state, True
            self._tell("state_changed", status)
        if changed:
            self._tell("match_changed", status, now)
        self._run_timers(self.clock())
        self._tell_fault()
        if future is not None:
            if refusal is not None:
                future.set_exception(refusal)
            else:
                future.set_result(status)
        return True

    def _mute(self, muted: bool, future: Future | None) -> None:
        if muted != self.muted:
            self.muted = muted
            log.info(
                "sound %s by the operator%s",
                "muted" if muted else "back on",
                " (relays and lamp still work)" if muted else "",
            )
        status = self.status()
        self._tell("state_changed", status)  # screens show it at once
        self._tell("match_changed", status, self.clock())
        if future is not None:
            future.set_result(status)

    def _dispatch(self, cues: list[Cue], status: Status) -> None:
        for cue in cues:
            now = self.clock()
            # muted (ceremonies): no output sounds it; the events log says why
            unheard = ["muted by the operator"] if self.muted and not cue.stop else []
            if unheard:
                log.info("muted: cue %s not sounded", cue.name)
            for output in () if unheard else self.outputs:
                try:
                    why = output.play(cue, now)
                except Exception as exc:  # a broken output must never stop the clock
                    log.exception("output %s failed on cue %s", type(output).__name__, cue.name)
                    why = f"{type(output).__name__} failed: {exc}"
                if why:
                    unheard.append(why)
            played = max(self.clock(), cue.due)  # an output with a lead plays it when due
            self._tell("cue_played", cue, status, played, "; ".join(unheard) or None)

    def _tell_fault(self) -> None:
        """The sound is lost or back (an output's `noticed_fault`, after a cue or a check):
        the lamp hears of it, and every status shows it (ctl, the pages, the hall, the status
        line) at once, not at the next change."""
        faults = [f for f in (output.noticed_fault() for output in self.outputs) if f]
        fault = "; ".join(faults) or None
        if (fault or "")[:120] == self.audio_fault:
            return
        self.audio_fault = (fault or "")[:120]  # (a device's message can be long)
        now = self.clock()
        self._tell("fault_changed", fault, now)
        self._tell("match_changed", self.status(), now)

    def _timed(self) -> list:
        """What the runner wakes for at times of its choosing (lamp patterns, the horn's
        release, journal writes, watchdog pings, audio checks and reopens): all on the
        runner's thread, at deadlines on its clock, so none of them drifts or races."""
        return [*self.outputs, *self.listeners]

    def _timer_dues(self) -> list[float | None]:
        return [timed.next_due() for timed in self._timed()]

    def _run_timers(self, now: float) -> None:
        for timed in self._timed():
            due = timed.next_due()
            if due is not None and due <= now:
                self._fails.call(type(timed).__name__, timed.fire, now)

    def _engine_time(self, ahead: bool, given: float | None = None) -> float:
        """The engine's `now`: the clock, plus the lead when looking ahead for deadlines; for
        a command, the time it was given."""
        now = given if given is not None else self.clock() + (self.lead if ahead else 0.0)
        self._told = max(self._told, now)
        return self._told

    def _tell(self, event: str, *args: object) -> None:
        """Call `event` (a RunnerListener method) on every listener, each failing alone."""
        for listener in self.listeners:
            self._fails.call(f"{type(listener).__name__}.{event}", getattr(listener, event), *args)
