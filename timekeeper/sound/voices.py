"""The voices of a mix — sample arrays placed at start frames — and the fill of one block:
the one mixer the offline render and every live sink share, so that a render and a live box
place, overlap, clip and stop a sound alike, to the sample.

A melody that is stopped ends at its stop frame (a cut, as renders have always done:
bench/golden.py holds their bytes); a voice that comes too late for its frame starts at once.
Voices are kept in the order of their start frames, so that overlapping sounds are summed in
one order whatever order they were handed over in (float32 sums are not associative)."""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

import numpy as np

from timekeeper.sound.mixing import mix_into


@dataclass
class Voice:
    name: str
    start: int  # frame of samples[0]
    samples: np.ndarray
    stop: int | None = None  # frame where it is cut off (the melody's stop)

    @property
    def end(self) -> int:
        full = self.start + len(self.samples)
        return full if self.stop is None else max(self.start, min(full, self.stop))


class Voices:
    """The voices that are playing or due, and the fill of one block of the stream.

    `add`/`stop` come from the runner's thread, `fill` from the audio thread; a lock guards
    the voice list for the few microseconds either needs it."""

    def __init__(self) -> None:
        self.playing: list[Voice] = []  # by start frame (equal starts: in the order added)
        self.next_frame = 0  # the first frame not yet mixed: earlier ones are out of reach
        self.late = 0  # voices that came too late for their frame (started at once instead)
        # frames a voice is kept after its end has been mixed, so that they can be mixed
        # again (set where written frames may be rewritten: rewind())
        self.keep = 0
        self._lock = threading.Lock()

    def add(self, name: str, start: int, samples: np.ndarray, earliest: int | None = None) -> int:
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
                    samples = samples[reach - start :]
                start = reach
            if len(samples):
                bisect.insort_right(
                    self.playing, Voice(name, start, samples), key=lambda voice: voice.start
                )
        return start

    def rewind(self, frame: int) -> int:
        """Mix again from `frame` (mixed already, within `keep`); returns the frame the mix
        had reached, which the caller mixes up to again at once."""
        with self._lock:
            reached, self.next_frame = self.next_frame, frame
        return reached

    def stop(self, name: str, frame: int, earliest: int | None = None) -> int:
        """Cut off every voice called `name` at `frame` (at once if that is past, as in
        add()); returns the frame it really ends at."""
        with self._lock:
            frame = max(frame, self.next_frame if earliest is None else earliest)
            for voice in self.playing:
                if voice.name == name and (voice.stop is None or voice.stop > frame):
                    voice.stop = frame
        return frame

    @property
    def end(self) -> int:
        """The frame after the last one any voice sounds in (0: none)."""
        with self._lock:
            return max((voice.end for voice in self.playing), default=0)

    def skip_idle(self, frames: int) -> bool:
        """Move on by `frames` without mixing when nothing is playing or due (the common
        case between cues: no work at all); False when there is something to mix."""
        with self._lock:
            if self.playing:
                return False
            self.next_frame += frames
        return True

    def fill(self, out: np.ndarray) -> None:
        """Mix the next len(out) frames into `out` (overwritten, clipped to ±1) and move on."""
        first = self.next_frame
        out.fill(0.0)
        with self._lock:
            self.next_frame = first + len(out)
            if not self.playing:
                return
            voices = self.playing
            self.playing = [v for v in voices if v.end + self.keep > self.next_frame]
        for voice in voices:
            if voice.start >= self.next_frame:
                break  # (by start frame: none of the rest is due in this block)
            if (end := voice.end) > first:
                mix_into(out, first, voice.start, voice.samples[: end - voice.start])
        np.clip(out, -1.0, 1.0, out=out)
