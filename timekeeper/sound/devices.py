"""Opening the live audio output `timekeeper run` plays through: the sample-exact stream, or
pygame's mixer as the fallback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from timekeeper.rules.profile import Profile
from timekeeper.sound.output import AudioError, Output, SilentOutput

if TYPE_CHECKING:  # (the command line reads AUDIO_KINDS: no numpy to import for that)
    from timekeeper.sound.pack import SoundPack

AUDIO_KINDS = ("stream", "mixer", "silent")  # `run --audio`, `audio.kind` in the config


def open_output(pack: SoundPack, profile: Profile | None, kind: str = "stream",
                driver: str | None = None, chunk: int | None = None,
                latency: float | None = None, device: str | None = None) -> Output:
    """The live audio output for `timekeeper run`, opened, warm and prepared for `profile`
    (None: not prepared).

    `stream` (default): one always-running stream, cues placed at their exact frame
    (sound/stream.py). `mixer`: plain `Sound.play()` through pygame's mixer at the
    deadline, the fallback (sound/pygame_mixer.py). `silent`: no device at all. Raises
    AudioError when the device cannot be opened."""
    if kind == "silent":
        return SilentOutput()
    if kind == "mixer":
        if device is not None:
            from timekeeper.sound.sdl import init_mixer

            init_mixer(driver, chunk or 512, device)
        from timekeeper.sound.pygame_mixer import PygameAudio

        output: Output = PygameAudio(pack, driver, buffer=chunk or 512)
    elif kind == "stream" and (push := _push_sink(driver, latency, device)) is not None:
        from timekeeper.sound.mixing import RATE
        from timekeeper.sound.pushstream import REWRITE_PERIOD, PushAudio

        period = chunk or REWRITE_PERIOD  # (PulseAudio's stream: a press is rewritten)
        output = PushAudio(pack, push, period=period, target=2 * period / RATE)
    elif kind == "stream":
        from timekeeper.sound.stream import DEFAULT_CHUNK, StreamAudio

        mixer = sys.modules.get("pygame.mixer")
        if mixer is not None and mixer.get_init():
            mixer.quit()  # an OGG decode opened SDL's audio (on the dummy driver): let it go
        output = StreamAudio(pack, driver, chunk=chunk or DEFAULT_CHUNK, latency=latency,
                             device=device)
    else:
        raise ValueError(f"audio kind {kind!r} is not one of {', '.join(AUDIO_KINDS)}")
    if profile is None:  # (`timekeeper audio test`: one cue, built when it is played)
        return output
    try:
        output.prepare(profile)
    except BaseException:
        output.close()
        raise
    return output


def _push_sink(driver: str | None, latency: float | None, device: str | None):
    """The opener of a device that reports its own delay (sound/pushstream.py) for the
    driver `run` is given (else SDL_AUDIODRIVER): PulseAudio's stream latency. None: the SDL
    stream, which is also kept where a latency or an SDL device name is set by hand (they
    were calibrated for, and name devices of, SDL)."""
    import os

    name = driver or os.environ.get("SDL_AUDIODRIVER")
    if latency is not None or device is not None:
        return None
    if name == "pulseaudio":
        from timekeeper.sound.pulse import PulseSink

        return lambda period, target: PulseSink(period, target)
    return None


def output_devices(driver: str | None = None) -> tuple[str, list[str]]:
    """The driver SDL uses (`driver`, else its own choice) and the names of its output
    devices: what `audio.device` may name. Raises AudioError when the driver cannot start
    (e.g. pulseaudio with no server running)."""
    from pygame._sdl2 import audio as sdl_audio
    from pygame._sdl2.sdl2 import INIT_AUDIO, init_subsystem

    from timekeeper.sound.sdl import _sdl_driver
    from timekeeper.sound.stream import _quit_sdl_audio

    with _sdl_driver(driver):
        try:
            init_subsystem(INIT_AUDIO)
        except Exception as exc:  # pygame's own error types
            raise AudioError(f"SDL's audio driver {driver or '(default)'} cannot start "
                             f"({exc})") from None
    try:
        return current_driver() or driver or "?", list(sdl_audio.get_audio_device_names(False))
    finally:
        _quit_sdl_audio()


def current_driver() -> str | None:
    import ctypes

    from timekeeper.sound.stream import _sdl_library

    sdl = _sdl_library()
    if sdl is None:
        return None
    sdl.SDL_GetCurrentAudioDriver.restype = ctypes.c_char_p
    name = sdl.SDL_GetCurrentAudioDriver()
    return name.decode() if name else None
