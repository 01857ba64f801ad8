"""Placing sound to the sample: the one rule renders and the live stream share, so that a
live cue lands on the very sample a render puts it on.

A sample array is float32, or int16 where the file holds 16-bit mono samples at RATE: those
stand for value/32768, exactly what a float decode of the file gives (libsndfile scales a
16-bit sample by 2**-15, a power of two: no rounding), in half the memory (the 30-s melody:
2.9 MB instead of 5.8). `floats` turns either into float32, the mix reads either."""

from __future__ import annotations

import numpy as np

RATE = 48000  # every sample array, the live stream, the mixer and renders use this rate
PCM16 = np.float32(2.0**-15)  # what one step of an int16 sample array stands for


def floats(samples: np.ndarray) -> np.ndarray:
    """The float32 values of a sample array (an int16 one converted: a copy)."""
    return samples * PCM16 if samples.dtype == np.int16 else samples


def mix_into(buf: np.ndarray, buf_start: int, start: int, samples: np.ndarray) -> None:
    """Add the part of `samples` (placed at sample `start`) that falls into `buf`, which holds
    samples buf_start … buf_start+len(buf)-1. Renders and the live stream both place sound
    this way, so a live cue lands on the very sample a render would put it."""
    lo, hi = max(start, buf_start), min(start + len(samples), buf_start + len(buf))
    if hi > lo:
        buf[lo - buf_start : hi - buf_start] += floats(samples[lo - start : hi - start])
