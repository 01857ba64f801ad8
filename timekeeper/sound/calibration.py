"""Measuring the box's own speaker: clicks played through the stream exactly as a match's cues
are (FramedOutput, the sink the config chooses, each placed at the frame its clock says is
heard at its due time), recorded from an input (a USB card's line-in wired to the jack, a
microphone at the speaker), each click found in the recording and its onset compared with
its due time. What is left is what no driver reports (a DAC's FIFO, a TV's processing, a
Bluetooth speaker, JACK's own playback latency): a constant of the set-up, `audio.latency`.

The input is timed by its own reports, as the ALSA sink is (`snd_pcm_status`: how many frames
have been captured that are not read yet, with the instant of the reading): a device whose
position moves in steps reports each frame late by 0 to one step, never early, so the
earliest figure near a click is the truest (taken near each click, not over the whole
recording: the card's crystal and the system clock drift apart). The input's own converter
delay (an ADC's filter: well under 1 ms on USB cards) is in the figure: the position read is
the buffer's, and nothing here can tell the input's delay from the speaker's."""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from timekeeper.rules.match import Cue
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError
from timekeeper.sound.pack import CueSound, SoundPack

CLICK = "click"
CLICK_SECONDS = 0.010  # a burst of noise: broadband, one sharp peak when correlated
EVERY = 0.6  # s between clicks
SETTLE = 1.5  # s of stream before the first click (a device that starts late, a first fit;
# PulseAudio's monitor as an input: its first second comes in bursts)
EARLY, LATE = 0.2, 0.45  # s: a click is looked for from EARLY before its due to LATE after
FOUND = 0.3  # normalised correlation a click must reach to count as heard
APART = 0.025  # s: a click this far from the others' median is left out (an echo, a burst)
STEADY = 0.005  # s: heard clicks spread wider than this give no figure to write (a busy box,
# a graph's quantum jumping: clicks 21, 43 and 64 ms late on PipeWire at load 9.6)
READ = 480  # frames a read of the input (10 ms)
BUFFER = 500_000  # µs of input buffered: a reader held up that long loses frames (overrun)

_CAPTURE = 1  # snd_pcm_stream_t
_FLOAT_LE, _RW_INTERLEAVED, _RUNNING = 14, 3, 3
_TSTAMP_ENABLE, _TSTAMP_MONOTONIC = 1, 1


def click() -> np.ndarray:
    """The click: 10 ms of white noise (a fixed seed: the same click every time)."""
    rng = np.random.default_rng(7)
    return (rng.uniform(-0.5, 0.5, round(CLICK_SECONDS * RATE))).astype(np.float32)


def click_pack() -> SoundPack:
    """A pack of one sound, the click, for the stream to play as it plays a match's cues."""
    return SoundPack("calibrate", Path("."), {CLICK: CueSound(CLICK, Path(CLICK), click(), 0.0)})


@dataclass(frozen=True)
class Measurement:
    """Each click's due time (on the clock) and its onset minus that (s); None: not heard."""

    dues: list[float]
    errors: list[float | None]

    @property
    def found(self) -> list[float]:
        return [e for e in self.errors if e is not None]

    @property
    def heard(self) -> list[float]:
        """The clicks found within APART of the median of all found: a reflection found
        instead of a click, or an input's first burst, is not the speaker's delay."""
        if not self.found:  # (the input heard none: calibrate says so)
            return []
        middle = _median(self.found)
        return [e for e in self.found if abs(e - middle) <= APART]

    @property
    def latency(self) -> float:
        """The median of the heard clicks' errors: what `audio.latency` is set to."""
        return _median(self.heard)

    @property
    def spread(self) -> float:
        """The largest distance of a heard click from the median (s)."""
        return max(abs(e - self.latency) for e in self.heard)

    @property
    def steady(self) -> bool:
        """Whether the heard clicks agree within STEADY: a wider spread means the median is
        one of several timelines, and written it would put every cue off by a step."""
        return self.spread <= STEADY


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


