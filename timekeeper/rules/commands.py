"""The operator's commands: what every control (keyboard, ctl socket, buttons, render
scripts) turns a press into before it reaches the engine."""

from __future__ import annotations

import difflib
import re
import shlex
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from timekeeper.rules.penalties import KINDS, MAX_KINDS, TEAMS

MAX_ADD = 3600.0  # one press of ADD never means more than an hour
MAX_PLAYER = 20  # characters of a player's number or name
MAX_NAME = 32  # characters of a side's name (a player in rod hockey, a team in ball hockey)
# A table's (and a hall's) name is one level of the hall's bus topics
# (timekeeper/HALL/TABLE/…): no MQTT wildcard (+ #), no /, no NUL; `all` is the topic of the
# hall's commands to every table. Here, the lowest wing, so that a box checking a topic does
# not load the tournament's file reader (it held 7-13 MB of a running box: segno, numpy's
# lazy parts, the spec's readers).
TABLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
ALL_TABLES = "all"
NO_NAME = "-"  # `names - Svoboda`: the home side has no name (as "" does)
# a number as an operator types it: ASCII digits, one optional sign and point; no `1_0`, no
# exponent, no Arabic-Indic or full-width digits (Python's float() would take them all)
_NUMBER = re.compile(r"[-+]?(?:[0-9]{1,7}(?:\.[0-9]{0,6})?|\.[0-9]{1,6})", re.ASCII)


def parse_number(text: str) -> float:
    """A plain decimal number (`10`, `-2.5`, `.5`); ValueError for anything else."""
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"not a plain number: {text!r}")
    return float(text)


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
    # stopped-time games (ball hockey): the profile's penalties, time-outs, shoot-out score
    PENALTY = "penalty"  # penalty TEAM KIND[+KIND…] [PLAYER]
    RELEASE = "release"  # release TEAM: a power-play goal against TEAM ends its running minor
    REMOVE = "remove"  # remove TEAM [ID]: a penalty entered by mistake (default: the latest)
    TIMEOUT = "timeout"  # timeout TEAM: the team's time-out, while the clock is stopped
    SET = "set"  # set M:SS: correct the game clock (time left) while it is stopped
    ATTEMPT = "attempt"  # attempt TEAM goal|miss: a shoot-out attempt's (or penalty shot's) result
    PENALTY_SHOT = "penalty-shot"  # penalty-shot TEAM: rule 15/17f, taken while play is stopped
    # every profile: the score, the replay of a failed match, the no-show countdown
    GOAL = "goal"  # goal TEAM [PLAYER] (in a shoot-out or penalty shot: a scored attempt)
    UNDO_GOAL = "undo-goal"  # undo-goal TEAM: the team's latest goal was entered by mistake
    REPLAY = "replay"  # the match is played again from the start, keeping its goals (ITHF 4.5)
    NO_SHOW = "no-show"  # no-show [M:SS passed]: a countdown from the scheduled start (rule 5)
    NAMES = "names"  # names HOME AWAY: the sides' names (players or teams), in any state
    QUIT = "quit"  # stop the program (handled by the runner, never by the engine)
    MUTE = "mute"  # ceremonies: no sound, relays and lamp still work (the runner's, too)
    UNMUTE = "unmute"


# handled by the live runner itself, never by the engine (nor in a render script)
BOX_ACTIONS = (Action.QUIT, Action.MUTE, Action.UNMUTE)


