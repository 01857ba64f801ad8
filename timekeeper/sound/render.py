"""Offline renders: the same engine in virtual time, mixed sample-accurately into a WAV.

Each cue starts at exactly round(due × rate); the mix is written in blocks, so an hour-long
match needs a few megabytes of memory, not a gigabyte."""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.rules.replay import Replay, Step, replay
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.mixing import RATE, mix_into
from timekeeper.sound.pack import SoundPack

BLOCK = RATE * 10  # samples mixed at a time
LEAD_IN = 0.5  # seconds of silence before the first cue
TAIL = 0.5  # seconds of silence after the last sound


@dataclass(frozen=True)
class Placement:
    start: int  # sample index in the file
    samples: np.ndarray

    @property
    def end(self) -> int:
        return self.start + len(self.samples)


def placements(cues: list[Cue], pack: SoundPack) -> list[Placement]:
    """Where every sound goes; the melody is cut at the cue that stops it."""
    out = []
    for i, cue in enumerate(cues):
        if cue.stop or not pack.plays(cue):
            continue
        start = round(cue.due * RATE)
        samples = pack.samples(cue)
        if cue.name == "last30":
            stop = next((c for c in cues[i + 1:] if c.name == "last30" and c.stop), None)
            if stop is not None:
                samples = samples[:max(0, round(stop.due * RATE) - start)]
        out.append(Placement(start, samples))
    return out


def write_mix(path: Path, parts: list[Placement], length: int) -> None:
    parts = sorted(parts, key=lambda p: p.start)
    with path.open("wb") as file, wave.open(file, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        first = 0
        for block_start in range(0, length, BLOCK):
            block_end = min(length, block_start + BLOCK)
            buf = np.zeros(block_end - block_start, np.float32)
            while first < len(parts) and parts[first].end <= block_start:
                first += 1
            for part in parts[first:]:
                if part.start >= block_end:
                    break
                mix_into(buf, block_start, part.start, part.samples)
            w.writeframes((np.clip(buf, -1.0, 1.0) * 32767).astype("<i2").tobytes())


def render(profile: Profile, pack: SoundPack, out: Path, steps: list[Step] = (),  # type: ignore[assignment]
           events: Path | None = None) -> Replay:
    result = replay(profile, list(steps), begin=LEAD_IN)
    log = EventLog(events, append=False) if events is not None else None  # fails before the WAV
    parts = placements(result.cues, pack)
    length = max([p.end for p in parts] + [round(result.end * RATE)]) + round(TAIL * RATE)
    try:
        write_mix(out, parts, length)
    except OSError as exc:  # name the file even when the OS does not (a full disk)
        raise OSError(exc.errno, exc.strerror, str(out)) from None
    if log is not None:
        for cue in result.cues:
            if not cue.stop:
                log.record(cue, cue.due)
        log.close()
    return result
