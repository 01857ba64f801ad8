"""Sample-accurate live sound: one always-running stream of frames into which the pack's
pre-loaded samples are mixed at the exact frame each cue is due — whatever the back end.

Why: `Sound.play()` starts a sound at the next buffer boundary of a stream that may still be
waking up, so cues land 3–8 ms (and the first one hundreds of ms) off their deadline. Here
the stream runs from start-up, the output knows which frame reaches the speaker when, and a
cue handed over `lead` seconds early is placed at the frame that is heard at its due time,
by the same `Voices` (sound/voices.py) an offline render mixes with.

`FramedOutput` holds all of that: the voices, the frame clock, the look-ahead, the stall
rule, the rewrite of written frames on a press, the writer thread. A back end is a `Sink`:
how frames get to its device, and what it can tell, DECLARED as class attributes, never
probed. Adding one (ALSA, PipeWire) is a subclass of `Sink` in a module of its own, its
name in `devices.SINKS` (which `--audio` and `audio.sink` are checked against), a branch in
`devices.open_sink`:

- `pulls`: True where the device calls back for each block (SDL: `start(fill)`, on the
  device's own thread); False where the base's writer thread pushes blocks (`write`,
  blocking until the device has taken them: the device sets the pace);
- `reports` (pushed sinks): True where `timing(clock)` gives the device's own report
  (frame, heard at); else a pushed stream is timed by `delay()` read around each write, and
  a pulled one by its callbacks' times plus the constant `latency` (FrameClock);
- `rewrites` (pushed sinks): True where written, not yet played frames may be written
  again (`wait_room`, `wake`, `write_at`): a press is then mixed into what is written;
- `period` (frames per block), `latency` (s from a block taken to its first frame heard,
  as the look-ahead counts it), `margin` (s of slack for the runner's wake-up), `stall` (s
  without a block taken before the stream is a fault);
- `restarts` (reporting sinks): counts the device's timeline beginning again (ALSA: an
  underrun recovered), on which the clock starts over from the next report;
- `fault()` for what only the device knows (SDL: a removed device), `interrupt()` to end a
  blocked call from another thread (a close), `close()`.

Two clocks, free of any device so that tests can drive them: FrameClock (callback times)
and DelayClock (the device's delay figures and reports)."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from timekeeper.rules.engine import Cue
from timekeeper.rules.profiletypes import Profile
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError, Output
from timekeeper.sound.pack import SoundPack
from timekeeper.sound.priority import raise_priority
from timekeeper.sound.voices import Voices

log = logging.getLogger(__name__)

# on a sink that rewrites (PulseAudio): a press is mixed into what is written already,
# REWRITE_AHEAD after it (bench/rewrite.py: the writer's CPU 0.6 % → 0.16 % of a core)
REWRITE_AHEAD = 0.030  # s from a press to its sound: the writer's wake-up and the rewrite
REWRITE_LEAD = 0.170  # s a cue is handed over early where it is rewritten
READ_GAP = 0.0005  # s: a delay figure whose reading took longer than this is not trusted
KEEP = 9  # delay figures the clock takes the median of (≈ 0.36 s at 40-ms periods)
# the device's timing report is read once a block (≥ 80 ms apart: 12 a second at the ALSA
# sink's 85-ms blocks, one snd_pcm_status each, a few µs; never a loop of delay calls, which
# upset the Pi 4's driver): a lower envelope needs many reports, a position in 21-ms steps
# about 20 to come within 1 ms of a step
REPORT_EVERY = 0.08  # s at least between readings of the device's timing report
WINDOW = 2.0  # s of reports whose earliest is one point of the timeline's lower envelope
WINDOWS = 4  # past windows the envelope spans besides the one being filled
SHIFT = 0.010  # s (or a window's sawtooth, if more): a window that much later: it moved
# a FULL window (reports at every phase of the step) that much later, or half its sawtooth
# if more, moved too: its second earliest of 20 is later than half a step once in 50000
NUDGE = 0.002
FULL = 20
START_TIMEOUT = 3.0  # s for the first block (an idle PulseAudio null sink: ~2 s)
CLOSE_WAIT = 1.0  # s a close waits for the writer to leave the device (a frozen one: not)


class Sink:
    """A device opened for playback, float32 mono at RATE, paused until the output starts
    it; the capabilities are declared (module docstring), the methods of a capability a sink
    does not declare are never called."""

    name = "?"  # as `--audio` names it, and the log
    pulls = False
    reports = False
    rewrites = False
    period = 1920  # frames per block
    latency = 0.080  # s from a block taken to its first frame heard
    margin = 0.050  # s of slack for the runner's wake-up under load (seen 55 ms late)
    stall = 2.0  # s without a block taken: the device has gone
    restarts = 0  # (reports) times the device's timeline began again (an underrun recovered)

    def start(self, fill: Callable[[np.ndarray], None]) -> None:
        """(pulls) Begin calling `fill(out)` for every block, on the device's thread."""
        raise NotImplementedError

    def delay(self) -> float:
        """(pushed) Seconds until the next frame written is heard."""
        raise NotImplementedError

    def write(self, block: np.ndarray) -> None:
        """(pushed) Blocks until the device has taken `block`."""
        raise NotImplementedError

    def timing(self, clock: Callable[[], float]) -> tuple[int, float] | None:
        """(reports) The newest report: (frame, heard at on `clock`), or None: none new."""
        raise NotImplementedError

    def wait_room(self, frames: int) -> bool:
        """(rewrites) Blocks until the device has room for `frames`; False when woken."""
        raise NotImplementedError

    def wake(self) -> None:
        """(rewrites) From another thread: ends a wait_room() now."""
        raise NotImplementedError

    def write_at(self, block: np.ndarray, frame: int) -> None:
        """(rewrites) Writes `block` over the frames from `frame` on."""
        raise NotImplementedError

    def fault(self) -> str | None:
        """What only the device can tell is wrong (polled off the runner's thread)."""
        return None

    def interrupt(self) -> None:
        """From another thread: end a blocked call (a close)."""

    def close(self) -> None:
        """Release the device (pushed: by the writer, once its last call returned)."""


