"""Placing sound to the sample: the one rule renders and the live stream share, so that a
live cue lands on the very sample a render puts it on."""

from __future__ import annotations

import numpy as np

RATE = 48000  # every sample array, the live stream, the mixer and renders use this rate


def mix_into(buf: np.ndarray, buf_start: int, start: int, samples: np.ndarray) -> None:
    """Add the part of `samples` (placed at sample `start`) that falls into `buf`, which holds
    samples buf_start … buf_start+len(buf)-1. Renders and the live stream both place sound
    this way, so a live cue lands on the very sample a render would put it."""
    lo, hi = max(start, buf_start), min(start + len(samples), buf_start + len(buf))
    if hi > lo:
        buf[lo - buf_start : hi - buf_start] += samples[lo - start : hi - start]