class Capture:
    """An ALSA capture PCM (float32 mono at RATE through libasound, as sound/alsasink.py
    plays), read on a thread of its own from start() to stop(): the samples, and after each
    read the device's report (frame, captured at on `clock`)."""

    def __init__(self, device: str, clock: Callable[[], float] = time.monotonic) -> None:
        from timekeeper.sound import alsa
        from timekeeper.sound.alsasink import _library

        lib = _library()
        if lib is None:
            raise AudioError("no input: libasound is missing")
        alsa.quiet()
        lib.snd_pcm_readi.restype = ctypes.c_long
        lib.snd_pcm_readi.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulong]
        lib.snd_pcm_status_get_avail.restype = ctypes.c_ulong
        lib.snd_pcm_status_get_avail.argtypes = [ctypes.c_void_p]
        self._lib, self.device, self.clock = lib, device, clock
        self._pcm = ctypes.c_void_p()
        self._status = ctypes.c_void_p()
        self.pieces: list[np.ndarray] = []
        self.reports: list[tuple[int, float]] = []
        self.losses: list[float] = []  # when frames were lost (an overrun): no timeline across
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        result = lib.snd_pcm_open(ctypes.byref(self._pcm), device.encode(), _CAPTURE, 0)
        if result >= 0:
            result = lib.snd_pcm_set_params(
                self._pcm, _FLOAT_LE, _RW_INTERLEAVED, 1, RATE, 1, BUFFER
            )
        if result < 0:
            text = (lib.snd_strerror(result) or b"error").decode("utf-8", "replace")
            self.close()
            raise AudioError(f"no input {device!r} ({text})")
        sw = ctypes.c_void_p()
        lib.snd_pcm_sw_params_malloc(ctypes.byref(sw))
        lib.snd_pcm_sw_params_current(self._pcm, sw)
        lib.snd_pcm_sw_params_set_tstamp_mode(self._pcm, sw, _TSTAMP_ENABLE)
        lib.snd_pcm_sw_params_set_tstamp_type(self._pcm, sw, _TSTAMP_MONOTONIC)
        lib.snd_pcm_sw_params(self._pcm, sw)
        lib.snd_pcm_sw_params_free(sw)
        lib.snd_pcm_status_malloc(ctypes.byref(self._status))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="calibrate-input", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from timekeeper.sound.alsasink import _offset_to, _Timespec
        from timekeeper.sound.priority import raise_priority

        raise_priority()  # (as the box's writer: its stamps ahead of a busy machine)
        lib, pcm, status = self._lib, self._pcm, self._status
        block = np.zeros(READ, np.float32)
        stamp, total = _Timespec(), 0
        while not self._stop.is_set():
            n = lib.snd_pcm_readi(pcm, block.ctypes.data, READ)
            if n < 0:
                self.losses.append(self.clock())
                if lib.snd_pcm_recover(pcm, int(n), 1) < 0:
                    self.error = (lib.snd_strerror(int(n)) or b"error").decode("utf-8", "replace")
                    return
                continue
            self.pieces.append(block[:n].copy())
            total += n
            if lib.snd_pcm_status(pcm, status) < 0 or lib.snd_pcm_status_get_state(status) != (
                _RUNNING
            ):
                continue
            lib.snd_pcm_status_get_htstamp(status, ctypes.byref(stamp))
            at = stamp.sec + stamp.nsec / 1e9
            if at == 0:
                continue
            # frame `total + avail` is being captured at `at` (avail: captured, not read; not
            # the status's delay: ALSA's plugins give a capture stream's free room there)
            frame = total + lib.snd_pcm_status_get_avail(status)
            self.reports.append((frame, at + _offset_to(self.clock, at)))

    def stop(self) -> np.ndarray:
        """Ends the reading; the recording."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self.close()
        return np.concatenate(self.pieces) if self.pieces else np.zeros(0, np.float32)

    def origin_near(self, t: float, span: float = 1.0) -> float | None:
        """When frame 0 was captured, on the clock, from the reports within `span` s of `t`:
        the earliest (a report is late by 0 to one step of the device's position). None
        where frames were lost near `t` (the recording's timeline has a gap there)."""
        if any(abs(lost - t) <= span for lost in self.losses):
            return None
        near = [at - frame / RATE for frame, at in self.reports if abs(at - t) <= span]
        return min(near) if near else None

    def close(self) -> None:
        if self._pcm and (self._thread is None or not self._thread.is_alive()):
            self._lib.snd_pcm_close(self._pcm)
            self._pcm = ctypes.c_void_p()
        if self._status and not self._pcm:
            self._lib.snd_pcm_status_free(self._status)
            self._status = ctypes.c_void_p()


def find_click(recording: np.ndarray, around: int, reference: np.ndarray) -> int | None:
    """The recording's frame where `reference` starts, searched from EARLY before `around`
    to LATE after it: the peak of the normalised cross-correlation, None under FOUND (a
    speaker and a microphone change the click's level and colour, never where it is)."""
    lo = max(0, around - round(EARLY * RATE))
    hi = min(len(recording), around + round(LATE * RATE) + len(reference))
    segment = recording[lo:hi].astype(np.float64)
    k = len(reference)
    if len(segment) < k:
        return None
    size = 1 << (len(segment) + k).bit_length()
    corr = np.fft.irfft(np.fft.rfft(segment, size) * np.conj(np.fft.rfft(reference, size)), size)
    corr = corr[: len(segment) - k + 1]
    energy = np.concatenate(([0.0], np.cumsum(segment**2)))
    local = np.sqrt(np.maximum(energy[k:] - energy[:-k], 0.0))
    # (where the input is all but silent, the correlation is the FFT's rounding: no click)
    audible = local > max(1e-4, 1e-3 * float(local.max(initial=0.0)))
    score = np.where(
        audible, corr / (np.where(audible, local, 1.0) * np.linalg.norm(reference)), 0.0
    )
    best = int(np.argmax(score))
    return lo + best if score[best] >= FOUND else None


def measure(
    output,
    capture: Capture,
    clicks: int = 12,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Measurement:
    """Plays `clicks` clicks through `output` (a started FramedOutput with offset 0), each
    handed over its look-ahead before due as the runner hands cues over, while `capture`
    records; each click's error (heard − due)."""
    reference = click()
    capture.start()
    first = clock() + SETTLE + output.lead
    dues = [first + k * EVERY for k in range(clicks)]
    for due in dues:
        if (wait := due - output.lead - clock()) > 0:
            sleep(wait)
        if (why := output.play(Cue(CLICK, due), clock())) is not None:
            raise AudioError(why)
    if (wait := dues[-1] + LATE + 0.2 - clock()) > 0:
        sleep(wait)
    recording = capture.stop()
    if capture.error is not None:
        raise AudioError(f"the input {capture.device!r} failed ({capture.error})")
    errors: list[float | None] = []
    for due in dues:
        origin = capture.origin_near(due)
        if origin is None:
            errors.append(None)
            continue
        onset = find_click(recording, round((due - origin) * RATE), reference)
        errors.append(None if onset is None else origin + onset / RATE - due)
    return Measurement(dues, errors)
