"""The hall's one use of the wall clock: a start instant on the chrony-synced wall clock,
mapped once, on receipt, to the box's monotonic clock (the runner's), on which everything
else is timed. A box whose clock is not synced does not take part: it says why.

chrony is asked with `chronyc -c tracking` (its CSV form): the leap status says whether it
is synchronised, the system-time field how far the clock is from the server it follows."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_OFFSET = 0.002  # s: a box further than this from the hall's time does not start
# Test-only: a box that pretends its wall clock is off by this many seconds (and is otherwise
# synced, without asking chrony), to show that skewed boxes are refused or spread as expected.
TEST_OFFSET_ENV = "TIMEKEEPER_TEST_CLOCK_OFFSET"


@dataclass(frozen=True)
class Sync:
    synced: bool
    offset: float | None  # s, the box's clock minus the hall's time, where known
    why: str = ""  # why it is not synced

    @property
    def text(self) -> str:
        if self.synced:
            return f"synced ({(self.offset or 0) * 1e3:+.3f} ms)"
        return f"NOT SYNCED: {self.why}"


def test_offset() -> float | None:
    value = os.environ.get(TEST_OFFSET_ENV)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def check(limit: float = MAX_OFFSET, run: Callable[..., subprocess.CompletedProcess] =
          subprocess.run) -> Sync:
    """Is this box's wall clock synced to the hall's time server, within `limit`?"""
    injected = test_offset()
    if injected is not None:
        if abs(injected) > limit:
            return Sync(False, injected, f"clock {injected * 1e3:+.1f} ms off the hall's time "
                                         f"(limit {limit * 1e3:g} ms)")
        return Sync(True, injected)
    try:
        done = run(["chronyc", "-c", "tracking"], capture_output=True, text=True, timeout=2)
    except FileNotFoundError:
        return Sync(False, None, "chrony is not installed (scripts/install-pi.sh --hall)")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Sync(False, None, f"chronyc did not answer ({exc})")
    if done.returncode != 0:
        said = (done.stdout.strip() or done.stderr.strip())[:80]
        return Sync(False, None, f"chrony is not running ({said})")
    return parse_tracking(done.stdout, limit)


def parse_tracking(csv_line: str, limit: float = MAX_OFFSET) -> Sync:
    fields = csv_line.strip().split(",")
    if len(fields) < 14:
        return Sync(False, None, "chronyc gave no tracking data")
    try:
        offset = float(fields[4])
    except ValueError:
        return Sync(False, None, "chronyc gave no offset")
    leap = fields[13].strip()
    if leap.lower().startswith("not synchron"):
        return Sync(False, offset, "chrony is not synchronised to the hall's time server")
    if abs(offset) > limit:
        return Sync(False, offset, f"clock {offset * 1e3:+.1f} ms off the hall's time "
                                   f"(limit {limit * 1e3:g} ms)")
    return Sync(True, offset)


def to_clock(at_wall: float, clock: Callable[[], float],
             wall: Callable[[], float] = time.time) -> float:
    """The instant `at_wall` (wall-clock seconds) on `clock` (the runner's monotonic clock).
    The wall clock is read between two readings of `clock`; of a few tries the tightest pair
    is kept, so a preemption between the readings does not shift the mapping."""
    shift = test_offset() or 0.0
    best: tuple[float, float, float] | None = None
    for _ in range(5):
        before = clock()
        now_wall = wall() + shift
        after = clock()
        if best is None or after - before < best[0]:
            best = (after - before, (before + after) / 2, now_wall)
    assert best is not None
    _, mono, now_wall = best
    return mono + (at_wall - now_wall)


def wall_now(wall: Callable[[], float] = time.time) -> float:
    """This box's reading of the hall's time (the test-only offset included)."""
    return wall() + (test_offset() or 0.0)