TEAM_ACTIONS = (Action.PENALTY, Action.RELEASE, Action.REMOVE, Action.TIMEOUT, Action.PENALTY_SHOT)
SCORE_ACTIONS = (Action.GOAL, Action.UNDO_GOAL, Action.ATTEMPT)
_NAMES_A_TEAM = TEAM_ACTIONS + SCORE_ACTIONS
USAGE = {
    Action.PENALTY: "penalty TEAM KIND[+KIND…] [PLAYER], e.g. penalty home minor+minor+personal 17",
    Action.RELEASE: "release TEAM, e.g. release away",
    Action.REMOVE: "remove TEAM [ID], e.g. remove home 3",
    Action.TIMEOUT: "timeout TEAM, e.g. timeout home",
    Action.SET: "set M:SS (time left), e.g. set 4:32",
    Action.ATTEMPT: "attempt TEAM goal|miss, e.g. attempt home goal",
    Action.PENALTY_SHOT: "penalty-shot TEAM (the team taking it), e.g. penalty-shot home",
    Action.GOAL: "goal TEAM [PLAYER], e.g. goal home 17",
    Action.UNDO_GOAL: "undo-goal TEAM, e.g. undo-goal away",
    Action.NO_SHOW: "no-show [M:SS] (time already passed since the scheduled start), "
    "e.g. no-show 1:30",
    Action.NAMES: 'names HOME AWAY, home first, a name with spaces in quotes, "" or - for '
    'none, e.g. names "Jan Novák" Svoboda',
}


@dataclass(frozen=True)
class Command:
    """One press. ADD's amount is signed: `seconds` (+ adds, - takes back), or where it is
    None one step of the profile the engine plays, `sign` saying which way (`add -`, the `-`
    key): a control never copies the step, so a profile switched by the hall is obeyed."""

    action: Action
    seconds: float | None = None  # ADD: the signed amount (None: a step); SET: the time left
    team: str = ""  # home | away, for the stopped-time commands
    kinds: tuple[str, ...] = ()  # PENALTY: e.g. ("major", "game")
    player: str = ""  # PENALTY, GOAL: the player's number or name, for the record
    ref: int | None = None  # REMOVE: the penalty's id (None: the team's latest)
    scored: bool = False  # ATTEMPT
    names: tuple[str, str] | None = None  # NAMES: home's and away's ("": none)
    sign: int = 1  # ADD of a step (seconds None): +1 adds it, -1 takes it back

    def __post_init__(self) -> None:
        if self.sign not in (1, -1) or (
            self.sign == -1 and (self.action is not Action.ADD or self.seconds is not None)
        ):
            raise ValueError("sign -1 is ADD's step taken back (seconds carry their own sign)")

    def __str__(self) -> str:
        if self.action is Action.NAMES and self.names is not None:
            return f"{self.action.value}={shlex.join(self.names)}"
        if self.action is Action.ADD and self.seconds is not None:
            return f"add={self.seconds:g}"
        if self.action is Action.ADD and self.sign == -1:
            return "add=-"
        if self.action is Action.SET and self.seconds is not None:
            return f"set={int(self.seconds) // 60}:{self.seconds % 60:02g}"
        words = [self.team] if self.team else []
        if self.action is Action.PENALTY:
            words += ["+".join(self.kinds)] + ([self.player] if self.player else [])
        elif self.action is Action.GOAL and self.player:
            words.append(self.player)
        elif self.action is Action.NO_SHOW and self.seconds:
            words.append(f"{int(self.seconds) // 60}:{self.seconds % 60:02g}")
        elif self.action is Action.REMOVE and self.ref is not None:
            words.append(str(self.ref))
        elif self.action is Action.ATTEMPT:
            words.append("goal" if self.scored else "miss")
        return self.action.value + ("=" + ":".join(words) if words else "")

    @classmethod
    def parse(cls, text: str) -> Command:
        """Parse `start`, `add`, `add -` (a step back), `add 10`, `add=-10`,
        `penalty home minor 17`,
        `penalty=home:major+game` (the forms of ctl and --actions)."""
        word, _, arg = text.strip().replace("=", " ", 1).partition(" ")
        try:
            action = Action(word.strip().lower())
        except ValueError:
            names = ", ".join(a.value for a in Action if a is not Action.QUIT)
            raise ValueError(f"unknown command {word!r}; commands: {names}") from None
        arg = arg.strip()
        if action in _NAMES_A_TEAM:
            return _team_command(action, arg.replace(":", " ").split())
        if action is Action.SET:
            return cls(action, parse_clock(arg))
        if action is Action.NO_SHOW:
            return cls(action, parse_clock(arg, USAGE[action]) if arg else 0.0)
        if action is Action.NAMES:
            return cls(action, names=parse_names(arg))
        if not arg:
            return cls(action)
        if action is not Action.ADD:
            raise ValueError(f"{action.value} takes no argument (got {arg!r})")
        if arg == "-":
            return cls(action, sign=-1)
        try:
            seconds = parse_number(arg)
        except ValueError:
            raise ValueError(
                f"add takes a number of seconds, e.g. add 10 or add -5, or - "
                f"for one step back (got {arg!r})"
            ) from None
        if not abs(seconds) <= MAX_ADD:  # also refuses nan and inf
            raise ValueError(f"add takes at most {MAX_ADD:g} seconds either way (got {arg})")
        return cls(action, seconds)


