"""The hall's one use of the wall clock: a start instant on the chrony-synced wall clock,
mapped once, on receipt, to the box's monotonic clock (the runner's), on which everything
else is timed. A box whose clock is not synced does not take part: it says why.

chrony is asked with `chronyc -c tracking` (its CSV form): the leap status says whether it
is synchronised, the system-time field how far the clock is from the server it follows.

A practice hall on one machine (`hall.sync: local`): boxes on the machine that runs the broker
share its one clock, so there is nothing to sync; that is only true of a loopback broker, and
any other address is refused with the reason."""

from __future__ import annotations

import ipaddress
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_OFFSET = 0.002  # s: a box further than this from the hall's time does not start
SYNC_MODES = ("chrony", "local")  # hall.sync / --sync: the hall's time server, or one machine


@dataclass(frozen=True)
class Sync:
    synced: bool
    offset: float | None  # s, the box's clock minus the hall's time, where known
    why: str = ""  # why it is not synced ("local" when synced by sharing one machine)

    @property
    def text(self) -> str:
        if self.synced and self.why == "local":
            return "synced (local: one machine, one clock)"
        if self.synced:
            return f"synced ({(self.offset or 0) * 1e3:+.3f} ms)"
        return f"NOT SYNCED: {self.why}"


def check(
    limit: float = MAX_OFFSET, run: Callable[..., subprocess.CompletedProcess] = subprocess.run
) -> Sync:
    """Is this box's wall clock synced to the hall's time server, within `limit`?"""
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
        return Sync(
            False,
            offset,
            f"clock {offset * 1e3:+.1f} ms off the hall's time (limit {limit * 1e3:g} ms)",
        )
    return Sync(True, offset)


def to_clock(
    at_wall: float, clock: Callable[[], float], wall: Callable[[], float] = time.time
) -> float:
    """The instant `at_wall` (wall-clock seconds) on `clock` (the runner's monotonic clock).
    The wall clock is read between two readings of `clock`; of a few tries the tightest pair
    is kept, so a preemption between the readings does not shift the mapping."""
    best: tuple[float, float, float] | None = None
    for _ in range(5):
        before = clock()
        now_wall = wall()
        after = clock()
        if best is None or after - before < best[0]:
            best = (after - before, (before + after) / 2, now_wall)
    assert best is not None
    _, mono, now_wall = best
    return mono + (at_wall - now_wall)


def wall_now(wall: Callable[[], float] = time.time) -> float:
    """This box's reading of the hall's time."""
    return wall()


LOCAL = Sync(True, 0.0, "local")


def local_check() -> Sync:
    """`sync: local`: the broker runs on this machine, and so does every box: one clock."""
    return LOCAL


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checker(mode: str, broker_host: str) -> Callable[[], Sync]:
    """The sync check for `hall.sync` (chrony, or local); ValueError says why local is refused:
    boxes on other machines have clocks of their own."""
    if mode not in SYNC_MODES:
        raise ValueError(f"sync is one of {', '.join(SYNC_MODES)} (got {mode!r})")
    if mode == "chrony":
        return check
    if not is_loopback(broker_host):
        raise ValueError(
            f"sync local is for a practice hall on one machine: the broker must "
            f"be on this machine (localhost, 127.0.0.1 or ::1), not {broker_host!r}; "
            "boxes on other machines follow the desk's time with chrony"
        )
    return local_check
