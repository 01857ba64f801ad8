#!/usr/bin/env python3
"""Synthesise timekeeper's default sound pack (``sounds/default/``).

Why this script exists: timekeeper must be usable straight after installation, so it ships
a complete set of signals. Instead of bundling recordings or samples of unclear origin, the
project makes every sound itself with a little additive synthesis. There are no licensing
questions, anybody can audit, tweak or regenerate the pack, and the output is deterministic
(fixed noise seed, no timestamps), so re-running it gives byte-identical files.

Every file is mono, 16-bit PCM, 48 kHz. Each sound is audible from sample 0 (attack ramp of
at most ~1 ms, no leading silence) because the player detects onsets sample-accurately, and
each ends with a short fade-out so it never clicks.

Usage: python3 scripts/make_default_pack.py [--out DIR]
"""

from __future__ import annotations

import argparse
import wave
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

SR = 48_000
LOUD_DB = -3.0  # peak level of the signals
SOFT_DB = -12.0  # peak level of the operator feedback blips
RNG_SEED = 20_240_501  # fixed: the noise-based percussion is identical on every run

Partial = tuple[float, float, float]  # (frequency ratio, amplitude, decay rate in 1/s)
Sound = Callable[[], np.ndarray]

# ---------------------------------------------------------------------------- basics


def samples(seconds: float) -> int:
    return round(seconds * SR)


def midi_hz(midi: float) -> float:
    return 440.0 * 2.0 ** ((midi - 69) / 12)


def pitch(name: str) -> int:
    """Pitch name to MIDI number: 'C4' -> 60, 'F#5' -> 78, 'Bb3' -> 58."""
    step = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}[name[0]]
    rest = name[1:]
    while rest[0] in "#b":
        step += 1 if rest[0] == "#" else -1
        rest = rest[1:]
    return 12 * (int(rest) + 1) + step


def osc(
    freq: float | np.ndarray, n: int, partials: Sequence[Partial], phase0: float = 0.0
) -> np.ndarray:
    """Additive oscillator. `freq` is a constant or a per-sample array (phase-continuous).

    By default the fundamental starts in cosine phase so the very first sample is non-zero;
    chords pass a different `phase0` per voice so their peaks don't all line up. Partials
    above 16 kHz are dropped, so the oscillator itself never aliases."""
    f = np.broadcast_to(np.asarray(freq, dtype=float), (n,))
    phase = 2 * np.pi * (np.cumsum(f) - f[0]) / SR + phase0
    t = np.arange(n) / SR
    out = np.zeros(n)
    for k, (ratio, amp, decay) in enumerate(partials):
        if ratio * f.max() > 16_000:
            continue
        wave_k = amp * np.sin(ratio * phase + np.pi / 2 + np.pi * k * k / len(partials))
        out += wave_k * np.exp(-decay * t) if decay else wave_k
    return out


def env(n: int, attack: float = 0.001, release: float = 0.015, floor: float = 0.3) -> np.ndarray:
    """Linear attack from `floor` (non-zero => audible at once) and raised-cosine release."""
    e = np.ones(n)
    na = min(samples(attack), n)
    e[:na] = np.linspace(floor, 1.0, na, endpoint=False)
    nr = min(samples(release), n - na)
    if nr:
        e[n - nr :] *= 0.5 * (1 + np.cos(np.linspace(0, np.pi, nr)))
    return e


def tone(
    freq: float | np.ndarray, dur: float, partials: Sequence[Partial], release: float = 0.015
) -> np.ndarray:
    n = samples(dur)
    return osc(freq, n, partials) * env(n, release=release)


def place(buf: np.ndarray, t: float, sig: np.ndarray, level: float = 1.0) -> None:
    """Mix `sig` into `buf` starting at `t` seconds (truncated at the end of `buf`)."""
    i = samples(t)
    m = min(len(sig), len(buf) - i)
    buf[i : i + m] += level * sig[:m]


