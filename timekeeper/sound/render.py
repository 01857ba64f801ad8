"""Offline renders: the same engine in virtual time, mixed sample-accurately into a WAV.

Each cue starts at exactly round(due × rate), mixed by the live sinks' own `Voices`
(sound/voices.py); the mix is written in blocks, so an hour-long match needs a few megabytes
of memory, not a gigabyte."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from timekeeper.rules.engine import Cue
from timekeeper.rules.profiletypes import Profile
from timekeeper.rules.replay import Replay, Step, replay
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import SoundPack
from timekeeper.sound.voices import Voices

BLOCK = RATE * 10  # samples mixed at a time
LEAD_IN = 0.5  # seconds of silence before the first cue
TAIL = 0.5  # seconds of silence after the last sound


def voices_for(cues: list[Cue], pack: SoundPack) -> Voices:
    """Every sound of `cues` placed as a live box places it, in the same `Voices`: a melody
    is cut off at the cue that stops it."""
    voices = Voices()
    for cue in cues:
        if not pack.plays(cue):
            continue
        frame = round(cue.due * RATE)
        if cue.stop:
            voices.stop(cue.name, frame)
        else:
            voices.add(cue.name, frame, pack.samples(cue))
    return voices


def write_mix(path: Path, voices: Voices, length: int) -> None:
    """Mix `voices` into a 16-bit WAV of `length` frames, a block at a time."""
    with path.open("wb") as file, wave.open(file, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for block_start in range(0, length, BLOCK):
            buf = np.zeros(min(length, block_start + BLOCK) - block_start, np.float32)
            voices.fill(buf)
            w.writeframes((buf * 32767).astype("<i2").tobytes())


def render(
    profile: Profile,
    pack: SoundPack,
    out: Path,
    steps: list[Step] = (),  # type: ignore[assignment]
    events: Path | None = None,
) -> Replay:
    result = replay(profile, list(steps), begin=LEAD_IN)
    log = EventLog(events, append=False) if events is not None else None  # fails before the WAV
    voices = voices_for(result.cues, pack)
    length = max(voices.end, round(result.end * RATE)) + round(TAIL * RATE)
    try:
        write_mix(out, voices, length)
    except OSError as exc:  # name the file even when the OS does not (a full disk)
        raise OSError(exc.errno, exc.strerror, str(out)) from None
    if log is not None:
        for cue in result.cues:
            if not cue.stop:
                log.record(cue, cue.due)
        log.close()
    return result
