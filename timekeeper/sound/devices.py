"""Opening the live audio output `timekeeper run` plays through: the sample-exact stream on
the sink `audio.output` chooses, or pygame's mixer as the fallback."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from timekeeper.rules.profiletypes import Profile
from timekeeper.sound.output import AudioError, Output, SilentOutput

if TYPE_CHECKING:  # (the command line reads AUDIO_KINDS: no numpy to import for that)
    from timekeeper.sound.framed import Sink
    from timekeeper.sound.pack import SoundPack

log = logging.getLogger(__name__)

AUDIO_KINDS = ("stream", "mixer", "silent")  # `run --audio`, `audio.kind` in the config
# `run --audio-output`, `audio.output`: the stream's sink (kept here beside AUDIO_KINDS, so
# that the command line reads it without numpy; sound/framed.py says what a sink is)
OUTPUTS = ("auto", "pulse", "alsa", "sdl")


def open_output(
    pack: SoundPack,
    profile: Profile | None,
    kind: str = "stream",
    driver: str | None = None,
    chunk: int | None = None,
    latency: float | None = None,
    device: str | None = None,
    output: str = "auto",
    offset: float = 0.0,
) -> Output:
    """The live audio output for `timekeeper run`, opened, warm and prepared for `profile`
    (None: not prepared).

    `stream` (default): one always-running stream, cues placed at their exact frame
    (sound/framed.py), on the sink `output` names (open_sink). `mixer`: plain
    `Sound.play()` through pygame's mixer at the deadline, the fallback
    (sound/pygame_mixer.py). `silent`: no device at all. Raises AudioError when the device
    cannot be opened. `offset`: the stream's cues placed that many seconds early, for what
    the speaker path adds (FramedOutput; `audio.latency`)."""
    opened: Output
    if kind == "silent":
        return SilentOutput()
    if kind == "mixer":
        if device is not None:
            from timekeeper.sound.sdl import init_mixer

            init_mixer(driver, chunk or 512, device)
        from timekeeper.sound.pygame_mixer import PygameAudio

        opened = PygameAudio(pack, driver, buffer=chunk or 512)
    elif kind == "stream":
        from timekeeper.sound.framed import FramedOutput

        opened = FramedOutput(
            pack, open_sink(output, driver, chunk, latency, device), offset=offset
        )
    else:
        raise ValueError(f"audio kind {kind!r} is not one of {', '.join(AUDIO_KINDS)}")
    if profile is None:  # (`timekeeper audio test`: one cue, built when it is played)
        return opened
    try:
        opened.prepare(profile)
    except BaseException:
        opened.close()
        raise
    return opened


def open_sink(
    output: str,
    driver: str | None = None,
    chunk: int | None = None,
    latency: float | None = None,
    device: str | None = None,
) -> Sink:
    """The stream's sink for `audio.output` (OUTPUTS), opened.

    `pulse`: PulseAudio's own stream, timed by the server (sound/pulse.py; PipeWire's
    pipewire-pulse serves it too). `alsa`: an ALSA PCM (`device`, else "default"), timed
    by the device's status (sound/alsasink.py). `sdl`: an SDL device on `driver`/`device`,
    timed by its callbacks plus `latency` (sound/sdlsink.py). `auto`: alsa through
    PipeWire's ALSA plugin where a PipeWire server runs (its socket is there, or the pulse
    server that answers is PipeWire's), else pulse when a PulseAudio server answers (one
    that is not running is not started), else alsa when the system's
    default ALSA device opens (Pi OS Lite: the card itself), else SDL; SDL at once where
    SDL settings are made by hand — a driver other than pulseaudio, a device name or a
    latency (they name devices of, and were calibrated for, SDL). Never read from
    SDL_AUDIODRIVER: SDL itself still reads it."""
    if output not in OUTPUTS:
        raise ValueError(f"audio output {output!r} is not one of {', '.join(OUTPUTS)}")
    sdl_settings = driver not in (None, "pulseaudio") or latency is not None or device is not None
    if output == "auto" and not sdl_settings and _pipewire_runs():
        from timekeeper.sound.alsasink import PERIOD, AlsaSink

        # PipeWire's ALSA plugin at once (its pulse layer's timing: see below), libpulse not
        # even loaded (1.6 MB of the box's memory)
        with contextlib.suppress(AudioError):
            alsa = AlsaSink(None, PERIOD)
            if alsa.kind == "IOPLUG":
                return alsa
            alsa.close()  # (ALSA's default is a card itself: PipeWire's to hold)
    if output == "pulse" or (output == "auto" and not sdl_settings):
        from timekeeper.sound.pulse import REWRITE_PERIOD, PulseSink

        try:  # (a press is rewritten into what is written already: long periods)
            pulse = PulseSink(chunk or REWRITE_PERIOD, spawn=output == "pulse")
        except AudioError as exc:
            if output == "pulse":
                raise
            log.debug("audio.output auto: no PulseAudio server answers (%s): ALSA", exc)
        else:
            if output == "pulse" or "PipeWire" not in pulse.server:
                return pulse
            # PipeWire's pulse layer reports its stream's timing short by part of a graph
            # quantum (docs/timing.md: +8.6 ms at 1024 frames, +21 at 2048); its ALSA
            # plugin's delay is PipeWire's own stream time with what it holds queued (+0.4)
            from timekeeper.sound.alsasink import PERIOD, AlsaSink

            try:
                alsa = AlsaSink(None, PERIOD)
            except AudioError as exc:
                log.debug("audio.output auto: PipeWire without its ALSA plugin (%s)", exc)
                return pulse
            if alsa.kind != "IOPLUG":  # (ALSA's default is a card itself: PipeWire's to hold)
                alsa.close()
                return pulse
            pulse.close()
            return alsa
    if output == "alsa" or (output == "auto" and not sdl_settings):
        from timekeeper.sound.alsasink import PERIOD, AlsaSink

        try:
            return AlsaSink(device if output == "alsa" else None, chunk or PERIOD)
        except AudioError as exc:
            if output == "alsa":
                raise
            log.debug("audio.output auto: the default ALSA device does not open (%s): SDL", exc)
    from timekeeper.sound.sdlsink import DEFAULT_CHUNK, SdlSink

    mixer = sys.modules.get("pygame.mixer")
    if mixer is not None and mixer.get_init():
        mixer.quit()  # an OGG decode opened SDL's audio (on the dummy driver): let it go
    return SdlSink(driver, device, chunk or DEFAULT_CHUNK, latency)


def _pipewire_runs() -> bool:
    """Whether a PipeWire server's socket is there (as libpipewire finds it)."""
    folder = os.environ.get("PIPEWIRE_RUNTIME_DIR") or os.environ.get("XDG_RUNTIME_DIR")
    name = os.environ.get("PIPEWIRE_REMOTE") or "pipewire-0"
    path = Path(name) if name.startswith("/") else Path(folder or "/nonexistent") / name
    try:
        return stat.S_ISSOCK(path.stat().st_mode)
    except OSError:
        return False


