"""A whole match played in virtual time: the engine, an operator script and an operator who
presses START/NEXT as soon as the engine waits for one. Renders and `show` use it; so do the
tests, which is why a 40-minute match replays in milliseconds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from timekeeper.rules.commands import BOX_ACTIONS, Action, Command, Refused, parse_number
from timekeeper.rules.engine import Cue, Engine, State
from timekeeper.rules.profiletypes import Profile

# a scripted START/NEXT takes over the operator's next press: the replay waits for it (and so
# does a scripted shoot-out result, once the operator has started the attempt)
TAKES_OVER_THE_PRESS = (Action.START, Action.NEXT)
# TIME:COMMAND, TIME seconds or minutes:seconds; the command may hold colons of its own
_STEP = re.compile(r"\s*([-+]?[\d.]+(?::[\d.]+)?)\s*:\s*(\S.*)")


@dataclass(frozen=True)
class Step:
    at: float  # seconds after the first start cue
    command: Command


class ScriptError(ValueError):
    pass


def parse_actions(text: str) -> list[Step]:
    """`120:pause,135:resume,200:add=10` (also `2:00:pause`, minutes:seconds), and the
    ball-hockey commands with their arguments: `30:penalty=home:minor`, `70:set=6:55`."""
    steps = []
    for item in filter(None, (part.strip() for part in text.replace(";", ",").split(","))):
        match = _STEP.fullmatch(item)
        if match is None:
            raise ScriptError(f"{item!r}: write TIME:COMMAND, e.g. 120:pause")
        when, what = match.groups()
        try:
            parts = [parse_number(x) for x in when.split(":")]
            command = Command.parse(what)
        except ValueError as exc:
            raise ScriptError(f"{item!r}: {exc}") from None
        if len(parts) > 2 or (len(parts) == 2 and not 0 <= parts[1] < 60):
            raise ScriptError(f"{item!r}: a time is seconds (135) or minutes:seconds (2:15)")
        seconds = parts[0] * 60 + parts[1] if len(parts) == 2 else parts[0]
        if seconds < 0:
            raise ScriptError(f"{item!r}: times count from the start and cannot be negative")
        if command.action in BOX_ACTIONS:
            raise ScriptError(f"{item!r}: {command.action.value} is not a match command")
        steps.append(Step(seconds, command))
    return sorted(steps, key=lambda s: s.at)


@dataclass(frozen=True)
class Press:
    at: float
    command: Command
    first_cue: int  # index in Replay.cues of the first cue the press caused


@dataclass
class Replay:
    cues: list[Cue]
    start: float  # time of the first start cue
    end: float  # time the match finished
    presses: list[Press] = field(default_factory=list)
    unused: list[Step] = field(default_factory=list)  # script steps after the end


def replay(
    profile: Profile,
    steps: list[Step] = (),  # type: ignore[assignment]
    begin: float = 0.0,
    max_time: float = 6 * 3600,
) -> Replay:
    """Play `profile` from START at `begin` to the end. The shoot-out is played to its first
    series, then finished; an untimed sudden death is decided at once."""
    engine = Engine(profile)
    pending = list(steps)
    cues: list[Cue] = []
    presses: list[Press] = []

    def press(command: Command, now: float) -> None:
        cues.extend(engine.advance(now))  # what came due first is not the press's doing
        presses.append(Press(now, command, len(cues)))
        cues.extend(engine.handle(command, now))

    press(Command(Action.START), begin)
    now, start = begin, _first_start(cues)
    while engine.state is not State.FINISHED:
        deadline = engine.next_deadline()
        action_at = start + pending[0].at if pending and start is not None else None
        if action_at is not None and (
            action_at < deadline
            if deadline is not None
            else engine.state in (State.RUNNING, State.STOPPED)
            or pending[0].command.action in TAKES_OVER_THE_PRESS
            or (pending[0].command.action is Action.ATTEMPT and engine.state is State.SHOT)
            or (
                pending[0].command.action is Action.FINISH
                and _waits_for_finish(engine, now, action_at)
            )
        ):
            step = pending.pop(0)
            now = max(now, action_at)
            try:
                press(step.command, now)
            except Refused as refusal:
                raise ScriptError(f"{step.at:g}:{step.command} refused: {refusal}") from None
        elif deadline is not None:
            now = deadline
            cues += engine.advance(now)
        else:  # the engine waits for the operator and the script has nothing for it
            if engine.state is State.STOPPED:
                at = now - (start if start is not None else begin)
                raise ScriptError(
                    f"the script leaves the clock stopped at {at:g} s; add a resume after it"
                )
            command = _operator(engine, now)
            try:
                press(command, now)
            except Refused as refusal:  # the script left the engine where no press helps
                raise ScriptError(
                    f"at {now - (start or begin):g} s the replay's {command} was refused: {refusal}"
                ) from None
        if start is None:
            start = _first_start(cues)
        if now - begin > max_time:
            raise ScriptError(f"the match has not ended after {max_time:g} s of replay")
    return Replay(cues, start if start is not None else begin, now, presses, pending)


def _waits_for_finish(engine: Engine, now: float, finish_at: float) -> bool:
    """Where the live engine takes FINISH while it waits for the operator after regulation,
    a scripted finish acts at its time: the replay's operator starts the next part only if it
    would be over before the finish, and otherwise waits for it. An untimed part is never
    over by itself: to decide a match in a sudden death, script its `next` (or a goal).
    Between shots the operator starts the next shot unless the finish comes at once: a
    finish during a shot ends that shot, whose start signal has sounded, as it would live."""
    s, i, p = engine.state, engine.m.index, engine.profile
    if s is State.SHOOTOUT:
        return finish_at <= now
    if s is not State.WAITING or i + 1 < p.regulation:
        return False
    lasts = p.periods[i + 1].length if i + 1 < len(p.periods) else 0.0
    return lasts is None or now + lasts > finish_at


def _operator(engine: Engine, now: float) -> Command:
    if engine.state is State.IDLE:  # the script reset the match: begin it again
        return Command(Action.START)
    shootout = engine.profile.shootout
    taken = engine.status(now).shot
    if engine.state is State.SHOOTOUT and shootout and taken >= 2 * shootout.first:
        return Command(Action.FINISH)
    if engine.state is State.WAITING and engine.status(now).waiting_for == "finish":
        return Command(Action.FINISH)  # a decided score: no overtime, no shoot-out
    score = engine.m.extra.score if engine.m.extra else None
    if engine.state is State.SHOT and score is not None:  # score-keeping: a miss, in turn
        return Command(Action.ATTEMPT, team=score.next_team() or "home")
    return Command(Action.NEXT)


def _first_start(cues: list[Cue]) -> float | None:
    return next((c.due for c in cues if c.name == "start"), None)