class FrameClock:
    """A pulled stream's clock: frame k reaches the speaker at origin + k/RATE + latency.

    Each callback gives one sample of `origin` (its time minus the frames already written).
    A callback is never early, only late (scheduling, the GIL), so the earliest sample is the
    truest; a minimum over a few seconds' window also follows a sound card whose crystal
    drifts against the system clock, which a minimum over all time would not."""

    reported = False  # (a pulled device reports nothing of its own)

    def __init__(self, latency: float = 0.0, window: float = 1.0, windows: int = 4) -> None:
        self.latency, self.window = latency, window
        self._past: deque[float] = deque(maxlen=windows)  # minima of the last full windows
        self._current: float | None = None
        self._window_end = 0.0
        self.origin: float | None = None

    def observe(self, frames_before: int, now: float) -> None:
        """A callback is about to fill frames from `frames_before` on; it is `now`."""
        candidate = now - frames_before / RATE
        if self._current is None or now >= self._window_end:
            if self._current is not None:
                self._past.append(self._current)
            self._current, self._window_end = candidate, now + self.window
        else:
            self._current = min(self._current, candidate)
        self.origin = min([self._current, *self._past])

    def frame_at(self, t: float) -> int:
        """The frame that reaches the speaker at runner time `t`."""
        if self.origin is None:
            raise RuntimeError("the stream has not started")
        return round((t - self.latency - self.origin) * RATE)

    def time_of(self, frame: int) -> float:
        if self.origin is None:
            raise RuntimeError("the stream has not started")
        return self.origin + frame / RATE + self.latency


