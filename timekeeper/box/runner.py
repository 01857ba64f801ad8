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
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.output import Output

log = logging.getLogger(__name__)

Listener = Callable[[Cue | None, Status], None]


class Timed(Protocol):
    """Something the runner wakes for at times of its choosing: lamp patterns, the horn's
    release, journal writes, watchdog pings, audio reopen attempts. All of them run on the
    runner's thread, at deadlines on the runner's clock, so none of them drifts or races."""

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
        self._queue: queue.SimpleQueue[tuple[Command, Future | None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.stopped = threading.Event()
        # Outputs with a lead get cues that much early, so the engine is told a time up to
        # `lead` ahead of the clock; `_told` keeps the engine's time from ever going back
        # (a command in that window is applied at the look-ahead time, at most `lead` late).
        self.lead = max((output.lead for output in outputs), default=0.0)
        self._told = float("-inf")
        # commands to apply at an instant of this clock (a hall start): (at, n, command, future)
        self._scheduled: list[tuple[float, int, Command, Future]] = []
        self._order = itertools.count()

    def submit(self, command: Command, at: float | None = None) -> Future:
        """Queue a command from any thread; the future gets the status after it, or Refused.
        With `at` (on this runner's clock) it is applied at that very instant, not at once:
        a hall start, whose cues must sound at the same instant on every box. The runner
        looks ahead by its lead for it as for any deadline, so its cues are placed to the
        sample; an `at` already past is applied at once."""
        future: Future = Future()
        if at is None:
            self._queue.put((command, future))
        else:
            with self._lock:
                heapq.heappush(self._scheduled, (at, next(self._order), command, future))
            self._queue.put((None, None))  # wake the loop: its wait is computed anew
        return future

    def status(self) -> Status:
        with self._lock:
            return self.engine.status(max(self.clock(), self._told))

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
                command, future = self._queue.get(timeout=timeout)
            except queue.Empty:
                command, future = None, None
            at = None
            if command is None and self._scheduled and \
                    self._scheduled[0][0] - self.lead <= self.clock():
                with self._lock:
                    at, _, command, future = heapq.heappop(self._scheduled)
            if command is not None and command.action is Action.QUIT:
                self._changed(self.clock())  # the journal keeps the exact time of a shutdown
                if future:
                    future.set_result(self.status())
                break
            now = self._engine_time(ahead=command is None, at=at)
            refusal = None
            with self._lock:  # handle() plays out what came due first, refused or not
                if command is None:
                    cues = self.engine.advance(now)
                else:
                    try:
                        cues = self.engine.handle(command, now)
                    except Refused as exc:
                        cues, refusal = exc.cues, exc
                status = self.engine.status(now)
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
                log.info("operator: %s%s", command, "" if at is None else " (scheduled)")
                for callback in self.on_command:
                    try:
                        callback(command, at is not None)
                    except Exception:
                        log.exception("command callback failed")
        self.stopped.set()

    def _dispatch(self, cues: list[Cue], status: Status) -> None:
        for cue in cues:
            now = self.clock()
            for output in self.outputs:
                try:
                    output.play(cue, now)
                except Exception:  # a broken output must never stop the clock
                    log.exception("output %s failed on cue %s", type(output).__name__, cue.name)
            played = max(self.clock(), cue.due)  # an output with a lead plays it when due
            if self.events is not None and not cue.stop:
                self.events.record(cue, played)
            self._tell(cue, status)

    def _timer_dues(self) -> list[float | None]:
        return [timer.next_due() for timer in self.timers]

    def _run_timers(self, now: float) -> None:
        for timer in self.timers:
            due = timer.next_due()
            if due is not None and due <= now:
                try:
                    timer.fire(now)
                except Exception:
                    log.exception("%s failed", type(timer).__name__)

    def _changed(self, now: float) -> None:
        for callback in self.on_change:
            try:
                callback(now)
            except Exception:
                log.exception("change callback failed")

    def _engine_time(self, ahead: bool, at: float | None = None) -> float:
        """The engine's `now`: the clock, plus the lead when looking ahead for deadlines; a
        scheduled command's own instant (never before what the engine was already told)."""
        if at is not None:
            self._told = max(self._told, at)
        else:
            self._told = max(self._told, self.clock() + (self.lead if ahead else 0.0))
        return self._told

    def _tell(self, cue: Cue | None, status: Status) -> None:
        for listener in self.listeners:
            try:
                listener(cue, status)
            except Exception:
                log.exception("listener failed")
