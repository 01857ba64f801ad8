"""Loudness of a cue in LUFS (ITU-R BS.1770-4), with numpy alone.

Why LUFS and not RMS: a horn, a beep and a tune of equal RMS do not sound equally loud; the
K-weighting (a high shelf near 1.5 kHz and a high-pass near 38 Hz) follows the ear closely
enough that levelling to one LUFS value levels what the hall hears. Samples are mono at 48 kHz
(the rate BS.1770 gives its filter coefficients for), so no filter design is needed.

The filters run as an FFT convolution with the cascade's impulse response (4096 taps: the
slowest pole decays below 1e-8 by then), in chunks, so a 30-s tune costs a few hundred kB
of temporaries, never a copy of itself."""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from timekeeper.sound.mixing import RATE

# BS.1770-4, table 1 and 2: the two biquads at 48 kHz (b0, b1, b2), (1, a1, a2)
_SHELF = (
    (1.53512485958697, -2.69169618940638, 1.19839281085285),
    (-1.69065929318241, 0.73248077421585),
)
_HIGHPASS = ((1.0, -2.0, 1.0), (-1.99004745483398, 0.99007225036621))
_TAPS = 4096
_SEGMENT = RATE // 10  # gating blocks are 400 ms long, 100 ms apart: 4 segments of 100 ms
_CHUNK = _SEGMENT * 16
_NFFT = 1 << math.ceil(math.log2(_CHUNK + _TAPS - 1))
SILENT = -math.inf


@cache
def _response() -> np.ndarray:
    """The K-weighting filter's frequency response on the FFT grid (computed once)."""
    h = np.zeros(_TAPS)
    h[0] = 1.0
    for (b0, b1, b2), (a1, a2) in (_SHELF, _HIGHPASS):
        out = np.empty(_TAPS)
        x1 = x2 = y1 = y2 = 0.0
        for i, x in enumerate(h):
            y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            out[i] = y
            x1, x2, y1, y2 = x, x1, y, y1
        h = out
    return np.fft.rfft(h, _NFFT)


def _segment_energies(samples: np.ndarray) -> np.ndarray:
    """Sum of squares of the K-weighted signal per 100-ms segment (the last, partial one too)."""
    response = _response()
    n = len(samples)
    tail = np.zeros(_TAPS - 1)
    sums = np.zeros(-(-n // _SEGMENT))
    for lo in range(0, n, _CHUNK):
        chunk = samples[lo : lo + _CHUNK]
        y = np.fft.irfft(np.fft.rfft(chunk, _NFFT) * response, _NFFT)
        y[: _TAPS - 1] += tail  # overlap-add: the previous chunk's ringing
        tail = y[len(chunk) : len(chunk) + _TAPS - 1].copy()
        y = y[: len(chunk)]
        for k, s in enumerate(range(0, len(y), _SEGMENT)):
            sums[lo // _SEGMENT + k] = float(np.dot(y[s : s + _SEGMENT], y[s : s + _SEGMENT]))
    return sums


def lufs(samples: np.ndarray) -> float:
    """Integrated loudness (LUFS) of mono 48-kHz samples, gated as BS.1770-4 says (absolute
    −70 LUFS, relative −10 LU). A cue shorter than one 400-ms block (a beep) is measured
    over its whole length, ungated. −inf for silence."""
    if len(samples) == 0:
        return SILENT
    sums = _segment_energies(samples)
    if len(samples) < 4 * _SEGMENT:
        return _level(sums.sum() / len(samples))
    whole = len(samples) // _SEGMENT  # only complete blocks count
    blocks = np.convolve(sums[:whole], np.ones(4), "valid") / (4 * _SEGMENT)
    loud = blocks[blocks > 10 ** ((-70 + 0.691) / 10)]
    if len(loud) == 0:
        return SILENT
    relative = loud.mean() * 10 ** (-10 / 10)
    gated = loud[loud > relative]
    return _level(gated.mean())


def _level(mean_square: float) -> float:
    return -0.691 + 10 * math.log10(mean_square) if mean_square > 0 else SILENT


def peak(samples: np.ndarray) -> float:
    """The largest magnitude, without an `abs` copy of the whole cue."""
    return max(float(samples.max()), -float(samples.min())) if len(samples) else 0.0


def dbfs(value: float) -> float:
    """A sample magnitude in dB relative to full scale (−inf for 0)."""
    return 20 * math.log10(value) if value > 0 else SILENT
