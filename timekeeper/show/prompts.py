"""What to press now, as the operator meets the controls: button, then key, then `timekeeper
ctl`. The one place that names them for a refusal (the engine gives the plain reason and a
hint, the runner has it worded here before it reaches ctl, the web, the hall and the log)
and for a match resumed from its journal."""

from __future__ import annotations

import math

from timekeeper.rules.commands import Action, Hint, Refused
from timekeeper.rules.engine import TRANSITIONS
from timekeeper.rules.match import State, Status, the
from timekeeper.show.status import clock_text, elapsed_text

PRESS_START = "START/NEXT (s/Enter, ctl start)"
PRESS_NEXT = "START/NEXT (n, ctl next)"
PRESS_PAUSE = "STOP/RESUME (SPACE, ctl pause)"
PRESS_RESUME = "STOP/RESUME (SPACE, ctl resume)"
PRESS_RESET = "RESET (r r, ctl reset, or hold START/NEXT)"
PRESS_FINISH = "FINISH (f, ctl finish, or hold STOP/RESUME)"
PRESS_ATTEMPT = "h g, h m, a g or a m (ctl attempt TEAM goal|miss)"
# the presses that go on from a state, as the engine's table names their events
PRESS = {
    Action.START: PRESS_START,
    Action.NEXT: PRESS_NEXT,
    Action.PAUSE: PRESS_PAUSE,
    Action.RESUME: PRESS_RESUME,
    Action.FINISH: PRESS_FINISH,
}


def prompt(refusal: Refused, status: Status) -> str:
    """What follows a refusal's reason for the operator (`status`: the match as refused):
    which press goes on from here, or "" when its reason says it all."""
    hint = refusal.hint
    if hint is Hint.WHAT_NOW:
        tail = f"; {PRESS_RESET} starts over" if refusal.reset else ""
        return f": {what_now(status)}{tail}"
    if hint is Hint.BEGIN:
        return f"; {PRESS_START} begins it"
    if hint is Hint.BEGIN_NEXT:
        return f"; {PRESS_START} begins the next one"
    if hint is Hint.RESUME:
        return f" ({PRESS_RESUME} goes on)"
    if hint is Hint.ATTEMPT:
        return f": {PRESS_ATTEMPT}"
    if hint is Hint.FINISH:
        return f"; {PRESS_FINISH} ends the match"
    return ""


def complete(refusal: Refused, status: Status) -> Refused:
    """The refusal, its text now the reason and the operator's prompt."""
    refusal.prompt = prompt(refusal, status)
    return refusal


def what_now(status: Status) -> str:
    """Which press goes on from here, naming every control (button, key, ctl): the presses
    the engine's table has from the status's state, worded. What their guards decided is
    read from the status: `waiting_for` says what NEXT starts, or `finish` where it starts
    nothing; after regulation FINISH is offered too."""
    if over := series_over(status):
        return over
    s = State(status.state)
    if s is State.PRESTART:  # no press goes on: the start comes by itself
        left = math.ceil((status.countdown or 0.0) - 1e-9)
        return (
            f"the start signal comes by itself in {left} s (START and SPACE do nothing "
            f"until then); {PRESS_RESET} calls it off"
        )
    if status.teams is not None and s in (State.SHOOTOUT, State.SHOT):  # stopped time
        return f"enter each attempt: {PRESS_ATTEMPT}"  # (its result ends a shot, not NEXT)
    waiting, after = s is State.WAITING, status.period >= status.periods
    ends = waiting and status.waiting_for == "finish"  # NEXT goes nowhere: FINISH
    presses, part = [], status.waiting_for.removeprefix("next: ")
    for row in TRANSITIONS.ways_on(s):
        if waiting and (ends if row.event is not Action.FINISH else not after):
            continue
        text = f"{PRESS[row.event]} {row.says.format(next=the(part) if part else '')}"
        if waiting and after and row.event is not Action.FINISH and row.guards:
            text += f" ({row.guards[0].label})"  # "(on a draw)"
        presses.append(text)
    score = status.score
    if ends and status.goals and score["home"] != score["away"]:  # a decided score
        presses[0] = f"the score is {score['home']}:{score['away']}, not a draw: {presses[0]}"
    return ", ".join(presses)


def series_over(status: Status) -> str:
    """After a won series, with no game on the table, what goes on (START takes no further
    game of it): a new series (RESET, a local one: its match has no id), or the desk's next
    call. "": no won series."""
    series = status.match_series
    if not series or not series.get("winner") or status.state not in ("idle", "finished"):
        return ""
    if series.get("match"):
        return "the series is won: the desk calls the next match"
    return f"the series is won: {PRESS_RESET} begins a new series"


def resumed_text(status: Status, replayed: bool = False) -> str:
    """Where a match resumed from its journal (or left in it at quit) stands, and which
    press goes on with it (`replayed`: --replay sent it back to before its start)."""
    where = status.part or "the match"
    score = f"score {status.score['home']}:{status.score['away']}"
    s = status.state
    if s == "stopped":
        return (
            f"{where} stopped at {elapsed_text(status.play_time)} played, "
            f"{clock_text(status.remaining)} left, {score}: {what_now(status)}; or "
            "`ctl replay` plays it again from the start, keeping the goals (ITHF 4.5)"
        )
    if s == "idle" and replayed:
        return f"to be played again from the start, goals kept ({score}): {PRESS_START} begins it"
    if s in ("finished", "idle"):
        return f"no match under way: {series_over(status) or f'{PRESS_START} begins one'}"
    if s == "prestart":
        return f"in the pre-start countdown: {PRESS_START} begins it again"
    if s == "running":  # (quitting) it comes back stopped here
        return f"{where} at {elapsed_text(status.play_time)} played; it comes back stopped there"
    if s in ("shootout", "shot"):
        return f"in the shoot-out: {PRESS_NEXT} starts the next shot"
    if status.waiting_for == "finish":
        return f"{where} over, {score}: {what_now(status)}"
    return f"{where} over: {PRESS_NEXT} goes on to {status.waiting_for.removeprefix('next: ')}"
