"""An ITHF day of 32 players as the desk runs it: the ranking file read and the snake drawn,
4 basic groups of 8, final group A (the top two of each, their mutual results carried),
placement group B (the next two, everything played anew), the A play-off of 8 with the
bronze match; standings checked against values computed by hand (the carried results, the
head-to-head mini-table re-applied to those still level), every player placed once, and
the ITHF list. `new`, `draw`, `standings`, `bracket`, `export` and the play-off's games in
sudden death run as separate processes, as typed; the other results are typed through the
same command line in this process (170 of them: a process each would take minutes)."""

from __future__ import annotations

import csv
import json
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import ithfranking
import pytest
from cups import ithf_final_group, ithf_placement_group
from helpers import ROOT, TESTS, dollar_steps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timekeeper import cli
from timekeeper.tournament import ranking, spec
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.plan import Place
from timekeeper.tournament.results import Result
from timekeeper.tournament.rulesets import ITHF
from timekeeper.tournament.standings import standings
from timekeeper.tournament.state import Tournament

DOCS = ROOT / "docs" / "tournament.md"


def doc_steps(block: int) -> list[tuple[str, list[str]]]:
    """The `$` commands of the section "An ITHF tournament"'s `block`-th plain fenced block,
    each with the lines it shows (up to a `…`)."""
    section = DOCS.read_text(encoding="utf-8").split("## An ITHF tournament", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = section.split("```\n")[1::2]
    return dollar_steps(blocks[block])


def run_doc(cwd: Path, block: int) -> None:
    """Each command as written, in its own process; what it prints as the page shows it."""
    for command, shown in doc_steps(block):
        argv = shlex.split(command)
        assert argv[:2] == ["timekeeper", "tournament"], command
        printed = [line.rstrip() for line in run(cwd, *argv[2:]).splitlines()]
        if "…" in shown:
            shown = shown[: shown.index("…")]
            printed = printed[: len(shown)]
        assert printed == [line.rstrip() for line in shown], command


TIMEKEEPER = str(Path(sys.executable).with_name("timekeeper"))


def run(cwd: Path, *argv: str) -> str:
    done = subprocess.run(
        [TIMEKEEPER, "tournament", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


def typed(file: Path, round_: int, table: str, score: str, *how: str) -> None:
    argv = ["tournament", "result", str(round_), table, score, *how, "-f", str(file)]
    assert cli.main(argv) == 0, argv


def load(file: Path) -> Tournament:
    return open_tournament(file)[0]


@pytest.fixture
def day(tmp_path: Path) -> Path:
    for name in ("players.txt", "ranking.txt"):
        shutil.copy(TESTS / "ithf" / name, tmp_path / name)
    run_doc(tmp_path, 0)  # docs/tournament.md: new, draw from the ranking, a first result
    return tmp_path / "day.yaml"


def play_group(file: Path, group: str, score) -> None:
    """Every match of the group, its score by `score(home, away)`."""
    t = load(file)
    for m in [f for f in t.fixtures() if f.stage == f"group {group}" and f.result is None]:
        assert m.home and m.away, m.id
        typed(file, m.slot.round, m.slot.table, score(m.home, m.away))


@pytest.mark.slow
def test_an_ithf_day_of_32_from_the_ranking_to_the_ithf_list(day: Path) -> None:
    folder = day.parent
    t = load(day)
    # the snake: ranks 1, 8, 9, 16 … in group 1; 2, 7, 10, 15 … in group 2; unranked last
    assert t.basic["1"][:4] == ("Jan Novák", "Jurgen Muller", "Paweł Łukasik", "Oleg Ivanov")
    assert t.basic["4"][:2] == ("Mikko Virtanen", "Janis Berzins")
    assert {g[-1] for g in t.basic.values()} == {
        "Karel Nový",
        "Emma Lind",
        "Olli Rantanen",
        "Mia Berg",
    }
    assert len([m for m in t.group_matches.values() if m.group == "A"]) == 24  # 28 - 4 carried
    assert len([m for m in t.group_matches.values() if m.group == "B"]) == 28  # all anew

    # basic groups: the better seed (earlier in the group) wins 1:0
    for g, players in t.basic.items():
        play_group(day, g, lambda h, a, p=players: "1:0" if p.index(h) < p.index(a) else "0:1")
    t = load(day)
    a = [t.basic[g][0] for g in "1234"]  # a1 … a4: the winners
    b = [t.basic[g][1] for g in "1234"]  # b1 … b4: the runners-up
    c = [t.basic[g][2] for g in "1234"]
    d = [t.basic[g][3] for g in "1234"]
    assert t.groups["A"] == (*a, *b)  # interleaved: every winner, then every runner-up
    assert len(t.carried("A")) == 4 and t.carried("B") == []

    # final group A and placement group B scored by hand (tests/cups.py)
    in_a = ithf_final_group(a, b)
    play_group(day, "A", in_a)

    in_b = ithf_placement_group(c, d)
    play_group(day, "B", in_b)
    t = load(day)
    rows = t.standings("A")
    # by hand: a1 9; a2, a3, a4 8 each: head-to-head points a2 4, a3 1, a4 1; a3 and a4
    # again between themselves (2:2): level, so goal difference (+1 each), goals (9 to 7)
    assert [(r.player, r.points, r.ahead_by) for r in rows] == [
        (a[0], 9, "points"),
        (a[1], 8, "head_to_head"),
        (a[3], 8, "goals_for"),
        (a[2], 8, "points"),
        (b[2], 7, "points"),
        (b[0], 6, "points"),
        (b[3], 5, "goal_difference"),
        (b[1], 5, ""),
    ]
    assert [r.played for r in rows] == [7] * 8  # 6 played here, 1 carried, counted once
    assert (rows[2].goals_for, rows[2].goals_against, rows[3].goals_for) == (9, 8, 7)
    rows_b = t.standings("B")
    assert [(r.player, r.points) for r in rows_b] == [
        (c[0], 12),
        (c[1], 10),
        (c[2], 8),
        (d[0], 8),
        (c[3], 6),
        (d[1], 6),
        (d[2], 4),
        (d[3], 2),
    ]
    assert [r.played for r in rows_b] == [7] * 8  # nothing carried into a placement group
    shown = run(folder, "standings", "A", "-f", "day.yaml")
    assert "group A (final group, 4 results carried from the basic groups)" in shown
    assert f"3. {a[3]}" in shown and "(ahead on goals for)" in shown

    # the A play-off as the file from `new` has it: every match best of seven, the bronze
    # best of five; A1–A8, A4–A5, A2–A7, A3–A6; the home side wins but A5 and, in the
    # final, A2, each with a game in sudden death (typed as a separate process)
    seeds = [r.player for r in rows]
    won = ("2:1",) * 4
    plays = {
        "QF1": won,
        "QF2": ("1:0", "2:3 --sd", "0:1", "1:2", "0:2"),
        "QF3": won,
        "QF4": won,
        "SF1": won,
        "SF2": ("3:1",) * 4,
        "3P": ("2:1",) * 3,
        "F": ("1:2 --sd", "0:1", "1:0", "0:1", "0:1"),
    }
    for match, games in plays.items():
        m = load(day).fixture(match)
        assert m.home and m.away, match
        for game in games:
            if "--sd" in game:
                run(folder, "result", match, *game.split(), "-f", "day.yaml")
            else:
                typed(day, m.slot.round, m.slot.table, game)
    t = load(day)
    assert t.fixture("SF1").home == seeds[0] and t.fixture("SF1").away == seeds[4]
    places = t.placings()
    assert [n for _, n in places[:8]] == [
        seeds[1],
        seeds[0],
        seeds[4],
        seeds[2],
        seeds[3],
        seeds[5],
        seeds[6],
        seeds[7],
    ]
    assert [n for _, n in places[8:16]] == [r.player for r in rows_b]
    assert [n for _, n in places[16:]] == list(t.order[16:])
    assert sorted(n for _, n in places) == sorted(t.spec.names)
    assert [p for p, _ in places] == list(range(1, 33))
    assert "final standings:" in run(folder, "bracket", "-f", "day.yaml")

    run_doc(folder, 1)  # docs/tournament.md: the end of the day, as the page shows it
    out = folder / "day-export"
    with open(out / "final.csv", encoding="utf-8") as stream:
        final = list(csv.DictReader(stream))
    winner = ranking.match(ranking.read(folder / "ranking.txt"), [seeds[1]]).entries[seeds[1]]
    assert [final[0][k] for k in ("place", "ithf_id", "ithf_name", "club", "nation")] == [
        "1",
        winner.id,
        winner.name,
        winner.club,
        winner.nation,
    ]
    assert [r["place"] for r in final] == [str(n) for n in range(1, 33)]
    unranked = [r["player"] for r in final if not r["ithf_id"]]
    assert sorted(unranked) == sorted(t.order[28:])
    form = (out / "ithf-form.txt").read_text(encoding="utf-8").split("\nStandings:\n")[1]
    assert form.split("\n\n")[0].splitlines() == [r["ithf_name"] or r["player"] for r in final]
    saved = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    assert len(saved["carried"]["A"]) == 4 and "B" not in saved["carried"]
    assert [r["player"] for r in saved["groups"]["A"]] == seeds
    sheet = (out / "groups.html").read_text(encoding="utf-8")
    assert "carried from the basic group" in sheet and "Group A" in sheet and "Group 1" in sheet
    assert sheet.count("class=cross") == 6  # the 4 basic groups, A and B


def _carried_day(seed: int, folder: Path) -> Tournament:
    """A day drawn and played with random scores (seeded): 16 to 32 players, final group A
    and placement group B, play-offs of random sizes, lots drawn where a tie needs one."""
    from timekeeper.tournament import clerk

    rng = random.Random(seed)
    count = rng.choice([16, 18, 24, 32])
    names = [f"P{i:02d}" for i in range(count)]
    top = min(rng.choice([2, 3, 4, 5, 6, 8]), 2 * -(-count // 8))
    file = folder / f"random{seed}.yaml"
    file.write_text(
        f"rules: ithf\ntables: {rng.randint(2, 6)}\nplayers: [{', '.join(names)}]\n"
        "stages:\n  groups: {size: 8}\n  final:\n    A: {places: [1, 2]}\n"
        "  placement:\n    B: {places: [3, 4]}\n  playoffs:\n"
        f"    A: {{top: {top}}}\n    B: {{top: 3}}\n",
        encoding="utf-8",
    )
    t = Tournament(spec.load(file))
    t.apply(clerk.draw(t, seed, names[: count // 2]))
    for _ in range(2000):
        todo = [m for m in t.fixtures() if m.result is None and m.home and m.away]
        if not todo:
            pending = [g for g in t.groups if t.pending_lots(g)]
            if not pending:
                break
            t.apply(clerk.lot(t, pending[0], None, rng.randrange(1000)))
            continue
        m = rng.choice(todo)
        x, y = rng.randint(0, 4), rng.randint(0, 4)
        how = "regulation"
        if m.knockout and x == y:
            x, how = x + 1, "sudden_death"
        t.apply(clerk.result(t, m.slot.round, m.slot.table, f"{x}:{y}", how))
    return t


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6))
def test_a_carried_result_counts_once_in_a_final_group_never_in_a_placement_group(
    seed: int, tmp_path: Path
) -> None:
    """Seeded random days: the final group's table is the round robin of its own matches
    plus, exactly once, each basic-group match between two of its players from the same
    basic group; the placement group's is its own matches alone; and every player has
    exactly one final place, 1 … N."""
    t = _carried_day(seed, tmp_path)
    for name, later in t.later.items():
        seats, carry = later.seats, later.carry
        players = t.groups[name]
        basic_of = {p: s.group for s, p in zip(seats, players, strict=True)}
        own = [
            (t.fixture(m.id).home, t.fixture(m.id).away, t.results[m.id])
            for m in t.group_matches.values()
            if m.group == name
        ]
        carried = [
            (m.home, m.away, t.results[m.id])
            for m in t.group_matches.values()
            if m.group in t.basic
            and m.home in basic_of
            and m.away in basic_of
            and basic_of[m.home] == basic_of[m.away]
        ]
        expected: list[tuple[str, str, Result]] = own + (carried if carry else [])
        assert sorted(map(repr, t.group_played(name))) == sorted(map(repr, expected))
        rows = {r.player: r for r in t.standings(name)}
        by_hand = {r.player: r for r in standings(players, expected, ITHF)}  # type: ignore[arg-type]
        assert {p: r.points for p, r in rows.items()} == {p: r.points for p, r in by_hand.items()}
        assert all(r.played == len(players) - 1 for r in rows.values())  # each pair once
    places = t.placings()
    assert [p for p, _ in places] == list(range(1, len(t.spec.names) + 1))
    assert sorted(n for _, n in places) == sorted(t.spec.names)


def test_the_ranking_file_matches_names_either_way_and_refuses_a_bad_line(tmp_path: Path) -> None:
    file = ithfranking.write(tmp_path / "ranking.txt")
    entries = ranking.read(file).entries
    assert len(entries) == 7850 and entries[0].rank == 1
    first, tenth = entries[0], entries[9]
    given, surname = first.name.split(" ", 1)
    typed_as = [f"{surname} {given}", ranking.fold(tenth.name).title(), "Nobody Here"]
    found = ranking.match(entries, typed_as)
    assert found.ranked == (typed_as[0], typed_as[1])
    assert found.unranked == ("Nobody Here",)
    assert found.entries[typed_as[1]].id == tenth.id
    bad = tmp_path / "bad.txt"
    bad.write_text("1\t123\tNovák Jan\tTHC\tCZE\nx\t124\tDvořák Petr\tTHC\tCZE\n", encoding="utf-8")
    with pytest.raises(ranking.ConfigError, match=r"bad.txt:2: rank: a rank"):
        ranking.read(bad)
    bad.write_text("1\t123\tNovák Jan\tTHC\tCZE\textra\n", encoding="utf-8")
    with pytest.raises(ranking.ConfigError, match=r"bad.txt:1: 6 tab-separated fields"):
        ranking.read(bad)


@pytest.mark.slow
def test_a_bad_ranking_line_is_refused_by_the_draw_with_exit_2(tmp_path: Path) -> None:
    shutil.copy(TESTS / "ithf" / "players.txt", tmp_path / "players.txt")
    (tmp_path / "ranking.txt").write_text(
        "1\t1\tNovák Jan\tTHC\tCZE\n2\t2\t\tTHC\tCZE\n", encoding="utf-8"
    )
    run(tmp_path, "new", "day.yaml", "--rules", "ithf", "--names", "players.txt")
    done = subprocess.run(
        [TIMEKEEPER, "tournament", "draw", "--ranking", "ranking.txt", "-f", "day.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "ranking.txt:2: name: empty" in done.stderr
    assert not (tmp_path / "day.journal.jsonl").exists() or "draw" not in (
        tmp_path / "day.journal.jsonl"
    ).read_text(encoding="utf-8")


def test_the_snake_deals_forth_and_back() -> None:
    from timekeeper.tournament.draw import snake_draw

    names = [str(n) for n in range(1, 13)]
    groups = snake_draw(names, names, 3, 1).groups
    assert groups == {
        "A": ("1", "6", "7", "12"),
        "B": ("2", "5", "8", "11"),
        "C": ("3", "4", "9", "10"),
    }


def _file(tmp_path: Path, rules: str, stages_text: str) -> Path:
    file = tmp_path / "day.yaml"
    names = ", ".join(f"P{i:02d}" for i in range(16))
    file.write_text(f"rules: {rules}\nplayers: [{names}]\nstages:\n{stages_text}", encoding="utf-8")
    return file


def test_a_file_changes_the_points_and_the_order_and_a_bad_one_is_refused_where_it_is(
    tmp_path: Path,
) -> None:
    groups = "  groups: {size: 8}\n"
    custom = (
        "\n  extends: ithf\n  points: {win: 3, draw: 1, loss: 0}\n"
        "  tiebreakers: [points, goal_difference, head_to_head]\n"
    )
    s = spec.load(_file(tmp_path, custom, groups))
    assert s.rules.points.win == 3 and s.rules.group_profile == "ithf"
    assert s.rules.tiebreakers == ("points", "goal_difference", "head_to_head", "lot")
    bad = custom.replace("head_to_head]", "head_to_head, seniority]")
    with pytest.raises(spec.ConfigError, match=r"day.yaml:4:\d+: rules.tiebreakers\[3\]"):
        spec.load(_file(tmp_path, bad, groups))
    with pytest.raises(spec.ConfigError, match=r"day.yaml:6:\d+: stages.final.A.places\[1\]"):
        spec.load(_file(tmp_path, "ithf", groups + "  final:\n    A: {places: [1, 9]}\n"))
    taken = "  final:\n    A: {places: [1, 2]}\n  placement:\n    B: {places: [2, 3]}\n"
    with pytest.raises(spec.ConfigError, match=r"stages.placement.B.places: place 2 of group 1"):
        spec.load(_file(tmp_path, "ithf", groups + taken))
    too_many = "  final:\n    A: {places: [1, 2]}\n  playoffs:\n    A: {top: 5}\n"
    with pytest.raises(spec.ConfigError, match=r"stages.playoffs.A.top: 2 to 4"):
        spec.load(_file(tmp_path, "ithf", groups + too_many))
    with pytest.raises(spec.ConfigError, match=r"stages.placement.B: unknown key 'carry'|carry"):
        spec.load(
            _file(tmp_path, "ithf", groups + "  placement:\n    B: {places: [3], carry: true}\n")
        )


def test_a_ranking_file_has_a_size_and_the_real_one_reads_quickly_enough(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("w", encoding="utf-8") as f:
        f.write("1\t1\tNovák Jan\tTHC\tCZE\n" * (ranking.MAX_BYTES // 20))
    with pytest.raises(
        ranking.ConfigError, match=r"big.txt: more than \d+ bytes; a ranking list has at most"
    ):
        ranking.read(big)
    many = tmp_path / "many.txt"
    many.write_text("x\n" * (ranking.MAX_LINES + 1), encoding="utf-8")
    with pytest.raises(ranking.ConfigError, match=r"many.txt: 50001 lines"):
        ranking.read(many)
    heading = tmp_path / "heading.txt"
    heading.write_text("rank\tid\tname\tclub\tnation\n1\t7\tNovák Jan\tTHC\n", encoding="utf-8")
    assert ranking.read(heading).entries == (ranking.Entry(1, "Novák Jan", "7", "THC", ""),)


def test_two_final_groups_interleaved_feed_their_play_offs(tmp_path: Path) -> None:
    """A1 takes the top two of basic groups 1 and 3, A2 of 2 and 4 (names ending in a digit:
    A1's winner is the source `A11`); each has its play-off; everyone is placed once."""
    from timekeeper.tournament import clerk

    names = [f"P{i:02d}" for i in range(32)]
    file = tmp_path / "two.yaml"
    file.write_text(
        f"rules: ithf\ntables: 4\nplayers: [{', '.join(names)}]\nstages:\n"
        "  groups: {size: 8}\n  final:\n    A1: {places: [1, 2], from: [1, 3]}\n"
        "    A2: {places: [1, 2], from: [2, 4]}\n  playoffs:\n    A1: {top: 4}\n"
        "    A2: {top: 2}\n",
        encoding="utf-8",
    )
    t = Tournament(spec.load(file))
    t.apply(clerk.draw(t, 4, names))
    assert t.draw is not None
    written = {k["id"]: k for k in t.draw.to_dict()["knockout"]}  # (the ledger's text)
    assert written["SF1"]["home"] == "A11" and written["A2.F"]["home"] == "A21"
    assert t.nodes["SF1"].home == Place("A1", 1) and t.nodes["A2.F"].home == Place("A2", 1)
    rng = random.Random(4)
    while todo := [m for m in t.fixtures() if m.result is None and m.home and m.away]:
        m = todo[0]
        x, y = rng.randint(0, 3), rng.randint(0, 3)
        if m.knockout and x == y:
            x += 1
        t.apply(clerk.result(t, m.slot.round, m.slot.table, f"{x}:{y}"))
        for g in t.groups:
            if t.pending_lots(g):
                t.apply(clerk.lot(t, g, None, 1))
    top = {g: [r.player for r in t.standings(g)[:2]] for g in "1234"}
    assert t.groups["A1"] == (top["1"][0], top["3"][0], top["1"][1], top["3"][1])
    assert t.groups["A2"] == (top["2"][0], top["4"][0], top["2"][1], top["4"][1])
    winner_a1 = t.outcome("F")
    winner_a2 = t.outcome("A2.F")
    assert winner_a1 and winner_a2
    places = t.placings()
    assert places[0][1] == winner_a1[0] and places[4][1] == winner_a2[0]
    assert sorted(n for _, n in places) == sorted(names)


def test_a_basic_result_corrected_after_the_final_group_began_is_refused(tmp_path: Path) -> None:
    """A correction that would change who sits in a final group once it has results would
    hand those results to other players: refused, naming the group and a match."""
    from timekeeper.tournament import clerk
    from timekeeper.tournament.state import TournamentError

    names = [f"P{i:02d}" for i in range(16)]
    file = _file(tmp_path, "ithf", "  groups: {size: 8}\n  final:\n    A: {places: [1, 2]}\n")
    t = Tournament(spec.load(file))
    t.apply(clerk.draw(t, 2, names))
    for m in [f for f in t.fixtures() if f.stage in ("group 1", "group 2")]:
        order = t.basic[m.stage[-1]]
        score = "1:0" if order.index(m.home) < order.index(m.away) else "0:1"  # type: ignore[arg-type]
        t.apply(clerk.result(t, m.slot.round, m.slot.table, score))
    first = next(m for m in t.fixtures() if m.stage == "group A")
    t.apply(clerk.result(t, first.slot.round, first.slot.table, "2:2"))
    # group 1's winner loses every match after all: another player tops group 1
    winner = t.basic["1"][0]
    lost = [m for m in t.fixtures() if m.stage == "group 1" and winner in (m.home, m.away)]
    with pytest.raises(TournamentError, match=r"this changes who plays A\.\d+ in group A"):
        for m in lost:
            flip = "0:5" if m.home == winner else "5:0"
            t.apply(clerk.result(t, m.slot.round, m.slot.table, flip, reason="sheet misread"))
    # a correction that changes nobody's place is taken: group 2's last two, 1:0 → 3:0
    g2 = t.basic["2"]
    m = next(f for f in t.fixtures() if {f.home, f.away} == {g2[6], g2[7]})
    score = "3:0" if m.home == g2[6] else "0:3"
    t.apply(clerk.result(t, m.slot.round, m.slot.table, score, reason="two goals missed"))
    assert t.fixture(m.id).result == Result(*map(int, score.split(":")))
