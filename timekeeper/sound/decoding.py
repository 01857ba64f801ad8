"""Decoding an audio file into the samples a cue plays: mono at the output rate, float32, or
int16 as the file holds them where it is 16-bit mono at that rate (sound/mixing.py).

Decoding is libsndfile's (through `soundfile`: one library for every format, MP3 included,
bundled in its wheels), resampling soxr's (band-limited, no aliasing); both run in blocks
straight into the one array a cue keeps, so that loading a 44.1-kHz file costs no more
memory than a 48-kHz one. A plain WAV of 16-bit mono samples at RATE, whole (the default
pack's every file), is read by the stdlib's `wave` instead: its samples are the bytes as
they are, the very int16 values libsndfile gives, and a box whose pack holds only such files
never loads libsndfile (1.7 MB of its memory). Any other file, or one `wave` finds odd, goes
to libsndfile, which decides, and words any refusal, as for every format.

Every file is bounded before it is decoded: its length, its rate (RATE_RANGE) and its
channels; a FIFO or a device is never read."""

from __future__ import annotations

import math
import os
import re
import stat
import struct
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.loudness import peak
from timekeeper.sound.mixing import PCM16, RATE, floats

FORMATS = "WAV, FLAC, OGG or MP3"
MAX_SIGNAL_SECONDS = 10.0  # any cue but the melody: a horn, a beep
RATE_RANGE = (8000, 384000)  # Hz
MAX_CHANNELS = 8
FULL_SCALE = 0.9999  # a decoded sample this large was clipped (or is about to be)
_BLOCK = 1 << 16  # frames decoded at a time


@dataclass(frozen=True)
class Source:
    """What the file itself is, as `check --sounds` reports it."""

    format: str  # e.g. "MP3", "WAV PCM_16"
    rate: int
    channels: int
    seconds: float  # the whole file's length
    clipped: int  # samples at full scale (any channel), before levelling
    cut_at: float | None = None  # a melody decoded only this far (its longest window)
    gain_db: float = 0.0  # what `normalize` applied


def decode(path: Path, max_seconds: float = MAX_SIGNAL_SECONDS) -> np.ndarray:
    """Any audio file libsndfile reads → float32 mono samples at RATE."""
    return floats(decode_source(path, max_seconds)[0])


