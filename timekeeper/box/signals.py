"""Lights and relays on GPIO: the status lamp, the hall horn, the buzzer.

Their timing comes from the runner's scheduler (each a RunnerListener: `next_due`, then
`fire`), not from gpiozero's `blink()` threads: every edge is computed from the time the
pattern began, so a blink never drifts and a horn is released exactly `seconds` after its
cue was due."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from timekeeper.box.failalone import FailAlone
from timekeeper.box.wiring import LampConfig, RelayConfig
from timekeeper.rules.engine import Cue, Status
from timekeeper.sound.listener import RunnerListener

RETRY = 1.0  # seconds before a pin that failed is set again


class _Pin(RunnerListener):
    """A lamp or relay whose pin cannot be set never stops the match: told once with its
    pin, tried again, told when it works again."""

    what = "GPIO output"

    def __init__(self) -> None:
        self._fails = FailAlone()

    def _set(self, action: Callable[[], object]) -> bool:
        return self._fails.call(self.what, action)


@dataclass(frozen=True)
class Pattern:
    """A repeating light pattern: lit during each (start, end) of every `period` seconds."""

    name: str
    period: float
    lit: tuple[tuple[float, float], ...]

    def level(self, since: float, now: float) -> bool:
        phase = (now - since) % self.period
        return any(start <= phase < end for start, end in self.lit)

    def next_edge(self, since: float, now: float) -> float | None:
        """The first time after `now` at which the level changes (None: it never does)."""
        if not self.lit or self.lit == ((0.0, self.period),):
            return None  # off or steady
        edges = sorted({t % self.period for span in self.lit for t in span})
        cycle = math.floor((now - since) / self.period)
        for k in (cycle, cycle + 1):
            for edge in edges:
                t = since + k * self.period + edge
                if t > now:
                    return t
        return None


OFF = Pattern("off", 1.0, ())
STEADY = Pattern("steady", 1.0, ((0.0, 1.0),))
SLOW = Pattern("slow blink", 1.0, ((0.0, 0.5),))  # clock stopped: a pause, a break, a wait
FAST = Pattern("fast blink", 0.25, ((0.0, 0.125),))  # pre-start countdown
FAULT = Pattern("double flash", 2.0, ((0.0, 0.12), (0.3, 0.42)))  # audio lost

LAMP_PATTERNS = {
    "idle": OFF,
    "finished": OFF,
    "prestart": FAST,
    "running": STEADY,
    "shot": STEADY,
    "stopped": SLOW,
    "break": SLOW,
    "waiting": SLOW,
    "shootout": SLOW,
}


class Lamp(_Pin):
    """The status lamp: steady while the clock runs, slow blink while it is stopped, fast
    blink during the pre-start countdown, off when idle; a double flash while audio is lost.
    A runner listener (the match's state and the sound's faults) and timer (each edge)."""

    def __init__(self, config: LampConfig, factory: object) -> None:
        from gpiozero import DigitalOutputDevice

        super().__init__()
        self.device = DigitalOutputDevice(
            config.pin, active_high=config.active_high, initial_value=False, pin_factory=factory
        )
        self.state = "idle"  # the match's, as last told
        self.faulty = False  # the sound's
        self.what = f"the lamp (GPIO{config.pin})"
        self.pattern, self._since = OFF, 0.0
        self._next: float | None = None

    def match_changed(self, status: Status, now: float) -> None:
        self.state = status.state
        self.update(now)

    def fault_changed(self, fault: str | None, now: float) -> None:
        self.faulty = fault is not None
        self.update(now)

    def pattern_for(self) -> Pattern:
        return FAULT if self.faulty else LAMP_PATTERNS.get(self.state, OFF)

    def update(self, now: float) -> None:
        wanted = self.pattern_for()
        if wanted != self.pattern:
            self.pattern, self._since = wanted, now
        self._show(now)

    def _show(self, now: float) -> None:
        level = self.pattern.level(self._since, now)
        shown = self._set(lambda: setattr(self.device, "value", level))
        edge = self.pattern.next_edge(self._since, now)
        self._next = edge if shown else min(edge or now + RETRY, now + RETRY)

    # the runner's scheduler interface
    def next_due(self) -> float | None:
        return self._next

    def fire(self, now: float) -> None:
        self._show(now)

    def close(self) -> None:
        self.device.close()


class Relay(_Pin):
    """A horn relay or a buzzer: on when one of its cues is played, off `seconds` after that
    cue was due (cues close together keep it on)."""

    def __init__(self, config: RelayConfig, factory: object) -> None:
        from gpiozero import DigitalOutputDevice

        super().__init__()
        self.config = config
        self.what = f"the relay on GPIO{config.pin}"
        self.device = DigitalOutputDevice(
            config.pin, active_high=config.active_high, initial_value=False, pin_factory=factory
        )
        self._on_at: float | None = None  # due, not yet closed
        self._off_at: float | None = None

    def cue_played(self, cue: Cue, status: Status, played: float, not_heard: str | None) -> None:
        """Told of every cue as it is handed to the audio output (muted or not heard too: a
        horn is no sound card), which may be a little before it is due (the stream's
        look-ahead): the relay closes when it is due, from the runner's schedule."""
        if cue.stop or cue.name not in self.config.cues:
            return
        off_at = cue.due + self.config.seconds
        if self._off_at is None:
            self._on_at = cue.due
        self._off_at = off_at if self._off_at is None else max(self._off_at, off_at)
        self._on_at = min(self._on_at, cue.due) if self._on_at is not None else None

    def next_due(self) -> float | None:
        return self._on_at if self._on_at is not None else self._off_at

    def fire(self, now: float) -> None:
        if self._on_at is not None:
            if not self._set(self.device.on):
                self._on_at = now + RETRY
                return
            self._on_at = None
            if self._off_at is not None and now < self._off_at:
                return
        if not self._set(self.device.off):
            self._off_at = now + RETRY  # a horn must never stay on: tried until it is off
            return
        self._off_at = None

    def close(self) -> None:
        self.device.close()
