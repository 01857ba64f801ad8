"""Keys in a terminal: single presses, no Enter needed (cbreak mode, restored on exit)."""

from __future__ import annotations

import contextlib
import logging
import os
import select
import sys
import termios
import threading
import time
import tty
from collections.abc import Callable

from timekeeper.rules.commands import Action, Command
from timekeeper.rules.profiletypes import Profile

KEYS: dict[str, Command] = {
    " ": Command(Action.TOGGLE),
    "s": Command(Action.START),
    "\n": Command(Action.START),
    "\r": Command(Action.START),
    "n": Command(Action.NEXT),
    "+": Command(Action.ADD),  # the profile's step (the engine's, whichever it plays now)
    "=": Command(Action.ADD),
    "-": Command(Action.ADD, sign=-1),  # one step taken back
    "f": Command(Action.FINISH),
    "r": Command(Action.RESET),
    "q": Command(Action.QUIT),
    "\x03": Command(Action.QUIT),  # Ctrl-C arrives as a key in cbreak mode only if ISIG is off
}
log = logging.getLogger(__name__)
HELP = (
    "keys: s/Enter start  SPACE stop/resume  +/- time  n next  f finish  r r reset\n"
    "      q quit (q q while a match is under way)  ? these keys again"
)
PENDING = 3.0  # seconds a team key or a first `r`/`q` waits for the next key
# a single `q` quits only a box with no match under way; otherwise it asks first
QUIET_STATES = ("idle", "finished")
# a team key, then what happened to that team (two presses, no Enter): the score in every
# profile, penalties and time-outs in stopped-time games
TEAM_PREFIX = {"h": "home", "a": "away"}
TEAM_KEYS: dict[str, str] = {
    "g": "goal {team}",  # in a shoot-out or penalty shot: a scored attempt
    "u": "undo-goal {team}",  # the team's latest goal was entered by mistake
    "m": "attempt {team} miss",  # shoot-out, penalty shot
    "1": "penalty {team} minor",
    "2": "penalty {team} major",
    "3": "penalty {team} personal",
    "4": "penalty {team} game",
    "5": "penalty {team} match",
    "r": "release {team}",  # a power-play goal against the team: its running minor ends
    "x": "remove {team}",  # the team's latest penalty was entered by mistake
    "t": "timeout {team}",
    "p": "penalty-shot {team}",
}
SCORE_HELP = "team keys: h (home) or a (away), then g goal  u undo the goal\n      m shoot-out miss"
TEAM_HELP = (
    "team keys: h (home) or a (away), then g goal (shoot-out, penalty shot: scored)\n"
    "      m missed  u undo the goal  1 minor  2 major  3 personal  4 game\n"
    "      misconduct  5 match  r release (power-play goal)  x remove the latest\n"
    "      penalty  t time-out  p penalty shot"
)


def help_for(profile: Profile) -> str:
    """The key help `run` prints: the score keys in every profile, the penalty and time-out
    keys too where the profile has them."""
    return HELP + f"\n{TEAM_HELP if profile.penalties or profile.timeout else SCORE_HELP}"


def in_foreground(fd: int) -> bool:
    """A terminal we may read keys from: ours, and we are its foreground job (a job started
    with `&` that touched the terminal's modes would be stopped by SIGTTOU)."""
    try:
        return os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False


def key_command(key: str) -> Command | None:
    return KEYS.get(key.lower() if key.isalpha() else key)