def decode_source(path: Path, max_seconds: float, cut: bool = False) -> tuple[np.ndarray, Source]:
    """Decode `path` in blocks straight into one array at RATE (int16 where the file is
    16-bit mono at RATE, else float32), resampling on the way.
    A file longer than `max_seconds` is refused, or with `cut` decoded only that far. The file
    type is checked before it is opened (a FIFO or a device is never read)."""
    try:
        kind = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigError("missing audio file") from None
    except OSError as exc:
        raise ConfigError(f"cannot be opened: {exc.strerror or exc}") from None
    if stat.S_ISDIR(kind):
        raise ConfigError("is a folder, not an audio file")
    if not stat.S_ISREG(kind):
        raise ConfigError(f"is a {_file_kind(kind)}, not an audio file")
    try:  # O_NONBLOCK: should a FIFO be swapped in after the check, opening it cannot hang
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except PermissionError:
        raise ConfigError("audio file is not readable") from None
    except OSError as exc:
        raise ConfigError(f"cannot be opened: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:  # owns the descriptor: closed once, whatever happens
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ConfigError("is not a regular file, not an audio file")
        if (plain := _PlainWav.open(handle)) is not None:
            return _decode_open(plain, max_seconds, cut)
        handle.seek(0)
        import soundfile  # imported late: `timekeeper show` and `profiles` stay light

        try:
            with soundfile.SoundFile(handle) as f:
                return _decode_open(f, max_seconds, cut)
        except soundfile.LibsndfileError as exc:
            raise ConfigError(
                f"not a {FORMATS} file this program can decode ({exc.error_string})"
            ) from None


class _PlainWav:
    """A WAV that `wave` reads, 16-bit mono at RATE, its data all there: read as SoundFile
    is (the few attributes and the int16 `read` that _decode_open uses)."""

    format, subtype, extra_info, samplerate, channels = "WAV", "PCM_16", "", RATE, 1

    def __init__(self, reader: wave.Wave_read, frames: int) -> None:
        self._reader, self.frames = reader, frames

    @classmethod
    def open(cls, handle) -> _PlainWav | None:
        """The file as a plain WAV, or None (and `handle` anywhere): libsndfile's to read."""
        try:  # (closed with `handle`: a reader given a file object leaves it open)
            reader = wave.open(handle)  # noqa: SIM115
        except (wave.Error, EOFError, ValueError, struct.error):  # not PCM WAV, a bad header
            return None
        frames = reader.getnframes()
        shape = (reader.getnchannels(), reader.getsampwidth(), reader.getframerate())
        riff = int.from_bytes(os.pread(handle.fileno(), 8, 0)[4:], "little") + 8
        room = min(os.fstat(handle.fileno()).st_size, riff) - handle.tell()
        if shape != (1, 2, RATE) or not 0 < 2 * frames <= room:
            return None  # (data cut short or its size unset: libsndfile counts what is there)
        return cls(reader, frames)

    def read(self, frames: int, dtype: str, out: np.ndarray) -> np.ndarray:
        data = self._reader.readframes(frames)
        got = len(data) // 2
        out[:got] = np.frombuffer(data, "<i2", got)
        return out[:got]


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def _decode_open(f, max_seconds: float, cut: bool) -> tuple[np.ndarray, Source]:
    rate, channels, frames = int(f.samplerate), int(f.channels), max(0, int(f.frames))
    low, high = RATE_RANGE
    if not low <= rate <= high:
        raise ConfigError(
            f"has a sample rate of {rate} Hz; a pack's files need "
            f"{low}–{high} Hz (convert it, e.g. to 48000 Hz)"
        )
    if not 1 <= channels <= MAX_CHANNELS:
        raise ConfigError(f"has {channels} channels; at most {MAX_CHANNELS}")
    seconds = frames / rate
    if seconds > max_seconds and not cut:
        raise ConfigError(
            f"is {seconds:.1f} s long; a signal lasts at most {MAX_SIGNAL_SECONDS:g} s (trim it)"
        )
    short = re.search(r"\ndata : (\d+) \(should be (\d+)\)", f.extra_info)
    if short and int(short.group(1)) > int(short.group(2)) > 0:  # libsndfile reads what is there
        declared = frames * int(short.group(1)) // int(short.group(2))
        raise ConfigError(f"audio file is cut short ({frames} of {declared} frames)")
    keep = min(frames, math.ceil(max_seconds * rate)) if cut else frames
    if keep < rate // 100:
        raise ConfigError(f"audio file holds no sound to speak of ({keep} samples)")
    if rate == RATE and channels == 1 and f.subtype == "PCM_16":
        out, clipped = _read_pcm16(f, keep)
        level = peak(out) * float(PCM16)
    else:
        out, clipped = _read_resampled(f, keep, rate, channels)
        level = peak(out)
    if level < 1e-3:
        raise ConfigError("audio file is silent")
    fmt = f.format if f.format == "MP3" else f"{f.format} {f.subtype}"
    return out, Source(
        fmt, rate, channels, seconds, clipped, keep / rate if keep < frames else None
    )


def _read_pcm16(f, keep: int) -> tuple[np.ndarray, int]:
    """A 16-bit mono file at RATE: its samples as they are, int16, read in blocks straight
    into the output array (half the memory of float32, the same values: mixing.floats)."""
    out = np.zeros(keep, np.int16)
    pos = clipped = 0
    while pos < keep:
        n = min(_BLOCK, keep - pos)
        got = f.read(n, dtype="int16", out=out[pos : pos + n])
        if len(got) == 0:
            break
        clipped += int(np.count_nonzero(np.abs(floats(got)) >= FULL_SCALE))
        pos += len(got)
    return (out if pos >= keep else out[:pos]), clipped


def _read_resampled(f, keep: int, rate: int, channels: int) -> tuple[np.ndarray, int]:
    """Decode `keep` frames in blocks, mix each block to mono and resample it (soxr's stream,
    high quality) straight into the output array: no full-length temporary is ever made."""
    n_out = round(keep * RATE / rate)
    out = np.zeros(n_out, np.float32)
    resampler = None
    if rate != RATE:
        import soxr

        resampler = soxr.ResampleStream(rate, RATE, 1, dtype="float32", quality="HQ")
    block = np.empty((max(1024, _BLOCK // channels), channels), np.float32)
    pos = read = clipped = 0
    while read < keep:
        got = f.read(
            min(len(block), keep - read),
            dtype="float32",
            always_2d=True,
            out=block[: min(len(block), keep - read)],
        )
        if len(got) == 0:
            break
        read += len(got)
        clipped += int(np.count_nonzero(np.abs(got) >= FULL_SCALE))
        if channels == 1:
            mono = got[:, 0]
        elif channels == 2:  # the usual case, twice as fast as mean(axis=1)
            mono = (got[:, 0] + got[:, 1]) * np.float32(0.5)
        else:
            mono = got.mean(axis=1, dtype=np.float32)
        if resampler is not None:
            mono = resampler.resample_chunk(mono, last=read >= keep)
        take = min(len(mono), n_out - pos)
        out[pos : pos + take] = mono[:take]
        pos += take
    if resampler is not None and read < keep:  # the file ended early: flush the filter
        tail = resampler.resample_chunk(np.zeros(0, np.float32), last=True)
        take = min(len(tail), n_out - pos)
        out[pos : pos + take] = tail[:take]
        pos += take
    return (out if pos >= n_out else out[:pos]), clipped
