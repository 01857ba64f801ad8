"""The SDL sink: one SDL audio device whose callback asks for each block (a pulled `Sink`,
sound/framed.py), opened through ctypes on the SDL library pygame loaded.

It can tell nothing of its own timing: the frame clock is fitted from its callbacks' times
plus a constant latency, measured on PulseAudio (LATENCY_IN_CHUNKS) and set by hand
elsewhere (`audio.latency_ms`, calibrated with bench/timing.py); written frames cannot be
rewritten. A removed device is only ever an SDL event (`fault`)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

from timekeeper.sound.framed import Sink
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError

DEFAULT_CHUNK = 2048  # frames per callback (43 ms): see docs/timing.md for the figures
# From a chunk's earliest callback to its first frame at the speaker, in chunks: measured
# on PulseAudio (0.75 at 1024 and 2048 frames); other devices: audio.latency_ms (SDL's own),
# and the speaker path beyond it: `timekeeper calibrate` (audio.latency)
LATENCY_IN_CHUNKS = 0.75


class SdlSink(Sink):
    """Float32 mono at 48 kHz (the pack's own format, so nothing is converted mid-match) on
    SDL's `driver` (None: SDL's choice) and `device` (an SDL device name; None: the
    system's default), `chunk` frames a callback; `latency` in seconds (None:
    LATENCY_IN_CHUNKS of `chunk`)."""

    name = "sdl"
    pulls = True
    margin = 0.010  # s of slack for the runner's wake-up before the chunk is mixed
    stall = 0.5  # s without a callback while the stream should run: the device has gone

    def __init__(
        self,
        driver: str | None = None,
        device: str | None = None,
        chunk: int = DEFAULT_CHUNK,
        latency: float | None = None,
    ) -> None:
        import pygame  # (loads SDL, which the device is then opened through)

        self.period = chunk
        self.latency = LATENCY_IN_CHUNKS * chunk / RATE if latency is None else latency
        self._fill: Callable[[np.ndarray], None] = lambda out: out.fill(0.0)
        self._device = _Device(driver, device, chunk, lambda out: self._fill(out))
        from timekeeper.sound.sdl import watch_device_events

        watch_device_events(pygame)  # a device that disappears is only ever an SDL event
        self._pygame = pygame

    def start(self, fill: Callable[[np.ndarray], None]) -> None:
        self._fill = fill
        self._device.start()

    def fault(self) -> str | None:
        from timekeeper.sound.sdl import device_removed

        return device_removed(self._pygame)

    def close(self) -> None:
        """Blocks while the sound server hangs (SDL waits for its audio thread); the GIL is
        let go meanwhile."""
        self._device.close()


_SDL_INIT_AUDIO = 0x10
_AUDIO_F32 = 0x8120  # AUDIO_F32LSB: float32, little-endian (the pack's own format)


class _AudioSpec(ctypes.Structure):
    _fields_ = [
        ("freq", ctypes.c_int),
        ("format", ctypes.c_uint16),
        ("channels", ctypes.c_uint8),
        ("silence", ctypes.c_uint8),
        ("samples", ctypes.c_uint16),
        ("padding", ctypes.c_uint16),
        ("size", ctypes.c_uint32),
        ("callback", ctypes.c_void_p),
        ("userdata", ctypes.c_void_p),
    ]


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


class _Device:
    """One SDL audio device, opened, started and closed through ctypes, which lets go of the
    GIL for every SDL call. Why: on a frozen sound server (PulseAudio stopped, a hung driver)
    opening or closing blocks for as long as the freeze lasts; pygame's own AudioDevice keeps
    the GIL meanwhile and so freezes every thread of the program, the controls included.
    Through ctypes only the calling thread waits (the AudioGuard's, never the runner's).

    `fill(out)` is the callback, on SDL's audio thread (ctypes takes the GIL for it)."""

    def __init__(
        self, driver: str | None, name: str | None, chunk: int, fill: Callable[[np.ndarray], None]
    ) -> None:
        from timekeeper.sound.sdl import _sdl_driver

        sdl = _sdl_library()
        if sdl is None:
            raise AudioError(
                "cannot open an audio stream: the SDL library pygame uses was "
                "not found; use --audio mixer"
            )
        self._sdl = sdl

        def callback(_userdata: int, stream: int, length: int) -> None:
            fill(
                np.frombuffer(
                    memoryview((ctypes.c_float * (length // 4)).from_address(stream)), np.float32
                )
            )

        self._callback = _CALLBACK(callback)  # kept: SDL calls it until the device is closed
        want, got = _AudioSpec(), _AudioSpec()
        want.freq, want.format, want.channels, want.samples = RATE, _AUDIO_F32, 1, chunk
        want.callback = ctypes.cast(self._callback, ctypes.c_void_p)
        with _sdl_driver(driver):
            if sdl.SDL_InitSubSystem(_SDL_INIT_AUDIO) != 0:
                raise AudioError(
                    f"cannot open an audio stream ({_sdl_error(sdl)}); check the "
                    "speaker/sound card, or run with --audio silent "
                    "(audio.sink: silent)"
                )
        self.id = sdl.SDL_OpenAudioDevice(
            name.encode() if name else None, 0, ctypes.byref(want), ctypes.byref(got), 0
        )
        if self.id == 0:
            why = _sdl_error(sdl)
            sdl.SDL_QuitSubSystem(_SDL_INIT_AUDIO)
            raise AudioError(
                f"cannot open an audio stream ({why}); check the speaker/sound "
                "card, or run with --audio silent (audio.sink: silent)"
            )
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
    sdl.SDL_OpenAudioDevice.argtypes = [
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.POINTER(_AudioSpec),
        ctypes.POINTER(_AudioSpec),
        ctypes.c_int,
    ]
    sdl.SDL_OpenAudioDevice.restype = ctypes.c_uint32
    sdl.SDL_PauseAudioDevice.argtypes, sdl.SDL_PauseAudioDevice.restype = (
        [ctypes.c_uint32, ctypes.c_int],
        None,
    )
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