def steps(freqs: Sequence[float], seg: float, total: float, smooth: float = 0.004) -> np.ndarray:
    """Per-sample frequency alternating through `freqs` every `seg` s, with smoothed edges."""
    n = samples(total)
    f = np.asarray(freqs, dtype=float)[(np.arange(n) // samples(seg)) % len(freqs)]
    k = samples(smooth)
    padded = np.concatenate([np.full(k, f[0]), f, np.full(k, f[-1])])
    return np.convolve(padded, np.ones(k) / k, mode="same")[k : k + n]


def noise_burst(rng: np.random.Generator, dur: float, tau: float) -> np.ndarray:
    """High-passed noise with exponential decay (ticks, cymbal)."""
    n = samples(dur)
    x = np.diff(rng.standard_normal(n), prepend=0.0) * np.exp(-np.arange(n) / SR / tau)
    return x / np.max(np.abs(x))


def saturate(x: np.ndarray, drive: float) -> np.ndarray:
    """Gentle tanh saturation: rounds off the rare peaks, so the sound is louder at -3 dBFS."""
    return np.tanh(drive * x / np.max(np.abs(x)))


def finish(x: np.ndarray, peak_db: float) -> np.ndarray:
    """Fade out the tail (10-30 ms) and normalise the peak to `peak_db` dBFS."""
    nf = samples(0.03 if len(x) > SR else 0.012)
    x = x.copy()
    x[-nf:] *= 0.5 * (1 + np.cos(np.linspace(0, np.pi, nf)))
    return x * (10 ** (peak_db / 20) / np.max(np.abs(x)))


# ----------------------------------------------------------------------- timbres

BELL = [(1, 1.0, 3.0), (2, 0.35, 6.0), (3, 0.18, 10.0), (4, 0.22, 16.0), (10, 0.04, 40.0)]
HORN = [(k, 0.9 ** (k - 1) / k**0.3, 0.0) for k in range(1, 9)]
BRASS = [(k, 1.0 / k, 0.0) for k in range(1, 9)]  # band-limited sawtooth
BEEP = [(1, 1.0, 0.0), (2, 0.12, 0.0)]
CHIME = [(1, 1.0, 6.0), (2.76, 0.22, 14.0), (5.4, 0.06, 30.0)]
SQUARE = [(k, np.exp(-k / 16) / k, 0.0) for k in range(1, 20, 2)]  # stops at 4.2 kHz
MELLOW = [(1, 1.0, 0.0), (2, 0.25, 0.0), (3, 0.3, 0.0), (5, 0.1, 0.0)]
LEAD = [(1, 1.0, 0), (2, 0.45, 0), (3, 0.3, 0), (4, 0.18, 0), (6, 0.08, 0), (8, 0.05, 0)]
BASS = [(1, 1.0, 1.5), (2, 0.6, 3.0), (3, 0.35, 4.0), (4, 0.2, 5.0), (5, 0.12, 6.0)]
ORGAN = [(1, 1.0, 0), (2, 0.35, 0), (4, 0.12, 0)]
CHIP = [(1, 1.0, 0), (3, 0.3, 0), (5, 0.15, 0), (7, 0.08, 0)]

# -------------------------------------------------------------------- short cues


def prestart() -> np.ndarray:
    """Friendly rising C-major arpeggio on a marimba/bell, the last note rings out."""
    buf = np.zeros(samples(1.5))
    for i, name in enumerate(["C5", "E5", "G5", "C6"]):
        t0 = 0.2 * i
        place(buf, t0, tone(midi_hz(pitch(name)), 1.5 - t0, BELL, release=0.03))
    return buf


def start() -> np.ndarray:
    """Bright horn on A4 with a sub-octave, slight vibrato; strong attack settling a bit."""
    n = samples(0.8)
    t = np.arange(n) / SR
    f = 440.0 * (1 + 0.004 * np.sin(2 * np.pi * 5.5 * t) * np.minimum(t / 0.2, 1))
    sig = osc(f, n, HORN) + 0.3 * osc(f / 2, n, HORN[:4])
    return saturate(sig * env(n, release=0.03) * (0.8 + 0.2 * np.exp(-t / 0.12)), 1.5)


def third() -> np.ndarray:
    """A5 then D6 - a rising two-tone, clearly lower than the 1.4 kHz minute beep."""
    return tone(steps([880.0, 1174.66], 0.125, 0.25), 0.25, [*BEEP, (3, 0.04, 0.0)])


def period_end() -> np.ndarray:
    """Two-tone siren (F#5 / C#5, a fourth apart) on a horn timbre, three cycles."""
    f = steps([739.99, 554.37], 0.25, 1.5, smooth=0.008)
    return tone(f, 1.5, HORN, release=0.03)


def end() -> np.ndarray:
    """Long open D-major brass chord: bright, punchy attack, then a driven, vibrato sustain.

    Voice phases are spread so the chord's peaks don't line up, and the tanh drive makes it
    at least as loud as the single-tone period siren at the same -3 dBFS peak."""
    n = samples(2.5)
    t = np.arange(n) / SR
    vibrato = 1 + 0.003 * np.sin(2 * np.pi * 5 * t) * np.minimum(t / 0.3, 1)
    sig = np.zeros(n)
    for i, name in enumerate(["D4", "A4", "D5", "F#5"]):
        sig += osc(midi_hz(pitch(name)) * vibrato, n, BRASS, 1.6 + 2.1 * i)  # starts near a crest
    return saturate(sig * env(n, release=0.03) * (0.8 + 0.2 * np.exp(-t / 0.25)), 4.0)


def break_warning() -> np.ndarray:
    """Two soft chimes, G5 then E5 ("ding-dong")."""
    buf = np.zeros(samples(0.6))
    place(buf, 0.0, tone(783.99, 0.6, CHIME, release=0.03))
    place(buf, 0.3, tone(659.26, 0.3, CHIME, release=0.02))
    return buf


def shot_start() -> np.ndarray:
    """Pea-whistle: 2.5 kHz sine with a fast 28 Hz trill."""
    t = np.arange(samples(0.4)) / SR
    return tone(2500 + 150 * np.sin(2 * np.pi * 28 * t), 0.4, [(1, 1.0, 0.0), (2, 0.06, 0.0)])


def shot_end() -> np.ndarray:
    """Low buzzer: 220 Hz square, odd harmonics rolled off and stopped at 4.2 kHz."""
    return saturate(tone(220.0, 0.6, SQUARE, release=0.02), 1.5)


def timeout_end() -> np.ndarray:
    """Three quick rising beeps on an A-major triad."""
    buf = np.zeros(samples(0.7))
    for t0, f, dur in [(0.0, 880.0, 0.16), (0.24, 1108.73, 0.16), (0.48, 1318.51, 0.22)]:
        place(buf, t0, tone(f, dur, [*BEEP, (3, 0.08, 0.0)]))
    return buf


def penalty_end() -> np.ndarray:
    """Descending fifth G5 -> C5 on a mellow square-ish timbre."""
    buf = np.zeros(samples(0.5))
    place(buf, 0.0, tone(783.99, 0.23, MELLOW))
    place(buf, 0.25, tone(523.25, 0.25, MELLOW))
    return buf


def forfeit() -> np.ndarray:
    """Three even organ chords of a falling diminished triad (the forfeit point: ITHF 4.6,
    ball hockey's no-show): unlike every rule signal, and calm, as it is for the referee."""
    buf = np.zeros(samples(1.3))
    for i, name in enumerate(["E5", "C#5", "A#4"]):
        f = midi_hz(pitch(name))
        chord = tone(f, 0.34, ORGAN, release=0.04) + 0.5 * tone(f / 2, 0.34, ORGAN)
        place(buf, 0.45 * i, chord)
    return buf


def blip(f0: float, f1: float, dur: float) -> np.ndarray:
    """Soft gliding sine blip with a gentle decay."""
    n = samples(dur)
    sig = osc(np.geomspace(f0, f1, n), n, [(1, 1.0, 0.0), (2, 0.08, 0.0)])
    return sig * env(n, release=0.03) * np.exp(-np.arange(n) / SR / 0.12)


def time_added() -> np.ndarray:  # two ascending blips
    buf = np.zeros(samples(0.25))
    place(buf, 0.0, blip(660.0, 700.0, 0.1))
    place(buf, 0.14, blip(880.0, 935.0, 0.11))
    return buf


# ------------------------------------------------------- last30: the final-30-s tune

BPM = 120
BEAT = 60.0 / BPM  # 0.5 s; 60 beats = 15 bars of 4/4 = exactly 30.000 s
BUILD_FROM = 40  # beat 40 = 20.0 s: the last ten seconds build up
CADENCE_AT = 58  # beat 58 = 29.0 s: the final tonic chord

# Lead voice in C major, one 4/4 bar per string, "PITCH:BEATS" (R = rest).
MELODY = [
    # A - the hook (0-8 s)
    "C5:.5 E5:.5 G5:1 E5:.5 G5:.5 C6:1",  # C
    "A5:1 F5:.5 A5:.5 C6:1 A5:1",  # F
    "B5:.5 A5:.5 G5:.5 F5:.5 D5:1 G5:1",  # G7
    "E5:.5 D5:.5 C5:1 G4:1 C5:1",  # C
    # A' - the answer (8-16 s)
    "C5:.5 E5:.5 G5:1 E5:.5 G5:.5 C6:1",  # C
    "C6:1 B5:.5 A5:.5 E5:1 A5:1",  # Am
    "A5:.5 G5:.5 F5:.5 E5:.5 D5:1 F5:1",  # Dm
    "G5:1.5 F5:.5 E5:1 D5:1",  # G7
    # B - bridge (16-20 s)
    "F5:.5 A5:.5 C6:1 A5:.5 F5:.5 C6:1",  # F
    "D6:.5 C6:.5 B5:.5 A5:.5 G5:1 B5:.5 D6:.5",  # G
    # build-up (20-28 s): running eighths, higher, a scale climbing to the top
    "E6:.5 D6:.5 C6:.5 G5:.5 E5:.5 G5:.5 C6:1",  # C
    "A5:.5 C6:.5 F6:.5 C6:.5 A5:.5 C6:.5 F6:1",  # F
    "D6:.5 F6:.5 A6:.5 F6:.5 D6:.5 A5:.5 F5:.5 A5:.5",  # Dm
    "F5:.5 G5:.5 A5:.5 B5:.5 C6:.5 D6:.5 E6:.5 F6:.5",  # G7
    # cadence (28-30 s): dominant, then the tonic lands at 29.0 s
    "G6:.5 F6:.5 D6:.5 B5:.5 C6:2",  # G7 -> C
]
HARMONY = "C:4 F:4 G7:4 C:4  C:4 Am:4 Dm:4 G7:4  F:4 G:4  C:4 F:4 Dm:4 G7:4  G7:2 C:2"
CHORDS = {  # chord -> (bass root, accompaniment voicing)
    "C": ("C2", "C4 E4 G4"),
    "F": ("F2", "C4 F4 A4"),
    "G": ("G2", "B3 D4 G4"),
    "G7": ("G2", "B3 F4 G4"),
    "Am": ("A2", "C4 E4 A4"),
    "Dm": ("D2", "D4 F4 A4"),
}


def parse_bars(bars: Sequence[str]) -> list[tuple[int | None, float, float]]:
    """Melody bars -> (midi or None, start beat, beats); each bar must add up to 4 beats."""
    events: list[tuple[int | None, float, float]] = []
    beat = 0.0
    for number, bar in enumerate(bars, 1):
        length = 0.0
        for token in bar.split():
            name, dur = token.split(":")
            events.append((None if name == "R" else pitch(name), beat + length, float(dur)))
            length += float(dur)
        if abs(length - 4) > 1e-9:
            raise ValueError(f"melody bar {number} has {length} beats, not 4")
        beat += length
    return events


def note(midi: int, beats: float, timbre: Sequence[Partial], gate: float = 0.9,
         first: bool = False, ring: bool = False) -> np.ndarray:  # fmt: skip
    """One note with a pluck-to-sustain envelope (`ring`: decay freely, for the final chord).

    `gate` is the fraction of the duration that sounds; the file's `first` notes start at
    once (1 ms attack from 30 %), the others get a click-free 3 ms attack."""
    n = samples(beats * BEAT * gate)
    e = env(n, 0.001, 0.015, 0.3) if first else env(n, 0.003, 0.015, 0.0)
    sustain, body = (0.2, 1.8) if ring else (0.6, 4.0)
    pluck = sustain + (1 - sustain) * np.exp(-body * np.arange(n) / SR)
    return osc(midi_hz(midi), n, timbre, 0.0 if first else 0.9 * midi) * e * pluck


def last30() -> np.ndarray:
    buf = np.zeros(samples(30.0))
    rng = np.random.default_rng(RNG_SEED)

    def at(beat: float, sig: np.ndarray, level: float) -> None:
        place(buf, beat * BEAT, sig, level)

    for midi, b, d in parse_bars(MELODY):
        if midi is not None:
            gate = 1.0 if b >= CADENCE_AT else 0.85 if d <= 0.5 else 0.95
            lift = 1.0 + 0.25 * (b >= BUILD_FROM)
            at(b, note(midi, d, LEAD, gate, first=b == 0), 0.30 * lift)

    b = 0.0
    for token in HARMONY.split():
        chord, dur = token.split(":")
        d = float(dur)
        bass_name, voicing = CHORDS[chord]
        root, tones = pitch(bass_name), [pitch(x) for x in voicing.split()]
        if b >= CADENCE_AT:  # final tonic: full chord, octave bass, cymbal, let it ring
            for m in (root, root + 12):
                at(b, note(m, d, BASS, 1.0, ring=True), 0.35)
            for m in [*tones, tones[0] + 12, tones[0] + 24]:
                at(b, note(m, d, ORGAN, 1.0, ring=True), 0.09)
            at(b, noise_burst(rng, 1.0, 0.25), 0.10)
        elif b >= BUILD_FROM:  # build-up: driving octave bass + sixteenth-note arpeggio
            for i in range(int(d * 2)):
                at(b + i / 2, note(root + 12 * (i % 2), 0.5, BASS, 0.8), 0.35)
            arp = [*tones, tones[0] + 12]
            for i in range(int(d * 4)):
                at(b + i / 4, note(arp[i % 4], 0.25, CHIP, 0.7), 0.07 + 0.04 * (b - 40) / 18)
        else:  # oom-pah: bass root/fifth on 1 and 3, organ chord stabs on 2 and 4
            for i in range(int(d)):
                if i % 2 == 0:
                    at(b + i, note(root + 7 * (i == 2), 1, BASS, 0.9, first=b + i == 0), 0.35)
                else:
                    for m in tones:
                        at(b + i, note(m, 1, ORGAN, 0.45), 0.07)
        b += d
    if b != 60:
        raise ValueError(f"harmony covers {b} beats, not 60")

    # percussion: quarters, then eighths from 20 s, a sixteenth roll in the bar before 28 s
    b = 0.0
    while b < CADENCE_AT:
        level = (0.14 if b % 4 == 0 else 0.08) * (1 + 0.6 * max(0.0, b - BUILD_FROM) / 18)
        at(b, noise_burst(rng, 0.03, 0.006), level)
        b += 1.0 if b < BUILD_FROM else 0.25 if 52 <= b < 56 else 0.5
    return saturate(buf, 1.5)


# ------------------------------------------------------------------------- output

CUES: dict[str, tuple[Sound, float, float | None]] = {  # name -> (synth, peak dB, repeat)
    "prestart": (prestart, LOUD_DB, None),
    "start": (start, LOUD_DB, None),
    "minute": (lambda: tone(1400.0, 0.15, BEEP), LOUD_DB, 0.4),  # short: sounded N times
    "third": (third, LOUD_DB, 0.5),
    "last30": (last30, LOUD_DB, None),
    "period_end": (period_end, LOUD_DB, None),
    "end": (end, LOUD_DB, None),
    "break_warning": (break_warning, LOUD_DB, None),
    "shot_start": (shot_start, LOUD_DB, None),
    "shot_end": (shot_end, LOUD_DB, None),
    "timeout_end": (timeout_end, LOUD_DB, None),
    "penalty_end": (penalty_end, LOUD_DB, None),
    "forfeit": (forfeit, LOUD_DB, None),
    "pause": (lambda: blip(440.0, 330.0, 0.12), SOFT_DB, None),  # "clock stopped": falls
    "resume": (lambda: blip(660.0, 880.0, 0.12), SOFT_DB, None),  # "clock resumed": rises
    "time_added": (time_added, SOFT_DB, None),
}

PACK_HEADER = """\
# timekeeper sound pack. `cues` maps a cue name to a WAV or OGG file relative to this folder.
# The long form {file: ..., repeat_every: SECONDS} sets the spacing when a mark is sounded N times.
name: default
description: Built-in signals synthesised by scripts/make_default_pack.py (no third-party audio).
cues:
"""


def write_wav(path: Path, x: np.ndarray) -> None:
    pcm = np.round(np.clip(x, -1.0, 1.0) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


def main(argv: Sequence[str] | None = None) -> int:
    default_out = Path(__file__).resolve().parent.parent / "sounds" / "default"
    parser = argparse.ArgumentParser(description="Write timekeeper's default sound pack.")
    parser.add_argument("--out", type=Path, default=default_out, help=f"default: {default_out}")
    out: Path = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)

    lines = [PACK_HEADER]
    for name, (synth, peak_db, repeat) in CUES.items():
        x = finish(synth(), peak_db)
        write_wav(out / f"{name}.wav", x)
        peak = 20 * np.log10(np.max(np.abs(x)))
        print(f"{name + '.wav':18} {len(x) / SR:7.3f} s  peak {peak:6.2f} dBFS")
        entry = f"{{file: {name}.wav, repeat_every: {repeat}}}" if repeat else f"{name}.wav"
        lines.append(f"  {name}: {entry}\n")
    (out / "pack.yaml").write_text("".join(lines), encoding="utf-8")
    print(f"wrote {len(CUES)} cues + pack.yaml to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
