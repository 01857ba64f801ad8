"""The interface every sound output (the live stream, the mixer, silence, test fakes)
implements: cues in, sound out, never a clock of its own. Lamps, relays, screens and logs are
not outputs: they are the runner's listeners (`sound/listener.py`)."""

from __future__ import annotations

from timekeeper.rules.engine import Cue
from timekeeper.rules.profiletypes import Profile


class AudioError(Exception):
    """The audio device could not be opened or used."""


class Output:
    """Something that turns cues into sound. `play` is called on the runner's thread as soon
    as a cue is due and must not block; `now` is the runner's clock at that moment (outputs
    never read a clock of their own). It returns None once the cue is on its way, or why it
    cannot be heard (the sound is down): the events log then records it as not heard, with
    that reason.

    An output with a `lead` is handed each cue that many seconds before it is due (the
    runner looks ahead by the largest lead), so that it can have it sound on time.

    An output that notices its own faults (the AudioGuard) says so in `noticed_fault`, which
    the runner asks after every turn, to tell its listeners (the lamp shows it). One that
    works at deadlines of its own (the guard's checks and reopens) says when in `next_due`,
    and the runner calls `fire` then, on its thread, as it does its listeners'."""

    lead: float = 0.0

    def prepare(self, profile: Profile) -> None:
        """Build whatever `play` will need for this profile, before the match starts."""

    def play(self, cue: Cue, now: float) -> str | None:
        raise NotImplementedError

    def fault(self) -> str | None:
        """Why the device has stopped working (e.g. its stream is gone), or None while it
        works. Polled by the AudioGuard about once a second, on its own thread (it may ask
        the device)."""
        return None

    def noticed_fault(self) -> str | None:
        """The fault this output has already found (None: none), asked by the runner on its
        thread after every turn: never a call to the device."""
        return None

    def next_due(self) -> float | None:
        """When `fire` is next due on the runner's clock (None: never)."""
        return None

    def fire(self, now: float) -> None:
        """Called by the runner once `next_due` has come (on the runner's thread)."""

    def close(self) -> None:
        """Release the device."""


class SilentOutput(Output):
    """No sound at all: `--audio silent` (`audio.sink: silent`), or chosen at a terminal when
    there is no sound card. The match runs as ever; the status line says SILENT and every
    cue is still logged, marked as not heard."""

    def play(self, cue: Cue, now: float) -> None:
        pass  # heard by nobody: the cue lines (marked SILENT) are the record