def described(output: Output | None) -> str:
    """What a live output is, for the log: `stream on pulse`, `mixer`, `silent` (None: no
    device open, the guard is reopening it)."""
    from timekeeper.sound.framed import FramedOutput

    if output is None:
        return "none open (being reopened)"
    if isinstance(output, FramedOutput):
        return f"stream on {output.sink.name}"
    return "silent" if isinstance(output, SilentOutput) else "mixer"


def output_devices(driver: str | None = None) -> tuple[str, list[str]]:
    """The driver SDL uses (`driver`, else its own choice) and the names of its output
    devices: what `audio.device` may name. Raises AudioError when the driver cannot start
    (e.g. pulseaudio with no server running)."""
    from pygame._sdl2 import audio as sdl_audio
    from pygame._sdl2.sdl2 import INIT_AUDIO, init_subsystem

    from timekeeper.sound.sdl import _sdl_driver
    from timekeeper.sound.sdlsink import _quit_sdl_audio

    with _sdl_driver(driver):
        try:
            init_subsystem(INIT_AUDIO)
        except Exception as exc:  # pygame's own error types
            raise AudioError(
                f"SDL's audio driver {driver or '(default)'} cannot start ({exc})"
            ) from None
    try:
        return current_driver() or driver or "?", list(sdl_audio.get_audio_device_names(False))
    finally:
        _quit_sdl_audio()


def current_driver() -> str | None:
    import ctypes

    from timekeeper.sound.sdlsink import _sdl_library

    sdl = _sdl_library()
    if sdl is None:
        return None
    sdl.SDL_GetCurrentAudioDriver.restype = ctypes.c_char_p
    name = sdl.SDL_GetCurrentAudioDriver()
    return name.decode() if name else None