class KeyReader:
    """Single keys, and the two-key team commands (`h1`: a minor penalty for home). A team
    key waits for the next key; a key that means nothing after it is read on its own.
    `state` tells the match's state (the engine's): a match under way quits only on `q q`.
    `clock` dates a pending key, which lapses after PENDING seconds (`tick`)."""

    def __init__(
        self, state: Callable[[], str] = lambda: "idle", clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.state, self.clock = state, clock
        self.since = 0.0  # when the pending key (if any) was pressed
        self.team: str | None = None
        self.reset_armed = False  # `r` once: a second `r` resets (never a single stray key)
        self.quit_armed = False  # `q` once during a match: a second `q` quits
        self.help_wanted = False  # `?`: the key help, printed again
        self.hint = ""  # what the last key is waiting for, for the status line

    def feed(self, key: str) -> Command | None:
        self.tick()  # a first `q` pressed long ago is no question any more
        lower, self.hint = key.lower(), ""
        armed, self.reset_armed = self.reset_armed, False
        quit_armed, self.quit_armed = self.quit_armed, False
        if key == "?" and self.team is None:
            self.help_wanted = True
            return None
        if self.team is not None:
            team, self.team = self.team, None
            if lower in TEAM_KEYS:
                return Command.parse(TEAM_KEYS[lower].format(team=team))
            self.hint = f"{team}: {key.strip() or 'that key'} is no team command; cancelled"
        if lower in TEAM_PREFIX:
            self.team, self.since = TEAM_PREFIX[lower], self.clock()
            self.hint = (
                f"{self.team}: g goal  u undo goal  m miss  1 minor  2 major  "
                "3 personal  4 game  5 match  r release  x remove  t time-out  "
                "p penalty shot"
            )
            return None
        command = key_command(key)
        if command is not None and command.action is Action.RESET:
            if armed:
                return command
            self.reset_armed = True
            self.hint = "press r again to reset the match (any other key: no)"
            self.since = self.clock()
            return None
        if command is not None and command.action is Action.QUIT and lower == "q":
            state = self.state()
            if quit_armed or state in QUIET_STATES:
                return command
            self.quit_armed = True
            what = "the countdown stops" if state == "prestart" else "the match is kept"
            self.hint = f"press q again to quit ({what}); any other key: no"
            self.since = self.clock()
            return None
        return command

    def tick(self) -> None:
        """A pending key PENDING seconds old is dropped, saying so (`q`: how to quit)."""
        pending = self.team is not None or self.reset_armed or self.quit_armed
        if pending and self.clock() - self.since >= PENDING:
            self.expire()

    def expire(self) -> None:
        """No key for a while: a pending team key, reset or quit is dropped."""
        if self.quit_armed:
            self.hint = f"quit not confirmed: press q twice within {PENDING:g} s"
        elif self.reset_armed:
            self.hint = f"reset not confirmed: press r twice within {PENDING:g} s"
        elif self.team is not None:
            self.hint = f"{self.team}: cancelled (no key within {PENDING:g} s)"
        self.team, self.reset_armed, self.quit_armed = None, False, False


class Keyboard:
    """Keys from the terminal, read on a thread of their own; commands go to `submit`.
    `state` is the match's state (for `q q`), `on_help` prints the key help again (`?`).
    It sends no profile's facts: `+` and `-` are one step of whatever the engine plays."""

    def __init__(
        self,
        submit: Callable[[Command], object],
        fd: int | None = None,
        state: Callable[[], str] = lambda: "idle",
        on_help: Callable[[], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.submit, self.on_help = submit, on_help
        self._keys = KeyReader(state, clock)
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._saved = termios.tcgetattr(self.fd)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="keyboard", daemon=True)

    def start(self) -> Keyboard:
        tty.setcbreak(self.fd)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=1)
        with contextlib.suppress(termios.error):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    def _read(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                self._keys.tick()  # a pending key lapses, saying so
                self._say()
                continue
            data = os.read(self.fd, 32).decode(errors="ignore")
            if not data:
                self.submit(Command(Action.QUIT))
                return
            for key in data:
                command = self._keys.feed(key)
                self._say()
                if self._keys.help_wanted:
                    self._keys.help_wanted = False
                    if self.on_help is not None:
                        self.on_help()
                if command is not None:
                    self.submit(command)

    def _say(self) -> None:
        if self._keys.hint:
            log.info("%s", self._keys.hint)
            self._keys.hint = ""
