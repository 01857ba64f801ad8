"""The pushed stream's clock read from a device whose position moves in steps (sound/framed.py
DelayClock): a JACK period, the Pi's headphone jack (10 ms), PipeWire's quantum. Synthetic
reports with injected times, one a block as the writer reads them: each says the position
of the last step, so it is stale by 0 to one step; the clock must follow the device's
timeline, not each report — a spread ≤ 2 ms at every step size, on a
crystal that drifts, through reports that jump ahead and come back, and after an underrun."""

from __future__ import annotations

import numpy as np
import pytest

from timekeeper.sound.framed import DelayClock
from timekeeper.sound.mixing import RATE

BLOCK = 4096  # frames the writer writes between two reports (the ALSA sink's block)
BUFFER = 0.256  # s of sound written ahead of the speaker


class SteppedDevice:
    """A device that plays frame k at `origin + k / (RATE * (1 + drift))`, counts the frames
    heard only at the end of each step of `step` frames, and is read at `t`: its report is
    (the frames written, when the next one is heard), from the position of the last step."""

    def __init__(self, step: int, origin: float = 100.0, drift: float = 0.0) -> None:
        self.step, self.origin, self.drift = step, origin, drift

    def true_origin(self, t: float) -> float:
        """Runner time at which frame 0 would be heard, for a frame heard at `t`."""
        return t - (t - self.origin) * (1 + self.drift)

    def report(self, t: float, ahead: float = 0.0) -> tuple[int, float]:
        played = (t - self.origin) * RATE * (1 + self.drift) + ahead * RATE
        position = int(played // self.step * self.step)
        written = round(played + BUFFER * RATE)
        return written, t + (written - position) / (RATE * (1 + self.drift))


def run(device: SteppedDevice, seconds: float, seed: int = 1, spoil=None):
    """Feeds `seconds` of reports, one a block, each read at a phase of the step drawn at
    random (the writer's wake-ups wander: in the paced stack the reports' lateness sweeps
    the whole step within ten reads); the clock's error against the true timeline after
    each, from 2.5 s on (ms)."""
    rng = np.random.default_rng(seed)
    clock = DelayClock()
    errors, t, n = [], device.origin + 0.5, 0
    while t < device.origin + seconds:
        t += BLOCK / RATE
        at = t + rng.uniform(0, device.step / RATE)
        ahead = spoil(n) if spoil else 0.0
        clock.observe_report(*device.report(at, ahead))
        n += 1
        if at > device.origin + 5.0:
            assert clock.origin is not None
            errors.append((clock.origin - device.true_origin(at)) * 1000)
    return np.array(errors)


@pytest.mark.parametrize("step", [256, 441, 480, 512, 1024])  # 5.3, 9.2, 10, 10.7, 21.3 ms
def test_a_position_in_steps_is_followed_within_two_milliseconds(step: int) -> None:
    errors = run(SteppedDevice(step), 60)
    assert errors.min() >= -0.5 and errors.max() <= 2.0, (errors.min(), errors.max())


@pytest.mark.parametrize("drift", [-50e-6, 50e-6])  # (a crystal: ±20-50 ppm)
def test_a_crystal_that_drifts_is_followed(drift: float) -> None:
    errors = run(SteppedDevice(1024, drift=drift), 120)  # 6 ms drifted over the run
    assert np.abs(errors).max() <= 2.0, (errors.min(), errors.max())


def test_a_position_that_jumps_ahead_and_comes_back_moves_nothing() -> None:
    # every 25th report reads the position 15 ms ahead of the sound (a DMA burst)
    errors = run(SteppedDevice(480), 60, spoil=lambda n: 0.015 if n % 25 == 20 else 0.0)
    assert errors.min() >= -0.5 and errors.max() <= 2.0, (errors.min(), errors.max())


def test_one_late_report_moves_nothing() -> None:
    clock = DelayClock()
    for n in range(6):
        clock.observe_report(n * BLOCK, 10.0 + n * BLOCK / RATE)
    clock.observe_report(6 * BLOCK, 10.030 + 6 * BLOCK / RATE)  # (the reader was held up)
    assert clock.origin == pytest.approx(10.0)


@pytest.mark.parametrize("moved", [0.040, -0.040])
def test_the_timeline_moved_by_an_underrun_is_followed_within_two_windows(moved: float) -> None:
    clock = DelayClock()
    for n in range(60):  # 5 s on one timeline, then it moves
        clock.observe_report(n * BLOCK, 10.0 + n * BLOCK / RATE)
    for n in range(60, 60 + 60):  # 5 s on the new one
        clock.observe_report(n * BLOCK, 10.0 + moved + n * BLOCK / RATE)
    assert clock.origin == pytest.approx(10.0 + moved)


@pytest.mark.parametrize(("step", "moved"), [(256, 0.004), (480, 0.008), (1024, 0.012)])
def test_a_timeline_moved_later_by_less_than_a_step_is_followed_within_three_windows(
    step: int, moved: float
) -> None:
    """JACK's dummy backend after a late cycle takes its own lateness as its new beat: the
    position goes on later by that much (8.3 ms at 480 frames, seen in calibrate's clicks).
    Less than a step and 10 ms, it was followed only as the old windows passed (10 s of cues
    that much late); a full window later by half its sawtooth is followed at its close."""
    rng = np.random.default_rng(3)
    device, clock = SteppedDevice(step), DelayClock()
    t, errors = device.origin + 0.5, []
    while t < device.origin + 30:
        t += BLOCK / RATE
        at = t + rng.uniform(0, step / RATE)
        if at >= device.origin + 15 and not errors:
            device.origin += moved
            errors.append(0.0)
        clock.observe_report(*device.report(at))
        if at > device.origin + 15 + 3 * 2.0:
            assert clock.origin is not None
            errors.append((clock.origin - device.true_origin(at)) * 1000)
    assert min(errors) >= -0.5 and max(errors) <= 2.0, (min(errors), max(errors))


def test_a_device_that_began_again_is_followed_from_its_next_report() -> None:
    clock = DelayClock()
    for n in range(60):
        clock.observe_report(n * BLOCK, 10.0 + n * BLOCK / RATE)
    clock.restart()  # (the ALSA sink recovered from an underrun: `restarts`)
    clock.observe_report(60 * BLOCK, 10.5 + 60 * BLOCK / RATE)
    assert clock.origin == pytest.approx(10.5)
