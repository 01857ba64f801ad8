"""`timekeeper check --sounds`: what each cue of a pack is (rate, length, peak, loudness,
onset) and what would go wrong in a hall — warnings, never refusals: a pack that decodes
plays, but a late horn or an inaudible beep is worth knowing before the match."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from timekeeper.sound.loudness import dbfs, lufs, peak
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import FEEDBACK_CUES, MARK_CUES, CueSound, SoundPack

LATE_MS = 20.0  # more silence than this before a signal, and it is heard late
QUIET_DBFS = -30.0  # a cue that peaks below this is lost in a hall
ONSET_BELOW_PEAK_DB = 40.0  # the first sample within 40 dB of the peak is where sound begins
ONSET_FLOOR_DBFS = -60.0  # … and never a sample below −60 dBFS (dither, hiss)
CLIPPED_SAMPLES = 3  # this many samples at full scale: clipped, not a lucky peak


@dataclass(frozen=True)
class CueReport:
    sound: CueSound
    file: str  # as the pack names it, relative to its folder
    seconds: float
    peak_dbfs: float
    loudness: float  # LUFS (BS.1770)
    onset_ms: float
    warnings: tuple[str, ...]


def onset_ms(samples: np.ndarray) -> float:
    """Milliseconds of (near) silence before the sound begins."""
    floor = max(peak(samples) * 10 ** (-ONSET_BELOW_PEAK_DB / 20), 10 ** (ONSET_FLOOR_DBFS / 20))
    loud = np.flatnonzero(np.abs(samples) >= floor)
    return 1000 * (loud[0] if len(loud) else len(samples)) / RATE


def inspect(pack: SoundPack) -> list[CueReport]:
    """A report on each of the pack's own cues (borrowed ones are the default pack's)."""
    reports = []
    for name in pack.own:
        sound = pack.sounds[name]
        samples = sound.samples  # (float32: one copy of a cue held as int16, not four)
        top = dbfs(peak(samples))
        onset = onset_ms(samples)
        seconds = len(samples) / RATE
        warnings = []
        if onset > LATE_MS and name not in FEEDBACK_CUES:
            warnings.append(
                f"begins with {onset:.0f} ms of silence: it sounds {onset:.0f} ms "
                "late (trim the start)"
            )
        if top < QUIET_DBFS:
            warnings.append(
                f"peaks at {top:.1f} dBFS: too quiet for a hall (raise its level "
                "or set normalize: true)"
            )
        if name in MARK_CUES and seconds > sound.repeat_every:
            warnings.append(
                f"lasts {seconds:.2f} s, longer than its repeat_every "
                f"{sound.repeat_every:g} s: the beeps run together (shorten it or "
                "space them)"
            )
        if sound.source and sound.source.clipped >= CLIPPED_SAMPLES:
            warnings.append(
                f"{sound.source.clipped} samples at full scale: clipped, it sounds "
                "distorted (export it again at a lower level)"
            )
        try:
            file = str(sound.file.relative_to(pack.folder.resolve()))
        except ValueError:
            file = str(sound.file)
        reports.append(CueReport(sound, file, seconds, top, lufs(samples), onset, tuple(warnings)))
    return reports


def _length(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.2f} s"
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def table(reports: list[CueReport], levelled: bool = False) -> list[str]:
    """The reports as an aligned table, then one line per warning. `levelled`: a column for
    the gain `normalize: true` applied (peak and LUFS are after it)."""
    header: tuple[str, ...] = (
        "cue",
        "file",
        "format",
        "rate",
        "ch",
        "length",
        "peak dBFS",
        "LUFS",
        "onset",
    )
    header += ("gain dB",) if levelled else ()
    rows = []
    for r in reports:
        src = r.sound.source
        length = _length(src.seconds if src else r.seconds)
        if src and src.cut_at is not None:
            length += f" ({src.cut_at:g} s used)"
        rows.append(
            (
                r.sound.name,
                r.file,
                src.format if src else "",
                str(src.rate) if src else "",
                str(src.channels) if src else "",
                length,
                f"{r.peak_dbfs:.1f}",
                f"{r.loudness:.1f}",
                f"{r.onset_ms:.0f} ms",
            )
            + ((f"{src.gain_db:+.1f}" if src else "",) if levelled else ())
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    right = {3, 4, 6, 7, 8, 9}

    def line(row: tuple[str, ...]) -> str:
        cells = (
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        return "  ".join(cells).rstrip()

    lines = [line(header), *(line(row) for row in rows)]
    for r in reports:
        lines += [f"warn  {r.sound.name} ({r.file}): {w}" for w in r.warnings]
    count = sum(len(r.warnings) for r in reports)
    lines.append(f"{count or 'no'} warning{'' if count == 1 else 's'}")
    return lines


def summary(pack: SoundPack, folder: Path) -> str:
    """The `ok` line: the cues the pack brings itself (borrowed ones were listed at load)."""
    own = len(pack.own)
    text = f"ok  sound pack {pack.name} ({folder}): {own} cue{'' if own == 1 else 's'}"
    if pack.borrowed:
        text += f" of its own, {len(pack.borrowed)} from the default pack"
    if pack.normalized:
        text += ", levelled (normalize: true)"
    return text