def command_line(words: Sequence[str]) -> str:
    """The line `Command.parse` reads for a command given as words (ctl's arguments, the
    web's args): the words joined by spaces, but each name of `names` quoted as a shell
    would, so that a name with spaces (or none: "") stays one word."""
    if not words:
        return ""
    head, *rest = words
    if head.strip().lower() == Action.NAMES.value:
        return " ".join([head, *(shlex.quote(word) for word in rest)])
    return " ".join(words)


def parse_names(text: str) -> tuple[str, str]:
    """`Novák Svoboda`, `"Jan Novák" 'Petr Svoboda'`, `"" Svoboda`, `- Svoboda`: the two
    names, home first, quoted as in a shell (ctl and the web quote them: `command_line`)."""
    usage = f"usage: {USAGE[Action.NAMES]}"
    try:
        words = shlex.split(text)
    except ValueError as exc:  # an unclosed quote: "No closing quotation"
        raise ValueError(
            f"names: {str(exc).lower()} (quote a name with an apostrophe in double quotes); {usage}"
        ) from None
    if len(words) != 2:
        raise ValueError(f"names takes two names, got {len(words)}; {usage}")
    home, away = (check_name(word) for word in words)
    return home, away


def check_name(text: str) -> str:
    """A side's name as it is kept and shown: in any script, composed (NFC: `á` is one
    character, however it was typed), spaces of any kind made plain and single, surrounding
    whitespace stripped; "" or "-" is no name. ValueError for a name longer than MAX_NAME
    characters, or with a character that cannot be shown (control, format, private use):
    such a name would garble the status line, the log and the screens."""
    name = "".join(
        " " if unicodedata.category(c) == "Zs" else c for c in unicodedata.normalize("NFC", text)
    )
    name = re.sub(" {2,}", " ", name.strip())
    if name == NO_NAME:
        return ""
    bad = next((c for c in name if not c.isprintable() or unicodedata.category(c) == "Co"), None)
    if bad is not None:
        raise ValueError(
            f"a name must be printable text: {name[:MAX_NAME]!r} holds the "
            f"character U+{ord(bad):04X} ({unicodedata.name(bad, 'a control')})"
        )
    if len(name) > MAX_NAME:
        raise ValueError(
            f"a name is at most {MAX_NAME} characters: {name[:MAX_NAME]!r}… has {len(name)}"
        )
    return name


def parse_clock(text: str, usage: str = USAGE[Action.SET]) -> float:
    """`4:32`, `272` or `4:32.5`: a game-clock reading in seconds."""
    parts = text.strip().split(":")
    try:
        numbers = [parse_number(p) for p in parts]
    except ValueError:
        numbers = []
    if (
        not text.strip()
        or not numbers
        or len(numbers) > 2
        or any(not 0 <= n < 1e6 for n in numbers)
        or (len(numbers) == 2 and numbers[1] >= 60)
    ):
        raise ValueError(f"{usage} (got {text.strip()!r})")
    return numbers[0] * 60 + numbers[1] if len(numbers) == 2 else numbers[0]


def parse_team(word: str) -> str:
    team = next((t for t in TEAMS if word and t.startswith(word.lower())), None)
    if team is None:
        raise ValueError(f"unknown team {word!r}; teams: {', '.join(TEAMS)}")
    return team


