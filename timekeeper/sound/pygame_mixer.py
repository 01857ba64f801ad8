"""The fallback live output (`--audio mixer`): pygame's mixer, each cue a `Sound.play()` at
its deadline."""

from __future__ import annotations

import numpy as np

from timekeeper.rules.engine import Cue
from timekeeper.rules.profiletypes import Profile
from timekeeper.sound.mixing import RATE, floats
from timekeeper.sound.output import Output
from timekeeper.sound.pack import SoundPack
from timekeeper.sound.sdl import device_removed, init_mixer, watch_device_events


def to_pcm(samples: np.ndarray) -> np.ndarray:
    """A pack's mono samples (float32 or int16: sound/mixing.py) → the mixer's int16 stereo
    frames."""
    pcm = (np.clip(floats(samples), -1.0, 1.0) * 32767).astype(np.int16)
    return np.ascontiguousarray(np.repeat(pcm[:, None], 2, axis=1))


def to_pygame_sound(samples: np.ndarray):
    import pygame

    return pygame.sndarray.make_sound(to_pcm(samples))


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
        if not self.pack.plays(cue):
            return
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
        return self._pygame.sndarray.make_sound(pcm[min(len(pcm) - 1, round(offset * RATE)) :])
