"""Rate limits for what a network client may ask: a token bucket per client address, so
that one busy or hostile page cannot take the box's (or the desk's) time from the others.
The guard (web/guard.py) keeps them for both apps, the box's and the desk's."""

from __future__ import annotations

import time


class Bucket:
    """A token bucket: `rate` requests a second, `burst` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.level, self.at = float(burst), time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level < 1:
            return False
        self.level -= 1
        return True


class RateLimits:
    """Buckets per client address (forgotten when full, so that the table stays small)."""

    def __init__(self, rate: float, burst: int, keep: int = 1024) -> None:
        self.rate, self.burst, self.keep = rate, burst, keep
        self.buckets: dict[str, Bucket] = {}

    def allow(self, who: str) -> bool:
        if who not in self.buckets and len(self.buckets) >= self.keep:
            self.buckets.clear()
        bucket = self.buckets.setdefault(who, Bucket(self.rate, self.burst))
        return bucket.take()
