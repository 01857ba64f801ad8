"""Rate limits for what a network client may ask: a token bucket per client address, so
that one busy or hostile page cannot take the box's (or the desk's) time from the others.
The guard (web/guard.py) keeps them for both apps, the box's and the desk's; the desk's
results inbox (hall/inbox.py) and its socket (hall/desksocket.py) take theirs from here too."""

from __future__ import annotations

import time
from collections.abc import Callable


class Bucket:
    """A token bucket: `rate` requests a second, `burst` at once (the clock injected: a test
    tells the time)."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.level, self.at = float(burst), clock()

    def take(self) -> bool:
        now = self.clock()
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level < 1:
            return False
        self.level -= 1
        return True


class RateLimits:
    """Buckets per client address (forgotten when full, so that the table stays small)."""

    def __init__(
        self,
        rate: float,
        burst: int,
        keep: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate, self.burst, self.keep, self.clock = rate, burst, keep, clock
        self.buckets: dict[str, Bucket] = {}

    def allow(self, who: str) -> bool:
        if who not in self.buckets and len(self.buckets) >= self.keep:
            self.buckets.clear()
        bucket = self.buckets.get(who)
        if bucket is None:
            bucket = self.buckets[who] = Bucket(self.rate, self.burst, self.clock)
        return bucket.take()
