"""Keeps the match going whatever the sound card does.

At start-up the card may not be ready yet (USB cards and HATs come up late at boot): opening
is retried with back-off and, after the configured attempts, the program exits non-zero so
that systemd restarts it.

During a match the device is never touched from the runner's thread. Opening, closing and
the health checks that ask SDL can each block for as long as a sound server hangs (PulseAudio
stopped: seconds, minutes), so they run on the guard's own thread; the runner hands cues to
the output that is ready (a few microseconds under the stream's lock), asks for a check or a
reopen at deadlines on its own clock, and collects the answers when it next wakes. A failing
device never stops the clock or the controls: the fault is logged, the lamp shows it, the
device is reopened until it works again; cues due meanwhile are logged as not heard."""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable

from timekeeper.rules.engine import Cue
from timekeeper.rules.profiletypes import Profile
from timekeeper.sound.output import AudioError, Output

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0  # how often the device is asked whether it still works
FIRST_DELAY, MAX_DELAY = 0.5, 8.0  # back-off between attempts to open it
COLLECT = 0.05  # s after asking the guard's thread something, the runner looks for the answer
HUNG = 2.0  # s a device call may take before the log says that the sound server hangs
CLOSE_TIMEOUT = 1.0  # s a shutdown waits for the device to close (then it goes without)


class _Job:
    """One call to the device, run on the guard's thread; the runner collects its answer."""

    def __init__(
        self, kind: str, call: Callable[[], object], posted: float, output: Output | None = None
    ) -> None:
        self.kind, self.call, self.posted, self.output = kind, call, posted, output
        self.result: object = None
        self.error: BaseException | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.result = self.call()
        except Exception as exc:
            self.error = exc
        self.done.set()


