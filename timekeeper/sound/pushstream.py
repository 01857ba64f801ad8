"""Live sound written to a device that says when it will play what it is given (PulseAudio's
stream latency, ALSA's snd_pcm_delay): the time of every frame comes from the device, not
from when a callback happened to run.

Why: the SDL stream (sound/stream.py) knows only when its callbacks ran and adds a constant
latency; a sound server changes that latency as streams join and settle, and callbacks come
late under load, so its first cues after a start could be 5-80 ms off while the box logged
them as on time (issue 21, docs/timing.md). Here a writer thread asks the device, before
every block, how long until the next frame it writes is heard, writes the block (blocking
until there is room: the device sets the pace) and goes round again; the cues are mixed in
by the same `Voices` as the SDL stream, at the frame the device's own figure gives.

Two pieces, the first free of any device so that tests can drive it:
- DelayClock: stream frame ↔ runner time, from the device's delay figures;
- PushAudio: the Output that owns the device (a `Sink`) and its writer thread."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np

from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError, Output
from timekeeper.sound.pack import SoundPack
from timekeeper.sound.priority import raise_priority
from timekeeper.sound.stream import Voices

log = logging.getLogger(__name__)

PERIOD = 1920  # frames per write (40 ms): the writer wakes 25 times a second
# frames per write on a device that lets written frames be rewritten (PulseAudio): 200 ms,
# 5 wake-ups a second, 400 ms written ahead; a press is mixed into what is written already,
# REWRITE_AHEAD after it (bench/rewrite.py: the writer's CPU 0.6 % → 0.16 % of a core)
REWRITE_PERIOD = 9600
REWRITE_AHEAD = 0.030  # s from a press to its sound: the writer's wake-up and the rewrite
REWRITE_LEAD = 0.170  # s a cue is handed over early where it is rewritten (PushAudio)
TARGET = 0.080  # s of latency asked of the device: 2 periods, as snapclient keeps 4 of 20 ms
MARGIN = 0.050  # s of slack for the runner's wake-up under load (seen 55 ms late)
READ_GAP = 0.0005  # s: a delay figure whose reading took longer than this is not trusted
KEEP = 9  # delay figures the clock takes the median of (≈ 0.36 s at 40-ms periods)
# s without a block taken before the stream is a fault and is reopened. Not SDL's 0.5 s: a
# server that is merely busy (8 boxes starting at once at load 26 here) went 0.7-1.3 s
# without asking for data, and reopening it then only added work (opening took over 2 s);
# a frozen server is still noticed within STALL + the guard's 1-s check.
STALL = 2.0
REPORT_EVERY = 0.25  # s between readings of the device's timing report (a steady clock)
START_TIMEOUT = 3.0  # s for the first block to be taken
CLOSE_WAIT = 1.0  # s a close waits for the writer to leave the device (a frozen one: not)


class Sink(Protocol):
    """A device opened for playback, float32 mono at RATE."""

    def delay(self) -> float:
        """Seconds until the next frame written is heard."""

    def write(self, block: np.ndarray) -> None:
        """Blocks until the device has taken `block`."""

    def close(self) -> None: ...


class RewritableSink(Sink, Protocol):
    """A Sink whose written, not yet played frames may be written again."""

    def wait_room(self, frames: int) -> bool:
        """Blocks until the device has room for `frames`; False when woken before."""

    def wake(self) -> None:
        """From another thread: ends a wait_room() now."""

    def write_at(self, block: np.ndarray, frame: int) -> None:
        """Writes `block` over the frames from `frame` on; the stream goes on after it."""


class DelayClock:
    """Maps stream frames to the runner's clock: frame k is heard at origin + k/RATE.

    Each write gives one figure: `delay` read between `before` and `after` (runner time)
    while `frames` frames had been written, so origin ≈ (before + after)/2 + delay −
    frames/RATE. A reading that took long (the thread was preempted) is dropped; the median
    of the last KEEP figures is robust to the odd late one, and follows a real change of the
    device's timeline (an underrun of a device that does not keep it, a resync) within half
    of them."""

    latency = 0.0

    def __init__(self, keep: int = KEEP, read_gap: float = READ_GAP) -> None:
        self.read_gap = read_gap
        self._figures: deque[float] = deque(maxlen=keep)
        self.origin: float | None = None
        self.dropped = 0
        self.reported = False  # the device's own reports are in use

    def observe(self, frames: int, before: float, after: float, delay: float) -> None:
        if after - before > self.read_gap:
            self.dropped += 1
            return
        self._figures.append((before + after) / 2 + delay - frames / RATE)
        self.origin = _median(self._figures)

    def observe_report(self, frame: int, heard: float) -> None:
        """The device reported that `frame` is heard at `heard` (its own reading: no delay
        of ours in it). The first report replaces the figures read around `delay()`."""
        if not self.reported:
            self.reported = True
            self._figures.clear()
        self._figures.append(heard - frame / RATE)
        self.origin = _median(self._figures)

    def frame_at(self, t: float) -> int:
        """The frame that is heard at runner time `t`."""
        if self.origin is None:
            raise RuntimeError("the stream has not started")
        return round((t - self.origin) * RATE)

    def time_of(self, frame: int) -> float:
        if self.origin is None:
            raise RuntimeError("the stream has not started")
        return self.origin + frame / RATE


def _median(values: deque[float]) -> float:
    """The median (not `statistics.median`: that module brings fractions, decimal and
    random, ~0.7 MB of a box's 45-MB budget, for one line)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


class PushAudio(Output):
    """Live sound through a Sink that reports its delay, written by one thread of its own.

    The runner hands cues over `lead` seconds early; they are placed at the frame the
    device's figures give. `clock` must be the runner's clock (the writer reads it around
    each delay figure, and it never decides anything about the match)."""

    def __init__(self, pack: SoundPack, open_sink: Callable[[int, float], Sink],
                 period: int = PERIOD, target: float = TARGET,
                 clock: Callable[[], float] = time.monotonic, realtime: bool = True) -> None:
        self.pack, self.period, self.clock = pack, period, clock
        self.frames = DelayClock()
        self.voices = Voices()
        self.lead = target + period / RATE + MARGIN
        self.last_write: float | None = None
        self.writes = 0
        self.priority = "normal"
        self._realtime = realtime
        self._closed = False
        self._error: str | None = None
        self._started = threading.Event()
        self._sink = open_sink(period, target)
        # a press is mixed into the frames written already, where the device allows it
        self._rewrites = all(hasattr(self._sink, name) for name in ("write_at", "wake"))
        if self._rewrites:
            self.voices.keep = round(target * RATE) + 2 * period  # (what may be rewritten)
            # cues are handed over only this early, each mixed into what is written already:
            # as early as before the rewrite (latency 80 ms + a 40-ms period + MARGIN), so a
            # command is no later than it was (the runner applies one at the look-ahead time
            # it has told the engine: at 0.65 s, a pause sounded up to 230 ms after the
            # press), and a runner 140 ms late still finds its cue's frames rewritable (at
            # 80 ms, 8 boxes on 2 cores lost a mark now and then)
            self.lead = REWRITE_LEAD
        self._rewind_from: int | None = None
        self._rewind_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="audio-writer", daemon=True)
        self._thread.start()
        started = self._started.wait(START_TIMEOUT)  # (set by a first failure too)
        if not started or self._error is not None:
            self.close()
            raise AudioError(self._error or "the audio stream did not start within "
                             f"{START_TIMEOUT:g} s")

    def prepare(self, profile: Profile) -> None:
        """Build every sample array the match can need now, never mid-match."""
        self.pack.prepare(profile)

    def play(self, cue: Cue, now: float) -> str | None:
        """Places the cue at its frame (microseconds under the voices' lock, never a call
        into the device), or says why it cannot be heard."""
        if (why := self.stalled(now)) is not None:
            return why
        if not self.pack.plays(cue):
            return None
        frame = self.frames.frame_at(cue.due)
        earliest = self.frames.frame_at(now + REWRITE_AHEAD) if self._rewrites else None
        if cue.stop:
            start = self.voices.stop(cue.name, frame, earliest)
        elif (start := self.voices.add(cue.name, frame, self.pack.samples(cue),
                                       earliest)) != frame:
            log.warning("cue %s came %.1f ms too late for its frame (handed over %.1f ms "
                        "before due): it sounds that much late", cue.name,
                        (start - frame) * 1000 / RATE, (cue.due - now) * 1000)
        if self._rewrites and start < self.voices.next_frame:  # written already: again
            with self._rewind_lock:
                if self._rewind_from is None or start < self._rewind_from:
                    self._rewind_from = start
            self._sink.wake()  # type: ignore[attr-defined]
        return None

    def stalled(self, now: float) -> str | None:
        """Whether the device has stopped taking blocks (a frozen server, a hung driver) or
        failed: plain arithmetic, safe on any thread."""
        if self._closed:
            return None
        if self._error is not None:
            return self._error
        last = self.last_write
        if last is not None and now - last > STALL + self.period / RATE:
            return f"audio stream stalled: no block taken for {now - last:.1f} s"
        return None

    def fault(self) -> str | None:
        return self.stalled(self.clock())

    def close(self) -> None:
        """Stops the writer and waits for it (at most CLOSE_WAIT): the device is closed by
        the writer itself once its last write returns (closing it under a blocked write
        would pull it from under that call), and no writer may still be inside the device's
        library when the program exits (libpulse aborts the process then)."""
        self._closed = True
        if (interrupt := getattr(self._sink, "interrupt", None)) is not None and \
                self._thread.is_alive():
            interrupt()
        if self._thread is not threading.current_thread():
            self._thread.join(CLOSE_WAIT)

    def _run(self) -> None:
        if self._realtime:
            self.priority = raise_priority()  # (the sink's mainloop runs in this thread)
        silence = np.zeros(self.period, np.float32)
        block = np.zeros(self.period, np.float32)
        sink = self._sink
        try:
            reports, waits = hasattr(sink, "timing"), hasattr(sink, "wait_room")
            every = max(1, round(REPORT_EVERY * RATE / self.period))
            while not self._closed:
                if (reports and (self.writes % every == 0 or not self.frames.reported)
                        and (report := sink.timing(self.clock)) is not None):
                    self.frames.observe_report(*report)
                if not reports or self.frames.origin is None:
                    before = self.clock()
                    delay = sink.delay()
                    after = self.clock()
                    self.frames.observe(self.voices.next_frame, before, after, delay)
                if waits and sink.wait_room(self.period) is False:
                    self._rewrite(sink)  # woken by a press
                    continue
                if self._rewrites:
                    self._rewrite(sink)  # (a press while the last block was mixed)
                sink.write(block if self._mix(block) else silence)
                self.last_write = self.clock()
                self.writes += 1
                if not self._started.is_set():
                    self._started.set()
        except AudioError as exc:
            if not self._closed:  # (a close interrupts a wait for room: no fault, no word)
                self._error = str(exc)
                log.warning("audio stream: %s", exc)
        except Exception:  # never a silent death: say so, and let the guard reopen
            self._error = "audio stream: the writer failed"
            log.exception("audio stream: the writer failed")
        finally:
            self._started.set()
            sink.close()

    def _rewrite(self, sink) -> None:
        """Mix again, and write over, the frames from the earliest one a press changed up
        to where the stream had got to."""
        with self._rewind_lock:
            frame, self._rewind_from = self._rewind_from, None
        if frame is None:
            return
        reached = self.voices.rewind(frame)
        if reached <= frame:  # (nothing written there yet: the next block has it)
            self.voices.rewind(reached)
            return
        again = np.zeros(reached - frame, np.float32)
        self._mix(again)
        sink.write_at(again, frame)

    def _mix(self, block: np.ndarray) -> bool:
        """Mix the next block into `block`; False (and no work) when nothing is playing."""
        if self.voices.skip_idle(len(block)):
            return False
        try:
            self.voices.fill(block)
        except Exception:  # never noise, never a dead stream: silence, and say so once
            block.fill(0.0)
            if not self._error:
                log.exception("audio stream: mixing failed")
        return True
