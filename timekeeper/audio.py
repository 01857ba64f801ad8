"""Outputs that make cues audible: the live pygame mixer, and the interface every output
(and every test fake) implements."""

from __future__ import annotations

import os
from contextlib import contextmanager

import numpy as np

from timekeeper.engine import Cue
from timekeeper.profile import Profile
from timekeeper.soundpack import RATE, SoundPack


class AudioError(Exception):
    """The audio device could not be opened or used."""


class Output:
    """Something that turns cues into sound (or light, or log lines). `play` is called on
    the runner's thread as soon as a cue is due and must not block; `now` is the runner's
    clock at that moment (outputs never read a clock of their own).

    An output with a `lead` is handed each cue that many seconds before it is due (the
    runner looks ahead by the largest lead), so that it can have it sound on time."""

    lead: float = 0.0

    def prepare(self, profile: Profile) -> None:
        """Build whatever `play` will need for this profile, before the match starts."""

    def play(self, cue: Cue, now: float) -> None:
        raise NotImplementedError

    def fault(self) -> str | None:
        """Why the device has stopped working (e.g. its stream is gone), or None while it
        works. Polled by the AudioGuard about once a second."""
        return None

    def close(self) -> None:
        """Release the device."""


AUDIO_KINDS = ("stream", "mixer")


def open_output(pack: SoundPack, profile: Profile, kind: str = "stream",
                driver: str | None = None, chunk: int | None = None,
                latency: float | None = None, device: str | None = None) -> Output:
    """The live audio output for `timekeeper run`, opened, warm and prepared for `profile`.

    `stream` (default): one always-running stream, cues placed at their exact frame
    (timekeeper/stream.py). `mixer`: plain `Sound.play()` through pygame's mixer at the
    deadline, the fallback. Raises AudioError when the device cannot be opened."""
    if kind == "mixer":
        if device is not None:
            init_mixer(driver, chunk or 512, device)
        output: Output = PygameAudio(pack, driver, buffer=chunk or 512)
    elif kind == "stream":
        import sys

        from timekeeper.stream import DEFAULT_CHUNK, StreamAudio

        mixer = sys.modules.get("pygame.mixer")
        if mixer is not None and mixer.get_init():
            mixer.quit()  # an OGG decode opened SDL's audio (on the dummy driver): let it go
        output = StreamAudio(pack, driver, chunk=chunk or DEFAULT_CHUNK, latency=latency,
                             device=device)
    else:
        raise ValueError(f"audio kind {kind!r} is not one of {', '.join(AUDIO_KINDS)}")
    try:
        output.prepare(profile)
    except BaseException:
        output.close()
        raise
    return output


@contextmanager
def _sdl_env(name: str, value: str | None):
    """SDL reads its drivers from the environment: set `name` (unless `value` is None) for
    the duration, then put back what was there."""
    old = os.environ.get(name)
    if value:
        os.environ[name] = value
    try:
        yield
    finally:
        if value:
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def _sdl_driver(driver: str | None):
    return _sdl_env("SDL_AUDIODRIVER", driver)


def init_mixer(driver: str | None = None, buffer: int = 512, device: str | None = None) -> None:
    """Open the mixer at our fixed format (48 kHz, 16-bit, stereo); SDL converts for the
    device, so sample arrays never need to know what the hardware wants."""
    import pygame

    with _sdl_driver(driver):
        try:
            pygame.mixer.init(frequency=RATE, size=-16, channels=2, buffer=buffer,
                              allowedchanges=0, devicename=device)
        except pygame.error as exc:
            raise AudioError(f"cannot open audio ({exc}); check the speaker/sound card "
                             "(audio.driver/audio.device in the config), or run with "
                             "SDL_AUDIODRIVER=dummy for silence") from None


def to_pcm(samples: np.ndarray) -> np.ndarray:
    """float mono → the mixer's int16 stereo frames."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16)
    return np.ascontiguousarray(np.repeat(pcm[:, None], 2, axis=1))


def to_pygame_sound(samples: np.ndarray):
    import pygame

    return pygame.sndarray.make_sound(to_pcm(samples))


def watch_device_events(pygame) -> None:
    """SDL delivers AUDIODEVICEREMOVED through its event queue, which needs the video
    subsystem: SDL's dummy video driver gives the queue without touching any screen."""
    if pygame.display.get_init():
        return
    with _sdl_env("SDL_VIDEODRIVER", "dummy"):
        try:
            pygame.display.init()
        except pygame.error:
            return  # no events: a lost device is then noticed only if playing raises
    pygame.event.set_blocked(None)
    pygame.event.set_allowed([pygame.AUDIODEVICEREMOVED])
    pygame.event.clear()


def device_removed(pygame) -> str | None:
    """SDL reports a lost device only as an event: the stream goes on "playing" into nothing
    at the right rate and raises nothing, so the event queue is read here."""
    if not pygame.display.get_init():
        return None
    if any(not event.iscapture for event in pygame.event.get(pygame.AUDIODEVICEREMOVED)):
        return "the audio device was removed"
    return None


class PygameAudio(Output):
    """Live sound through pygame's mixer. The stream is opened (and run once) at start-up,
    so the first cue of the day is as prompt as the last. The melody has a channel of its
    own so that stopping it never cuts a mark or a signal."""

    def __init__(self, pack: SoundPack, driver: str | None = None, buffer: int = 512) -> None:
        import pygame

        self._pygame = pygame
        self.pack = pack
        if not pygame.mixer.get_init():
            init_mixer(driver, buffer)
        pygame.mixer.set_num_channels(16)
        pygame.mixer.set_reserved(1)
        self._melody = pygame.mixer.Channel(0)
        watch_device_events(pygame)
        self._sounds: dict[tuple, object] = {}
        self._melody_pcm: dict[float, np.ndarray] = {}
        warmup = to_pygame_sound(np.zeros(RATE // 50, np.float32))
        warmup.play()  # wakes the device's stream now rather than at the first cue

    def prepare(self, profile: Profile) -> None:
        for name in profile.cue_names - {"last30"}:
            self._sound(name, 1)
        for period in profile.periods:
            for mark in period.marks:
                self._sound(mark.cue, mark.count)
            if period.melody:
                self._melody_sound(period.melody, 0.0)  # converts the frames once, now

    def play(self, cue: Cue, now: float) -> None:
        if cue.name == "last30":
            if cue.stop:
                self._melody.fadeout(5)  # a 5-ms fade: no click, and the end is sharp
            else:
                # started late (by the runner's wake-up): skip as much of the tune, so that it
                # stays on the match clock and still ends with the period
                late = max(0.0, now - cue.due)
                self._melody.play(self._melody_sound(cue.length, cue.offset + late))
            return
        self._sound(cue.name, cue.count).play()

    def fault(self) -> str | None:
        pygame = self._pygame
        if not pygame.mixer.get_init():
            return "the mixer was closed"
        return device_removed(pygame)

    def close(self) -> None:
        self._pygame.mixer.quit()

    def _sound(self, name: str, count: int):
        key = (name, count)
        if key not in self._sounds:
            self._sounds[key] = to_pygame_sound(self.pack.repeated(name, count))
        return self._sounds[key]

    def _melody_sound(self, length: float, offset: float):
        """The melody window from `offset`: a slice of frames prepared before the match, so
        a start or a resume costs a copy (well under a millisecond), never a conversion."""
        if length not in self._melody_pcm:
            self._melody_pcm[length] = to_pcm(self.pack.melody(length))
        pcm = self._melody_pcm[length]
        return self._pygame.sndarray.make_sound(pcm[min(len(pcm) - 1, round(offset * RATE)):])
