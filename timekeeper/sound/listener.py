"""What the live runner tells the world, besides the cues it hands the outputs: one listener
interface (Mopidy's `CoreListener` is the model) whose methods do nothing by default, so that
each neighbour implements only what it needs.

It is the only way to hear what the runner did (no callbacks beside it): a neighbour that
must know of another profile hears `engine_replaced`, one that works at deadlines of its own
(lamp patterns, the horn's release, journal writes, watchdog pings) says when in `next_due`.

The runner (box/) owns its listeners, yet this interface and the events log live in sound/:
the events log is the lowest of them, and the offline render (sound/render.py) writes it too;
the status line (show/), the web and the hall link, the journal, lamp, relays and systemd's
STATUS line (box/) all sit above it, and a lower wing never imports a higher one. Every method
is called on the runner's thread and must not block; each call fails alone (the runner logs
a failure once and calls again next time)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from timekeeper.rules.commands import Command
from timekeeper.rules.engine import Cue, Engine, Status


class RunnerListener:
    """Told by the runner what happened, in this order within one turn of its loop: each cue
    (`cue_played`), the command that made the turn (`command_applied`), a new state
    (`state_changed`), then `match_changed` once. `fault_changed` whenever the sound's
    fault comes or goes."""

    def cue_played(self, cue: Cue, status: Status, played: float, not_heard: str | None) -> None:
        """`cue` was handed to the outputs at `played` (the runner's clock; when it is due,
        for an output with a lead); `not_heard`: why nobody heard it (muted, the sound is
        down), None when it sounded. Stops of a melody come here too (`cue.stop`). `status`
        is the match after the turn's change."""

    def command_applied(self, command: Command, scheduled: bool, status: Status) -> None:
        """An operator's command was applied (refused ones are not told); `scheduled`: it was
        given for an instant (a hall command with `at`), not by a press here."""

    def state_changed(self, status: Status) -> None:
        """The match's state (idle, running, stopped, …) or the box's mute changed: what
        leads the status line. One line in a log."""

    def match_changed(self, status: Status, now: float) -> None:
        """Anything a screen shows or a journal keeps may have changed: once after every turn
        with a cue, an applied command or a new state, after a mute, and at shutdown. `now` is
        the engine's time of the change (the runner's clock, or a look-ahead of it)."""

    def fault_changed(self, fault: str | None, now: float) -> None:
        """The sound stopped working (`fault` says why) or works again (None)."""

    def engine_replaced(self, engine: Engine) -> None:
        """The runner plays the next match with `engine` (another profile, between matches:
        the hall's pairing asked for it); the new status follows at once."""

    def next_due(self) -> float | None:
        """When the runner is to call `fire` next, on its clock (None: it need not)."""
        return None

    def fire(self, now: float) -> None:
        """`next_due` has come (`now`: the runner's clock)."""


class LiveRunner(Protocol):
    """What the wings below the box (the web, the hall link) need of the live runner
    (timekeeper.box.runner.Runner), which they cannot import."""

    clock: Callable[[], float]
    listeners: list[RunnerListener]

    def submit(self, command: Command, at: float | None = None) -> Future: ...

    def cancel_scheduled(self, why: str) -> list[str]: ...

    def status(self) -> Status: ...
