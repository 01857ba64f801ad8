"""Sample-accurate live sound: one always-running audio stream whose callback mixes the
pack's pre-loaded samples in at the exact frame each cue is due.

Why: `Sound.play()` starts a sound at the next buffer boundary of a stream that may still
be waking up, so cues land 3–8 ms (and the first one hundreds of ms) off their deadline.
Here the stream runs from start-up, every callback tells us which frame it is filling and
when, and a cue handed over `lead` seconds early is placed at the frame that will reach the
speaker at its due time — the same placement an offline render uses (`mixing.mix_into`).

Three pieces, the first two free of any device so that tests can drive them:
- FrameClock: stream frame ↔ runner time, fitted from the callbacks' timestamps;
- Voices: the voices (sample arrays at start frames) and the fill of each block;
- StreamAudio: the Output that owns the SDL device and ties the two together."""

from __future__ import annotations

import ctypes
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.sound.mixing import RATE, mix_into
from timekeeper.sound.output import AudioError, Output
from timekeeper.sound.pack import SoundPack

log = logging.getLogger(__name__)

DEFAULT_CHUNK = 2048  # frames per callback (43 ms): see docs/timing.md for the figures
# From a chunk's earliest callback to its first frame at the speaker, in chunks: measured
# on PulseAudio (0.75 at 1024 and 2048 frames); other devices: calibrate with bench/timing.py
LATENCY_IN_CHUNKS = 0.75
MARGIN = 0.010  # s of slack for the runner's wake-up before the chunk is mixed
FADE = RATE // 200  # 5 ms: a stopped melody fades instead of clicking
STALL = 0.5  # s without a callback while the stream should run: the device has gone
START_TIMEOUT = 3.0  # s to wait for the first callback (an idle PulseAudio null sink: ~2 s)


class FrameClock:
    """Maps stream frames to the runner's clock: frame k reaches the speaker at
    origin + k/RATE + latency.

    Each callback gives one sample of `origin` (its time minus the frames already written).
    A callback is never early, only late (scheduling, the GIL), so the earliest sample is the
    truest; a minimum over a few seconds' window also follows a sound card whose crystal
    drifts against the system clock, which a minimum over all time would not."""

    def __init__(self, latency: float = 0.0, window: float = 1.0,
                 windows: int = 4) -> None:
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


@dataclass
class Voice:
    name: str
    start: int  # frame of samples[0]
    samples: np.ndarray
    stop: int | None = None  # frame where a fade-out begins (the melody's stop)

    @property
    def end(self) -> int:
        full = self.start + len(self.samples)
        return full if self.stop is None else min(full, self.stop + FADE)


