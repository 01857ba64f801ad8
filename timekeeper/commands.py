"""The operator's commands: what every control (keyboard, ctl socket, buttons, render
scripts) turns a press into before it reaches the engine."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MAX_ADD = 3600.0  # one press of ADD never means more than an hour


class Action(StrEnum):
    START = "start"  # begin the match (or a new one once finished)
    NEXT = "next"  # go on: next period, overtime, shot; in sudden death: the deciding goal
    GO = "go"  # the START/NEXT button: START before and after a match, NEXT during it
    TOGGLE = "toggle"  # stop or resume the clock
    PAUSE = "pause"
    RESUME = "resume"
    ADD = "add"  # add play time (negative takes added time back)
    FINISH = "finish"  # the match is decided: end it (after regulation, in overtime or shoot-out)
    RESET = "reset"  # back to idle, whatever the state
    QUIT = "quit"  # stop the program (handled by the runner, never by the engine)


@dataclass(frozen=True)
class Command:
    action: Action
    seconds: float | None = None  # ADD only; None means the profile's step

    def __str__(self) -> str:
        if self.action is Action.ADD and self.seconds is not None:
            return f"add={self.seconds:g}"
        return self.action.value

    @classmethod
    def parse(cls, text: str) -> Command:
        """Parse `start`, `add`, `add 10`, `add=-10` (the forms of ctl and --actions)."""
        word, _, arg = text.strip().replace("=", " ", 1).partition(" ")
        try:
            action = Action(word.strip().lower())
        except ValueError:
            names = ", ".join(a.value for a in Action if a is not Action.QUIT)
            raise ValueError(f"unknown command {word!r}; commands: {names}") from None
        arg = arg.strip()
        if not arg:
            return cls(action)
        if action is not Action.ADD:
            raise ValueError(f"{action.value} takes no argument (got {arg!r})")
        try:
            seconds = float(arg)
        except ValueError:
            raise ValueError(f"add takes a number of seconds (got {arg!r})") from None
        if not abs(seconds) <= MAX_ADD:  # also refuses nan and inf
            raise ValueError(f"add takes at most {MAX_ADD:g} seconds either way (got {arg})")
        return cls(action, seconds)


class Refused(Exception):
    """A command that does not apply in the engine's present state (nothing is changed).
    `cues` holds what came due before the command and must still be played."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.cues: list = []
