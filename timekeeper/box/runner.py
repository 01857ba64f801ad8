"""The live runner: the one place that reads the monotonic clock.

It sleeps on the command queue until the engine's next deadline or the next command,
whichever comes first, tells the engine the time, and hands the cues to the outputs.
Controls (keyboard, ctl socket, buttons) only ever put commands on the queue."""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Cue, Engine, Status
from timekeeper.show import prompts
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.output import Output

log = logging.getLogger(__name__)

Listener = Callable[[Cue | None, Status], None]


class Timed(Protocol):
    """Something the runner wakes for at times of its choosing: lamp patterns, the horn's
    release, journal writes, watchdog pings, audio checks and reopens (the guard makes the
    device calls on its own thread, never this one). All of them run on the runner's thread,
    at deadlines on the runner's clock, so none of them drifts or races."""

    def next_due(self) -> float | None: ...

    def fire(self, now: float) -> None: ...


class Runner:
    def __init__(self, engine: Engine, outputs: list[Output], events: EventLog | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.engine, self.outputs, self.events, self.clock = engine, outputs, events, clock
        self.listeners: list[Listener] = []  # told of every cue and state change
        self.timers: list[Timed] = []
        self.on_change: list[Callable[[float], None]] = []  # after every change to the match
        # after every command applied: (command, scheduled) — scheduled: given with `at`
        self.on_command: list[Callable[[Command, bool], None]] = []
        # SimpleQueue: its put() is reentrant, so a signal handler may submit QUIT while this
        # very thread is inside get() (a queue.Queue deadlocks on its own lock there)
        # Each command goes with the runner's clock at submit: the time it was given
        self._queue: queue.SimpleQueue[tuple[Command, Future | None, float]] = (
            queue.SimpleQueue())
        self._lock = threading.Lock()
        self.stopped = threading.Event()
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
        self._guard = FailAlone()
        # commands to apply at an instant of this clock (a hall start): (at, n, command, future)
        self._scheduled: list[tuple[float, int, Command, Future]] = []
        self._order = itertools.count()

    def submit(self, command: Command, at: float | None = None) -> Future:
        """Queue a command from any thread; the future gets the status after it, or Refused.
        The command is applied at the time it was given (now, on the runner's clock), however
        long it waits in the queue (never earlier than the engine was already told).
        A sender that cancels the future in time (`future.cancel()` is True) knows that the
        command will never be applied: the runner drops it when it comes to it.
        With `at` (on this runner's clock) it is applied at that very instant instead: a hall
        start, whose cues must sound at the same instant on every box. The runner looks ahead
        by its lead for it as for any deadline, so its cues are placed to the sample; an `at`
        already past is applied at once."""
        future: Future = Future()
        if at is None:
            self._queue.put((command, future, self.clock()))
        else:
            with self._lock:
                heapq.heappush(self._scheduled, (at, next(self._order), command, future))
            self._queue.put((None, None, None))  # wake the loop: its wait is computed anew
        return future

    def status(self) -> Status:
        with self._lock:
            return self.engine.status(max(self.clock(), self._settled))

    def run(self) -> None:
        """Serve until a QUIT command."""
        last_state = None
        while True:
            with self._lock:
                deadline = self.engine.next_deadline()
            ahead = None if deadline is None else deadline - self.lead  # cues go out early
            first = self._scheduled[0][0] - self.lead if self._scheduled else None
            wakes = [t for t in (ahead, first, *self._timer_dues()) if t is not None]
            # (capped: a wait is re-computed anyway, and huge values overflow the OS's timeout)
            timeout = min(3600.0, max(0.0, min(wakes) - self.clock())) if wakes else None
            try:
                command, future, given = self._queue.get(timeout=timeout)
            except queue.Empty:
                command, future, given = None, None, None
            scheduled = command is None and bool(self._scheduled) and \
                self._scheduled[0][0] - self.lead <= self.clock()
            if scheduled:  # its instant is the time it was given
                with self._lock:
                    given, _, command, future = heapq.heappop(self._scheduled)
            if command is not None and command.action is Action.QUIT:
                self._changed(self.clock())  # the journal keeps the exact time of a shutdown
                if future:
                    future.set_result(self.status())
                break
            if future is not None and not future.set_running_or_notify_cancel():
                log.info("%s dropped: not applied within its deadline", command)
                continue  # its sender gave up on it (ctl's deadline): never applied late
            if command is not None and command.action in (Action.MUTE, Action.UNMUTE):
                self._mute(command.action is Action.MUTE, future)
                continue
            now = self._engine_time(ahead=command is None, given=given)
            refusal = None
            with self._lock:  # handle() plays out what came due first, refused or not
                before = self.engine.state
                if command is None:
                    cues = self.engine.advance(now)
                else:
                    try:
                        cues = self.engine.handle(command, now)
                    except Refused as exc:  # worded for the operator: what to press now
                        cues, refusal = exc.cues, prompts.complete(exc, self.engine.status(now))
                status = self.engine.status(now)
                if cues or command is not None or self.engine.state != before:
                    self._settled = now  # (in the lock: no status from before the change)
            self._dispatch(cues, status)
            changed = bool(cues) or (command is not None and refusal is None)
            if status.state != last_state:
                last_state, changed = status.state, True
                self._tell(None, status)
            if changed:
                self._changed(now)
            self._run_timers(self.clock())
            if future is not None:
                if refusal is not None:
                    future.set_exception(refusal)
                else:
                    future.set_result(status)
            if refusal is not None:
                log.info("%s refused: %s", command, refusal)
            elif command is not None:  # the record a scorekeeper can look back on
                log.info("operator: %s%s", command, " (scheduled)" if scheduled else "")
                for callback in self.on_command:
                    self._guard.call(_name(callback), callback, command, scheduled)
        self.stopped.set()

    def _mute(self, muted: bool, future: Future | None) -> None:
        if muted != self.muted:
            self.muted = muted
            log.info("sound %s by the operator%s", "muted" if muted else "back on",
                     " (relays and lamp still work)" if muted else "")
        status = self.status()
        self._tell(None, status)  # screens show it at once
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
            if self.events is not None and not cue.stop:
                self._guard.call("the events log", self.events.record, cue, played,
                                 "; ".join(unheard) or None)
            self._tell(cue, status)

    def _timer_dues(self) -> list[float | None]:
        return [timer.next_due() for timer in self.timers]

    def _run_timers(self, now: float) -> None:
        for timer in self.timers:
            due = timer.next_due()
            if due is not None and due <= now:
                self._guard.call(type(timer).__name__, timer.fire, now)

    def _changed(self, now: float) -> None:
        for callback in self.on_change:
            self._guard.call(_name(callback), callback, now)

    def _engine_time(self, ahead: bool, given: float | None = None) -> float:
        """The engine's `now`: the clock, plus the lead when looking ahead for deadlines; for
        a command, the time it was given."""
        now = given if given is not None else self.clock() + (self.lead if ahead else 0.0)
        self._told = max(self._told, now)
        return self._told

    def _tell(self, cue: Cue | None, status: Status) -> None:
        for listener in self.listeners:
            self._guard.call(_name(listener), listener, cue, status)


def _name(thing: object) -> str:
    owner = getattr(thing, "__self__", None)  # a bound method: its object's class
    if owner is not None:
        return type(owner).__name__
    return getattr(thing, "__qualname__", type(thing).__name__)


class FailAlone:
    """Every output that is not the sound (events log, journal, lamp, relays, status line,
    log lines) fails alone: the match goes on, the fault is told once, the output is tried
    again at its next turn, and told once more when it works again."""

    def __init__(self) -> None:
        self.failing: set[str] = set()

    def call(self, what: str, action: Callable[..., object], *args: object) -> None:
        try:
            action(*args)
        except Exception as exc:
            if what not in self.failing:
                self.failing.add(what)
                log.error("%s failed (%s); the match goes on, and it is tried again", what,
                          exc, exc_info=not isinstance(exc, OSError))
            return
        if what in self.failing:
            self.failing.discard(what)
            log.info("%s works again", what)
