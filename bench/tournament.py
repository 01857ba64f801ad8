"""The evening's figures: how the rounds lie on the tables for 8, 16 and 32 players on 4
tables (groups of four, the top two to a knock-out with a final and a 3rd-place match).

    .venv/bin/python bench/tournament.py [--rules radegast] [--tables 4] [--more]
    .venv/bin/python bench/tournament.py --world [--best-of 7]
    .venv/bin/python bench/tournament.py --series

Prints, per field: the rounds (group stage + knock-out), the idle table-rounds (a table with
no match in a round; group stage + knock-out), how many times a player plays two group rounds
in a row and how many players ever do, and the evening's length: every round is as long as
its profile's match (playing time and breaks between periods) plus the changeover (120 s).
The `first-fit` line lays the same matches out group by group without the rest rule, for
comparison. `--more` adds fields whose numbers do not divide evenly (10, 12, 20, 24, 30).

`--world`: an ITHF world-tour day, 120 players in 8 basic groups of 15 on 30 tables, final
group A (the top two of each, results carried) and placement groups B, C, D (3rd-4th,
5th-6th, 7th-8th), the A play-off of 16 and B/C/D play-offs of 8; played through with
seeded random scores. Prints the rounds, idle table-rounds, the longest wait of a player
between two matches, the day's length with 5-minute games and a 1-minute changeover, the
play-offs' worst case if every match is a series of --best-of games (A) and --best-of-b
(B, C, D) played game after game at one table, and the time to recompute every standing
after a result once every group is full (target: 50 ms).

`--series`: a world-tour day's play-offs in series (tournament/series.py): the A play-off of
16 best of seven (its 3rd place best of five) on 8 tables, the B, C and D play-offs of 8 best
of five on 4 tables each, ITHF play-off games (5 minutes) and a 1-minute changeover: the
series, the rounds, the most games, and each play-off's shortest and longest (every series to
its last game) length, one series level after another."""

from __future__ import annotations

import argparse
import itertools
import random
import time
from pathlib import Path

from timekeeper.tournament import clerk, results, schedule
from timekeeper.tournament.draw import random_draw
from timekeeper.tournament.evening import evening, round_lengths, series_worst
from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.plan import Bracket, Groups, Place, RoundRobin
from timekeeper.tournament.results import Result
from timekeeper.tournament.rulesets import BUILT_IN
from timekeeper.tournament.spec import Player, Spec
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
        Groups(4, 3 if tree == "vht6" else 2, r.group_profile or ""),
        Bracket(tree, r.third_place, r.knockout_profile, r.final_profile),
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
        Bracket("seeded", True, "ithf-playoff", "ithf-playoff", (), best_of),
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