class Voices:
    """The voices that are playing or due, and the fill of one block of the stream.

    `add`/`stop` come from the runner's thread, `fill` from the audio thread; a lock guards
    the voice list for the few microseconds either needs it."""

    def __init__(self) -> None:
        self.playing: list[Voice] = []
        self.next_frame = 0  # the first frame not yet mixed: earlier ones are out of reach
        self.late = 0  # voices that came too late for their frame (started at once instead)
        # frames a voice is kept after its end has been mixed, so that they can be mixed
        # again (set where written frames may be rewritten: rewind())
        self.keep = 0
        self._lock = threading.Lock()

    def add(self, name: str, start: int, samples: np.ndarray,
            earliest: int | None = None) -> int:
        """Place `samples` at frame `start`; returns the frame they really start at. A voice
        that is late starts at once — the melody skipped ahead so it stays on the match
        clock, any other sound from its beginning (a cut-off signal would be worse).
        `earliest`: the first frame still in reach (default: the next one to mix; earlier
        where mixed frames may be mixed again, see rewind())."""
        with self._lock:
            reach = self.next_frame if earliest is None else earliest
            if start < reach:
                self.late += 1
                if name == "last30":
                    samples = samples[reach - start:]
                start = reach
            if len(samples):
                self.playing.append(Voice(name, start, samples))
        return start

    def rewind(self, frame: int) -> int:
        """Mix again from `frame` (mixed already, within `keep`); returns the frame the mix
        had reached, which the caller mixes up to again at once."""
        with self._lock:
            reached, self.next_frame = self.next_frame, frame
        return reached

    def stop(self, name: str, frame: int, earliest: int | None = None) -> int:
        """Fade out every voice called `name` from `frame` on (at once if that is past, as in
        add()); returns the frame the fade really starts at."""
        with self._lock:
            frame = max(frame, self.next_frame if earliest is None else earliest)
            for voice in self.playing:
                if voice.name == name and (voice.stop is None or voice.stop > frame):
                    voice.stop = frame
        return frame

    def skip_idle(self, frames: int) -> bool:
        """Move on by `frames` without mixing when nothing is playing or due (the common
        case between cues: no work at all); False when there is something to mix."""
        with self._lock:
            if self.playing:
                return False
            self.next_frame += frames
        return True

    def fill(self, out: np.ndarray) -> None:
        """Mix the next len(out) frames into `out` (overwritten) and move on."""
        first = self.next_frame
        out.fill(0.0)
        with self._lock:
            self.next_frame = first + len(out)
            if not self.playing:
                return
            voices = self.playing
            self.playing = [v for v in voices if v.end + self.keep > self.next_frame]
        for voice in voices:
            if voice.start >= self.next_frame or voice.end <= first:
                continue
            if voice.stop is None or voice.stop >= self.next_frame:
                mix_into(out, first, voice.start, voice.samples)
            else:  # fading out: only this block's part of the voice is scaled
                lo, hi = max(voice.start, first), min(voice.end, self.next_frame)
                part = voice.samples[lo - voice.start:hi - voice.start] * _fade_gain(
                    lo, hi, voice.stop)
                mix_into(out, first, lo, part)
        np.clip(out, -1.0, 1.0, out=out)


def _fade_gain(lo: int, hi: int, stop: int) -> np.ndarray:
    """Gain for frames lo … hi−1: 1 before `stop`, then a linear ramp to 0 over FADE frames."""
    frames = np.arange(lo, hi, dtype=np.float32)
    return np.clip(1.0 - (frames - stop) / FADE, 0.0, 1.0).astype(np.float32)