class AudioGuard(Output):
    """Wraps the live output; `opener` returns a new one, opened, which the guard prepares
    for the profile it was itself prepared for (an output that is prepared already keeps
    what it built: preparing it again costs nothing). Its `lead` is the output's (the
    runner looks ahead by it)."""

    def __init__(
        self,
        opener: Callable[[], Output],
        attempts: int = 8,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.opener, self.attempts, self.sleep = opener, attempts, sleep
        self.output: Output | None = None
        self.profile: Profile | None = None  # what every output it opens is prepared for
        self._why: str | None = None  # the fault, while there is one
        self._delay = FIRST_DELAY
        self._due: float | None = None
        self._jobs: deque[_Job] = deque()  # asked of the guard's thread, oldest first
        self._inbox: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._hung_told = False

    # ------------------------------------------------------------------ start-up

    def prepare(self, profile: Profile) -> None:
        """Open the device and prepare it for `profile`, retrying with back-off; raises
        AudioError after `attempts` failures. A device reopened mid-match is prepared for
        the same profile."""
        self.profile = profile
        delay = FIRST_DELAY
        for attempt in range(1, self.attempts + 1):
            try:
                self.output = self._open()
                return
            except AudioError as exc:
                if attempt == self.attempts:
                    raise AudioError(f"{exc} (gave up after {attempt} attempts)") from None
                log.warning(
                    "audio not ready (attempt %d of %d): %s; trying again in %g s",
                    attempt,
                    self.attempts,
                    exc,
                    delay,
                )
                self.sleep(delay)
                delay = min(MAX_DELAY, delay * 2)

    def _open(self) -> Output:
        output = self.opener()  # opened and warm
        if self.profile is not None:
            try:
                output.prepare(self.profile)
            except BaseException:
                output.close()
                raise
        self.lead = output.lead
        return output

    # ------------------------------------------------------------------ the match

    @property
    def faulty(self) -> bool:
        return self._why is not None

    def play(self, cue: Cue, now: float) -> str | None:
        """Hand the cue to the output that is ready (never a blocking call); the reason it
        is not heard otherwise."""
        output = self.output
        if output is None:
            why = f"audio lost: {self._why}"
        else:
            try:
                problem = output.play(cue, now)
            except Exception as exc:  # the clock goes on; the device is reopened
                problem = f"{type(exc).__name__}: {exc}"
            if problem is None:
                return None
            self._lost(now, problem)
            why = f"audio lost: {problem}"
        if not cue.stop:
            log.warning("cue %s not heard: %s", cue.name, why)
        return why

    def fault(self) -> str | None:
        return self._why

    def noticed_fault(self) -> str | None:
        return self._why

    def next_due(self) -> float | None:
        return self._due

    def fire(self, now: float) -> None:
        """On the runner's thread: collect what the guard's thread has done, then ask it for
        the next check or reopen. Never waits for the device."""
        while self._jobs:
            job = self._jobs[0]
            if not job.done.is_set():  # the device is still busy: look again soon
                if now - job.posted > HUNG and not self._hung_told:
                    self._hung_told = True
                    log.warning(
                        "the audio device has not answered for %.0f s (%s): the "
                        "sound server hangs; the clock and the controls go on",
                        now - job.posted,
                        job.kind,
                    )
                self._due = now + COLLECT * 5
                return
            self._jobs.popleft()
            self._collect(job, now)
        self._hung_told = False
        if self._due is not None and self._due > now:
            return  # collected an answer that set the next time
        if self.output is not None:
            output = self.output
            self._ask("check", output.fault, now, output)
        else:
            self._ask("open", self._open, now)
        self._due = now + COLLECT

    def _collect(self, job: _Job, now: float) -> None:
        if job.kind == "check":
            why = (
                f"{type(job.error).__name__}: {job.error}" if job.error is not None else job.result
            )
            if job.output is not self.output:
                pass  # lost meanwhile (a cue found it stalled): its close is under way
            elif why is None:
                self._due = now + CHECK_EVERY
            else:
                self._lost(now, str(why))
        elif job.kind == "close":
            if job.error is not None:
                log.debug("closing the lost device failed: %s", job.error)
            self._due = now + self._delay
        elif job.kind == "open":
            if job.error is not None or not isinstance(job.result, Output):
                self._due = now + self._delay
                log.info("audio still down (%s); next try in %g s", job.error, self._delay)
                self._delay = min(MAX_DELAY, self._delay * 2)
                return
            self.output = job.result
            log.warning("audio is back (it had failed: %s)", self._why)
            self._why, self._delay, self._due = None, FIRST_DELAY, now + CHECK_EVERY

    def start_checks(self, now: float) -> None:
        """Begin polling the device's health (once the runner runs)."""
        self._due = now + CHECK_EVERY

    def _lost(self, now: float, why: str) -> None:
        log.error("audio lost (%s); the clock keeps running; reopening the device", why)
        output, self.output = self.output, None
        if output is not None:
            self._ask("close", output.close, now, output)
        self._why, self._delay = why, FIRST_DELAY
        self._due = now + COLLECT

    def _ask(
        self, kind: str, call: Callable[[], object], now: float, output: Output | None = None
    ) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="audio-guard", daemon=True)
            self._thread.start()
        job = _Job(kind, call, now, output)
        self._jobs.append(job)
        self._inbox.put(job)

    def _serve(self) -> None:
        while (job := self._inbox.get()) is not None:
            job.run()

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Release the device within `timeout` seconds, hung or not: a shutdown must never
        wait for a frozen sound server (systemd would kill the box mid-write)."""
        output, self.output = self.output, None
        busy = any(not job.done.is_set() for job in self._jobs)
        reopened = [
            job.result
            for job in self._jobs
            if job.kind == "open" and job.done.is_set() and isinstance(job.result, Output)
        ]
        if output is None and reopened:  # reopened just before the end, never collected
            output = reopened[0]
        if self._thread is not None:
            self._inbox.put(None)
        if output is not None:
            closing = threading.Thread(target=output.close, name="audio-close", daemon=True)
            closing.start()
            closing.join(timeout)
            busy = busy or closing.is_alive()
        if busy:
            log.warning(
                "the audio device did not answer at shutdown (the sound server "
                "hangs): leaving it open"
            )
            _skip_audio_quit_at_exit()


def _skip_audio_quit_at_exit() -> None:
    """pygame quits SDL at exit, and SDL then waits for every audio device to close: with a
    hung one, for ever. The process is ending anyway; the OS reclaims the device."""
    import sys

    pygame = sys.modules.get("pygame")
    if pygame is not None:
        atexit.unregister(pygame.quit)
