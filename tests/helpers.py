"""What the tests share that is not a fixture: one `wait_for`, the recording fake output, a
free port. (Fixtures live in conftest.py; this module is imported, never collected.)"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import TypeVar

from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.sound.output import Output

T = TypeVar("T")

INTERVAL = 0.02  # short: a condition met is seen at once, and polling costs little


def wait_for(predicate: Callable[[], T], what: str, timeout: float = 10.0,
             interval: float = INTERVAL) -> T:
    """Poll `predicate` until it returns something true, and return that; after `timeout`
    seconds raise AssertionError naming `what` and the last value (or error) seen.

    An exception from the predicate counts as "not yet" (a server not listening, a file
    half-written): a real process is waited for by its state, never by a fixed pause."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = predicate()
        except Exception as exc:  # not ready yet: try again until the deadline
            value, last = None, exc
        else:
            last = value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last seen: {last!r}")
        time.sleep(interval)


def free_port() -> int:
    """A TCP port free right now on 127.0.0.1 (each test, each xdist worker its own)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RecordingOutput(Output):
    """A fake with the real Output interface that remembers what it was given: the cues
    played (`played`), the runner's clock at each (`times`), the profiles prepared.
    `lead`: how early it wants its cues (as a stream output does)."""

    def __init__(self, lead: float = 0.0) -> None:
        self.lead = lead
        self.played: list[Cue] = []
        self.times: list[float] = []
        self.prepared: list[str] = []

    def prepare(self, profile: Profile) -> None:
        self.prepared.append(profile.key)

    def play(self, cue: Cue, now: float) -> None:
        self.played.append(cue)
        self.times.append(now)

    @property
    def names(self) -> list[str]:
        """The cues' names, a stopped melody as "name/stop"."""
        return [c.name + ("/stop" if c.stop else "") for c in self.played]


class BusClient:
    """paho's client as a hall box's MatchLink uses it: what is published is kept."""

    def __init__(self) -> None:
        self.published: list[tuple[str, bytes]] = []

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False):
        self.published.append((topic, payload))

    def subscribe(self, topic, qos: int = 0) -> None:
        pass


class HallLinkSide:
    """The side of a box's HallLink that MatchLink uses: the box (its runner), the bus
    client, the profile, its topics (hall "cup", table 3) and the status it publishes."""

    def __init__(self, runner) -> None:
        from timekeeper.hall.messages import Topics

        self.box, self.client, self.profile = runner, BusClient(), "radegast"
        self.topics = Topics("cup", "3")
        self.extensions: list = []

    def publish_status(self) -> None:
        pass