class StreamAudio(Output):
    """Live sound through one SDL audio stream kept running from start-up (float32 mono,
    48 kHz: the pack's own format, so nothing is converted mid-match).

    The runner hands cues over `lead` seconds early; the callback puts each at its frame.
    `clock` must be the runner's clock: the callback reads it to map the stream's frames
    onto the match's time base (the only reading outside the runner, and it never decides
    anything about the match)."""

    def __init__(self, pack: SoundPack, driver: str | None = None, chunk: int = DEFAULT_CHUNK,
                 latency: float | None = None,
                 clock: Callable[[], float] = time.monotonic, device: str | None = None) -> None:
        """`latency` in seconds (None: LATENCY_IN_CHUNKS of `chunk`); `device` an SDL device
        name (None: the system's default)."""

        self.pack, self.chunk, self.clock = pack, chunk, clock
        if latency is None:
            latency = LATENCY_IN_CHUNKS * chunk / RATE
        self.frames = FrameClock(latency)
        self.voices = Voices()
        self.lead = latency + chunk / RATE + MARGIN
        self.last_callback: float | None = None
        self.callbacks = 0
        self._closed = self._failed = False
        self._started = threading.Event()
        import pygame  # (loads SDL, which the device is then opened through)

        self._device = _Device(driver, device, chunk, self._fill)
        from timekeeper.sound.sdl import watch_device_events

        watch_device_events(pygame)  # a device that disappears is only ever an SDL event
        self._pygame = pygame
        self._device.start()
        if not self._started.wait(START_TIMEOUT):
            self.close()
            raise AudioError(f"the audio stream did not start within {START_TIMEOUT:g} s")

    def prepare(self, profile: Profile) -> None:
        """Build every sample array the match can need now, never mid-match."""
        self.pack.prepare(profile)

    def play(self, cue: Cue, now: float) -> str | None:
        """Places the cue at its frame (a few microseconds under the voices' lock, never a
        call into SDL), or says why it cannot be heard: a stream that has stopped calling
        back will not play it on time, if ever."""
        if (why := self.stalled(now)) is not None:
            return why
        if not self.pack.plays(cue):
            return None
        frame = self.frames.frame_at(cue.due)
        if cue.stop:
            self.voices.stop(cue.name, frame)
        else:
            self.voices.add(cue.name, frame, self.pack.samples(cue))
        return None

    def stalled(self, now: float) -> str | None:
        """Whether the callbacks have stopped (a frozen sound server, a hung driver): plain
        arithmetic on the last callback's time, safe on any thread."""
        last = self.last_callback
        if self._closed or last is None:
            return None
        if now - last > STALL:
            return f"audio stream stalled: no callback for {now - last:.1f} s"
        return None

    def fault(self) -> str | None:
        from timekeeper.sound.sdl import device_removed

        if self._closed or self.last_callback is None:
            return None
        if (removed := device_removed(self._pygame)) is not None:
            return removed
        return self.stalled(self.clock())

    def close(self) -> None:
        """Blocks while the sound server hangs (SDL waits for its audio thread): the guard
        calls it off the runner's thread. The GIL is let go meanwhile."""
        if not self._closed:
            self._closed = True
            self._device.close()

    def _fill(self, out: np.ndarray) -> None:
        """The stream's callback, on SDL's audio thread: fill `out` (the device's buffer)."""
        now = self.clock()
        self.frames.observe(self.voices.next_frame, now)
        try:
            self.voices.fill(out)
        except Exception:  # never noise, never a dead stream: silence, and say so once
            out.fill(0.0)
            if not self._failed:
                self._failed = True
                log.exception("audio stream: mixing failed")
        self.last_callback = now
        self.callbacks += 1
        if not self._started.is_set():
            self._started.set()


_SDL_INIT_AUDIO = 0x10
_AUDIO_F32 = 0x8120  # AUDIO_F32LSB: float32, little-endian (the pack's own format)


class _AudioSpec(ctypes.Structure):
    _fields_ = [("freq", ctypes.c_int), ("format", ctypes.c_uint16),
                ("channels", ctypes.c_uint8), ("silence", ctypes.c_uint8),
                ("samples", ctypes.c_uint16), ("padding", ctypes.c_uint16),
                ("size", ctypes.c_uint32), ("callback", ctypes.c_void_p),
                ("userdata", ctypes.c_void_p)]


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


