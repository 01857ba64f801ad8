"""Keeps the match going whatever the sound card does.

At start-up the card may not be ready yet (USB cards and HATs come up late at boot): opening
is retried with back-off and, after the configured attempts, the program exits non-zero so
that systemd restarts it. During a match a failing device never stops the clock: the fault is
logged, the lamp shows it, and the device is reopened from the runner's scheduler until it
works again; cues due meanwhile are lost, the match time is not."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.sound.output import AudioError, Output

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0  # how often the device is asked whether it still works
FIRST_DELAY, MAX_DELAY = 0.5, 8.0  # back-off between attempts to open it


class AudioGuard(Output):
    """Wraps the live output; `opener` returns a new one, opened and prepared. Its `lead` is
    the output's (the runner looks ahead by it)."""

    def __init__(self, opener: Callable[[], Output], attempts: int = 8,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.opener, self.attempts, self.sleep = opener, attempts, sleep
        self.output: Output | None = None
        self.when_fault_changed: list[Callable[[float], None]] = []
        self._why: str | None = None  # the fault, while there is one
        self._delay = FIRST_DELAY
        self._due: float | None = None

    # ------------------------------------------------------------------ start-up

    def prepare(self, profile: Profile) -> None:
        """Open the device, retrying with back-off (the opener prepares it for the profile);
        raises AudioError after `attempts` failures."""
        delay = FIRST_DELAY
        for attempt in range(1, self.attempts + 1):
            try:
                self.output = self._open()
                return
            except AudioError as exc:
                if attempt == self.attempts:
                    raise AudioError(f"{exc} (gave up after {attempt} attempts)") from None
                log.warning("audio not ready (attempt %d of %d): %s; trying again in %g s",
                            attempt, self.attempts, exc, delay)
                self.sleep(delay)
                delay = min(MAX_DELAY, delay * 2)

    def _open(self) -> Output:
        output = self.opener()  # opened, warm and prepared for the profile
        self.lead = output.lead
        return output

    # ------------------------------------------------------------------ the match

    @property
    def faulty(self) -> bool:
        return self._why is not None

    def play(self, cue: Cue, now: float) -> None:
        if self.output is None:
            log.warning("cue %s not heard: audio is down (%s)", cue.name, self._why)
            return
        try:
            self.output.play(cue, now)
        except Exception as exc:  # the clock goes on; the device is reopened
            self._lost(now, f"{type(exc).__name__}: {exc}")

    def next_due(self) -> float | None:
        return self._due

    def fire(self, now: float) -> None:
        if self.output is not None:
            why = self.output.fault()
            if why is None:
                self._due = now + CHECK_EVERY
            else:
                self._lost(now, why)
            return
        try:
            self.output = self._open()
        except Exception as exc:
            self._due = now + self._delay
            log.info("audio still down (%s); next try in %g s", exc, self._delay)
            self._delay = min(MAX_DELAY, self._delay * 2)
            return
        log.warning("audio is back (it had failed: %s)", self._why)
        self._why, self._delay, self._due = None, FIRST_DELAY, now + CHECK_EVERY
        self._fault_changed(now)

    def start_checks(self, now: float) -> None:
        """Begin polling the device's health (once the runner runs)."""
        self._due = now + CHECK_EVERY

    def _lost(self, now: float, why: str) -> None:
        log.error("audio lost (%s); the clock keeps running; reopening the device", why)
        output, self.output = self.output, None
        if output is not None:
            try:
                output.close()
            except Exception:
                log.debug("closing the lost device failed", exc_info=True)
        self._why, self._delay = why, FIRST_DELAY
        self._due = now + self._delay
        self._fault_changed(now)

    def _fault_changed(self, now: float) -> None:
        for callback in self.when_fault_changed:
            callback(now)

    def close(self) -> None:
        if self.output is not None:
            self.output.close()
            self.output = None
