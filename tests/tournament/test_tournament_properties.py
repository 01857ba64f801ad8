"""Properties of the tournament wing, searched by hypothesis: the round robin, the rounds at
the tables, the standings' order, and what a correction may change."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from timekeeper.tournament import clerk, schedule
from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.plan import Bracket, Groups
from timekeeper.tournament.results import Result
from timekeeper.tournament.rulesets import BUILT_IN, RuleSet
from timekeeper.tournament.spec import Player, Spec
from timekeeper.tournament.standings import standings
from timekeeper.tournament.state import Tournament

RULE_SETS = st.sampled_from([BUILT_IN["radegast"], BUILT_IN["hokejbal"], BUILT_IN["hokejbal-3pt"]])


def make_spec(
    players: int, tables: int = 4, size: int = 4, rules: str = "radegast", knockout: bool = False
) -> Spec:
    r = BUILT_IN[rules]
    return Spec(
        Path("/nonexistent/t.yaml"),
        "t",
        "",
        "",
        "",
        r,
        tuple(Player(f"P{i:02d}") for i in range(1, players + 1)),
        tuple(str(i) for i in range(1, tables + 1)),
        120.0,
        Groups(size, min(2, players // -(-players // size)), r.group_profile or ""),
        Bracket("seeded", True, r.knockout_profile, r.final_profile) if knockout else None,
    )


@given(st.integers(2, 14))
def test_every_pair_in_a_group_meets_exactly_once(size: int) -> None:
    players = [f"p{i}" for i in range(size)]
    met = Counter(frozenset(pair) for rnd in schedule.circle(players) for pair in rnd)
    assert set(met) == {frozenset(p) for p in itertools.combinations(players, 2)}
    assert set(met.values()) == {1}
    rounds = schedule.circle(players)
    assert len(rounds) == (size if size % 2 else size - 1)
    for rnd in rounds:  # a circle round: nobody twice, one bye at most
        seen = [n for pair in rnd for n in pair]
        assert len(seen) == len(set(seen)) >= size - 1


@given(st.lists(st.integers(2, 7), min_size=1, max_size=9), st.integers(1, 6))
@settings(max_examples=200)
def test_rounds_put_nobody_at_two_tables_and_leave_no_table_idle_for_nothing(
    sizes: list[int], tables: int
) -> None:
    groups = {chr(65 + g): [f"{chr(65 + g)}{i}" for i in range(n)] for g, n in enumerate(sizes)}
    pairings = schedule.group_matches(groups)
    rounds = schedule.lay_out(pairings, tables)
    placed = [p for rnd in rounds for p in rnd]
    assert sorted(p.id for p in placed) == sorted(p.id for p in pairings)  # each once
    for r, rnd in enumerate(rounds):
        assert len(rnd) <= tables
        names = [n for p in rnd for n in p.players]
        assert len(names) == len(set(names)), f"a player at two tables in round {r + 1}"
        if len(rnd) < tables:  # a table idles only when every later match needs a busy player
            later = [p for later_round in rounds[r + 1 :] for p in later_round]
            assert all(set(p.players) & set(names) for p in later)


@st.composite
def group_results(draw, rules: RuleSet) -> tuple[list[str], list[tuple[str, str, Result]]]:
    n = draw(st.integers(2, 6))
    players = [f"p{i}" for i in range(n)]
    played = []
    for home, away in itertools.combinations(players, 2):
        if not draw(st.booleans()) and draw(st.integers(0, 9)) == 0:
            continue  # now and then a match not played yet
        h, a = draw(st.integers(0, 4)), draw(st.integers(0, 4))
        decided = "regulation"
        if h == a and not rules.group_draws:
            decided = draw(st.sampled_from(["overtime", "shootout"]))
            h += 1
        played.append(
            (home, away, Result(h, a, decided))
            if draw(st.booleans())
            else (away, home, Result(a, h, decided))
        )
    return players, played


def _keys(rules: RuleSet, row) -> dict[str, int]:
    return {
        "points": row.points,
        "goal_difference": row.goal_difference,
        "goals_for": row.goals_for,
        "goals_against": -row.goals_against,
        "wins": row.won + row.ot_won,
    }


@given(st.data(), RULE_SETS)
def test_standings_are_a_total_order_decided_by_the_seeds_tie_breakers(data, rules) -> None:
    players, played = data.draw(group_results(rules))
    rows = standings(players, played, rules)
    assert sorted(r.player for r in rows) == sorted(players)
    assert [r.place for r in rows] == list(range(1, len(players) + 1))
    order = rules.tiebreakers
    for upper, lower in itertools.pairwise(rows):
        by = upper.ahead_by
        assert by in order
        a, b = _keys(rules, upper), _keys(rules, lower)
        for criterion in order[: order.index(by)]:  # level on every criterion before it
            if criterion != "head_to_head":
                assert a[criterion] == b[criterion], (criterion, upper, lower)
        if by in a:
            assert a[by] > b[by]
        if by == "lot":
            assert upper.lot == lower.lot == "pending"
    # the order of the results typed in does not matter (only a lot's order could)
    again = standings(players, list(reversed(played)), rules)
    assert [r.player for r in again if r.lot != "pending"] == [
        r.player for r in rows if r.lot != "pending"
    ]


@given(st.data())
@settings(max_examples=60)
def test_a_correction_changes_the_standings_and_nothing_else(data) -> None:
    rules = data.draw(st.sampled_from(["radegast", "hokejbal", "hokejbal-3pt"]))
    spec = make_spec(data.draw(st.integers(4, 16)), data.draw(st.integers(1, 4)), rules=rules)
    t = Tournament(spec)
    t.apply(clerk.draw(t, data.draw(st.integers(0, 10**6))))
    ids = sorted(t.group_matches)

    def score() -> str:
        h, a = data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5))
        return f"{h}:{a if h != a or spec.rules.group_draws else a + 1}"

    for match in ids:
        m = t.fixture(match)
        t.apply(clerk.result(t, m.slot.round, m.slot.table, score()))
    before = Tournament(spec, t.events)
    target = t.fixture(data.draw(st.sampled_from(ids)))
    new = score()
    if f"{target.result.home}:{target.result.away}" == new:
        return
    t.apply(clerk.result(t, target.slot.round, target.slot.table, new, reason="typo"))
    group = t.group_matches[target.id].group
    assert t.slots == before.slots and t.group_matches == before.group_matches  # the rounds stand
    for match in ids:  # every other result stands
        if match != target.id:
            assert t.results[match] == before.results[match]
    for g in t.groups:  # the other groups' standings stand
        if g != group:
            assert [vars(r) for r in t.standings(g)] == [vars(r) for r in before.standings(g)]
    fresh = Tournament(spec, [e for e in before.events if e not in before.history(target.id)])
    fresh.apply(replace(t.events[-1], corrects=None))  # as if typed so the first time
    assert [vars(r) for r in t.standings(group)] == [vars(r) for r in fresh.standings(group)]
    last = t.history(target.id)[-1]
    assert isinstance(last, ResultEvent) and last.reason == "typo"  # the history keeps both
    assert len(t.history(target.id)) == 2


def test_16_and_32_players_on_4_tables_never_play_two_group_rounds_in_a_row() -> None:
    """The bench's figures, held: groups of four, no idle table in the group stage; with 8
    players every round needs all 8 (the numbers allow no rest)."""
    for players, rounds, back in ((8, 3, 16), (16, 6, 0), (32, 12, 0)):
        t = Tournament(make_spec(players))
        t.apply(clerk.draw(t, 1))
        by_round = [
            [t.group_matches[s.match] for s in t.slots if s.round == r]
            for r in range(1, rounds + 1)
        ]
        f = schedule.measure(by_round, 4)
        assert (f.rounds, f.idle, f.back_to_back, len(t.slots)) == (
            rounds,
            0,
            back,
            len(t.group_matches),
        )