class _Device:
    """One SDL audio device, opened, started and closed through ctypes, which lets go of the
    GIL for every SDL call. Why: on a frozen sound server (PulseAudio stopped, a hung driver)
    opening or closing blocks for as long as the freeze lasts; pygame's own AudioDevice keeps
    the GIL meanwhile and so freezes every thread of the program, the controls included.
    Through ctypes only the calling thread waits (the AudioGuard's, never the runner's).

    `fill(out)` is the callback, on SDL's audio thread (ctypes takes the GIL for it)."""

    def __init__(self, driver: str | None, name: str | None, chunk: int,
                 fill: Callable[[np.ndarray], None]) -> None:
        from timekeeper.sound.sdl import _sdl_driver

        sdl = _sdl_library()
        if sdl is None:
            raise AudioError("cannot open an audio stream: the SDL library pygame uses was "
                             "not found; use --audio mixer")
        self._sdl = sdl

        def callback(_userdata: int, stream: int, length: int) -> None:
            fill(np.frombuffer((ctypes.c_float * (length // 4)).from_address(stream),
                               np.float32))

        self._callback = _CALLBACK(callback)  # kept: SDL calls it until the device is closed
        want, got = _AudioSpec(), _AudioSpec()
        want.freq, want.format, want.channels, want.samples = RATE, _AUDIO_F32, 1, chunk
        want.callback = ctypes.cast(self._callback, ctypes.c_void_p)
        with _sdl_driver(driver):
            if sdl.SDL_InitSubSystem(_SDL_INIT_AUDIO) != 0:
                raise AudioError(f"cannot open an audio stream ({_sdl_error(sdl)}); check the "
                                 "speaker/sound card, or run with --audio silent "
                                 "(audio.kind: silent)")
        self.id = sdl.SDL_OpenAudioDevice(name.encode() if name else None, 0,
                                          ctypes.byref(want), ctypes.byref(got), 0)
        if self.id == 0:
            why = _sdl_error(sdl)
            sdl.SDL_QuitSubSystem(_SDL_INIT_AUDIO)
            raise AudioError(f"cannot open an audio stream ({why}); check the speaker/sound "
                             "card, or run with --audio silent (audio.kind: silent)")
        _open_callbacks.append(self._callback)

    def start(self) -> None:
        self._sdl.SDL_PauseAudioDevice(self.id, 0)

    def close(self) -> None:
        """Pause and close the device, then undo our SDL_InitSubSystem (SDL counts inits, so
        this releases only ours: pygame's mixer can still be opened afterwards, e.g. as the
        fallback after a failed stream). The callback object is kept for good: a device that
        never finished closing may still call it."""
        self._sdl.SDL_PauseAudioDevice(self.id, 1)
        self._sdl.SDL_CloseAudioDevice(self.id)
        self._sdl.SDL_QuitSubSystem(_SDL_INIT_AUDIO)


_open_callbacks: list = []  # every callback SDL was given: never freed under its feet

_library = None


def _sdl_library():
    """The SDL2 library pygame loaded, through ctypes (which lets go of the GIL during a call),
    or None where it cannot be found."""
    global _library
    if _library is not None:
        return _library
    import re

    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            path = next(iter(re.findall(r"\S*/libSDL2-[^/\s]*\.so[^/\s]*", maps.read())), None)
        if path is None:
            return None
        sdl = ctypes.CDLL(path)
    except OSError:
        return None
    sdl.SDL_InitSubSystem.argtypes, sdl.SDL_InitSubSystem.restype = [ctypes.c_uint32], ctypes.c_int
    sdl.SDL_QuitSubSystem.argtypes, sdl.SDL_QuitSubSystem.restype = [ctypes.c_uint32], None
    sdl.SDL_OpenAudioDevice.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_AudioSpec),
                                        ctypes.POINTER(_AudioSpec), ctypes.c_int]
    sdl.SDL_OpenAudioDevice.restype = ctypes.c_uint32
    sdl.SDL_PauseAudioDevice.argtypes, sdl.SDL_PauseAudioDevice.restype = [ctypes.c_uint32,
                                                                           ctypes.c_int], None
    sdl.SDL_CloseAudioDevice.argtypes, sdl.SDL_CloseAudioDevice.restype = [ctypes.c_uint32], None
    sdl.SDL_GetError.argtypes, sdl.SDL_GetError.restype = [], ctypes.c_char_p
    _library = sdl
    return sdl


def _quit_sdl_audio() -> None:
    """Undo an init of SDL's audio subsystem made through pygame (`audio devices` lists the
    devices that way): SDL counts inits, so this only releases ours. Best effort: where SDL
    cannot be found, nothing is done."""
    sdl = _sdl_library()
    if sdl is not None:
        sdl.SDL_QuitSubSystem(_SDL_INIT_AUDIO)


def _sdl_error(sdl) -> str:
    return (sdl.SDL_GetError() or b"unknown error").decode("utf-8", "replace")
