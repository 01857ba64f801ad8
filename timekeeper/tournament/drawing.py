"""The draw event made from the plan (every group match, the trees, every match's round and
table, all fixed now), and a draw read from the ledger checked for parts that agree."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from timekeeper.tournament import bracket, plan, schedule, series, stages
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.draw import Draw, hand_draw, pots_draw, random_draw, snake_draw
from timekeeper.tournament.events import DrawEvent, EntryError, Later
from timekeeper.tournament.plan import Loser, Place, Seat, Seed, Winner
from timekeeper.tournament.schedule import Slot
from timekeeper.tournament.spec import Spec


def make_draw(
    spec: Spec,
    seed: int,
    ranking: Sequence[str] | None = None,
    time: str | None = None,
    entries: Mapping[str, Mapping[str, Any]] | None = None,
    ranking_date: str | None = None,
) -> DrawEvent:
    """The draw event: groups (or the knock-out's seed order), every group match, the tree,
    and every match's round and table — all fixed now, so that the rounds never change
    under the players even if a later version lays them out differently. `entries`: the
    ranking list's line of each ranked player (kept for the ITHF form); `ranking_date`: the
    ITHF ranking's date (YYYY-MM-DD), printed on the sheets and exports."""
    g = spec.groups
    groups = g.count(len(spec.players)) if g else 0
    unranked = g.unranked if g else ()
    drawn: Draw = (
        hand_draw(g.by_hand, seed)
        if g and g.by_hand
        else random_draw(spec.names, groups, seed)
        if ranking is None
        else snake_draw(spec.names, ranking, groups, seed, unranked)
        if g and g.seeding == "snake"
        else pots_draw(spec.names, ranking, groups, seed, unranked)
    )
    if spec.later and g:  # a staged day: basic groups 1, 2, 3 …, later A, B …
        named = g.names(len(spec.players))
        drawn = replace(drawn, groups=dict(zip(named, drawn.groups.values(), strict=True)))
    matches = schedule.group_matches(drawn.groups)
    rounds = schedule.lay_out(matches, len(spec.tables))
    slots = schedule.slots(rounds, spec.tables)
    nodes: list[Node] = []
    if spec.later:
        later = [m for lg in spec.later for m in stages.later_matches(lg)]
        later_rounds = schedule.lay_out(later, len(spec.tables))
        slots += schedule.slots(later_rounds, spec.tables, len(rounds) + 1)
        matches += later
        nodes = [n for p in spec.playoffs for n in stages.playoff_nodes(p)]
        if nodes:
            slots += _knockout_slots(nodes, spec.tables, len(rounds) + len(later_rounds) + 1)
    if spec.knockout:
        k = spec.knockout
        nodes = bracket.build(
            k.tree,
            {name: len(p) for name, p in drawn.groups.items()},
            g.advance if g else 0,
            k.third_place,
            len(spec.players),
            k.pairs,
        )
        nodes = [dataclasses.replace(n, best_of=series.best_of_for(n.id, k.best_of)) for n in nodes]
        slots += _knockout_slots(nodes, spec.tables, len(rounds) + 1)
    return DrawEvent(
        seed,
        drawn.method,
        {name: tuple(p) for name, p in drawn.groups.items()},
        tuple(drawn.order),
        tuple(matches),
        tuple(nodes),
        tuple(slots),
        spec.rules.scoring(),
        time,
        later={lg.name: Later(lg.seats, lg.carry) for lg in spec.later} or None,
        ranking={name: dict(e) for name, e in (entries or {}).items()} or None,
        ranking_date=ranking_date,
    )


def _knockout_slots(nodes: list[Node], tables: tuple[str, ...], first: int) -> list[Slot]:
    """The tree round by round; placement matches (VHT's second-to-last place) fill a free
    table where they delay nothing, the 3rd place comes before the final, which is played
    last and at the first table."""

    def kind(n: Node) -> int:
        return 3 if n.final else 2 if n.places == (3, 4) else 1 if n.places else 0

    order = sorted(nodes, key=lambda n: (kind(n), n.level))
    placed = schedule.place_after([(n.id, n.needs) for n in order], tables, first)
    out: list[Slot] = []
    for r in sorted({s.round for s in placed}):
        here = sorted((s for s in placed if s.round == r), key=lambda s: s.match != "F")
        out += [Slot(r, tables[i], s.match) for i, s in enumerate(here)]
    return out


def differs(spec: Spec, event: DrawEvent) -> str | None:
    """Why a file no longer fits the draw in its ledger (its players, tables or scoring
    changed since), or None: a drawn tournament keeps them."""
    if set(event.order) != set(spec.names):
        return (
            "the file's players are not those of the draw in the ledger; a drawn tournament "
            "keeps its players (rename back, or start a new tournament file)"
        )
    missing = {s.table for s in event.slots} - set(spec.tables)
    if missing:
        return (
            f"the draw in the ledger plays at tables {', '.join(sorted(missing))}, which the "
            "file no longer names; a drawn tournament keeps its tables"
        )
    drawn_under = event.rules  # (ledgers from before it was kept: not checked)
    if drawn_under is None:
        return None
    scoring = spec.rules.scoring().items()
    changed = [k for k, v in scoring if k != "key" and drawn_under.get(k) != v]
    if not changed:
        return None
    return (
        f"{spec.file}: rules: {spec.rules.key} does not score as the "
        f"{drawn_under.get('key')} rules the draw was made under ({', '.join(changed)} "
        "differ); a drawn tournament keeps its rules, so that no result already "
        "played is counted anew (put the rules back, or start a new tournament file)"
    )


def check_draw(event: DrawEvent) -> None:
    """A draw's parts agree with each other: every player in one group at most, every
    match between two players of its group, every knock-out side a place, seed or match
    there is, every match at one round and table and no two at the same. A draw made here
    always does; one edited by hand is refused, naming the part."""
    order = set(event.order)
    seen: set[str] = set()
    for g, players in event.groups.items():
        for p in players:
            if p not in order or p in seen:
                raise EntryError(f"groups.{g}", f"{p!r} is not in the order, or in two groups")
            seen.add(p)
    if event.groups and seen != order:
        raise EntryError("groups", "every player of the order is in a group")
    later = event.later or {}
    for name, lg in later.items():
        for i, seat in enumerate(lg.seats):
            if not 1 <= seat.place <= len(event.groups.get(seat.group, ())):
                raise EntryError(
                    f"later.{name}.seats[{i}]", f"group {seat.group} has no place {seat.place}"
                )
    ids: set[str] = set()
    for i, m in enumerate(event.matches):
        members = event.groups.get(m.group) or _seats(event, m.group)  # (a later group's seats)
        if m.id in ids or m.home not in members or m.away not in members or m.home == m.away:
            raise EntryError(
                f"matches[{i}]",
                f"{m.id}: a match of its own id between two players of group {m.group}",
            )
        ids.add(m.id)
    nodes = {n.id: n for n in event.knockout}
    for i, n in enumerate(event.knockout):
        if n.id in ids:
            raise EntryError(f"knockout[{i}].id", f"{n.id} is named twice")
        ids.add(n.id)
        for side, source in (("home", n.home), ("away", n.away)):
            if not _source_ok(source, n, nodes, event):
                raise EntryError(f"knockout[{i}].{side}", f"{source!r} names no side there is")
    for i, n in enumerate(event.knockout):  # (each play-off of a staged day: its own places)
        prefix = n.id[: n.id.index(".") + 1] if "." in n.id else ""
        places = [
            p
            for k in event.knockout
            if k.places and (k.id[: k.id.index(".") + 1] if "." in k.id else "") == prefix
            for p in k.places
        ]
        if n.final != (n.places == (1, 2)) or len(set(places)) != len(places):
            raise EntryError(
                f"knockout[{i}].places",
                "each final place decided by one match; the final (and only it) decides 1 and 2",
            )
    where: set[tuple[int, str]] = set()
    placed: set[str] = set()
    for i, s in enumerate(event.slots):
        if (s.round, s.table) in where or s.match not in ids or s.match in placed:
            raise EntryError(
                f"slots[{i}]",
                f"round {s.round} table {s.table} {s.match}: one match of the draw a slot, "
                "one slot a match",
            )
        where.add((s.round, s.table))
        placed.add(s.match)
    if placed != ids:
        raise EntryError("slots", f"{sorted(ids - placed)[0]} has no round and table")


def _seats(event: DrawEvent, group: str) -> tuple[str, ...]:
    """A final or placement group's seats by the text its matches name them with."""
    lg = (event.later or {}).get(group)
    return tuple(plan.text(s) for s in lg.seats) if lg else ()


def _source_ok(source: Seat, node: Node, nodes: dict[str, Node], event: DrawEvent) -> bool:
    match source:
        case Winner(match) | Loser(match):
            before = nodes.get(match)
            return before is not None and before.level < node.level
        case Seed(number):
            return 1 <= number <= len(event.order)
        case Place(group, place):
            later = (event.later or {}).get(group)
            size = (
                len(event.groups[group])
                if group in event.groups
                else len(later.seats)
                if later
                else 0
            )
            return 1 <= place <= size
    return False