class DelayClock:
    """A pushed stream's clock: frame k is heard at origin + k/RATE.

    Before the device reports, each write gives one figure: `delay` read between `before`
    and `after` (runner time) while `frames` frames had been written, so origin ≈ (before +
    after)/2 + delay − frames/RATE; a reading that took long (the thread was preempted) is
    dropped, and the median of the last KEEP figures is robust to the odd late one.

    The device's own reports set the clock once they come, and they are read as a TIMELINE,
    not one by one: a device whose position moves in steps (a JACK period; the Pi's
    headphone jack, whose firmware sends the position every 10 ms; PipeWire's quantum)
    reports a position that is stale by 0 to one step, so each report puts the origin late
    by that much, and the median of recent ones passed that sawtooth on (a spread of 4–7 ms
    at 5–21-ms steps). A report is never early by staleness, so the report just after a
    step is the truest: the clock is the LOWER ENVELOPE of the reports, the earliest origin
    of each WINDOW of them over the last WINDOWS + 1 windows (≈ 10 s, 120 reports at one a
    block), as FrameClock takes the earliest callback. Why not a line fitted through them:
    the envelope needs no slope, and its lag behind a crystal that drifts is the drift times
    its span (0.5 ms at 50 ppm over 10 s), less than the noise a slope fitted through
    stepped reports adds when extrapolated to now.

    What can be early is a wrong report: a position read during a DMA burst, ahead of the
    sound, later seen to go back (alsa-lib #468; snd_pcm_status, read here, takes the delay
    and its stamp together, but a driver may still be wrong once). So a window's point is
    its SECOND earliest report: one wrong report a window is left out, at the cost of a
    little of the envelope's closeness (two in 12 reports: a sixth of a step, then the least
    over five windows). The timeline moving later (an underrun, a resync) is followed when a
    window closes whose point is later than the envelope by more than SHIFT and a window's
    sawtooth, or, a FULL window (reports at every phase of the step), by more than NUDGE and
    half the sawtooth (JACK's dummy backend takes a late cycle's lateness as its new beat:
    8 ms at 10-ms steps); else as the old windows pass (≤ 10 s); and at once where the sink
    says its device began again (`restarts`: an ALSA underrun recovered)."""

    latency = 0.0

    def __init__(
        self,
        keep: int = KEEP,
        read_gap: float = READ_GAP,
        window: float = WINDOW,
        windows: int = WINDOWS,
    ) -> None:
        self.read_gap, self.window = read_gap, window
        self._figures: deque[float] = deque(maxlen=keep)
        self._past: deque[float] = deque(maxlen=windows)  # each past window's point
        self._ranges: deque[float] = deque(maxlen=windows)  # their latest − earliest
        self._window: list[float] | None = None  # the two earliest of the window being filled
        self._latest = 0.0  # the latest of the window being filled
        self._count = 0  # its reports
        self._window_end = 0.0
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
        of ours in it). The first report replaces the figures read around `delay()`; the
        windows are timed by `heard` (the report's instant plus a nearly constant delay)."""
        candidate = heard - frame / RATE
        if not self.reported:
            self.reported = True
            self._figures.clear()
        if self._window is None or heard >= self._window_end:
            if self._window is not None:
                self._close_window()
            self._window, self._latest, self._count = [candidate], candidate, 1
            self._window_end = heard + self.window
        else:
            self._window = sorted([*self._window, candidate])[:2]
            self._latest = max(self._latest, candidate)
            self._count += 1
        points = [*self._past, *self._window[1:]]  # (a window's point: its second report)
        self.origin = min(points) if points else candidate

    def _close_window(self) -> None:
        """The window's point is its second earliest report (a lone one ahead of the sound
        is left out); a point later than the envelope by more than SHIFT and the sawtooth
        (the least spread of a past window's reports: about a step), or a full window's by
        more than NUDGE and half the sawtooth, says the timeline moved later, and the old
        windows go."""
        assert self._window is not None
        point = self._window[-1]
        sawtooth = min(self._ranges, default=0.0)
        later = point - min(self._past) if self._past else 0.0
        if later > max(SHIFT, sawtooth) or (
            self._count >= FULL and sawtooth and later > max(NUDGE, sawtooth / 2)
        ):
            self._past.clear()
        self._past.append(point)
        self._ranges.append(self._latest - point)

    def restart(self) -> None:
        """The device's timeline began again (an underrun recovered): the envelope starts
        over from the next report, the origin kept until then."""
        self._past.clear()
        self._ranges.clear()
        self._window = None

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


class FramedOutput(Output):
    """Live sound through one `Sink`, started at once and kept running.

    The runner hands cues over `lead` seconds early; each is placed at the frame the sink's
    clock gives. `clock` must be the runner's clock: the stream reads it to map its frames
    onto the match's time base (the only reading outside the runner, and it never decides
    anything about the match). `realtime`: the writer thread of a pushed sink asks for
    real-time priority. `offset`: seconds the speaker path adds after what the sink's timing
    says (a DAC's FIFO, a TV, a Bluetooth speaker, JACK's own latency; `audio.latency`,
    measured by `timekeeper calibrate`): every cue is placed that much earlier."""

    def __init__(
        self,
        pack: SoundPack,
        sink: Sink,
        clock: Callable[[], float] = time.monotonic,
        realtime: bool = True,
        offset: float = 0.0,
    ) -> None:
        if sink.pulls and (sink.reports or sink.rewrites):
            raise ValueError(f"sink {sink.name}: reports and rewrites are for pushed sinks")
        self.pack, self.sink, self.clock = pack, sink, clock
        self.offset = offset
        self.period = sink.period
        self.frames: FrameClock | DelayClock = (
            FrameClock(sink.latency) if sink.pulls else DelayClock()
        )
        self.voices = Voices()
        self.lead = sink.latency + sink.period / RATE + sink.margin
        if sink.rewrites:
            self.voices.keep = round(sink.latency * RATE) + 2 * sink.period  # (rewritable)
            # cues are handed over only this early, each mixed into what is written already:
            # as early as before the rewrite (latency 80 ms + a 40-ms period + the margin),
            # so a command is no later than it was (the runner applies one at the look-ahead
            # time it has told the engine: at 0.65 s, a pause sounded up to 230 ms after the
            # press), and a runner 140 ms late still finds its cue's frames rewritable (at
            # 80 ms, 8 boxes on 2 cores lost a mark now and then)
            self.lead = REWRITE_LEAD
        self.lead += max(0.0, offset)  # (placed earlier: handed over that much earlier)
        self.last_block: float | None = None  # runner time the device last took a block
        self.blocks = 0
        self.priority = "normal"  # the writer thread's (pushed sinks)
        self._realtime = realtime
        self._closed = self._mix_failed = False
        self._error: str | None = None
        self._started = threading.Event()  # (set by a first failure too)
        self._rewind_from: int | None = None
        self._rewind_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if sink.pulls:
            sink.start(self._pulled)
        else:
            self._thread = threading.Thread(target=self._run, name="audio-writer", daemon=True)
            self._thread.start()
        if not self._started.wait(START_TIMEOUT) or self._error is not None:
            self.close()
            raise AudioError(
                self._error or f"the audio stream did not start within {START_TIMEOUT:g} s"
            )

    def prepare(self, profile: Profile) -> None:
        """Build every sample array the match can need now, never mid-match."""
        self.pack.prepare(profile)

    def play(self, cue: Cue, now: float) -> str | None:
        """Places the cue at its frame (microseconds under the voices' lock, never a call
        into the device but a rewritable sink's wake()), or says why it cannot be heard: a
        stream that has stopped taking blocks will not play it on time, if ever."""
        if (why := self.stalled(now)) is not None:
            return why
        if not self.pack.plays(cue):
            return None
        rewrites = self.sink.rewrites
        frame = self.frames.frame_at(cue.due - self.offset)
        earliest = self.frames.frame_at(now + REWRITE_AHEAD) if rewrites else None
        if cue.stop:
            start = self.voices.stop(cue.name, frame, earliest)
        elif (start := self.voices.add(cue.name, frame, self.pack.samples(cue), earliest)) != frame:
            log.warning(
                "cue %s came %.1f ms too late for its frame (handed over %.1f ms "
                "before due): it sounds that much late",
                cue.name,
                (start - frame) * 1000 / RATE,
                (cue.due - now) * 1000,
            )
        if rewrites and start < self.voices.next_frame:  # written already: write it again
            with self._rewind_lock:
                if self._rewind_from is None or start < self._rewind_from:
                    self._rewind_from = start
            self.sink.wake()
        return None

    def stalled(self, now: float) -> str | None:
        """Whether the device has stopped taking blocks (a frozen server, a hung driver) or
        failed: plain arithmetic, safe on any thread."""
        if self._closed:
            return None
        if self._error is not None:
            return self._error
        last = self.last_block
        if last is not None and now - last > self.sink.stall:
            return f"audio stream stalled: no block taken for {now - last:.1f} s"
        return None

    def fault(self) -> str | None:
        if self._closed:
            return None
        return self.sink.fault() or self.stalled(self.clock())

    def close(self) -> None:
        """A pulled sink is closed here: that blocks while the sound server hangs (SDL waits
        for its audio thread), so the guard calls it off the runner's thread. A pushed one
        is closed by the writer once its last call returns (closing it under a blocked
        write would pull it from under that call): the writer is interrupted and waited for
        (at most CLOSE_WAIT), and no writer may still be inside the device's library when
        the program exits (libpulse aborts the process then)."""
        if self._closed:
            return
        self._closed = True
        if self._thread is None:
            self.sink.close()
            return
        if self._thread.is_alive():
            self.sink.interrupt()
        if self._thread is not threading.current_thread():
            self._thread.join(CLOSE_WAIT)

    def _took_block(self) -> None:
        self.last_block = self.clock()
        self.blocks += 1
        if not self._started.is_set():
            self._started.set()

    def _pulled(self, out: np.ndarray) -> None:
        """A pulled sink's callback, on the device's thread: fill `out` (its buffer)."""
        frames = self.frames
        assert isinstance(frames, FrameClock)
        frames.observe(self.voices.next_frame, self.clock())
        self._mix(out, idle=False)
        self._took_block()

    def _run(self) -> None:
        """A pushed sink's writer thread: time, (rewrite,) mix and write a block, again."""
        if self._realtime:
            self.priority = raise_priority()  # (the sink's own mainloop runs in this thread)
        silence = np.zeros(self.period, np.float32)
        block = np.zeros(self.period, np.float32)
        sink, frames = self.sink, self.frames
        assert isinstance(frames, DelayClock)
        try:
            every = max(1, math.ceil(REPORT_EVERY * RATE / self.period))
            restarts = sink.restarts
            while not self._closed:
                if sink.restarts != restarts:
                    restarts = sink.restarts
                    frames.restart()
                if (
                    sink.reports
                    and (self.blocks % every == 0 or not frames.reported)
                    and (report := sink.timing(self.clock)) is not None
                ):
                    frames.observe_report(*report)
                if not sink.reports or frames.origin is None:
                    before = self.clock()
                    delay = sink.delay()
                    after = self.clock()
                    frames.observe(self.voices.next_frame, before, after, delay)
                if sink.rewrites:
                    if not sink.wait_room(self.period):
                        self._rewrite()  # woken by a press
                        continue
                    self._rewrite()  # (a press while the last block was mixed)
                sink.write(block if self._mix(block) else silence)
                self._took_block()
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

    def _rewrite(self) -> None:
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
        self._mix(again, idle=False)
        self.sink.write_at(again, frame)

    def _mix(self, block: np.ndarray, idle: bool = True) -> bool:
        """Mix the next block into `block`; False (and no work, `block` left as it is) when
        nothing is playing and `idle` allows that."""
        if idle and self.voices.skip_idle(len(block)):
            return False
        try:
            self.voices.fill(block)
        except Exception:  # never noise, never a dead stream: silence, and say so once
            block.fill(0.0)
            if not self._mix_failed:
                self._mix_failed = True
                log.exception("audio stream: mixing failed")
        return True
