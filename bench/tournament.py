"""The evening's figures: how the rounds lie on the tables for 8, 16 and 32 players on 4
tables (groups of four, the top two to a knock-out with a final and a 3rd-place match).

    .venv/bin/python bench/tournament.py [--rules radegast] [--tables 4] [--more]
    .venv/bin/python bench/tournament.py --series


Prints, per field: the rounds (group stage + knock-out), the idle table-rounds (a table with
no match in a round; group stage + knock-out), how many times a player plays two group rounds
in a row and how many players ever do, and the evening's length: every round is as long as
its profile's match (playing time and breaks between periods) plus the changeover (120 s).
The `first-fit` line lays the same matches out group by group without the rest rule, for
comparison. `--more` adds fields whose numbers do not divide evenly (10, 12, 20, 24, 30).

`--series`: a world-tour day's play-offs in series (tournament/series.py): the A play-off of
16 best of seven (its 3rd place best of five) on 8 tables, the B, C and D play-offs of 8 best
of five on 4 tables each, ITHF play-off games (5 minutes) and a 1-minute changeover: the
series, the rounds, the most games, and each play-off's shortest and longest (every series to
its last game) length, one series level after another."""

from __future__ import annotations

import argparse
from pathlib import Path

from timekeeper.tournament import schedule
from timekeeper.tournament.draw import random_draw
from timekeeper.tournament.evening import evening, round_lengths, series_worst
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


def playoff(players: int, tables: int, best_of: dict[str, int]) -> Tournament:
    """A play-off drawn alone (seeds 1 … players) in series, on its own tables."""
    r = BUILT_IN["radegast"]
    spec = Spec(
        Path("bench.yaml"),
        "play-off",
        "",
        "",
        "",
        r,
        tuple(Player(f"P{i}") for i in range(1, players + 1)),
        tuple(str(i) for i in range(1, tables + 1)),
        60.0,
        None,
        Knockout("seeded", True, "ithf-playoff", "ithf-playoff", (), best_of),
    )
    t = Tournament(spec)
    t.apply(make_draw(spec, seed=1))
    return t


def series_table() -> None:
    print("play-offs in series: ITHF play-off games (5 min), changeover 1 min")
    print(
        f"{'play-off':<9} {'players':>7} {'best of':>10} {'series':>7} {'tables':>7} {'rounds':>7} "
        f"{'games at most':>14} {'shortest':>9} {'longest':>8}"
    )
    sizes = (("A", 16, {"default": 7, "3P": 5}), *((x, 8, {"default": 5}) for x in "BCD"))
    for name, players, best_of in sizes:
        t = playoff(players, players // 2, best_of)
        worst = series_worst(t)
        lengths = round_lengths(t)
        game = {
            r: length / max(t.best_of(s.match) for s in t.slots if s.round == r)
            for r, length in lengths.items()
        }
        shortest = sum(
            game[r] * max(t.best_of(s.match) // 2 + 1 for s in t.slots if s.round == r)
            for r in lengths
        )
        most = sum(t.best_of(n) for n in t.nodes)
        label = "7 (3P 5)" if name == "A" else "5"
        print(
            f"{name:<9} {players:>7} {label:>10} {len(t.nodes):>7} {players // 2:>7} "
            f"{len(lengths):>7} {most:>14} {_hm(shortest):>9} {_hm(worst):>8}"
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
    p.add_argument("--series", action="store_true", help="the play-offs in series")
    args = p.parse_args()
    if args.series:
        series_table()
        return
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
