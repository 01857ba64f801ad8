"""The engine's table as data, as python-statemachine keeps transitions: each `Row` is one
arrow of the state diagram (source, event, guards, targets) beside the handler that takes it,
or a refusal where the event goes nowhere from there. engine.py fills the table; what reads
it is here: the dispatch and its refusals (`Table.row`), what START/NEXT would do now
(`Table.then`: Status.waiting_for), the presses that go on from a state (`Table.ways_on`:
show/prompts.py words them) and the diagram (`Table.diagram`, which scripts/draw_states.py
writes into the engine's docstring and docs/how-it-works.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from timekeeper.rules.commands import Action, Command, Hint, Refused
from timekeeper.rules.match import DOING, Cue, State

# the engine (typed Any: the table is built after the Engine class it calls)
Handler = Callable[[Any, Command, float], list[Cue]]


class Guard(NamedTuple):
    """A condition on the match (not on its state), named for the diagram: `check` gives
    None when it holds, else the refusal, or False for the event's own (`not_now`)."""

    label: str
    check: Callable[[Any], Refused | Literal[False] | None]


@dataclass(frozen=True)
class Refusal:
    """What a command is told where it goes nowhere: `reason`, then (with `doing`) what the
    match is doing, `reason (during the break)` or, `bare`, `reason during the break`; `hint`
    asks for the operator's prompt (WHAT_NOW: what to press now; `reset`: and how to start
    over)."""

    reason: str
    hint: Hint | None = Hint.WHAT_NOW
    bare: bool = False
    doing: bool = True
    reset: bool = False

    def of(self, state: State) -> Refused:
        text = self.reason
        if self.doing and self.bare:
            text += f" {DOING[state]}"
        elif self.doing:
            doing = "the start is counting down" if state is State.PRESTART else DOING[state]
            text += f" ({doing})"
        return Refused(text, self.hint, reset=self.reset and state is not State.PRESTART)


@dataclass(frozen=True)
class Row:
    """In `source`, `event` runs `handler` where every guard holds, leaving the match in one of
    `targets`; or, with `refusal` (no handler), is refused so. `then` is what START/NEXT does
    there for the status (`{next}`: the next part's name), `says` what the press does for the
    operator's prompt ("stops the clock")."""

    source: State
    event: Action
    targets: tuple[State, ...] = ()
    handler: Handler | None = None
    guards: tuple[Guard, ...] = ()
    refusal: Refusal | None = None
    then: str = ""
    says: str = ""


def rows(
    sources: Iterable[State],
    events: Iterable[Action],
    handler: Handler,
    targets: tuple[State, ...] = (),
    **kw: Any,
) -> list[Row]:
    """The same arrow from several states and for several events (no `targets`: it keeps
    the state it is taken in)."""
    return [Row(s, e, targets or (s,), handler, **kw) for s in sources for e in events]


def refused(sources: Iterable[State], events: Iterable[Action], refusal: Refusal) -> list[Row]:
    return [Row(s, e, refusal=refusal) for s in sources for e in events]


# the events that say what the match waits for (Status.waiting_for), in the table's order
GOES_ON = (Action.START, Action.NEXT, Action.FINISH)