def world(players: int = 120, size: int = 15, tables: int = 30) -> Spec:
    """The world-tour day: basic groups, A carrying, B/C/D not, play-offs from each."""
    r = BUILT_IN["ithf"]
    basic = [str(n) for n in range(1, -(-players // size) + 1)]
    later = tuple(
        RoundRobin(name, tuple(Place(g, p) for p in places for g in basic), name == "A", "ithf")
        for name, places in (("A", (1, 2)), ("B", (3, 4)), ("C", (5, 6)), ("D", (7, 8)))
    )
    playoffs = tuple(
        Bracket(
            "seeded",
            True,
            "ithf-playoff",
            "ithf-playoff",
            name=g,
            groups=(g,),
            top=top,
            prefix="" if g == "A" else f"{g}.",
        )
        for g, top in (("A", 16), ("B", 8), ("C", 8), ("D", 8))
    )
    return Spec(
        Path("world.yaml"),
        "world tour",
        "",
        "",
        "",
        r,
        tuple(Player(f"P{i:03d}") for i in range(1, players + 1)),
        tuple(str(i) for i in range(1, tables + 1)),
        60.0,
        Groups(size, 2, "ithf", "snake"),
        None,
        later=later,
        playoffs=playoffs,
    )


def play_through(t: Tournament, seed: int = 1) -> None:
    """Every match with a seeded random score, in round order; a lot where a tie needs one."""
    rng = random.Random(seed)
    while True:
        todo = [m for m in t.fixtures() if m.result is None and m.home and m.away]
        if not todo:
            pending = [g for g in t.groups if t.pending_lots(g)]
            if not pending:
                return
            t.apply(clerk.lot(t, pending[0], None, rng.randrange(1000)))
            continue
        for m in todo[: len(t.spec.tables)]:
            x, y = rng.randint(0, 4), rng.randint(0, 4)
            how = "regulation"
            if m.knockout and x == y:
                x, how = x + 1, "sudden_death"
            result = results.make(t.spec.rules, m.knockout, f"{x}:{y}", how)
            t.apply(ResultEvent(m.id, m.slot.round, m.slot.table, result))


def longest_wait(t: Tournament) -> tuple[int, str]:
    """The most rounds a player sits between two of their matches (group stages and
    play-off alike), and who."""
    rounds: dict[str, list[int]] = {}
    for m in t.fixtures():
        for name in (m.home, m.away):
            if name:
                rounds.setdefault(name, []).append(m.slot.round)
    best = (0, "")
    for name, played in rounds.items():
        played.sort()
        for a, b in itertools.pairwise(played):
            best = max(best, (b - a - 1, name))
    return best


def main_world(best_of: int, best_of_b: int) -> None:
    spec = world()
    t = Tournament(spec)
    t.apply(make_draw(spec, seed=1, ranking=list(spec.names)))
    started = time.perf_counter()
    play_through(t)
    played_for = time.perf_counter() - started
    tables = len(spec.tables)
    used = sorted({s.round for s in t.slots})
    idle = sum(tables - sum(1 for s in t.slots if s.round == r) for r in used)
    group_rounds = sorted({s.round for s in t.slots if s.match in t.group_matches})
    wait, who = longest_wait(t)
    round_minutes = 5 + 1
    series = 0  # the play-offs as series: each round's longest, game after game
    for r in used:
        nodes = [t.nodes[s.match] for s in t.slots if s.round == r and s.match in t.nodes]
        if nodes:
            series += max(best_of if "." not in n.id else best_of_b for n in nodes)
    single = len(used) * round_minutes
    worst = (len(group_rounds) + series) * round_minutes
    # recompute after a result with every group full: a correction, then every table
    last = next(m for m in t.fixtures() if m.stage == "group 1")
    r0 = t.results[last.id]
    samples = []
    for i in range(20):
        standing = t.results[last.id]
        fresh = Result(r0.home + 1 + i % 2, r0.away, "regulation")
        started = time.perf_counter()
        t.apply(
            ResultEvent(
                last.id,
                last.slot.round,
                last.slot.table,
                fresh,
                reason="misread",
                corrects=standing,
            )
        )
        for g in t.groups:
            t.standings(g)
        t.placings()
        samples.append(time.perf_counter() - started)
    samples.sort()
    print("ITHF world-tour day: 120 players, 8 basic groups of 15, 30 tables")
    print(
        "  final group A (1st-2nd, carried), placement B, C, D (3rd-8th); play-offs A 16, B/C/D 8"
    )
    print(f"{'figure':<52} {'value':>12}")
    rows = [
        (
            "rounds (group stages + play-offs)",
            f"{len(group_rounds)} + {len(used) - len(group_rounds)}",
        ),
        ("matches", f"{len(t.slots)}"),
        ("idle table-rounds", f"{idle}"),
        ("longest wait between two matches (rounds)", f"{wait} ({who})"),
        ("longest wait (minutes, 5 + 1 a round)", f"{wait * round_minutes}"),
        ("day's length, single games (5 min + 1 min)", _hm(single * 60.0)),
        (
            f"day's length, play-offs best of {best_of} (A) / {best_of_b}, worst case",
            _hm(worst * 60.0),
        ),
        (
            "recompute every standing + placings after a result, median",
            f"{samples[10] * 1000:.1f} ms",
        ),
        ("… worst of 20", f"{samples[-1] * 1000:.1f} ms"),
        ("(playing the day through, for the record)", f"{played_for:.1f} s"),
    ]
    for name, value in rows:
        print(f"{name:<52} {value:>12}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="radegast", choices=tuple(BUILT_IN))
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--more", action="store_true")
    p.add_argument("--world", action="store_true", help="the ITHF world-tour day")
    p.add_argument("--best-of", type=int, default=7, help="--world: the A play-off's series")
    p.add_argument("--best-of-b", type=int, default=5, help="--world: B/C/D's series")
    p.add_argument("--series", action="store_true", help="the play-offs in series")
    args = p.parse_args()
    if args.world:
        main_world(args.best_of, args.best_of_b)
        return
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
