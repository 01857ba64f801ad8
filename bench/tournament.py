"""The evening's figures: how the rounds lie on the tables for 8, 16 and 32 players on 4
tables (groups of four, the top two to a knock-out with a final and a 3rd-place match).

    .venv/bin/python bench/tournament.py [--rules radegast] [--tables 4] [--more]

Prints, per field: the rounds (group stage + knock-out), the idle table-rounds (a table with
no match in a round; group stage + knock-out), how many times a player plays two group rounds
in a row and how many players ever do, and the evening's length: every round is as long as
its profile's match (playing time and breaks between periods) plus the changeover (120 s).
The `first-fit` line lays the same matches out group by group without the rest rule, for
comparison. `--more` adds fields whose numbers do not divide evenly (10, 12, 20, 24, 30)."""

from __future__ import annotations

import argparse
from pathlib import Path

from timekeeper.tournament import schedule
from timekeeper.tournament.draw import random_draw
from timekeeper.tournament.evening import evening
from timekeeper.tournament.rulesets import BUILT_IN
from timekeeper.tournament.spec import GroupStage, Knockout, Player, Spec
from timekeeper.tournament.state import Tournament, make_draw


def field(players: int, tables: int, rules: str) -> Spec:
    r = BUILT_IN[rules]
    groups = -(-players // 4)
    tree = (
        "vht6"
        if r.tree == "vht6" and groups == 2
        else "cross"
        if _power_of_two(groups)
        else "seeded"
    )
    return Spec(
        Path("bench.yaml"),
        f"{players} players",
        "",
        "",
        "",
        r,
        tuple(Player(f"P{i}") for i in range(1, players + 1)),
        tuple(str(i) for i in range(1, tables + 1)),
        120.0,
        GroupStage(4, 3 if tree == "vht6" else 2, r.group_profile or ""),
        Knockout(tree, r.third_place, r.knockout_profile, r.final_profile),
    )


def _power_of_two(n: int) -> bool:
    return n > 0 and not n & (n - 1)


def _hm(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60}:{minutes % 60:02d}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="radegast", choices=tuple(BUILT_IN))
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--more", action="store_true")
    args = p.parse_args()
    counts = [8, 16, 32] + ([10, 12, 20, 24, 30] if args.more else [])
    print(f"rule set {args.rules}, {args.tables} tables, groups of 4, changeover 2 min")
    print(
        f"{'players':>7} {'layout':<10} {'rounds':>11} {'idle':>7} {'twice in a row':>15} "
        f"{'players':>8} {'evening':>8}"
    )
    for players in counts:
        t = Tournament(field(players, args.tables, args.rules))
        t.apply(make_draw(t.spec, seed=1))
        e = evening(t)
        print(
            f"{players:>7} {'ours':<10} {e.group_rounds:>4} + {e.knockout_rounds:<4} "
            f"{e.group_idle:>3} + {e.idle - e.group_idle:<1} {e.back_to_back:>15} "
            f"{e.tired:>8} {_hm(e.seconds):>8}"
        )
        groups = random_draw(t.spec.names, -(-players // 4), 1).groups
        baseline = schedule.lay_out(
            schedule.group_matches(groups), args.tables, (schedule._first_fit,)
        )
        f = schedule.measure(baseline, args.tables)
        print(
            f"{'':>7} {'first-fit':<10} {f.rounds:>4} {'':<6} {f.idle:>3}     "
            f"{f.back_to_back:>15} {f.tired:>8}"
        )


if __name__ == "__main__":
    main()
