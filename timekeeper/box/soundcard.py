"""The sound card at start-up: the service waits for it, a person at a terminal is asked.

Under systemd a card that is not there yet (USB cards and HATs come up late at boot) is
retried quietly with back-off, then the program exits non-zero for systemd to restart it.
At a terminal nobody should wait half a minute to learn that there is no card: one attempt,
then the reason and the fix at once, and a choice: go on SILENT (every cue still logged, none
heard), try the card again, or quit."""

from __future__ import annotations

import logging
import os
import sys
import termios
import tty
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from timekeeper.rules.profiletypes import Profile
from timekeeper.sound.guard import AudioGuard
from timekeeper.sound.output import AudioError, Output, SilentOutput

log = logging.getLogger(__name__)

FIX = (
    "  To fix: check the speaker or USB sound card (`aplay -l`, from alsa-utils, lists "
    "the cards; "
    "`timekeeper audio devices` lists what audio.device may name).\n"
    "  To run without sound from the start: `timekeeper run --audio silent` "
    "(audio.sink: silent in the config)."
)
PROMPT = (
    "  Press Enter to go on SILENT (every cue still logged, none heard), "
    "r to try the sound card again, q to quit: "
)


@dataclass
class Audio:
    """The live output wrapped in its guard, and whether the match runs without sound."""

    guard: AudioGuard
    silent: bool


def start_audio(
    opener: Callable[[], Output],
    profile: Profile,
    attempts: int,
    sinks: tuple[str, ...],
    ask: Callable[[str], str] | None,
) -> Audio:
    """Open the output for `profile`. `ask` (a terminal, else None) is asked what to do when
    the card cannot be opened; without it the guard's retries decide, and AudioError is
    raised once they are spent. Also raises AudioError when the person chooses to quit."""
    if sinks == ("silent",):
        return _silent(profile)
    guard = AudioGuard(opener, 1 if ask is not None else attempts)
    while True:
        try:
            guard.prepare(profile)
            return Audio(guard, silent=False)
        except AudioError as exc:
            if ask is None:  # (the service: systemd starts it again; a script may choose)
                raise AudioError(
                    f"{exc}; to run without sound: --audio silent (audio.sink: silent)"
                ) from None
            why = str(exc)
        answer = ask(f"No sound card: {_reason(why)}\n{FIX}\n{PROMPT}")
        if answer == "silent":
            log.warning("SILENT: no sound; every cue is logged here, none is heard")
            return _silent(profile)
        if answer == "quit":
            raise AudioError("no sound card; quit at the prompt")
        log.info("trying the sound card again")


def _silent(profile: Profile) -> Audio:
    guard = AudioGuard(SilentOutput, 1)
    guard.prepare(profile)
    return Audio(guard, silent=True)


def _reason(why: str) -> str:
    """The device's own error, without the generic advice the prompt gives in full."""
    return why.split("; check the speaker", 1)[0]


def terminal_asker(
    stdin: TextIO = sys.stdin, out: TextIO = sys.stdout
) -> Callable[[str], str] | None:
    """A one-key question on the terminal, or None when this is not one (the service, a
    pipe, a background job): then nobody could answer."""
    from timekeeper.box.controls.keyboard import in_foreground

    try:
        fd = stdin.fileno()
    except (OSError, ValueError):
        return None
    if not (in_foreground(fd) and out.isatty()):
        return None

    def ask(question: str) -> str:
        old = termios.tcgetattr(fd)
        try:
            # keys pressed before the question was shown are dropped (TCSAFLUSH); those
            # pressed once it is shown are read, one key, no Enter needed after it
            tty.setcbreak(fd, termios.TCSAFLUSH)
            out.write(question)
            out.flush()
            while True:
                key = os.read(fd, 1).decode(errors="replace").lower()
                if key in ("\r", "\n", "s", ""):
                    answer = "silent" if key else "quit"  # (end of input: nobody to ask)
                    break
                if key in ("q", "\x04"):
                    answer = "quit"
                    break
                if key == "r":
                    answer = "retry"
                    break
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
        out.write({"silent": "SILENT\n", "quit": "quit\n", "retry": "again\n"}[answer])
        out.flush()
        return answer

    return ask
