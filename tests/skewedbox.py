"""`python tests/skewedbox.py OFFSET run …`: a box whose wall clock is OFFSET seconds off the
hall's time (and otherwise synced), for the tests and benches that show skewed boxes refused
or spread as expected. The skew is put in here, from outside: the box's own code has no test
hook (a practice hall on one machine is `--sync local`, which has no skew)."""

from __future__ import annotations

import sys
import time

from timekeeper.hall.bus import timesync


def skew(offset: float) -> None:
    real_to_clock = timesync.to_clock

    def check(limit: float = timesync.MAX_OFFSET, run=None) -> timesync.Sync:
        if abs(offset) > limit:
            return timesync.Sync(
                False,
                offset,
                f"clock {offset * 1e3:+.1f} ms off the hall's time (limit {limit * 1e3:g} ms)",
            )
        return timesync.Sync(True, offset)

    timesync.check = check
    timesync.checker = lambda mode, host: check
    timesync.to_clock = lambda at, clock, wall=time.time: real_to_clock(
        at, clock, lambda: wall() + offset
    )
    timesync.wall_now = lambda wall=time.time: wall() + offset


if __name__ == "__main__":
    skew(float(sys.argv[1]))
    from timekeeper.cli import main

    raise SystemExit(main(sys.argv[2:]))