class Table:
    """The rows, by (state, event); `not_now`: an event's refusal where it has no row;
    `needs`: what the profile must have for an event, checked first, whatever the state;
    `due`: what comes by itself, by state (for the diagram: its label and targets)."""

    def __init__(
        self,
        table: list[Row],
        not_now: Mapping[Action, Refusal],
        needs: Mapping[Action, Callable[[Any, Command], Refused | None]],
        due: Mapping[State, tuple[str, tuple[State, ...]]],
    ) -> None:
        self.table, self.not_now, self.needs, self.due = table, not_now, needs, due
        self.by_key: dict[tuple[State, Action], list[Row]] = {}
        for row in table:
            self.by_key.setdefault((row.source, row.event), []).append(row)

    def row(self, engine: Any, action: Action, command: Command) -> Row:
        """The arrow `action` (the command's, GO made START or NEXT) takes from the engine's
        state, or the Refused that says why there is none: what the profile lacks first,
        then the state, then the guards."""
        need = self.needs.get(action)
        if need is not None and (lacks := need(engine, command)) is not None:
            raise lacks
        state: State = engine.state
        found = self.by_key.get((state, action))
        if not found:
            raise self._not_now(action, state)
        why: Refused | Literal[False] | None = None
        for row in found:  # the last row's reason, if none holds: its guards are least met
            if row.refusal is not None:
                raise row.refusal.of(state)
            why = next((w for g in row.guards if (w := g.check(engine)) is not None), None)
            if why is None:
                return row
        raise why or self._not_now(action, state)

    def _not_now(self, action: Action, state: State) -> Refused:
        refusal = self.not_now.get(action)
        if refusal is None:
            return Refused(f"{action.value} is not an engine command")
        return refusal.of(state)

    def then(self, engine: Any, next_part: str) -> str:
        """What START/NEXT (or FINISH) would do now: the first arrow of GOES_ON that holds."""
        for row in self._state_rows(engine.state):
            if (
                row.event in GOES_ON
                and row.handler is not None
                and all(g.check(engine) is None for g in row.guards)
            ):
                return row.then.format(next=next_part)
        return ""

    def ways_on(self, state: State) -> list[Row]:
        """The presses that go on from `state`, each once, as the operator is told them."""
        seen: dict[Action, Row] = {}
        for row in self._state_rows(state):
            if row.says and row.event not in seen:
                seen[row.event] = row
        return list(seen.values())

    def _state_rows(self, state: State) -> list[Row]:
        return [row for row in self.table if row.source is state]

    # ------------------------------------------------------------------ the diagram

    def diagram(self) -> list[str]:
        """The state diagram as text: each state's arrows to other states, the commands
        grouped by guard and targets; `(time)` what comes due by itself; the arrows that
        leave every state once, at the end. Commands that keep the state are not drawn."""
        everywhere = self._everywhere()
        lines = []
        width = max(len(s.value) for s in State)
        for state in State:
            arrows: dict[tuple[str, tuple[State, ...]], list[str]] = {}
            for row in self._state_rows(state):
                moves = tuple(t for t in row.targets if t is not state)
                if row.handler is None or not moves or row.event in everywhere:
                    continue
                guard = f" [{', '.join(g.label for g in row.guards)}]" if row.guards else ""
                names = arrows.setdefault((guard, moves), [])
                if row.event.value not in names:
                    names.append(row.event.value)
            if state in self.due and (
                moves := tuple(t for t in self.due[state][1] if t is not state)
            ):
                arrows.setdefault(("", moves), []).append(f"({self.due[state][0]})")
            parts = [
                f"{', '.join(names)}{guard} → {' | '.join(t.value for t in moves)}"
                for (guard, moves), names in arrows.items()
            ]
            lines += _wrapped(f"{state.value:<{width}}  ", parts)
        for event, targets in everywhere.items():
            lines.append(
                f"{'any':<{width}}  {event.value} → {' | '.join(t.value for t in targets)}"
            )
        return lines

    def _everywhere(self) -> dict[Action, tuple[State, ...]]:
        """Events with the same arrow from every state (RESET): drawn once."""
        found = {}
        for event in Action:
            got = [r for r in self.table if r.event is event and r.handler is not None]
            if (
                {r.source for r in got} == set(State)
                and len({r.targets for r in got}) == 1
                and any(r.targets != (r.source,) for r in got)
            ):
                found[event] = got[0].targets
        return found


def _wrapped(head: str, parts: list[str], width: int = 92) -> list[str]:
    lines, line = [], head
    for i, part in enumerate(parts):
        piece = part + (";" if i < len(parts) - 1 else "")
        if line.strip() and len(line) + len(piece) > width and line != head:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece + " "
    lines.append(line.rstrip())
    return lines