def parse_kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip().lower() for k in text.split("+"))
    if len(kinds) > MAX_KINDS:
        raise ValueError(f"at most {MAX_KINDS} parts to one penalty (e.g. minor+minor+personal)")
    for kind in kinds:
        if kind not in KINDS:
            near = difflib.get_close_matches(kind, KINDS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ValueError(
                f"unknown penalty {kind!r}{hint} (penalties: {', '.join(KINDS)}, "
                "combined with +, e.g. minor+minor+personal, major+game)"
            )
    if kinds.count("game") > 1 or ("game" in kinds and kinds[-1] != "game"):
        raise ValueError("a game misconduct comes once, last (e.g. major+game)")
    if kinds.count("match") > 1 or ("match" in kinds and (kinds[-1] != "match" or "game" in kinds)):
        raise ValueError(
            "a match penalty comes once, last, and not with a game misconduct "
            "(e.g. match, minor+match)"
        )
    return kinds


def _team_command(action: Action, words: list[str]) -> Command:
    usage = f"usage: {USAGE[action]}"
    if not words:
        raise ValueError(f"{action.value} needs a team; {usage}")
    team, rest = parse_team(words[0]), words[1:]
    if action is Action.PENALTY:
        if not rest or len(rest) > 2:
            raise ValueError(f"{usage}")
        player = rest[1] if len(rest) > 1 else ""
        if len(player) > MAX_PLAYER or not player.isprintable():
            raise ValueError(
                f"a player is a number or a name of at most {MAX_PLAYER} characters; {usage}"
            )
        return Command(action, team=team, kinds=parse_kinds(rest[0]), player=player)
    if action is Action.REMOVE and len(rest) == 1:
        ref = rest[0].lstrip("#")
        if not (ref.isascii() and ref.isdigit() and len(ref) <= 6):
            raise ValueError(f"a penalty's id is a number (got {rest[0]!r}); {usage}")
        return Command(action, team=team, ref=int(ref))
    if action is Action.GOAL:
        if len(rest) > 1:
            raise ValueError(f"{usage}")
        return Command(action, team=team, player=rest[0] if rest else "")
    if action is Action.ATTEMPT:
        if len(rest) != 1 or rest[0].lower() not in ("goal", "miss"):
            raise ValueError(usage)
        return Command(action, team=team, scored=rest[0].lower() == "goal")
    if rest:
        raise ValueError(f"{action.value} takes a team only (got {' '.join(rest)!r}); {usage}")
    return Command(action, team=team)


class Hint(StrEnum):
    """Which press a refusal's prompt names after its reason. The rules name no key: the
    operator's prompt is worded in show/prompts.py, by whoever presents the refusal to an
    operator (the live runner); a render script's error keeps the bare reason."""

    WHAT_NOW = "what-now"  # "reason: STOP/RESUME (SPACE, ctl resume) goes on"
    BEGIN = "begin"  # "reason; START/NEXT (s/Enter, ctl start) begins it"
    BEGIN_NEXT = "begin-next"  # "reason; START/NEXT (s/Enter, ctl start) begins the next one"
    RESUME = "resume"  # "reason (STOP/RESUME (SPACE, ctl resume) goes on)"
    ATTEMPT = "attempt"  # "reason: h g, h m, a g or a m (ctl attempt TEAM goal|miss)"
    FINISH = "finish"  # "reason; FINISH (f, ctl finish, or hold STOP/RESUME) ends the match"


class Refused(Exception):
    """A command that does not apply in the engine's present state (nothing is changed).
    `cues` holds what came due before the command and must still be played. `reason` is the
    plain reason; `hint` (and `reset`: how to start over, too) asks for the operator's
    prompt, which `prompt` holds once show/prompts.py has worded it; str() is both."""

    def __init__(self, reason: str, hint: Hint | None = None, reset: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.hint, self.reset = reason, hint, reset
        self.prompt = ""
        self.cues: list[Any] = []  # (Cue: rules/match.py, which imports this)

    def __str__(self) -> str:
        return self.reason + self.prompt
