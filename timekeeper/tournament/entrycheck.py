"""The checks of one ledger entry against the tournament as it stands, made once, as the
entry is folded (`Tournament.apply`): an entry read from the ledger, and one the clerk made
at the desk, folded into a copy of the tournament before it is written (`Tournament.folded`).
A refusal is an EntryError naming the field; where a rule of the result or the series
refused it, that rule's own error is its cause, so that the clerk can say it as typed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from timekeeper.rules.decision import Decisions
from timekeeper.tournament import results
from timekeeper.tournament.events import EntryError, LotEvent, ReplayEvent, ResultEvent
from timekeeper.tournament.fixture import Fixture
from timekeeper.tournament.results import Result, ResultError
from timekeeper.tournament.spec import Spec


class Standing(Protocol):
    """What the checks read of the tournament as it stands (state.Tournament)."""

    @property
    def spec(self) -> Spec: ...
    @property
    def group_matches(self) -> Mapping[str, object]: ...
    @property
    def nodes(self) -> Mapping[str, object]: ...
    @property
    def sources(self) -> Mapping[str, str]: ...
    @property
    def groups(self) -> Mapping[str, tuple[str, ...]]: ...
    def fixture(self, match_id: str) -> Fixture: ...
    def decisions(self, match_id: str) -> Decisions: ...
    def pending_lots(self, group: str) -> list[tuple[str, ...]]: ...


UNKNOWN_SIDES = (
    "cannot be played yet: its players are not known (a group to finish, a lot to draw, "
    "a match to decide)"
)


def match(t: Standing, event: ResultEvent | ReplayEvent) -> Fixture:
    """The match an entry names, at the round and table the draw gave it, its players
    known."""
    if event.match not in t.group_matches and event.match not in t.nodes:
        raise EntryError("match", f"no match {event.match!r} in the draw")
    m = t.fixture(event.match)
    if (event.round, event.table) != (m.slot.round, m.slot.table):
        raise EntryError(
            "round",
            f"{m.id} is played in round {m.slot.round} at table {m.slot.table}, not in "
            f"round {event.round} at table {event.table}",
        )
    if m.home is None or m.away is None:
        raise EntryError("match", f"{m.id} ({m.sides}) {UNKNOWN_SIDES}")
    return m


def result(t: Standing, event: ResultEvent, written: bool) -> None:
    """A single match's result: over the result standing (a correction, with its reason),
    not that very result again, and one the rule set and the match's profile take, judged
    on its score as a pair (a forfeit: the rule set's score for it). `written`: read back
    from the ledger (results.judge)."""
    m = match(t, event)
    if event.corrects != m.result:
        raise EntryError("corrects", not_standing(m, event.corrects))
    r = event.result
    try:
        results.judge(t.spec.rules, m.knockout, r, t.decisions(m.id), written)
    except ResultError as exc:
        raise EntryError("result", f"{r.text()} for {m.id}: {exc}") from exc
    if event.corrects == event.result:
        raise EntryError("result", f"a correction that changes nothing ({m.id})")
    if event.corrects is not None and not (event.reason or "").strip():
        raise EntryError("reason", "a correction needs a reason")
    first = t.sources.get(event.source or "", event.match)
    if first != event.match:
        raise EntryError("source", f"{event.source} came home as {first}'s result already")


def lot(t: Standing, event: LotEvent) -> None:
    if event.group not in t.groups:
        raise EntryError("group", f"no group {event.group!r} in the draw")
    ties = t.pending_lots(event.group)
    if not any(set(tie) == set(event.order) for tie in ties):
        raise EntryError(
            "order",
            f"{', '.join(event.order)}: not a tie only a lot breaks in group {event.group} "
            f"({'; '.join(', '.join(t) for t in ties) or 'none'})",
        )


def not_standing(m: Fixture, named: Result | None) -> str:
    """Why an entry's `corrects` (or `voids`) is refused: it is not the result standing."""
    if m.result is None:
        return f"{m.id} has no result to set aside (it names {named.text() if named else '-'})"
    if named is None:
        return (
            f"{m.id} is {m.result.text()} already: a result over it is a correction "
            "(with the result it replaces and a reason)"
        )
    return f"{named.text()} is not the result {m.id} has ({m.result.text()})"
