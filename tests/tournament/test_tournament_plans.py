"""The plans real events use, written in the tournament file and played from the command
line: an ITHF day of 32 with two final groups interleaved from the basic groups' places
(A1: the 1st and 3rd of groups 1 and 3, the 2nd and 4th of groups 2 and 4; A2 the rest), a
placement group, and a play-off of 8 drawn across A1 and A2 (A1-1st v A2-4th, A2-2nd v
A1-3rd, A2-1st v A1-4th, A1-2nd v A2-3rd) in series, best of 7 and the bronze best of 5;
the standings of both final groups computed by hand (carried results, ties broken head to
head). Then a Masters-style plan: basic groups set by hand, final groups of listed seats;
and the unranked players' order given instead of drawn.

The commands are typed through the CLI's main in this process (some 200 results: a process
each would take minutes); the bracket at the end of the day also runs as a real process."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, TESTS, dollar_steps

from timekeeper import cli
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import spec
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.plan import Place
from timekeeper.tournament.state import Tournament

DOCS = ROOT / "docs" / "tournament.md"

DAY_STAGES = """\
stages:
  groups:
    size: 8
    seeding: snake
  final:
    A1: {places: [1, 2, 3, 4], interleaved: 1}
    A2: {places: [1, 2, 3, 4], interleaved: 2}
  placement:
    B: {places: [5, 6]}
  playoffs:
    A: {from: [A1, A2], top: 4, best_of: {default: 7, 3P: 5}}
"""
# the snake from tests/ithf/ranking.txt with --seed 33 (docs/tournament.md), best first
GROUP = {
    "1": ["Jan Novák", "Jurgen Muller", "Paweł Łukasik", "Oleg Ivanov"],
    "2": ["Erik Aberg", "Amund Fylling", "Tomas Cerny", "Håkon Sørensen"],
    "3": ["Dvořák Petr", "Ján Horváth", "Björn Öberg", "Michal Kovac"],
    "4": ["Mikko Virtanen", "Janis Berzins", "Jari Mäkinen", "Andris Kalniņš"],
}


def tk(*argv: str) -> None:
    assert cli.main(["tournament", *argv]) == 0, argv


def load(file: Path) -> Tournament:
    return open_tournament(file)[0]


def play(file: Path, stage: str, score) -> None:
    """Every match of the stage still to play, its score by `score(home, away)`."""
    t = load(file)
    for m in [f for f in t.fixtures() if f.stage == stage and f.result is None]:
        assert m.home and m.away, m.id
        tk("result", str(m.slot.round), m.slot.table, score(m.home, m.away), "-f", str(file))


def by_seat(seats: list[str], special: dict[tuple[str, str], str]):
    """The better seat wins 1:0 but for the `special` scores (first named side's first)."""

    def score(home: str, away: str) -> str:
        if (home, away) in special:
            return special[home, away]
        if (away, home) in special:
            return ":".join(reversed(special[away, home].split(":")))
        return "1:0" if seats.index(home) < seats.index(away) else "0:1"

    return score


def row(place: int, name: str, w: int, d: int, lost: int, gf: int, ga: int, note: str = "") -> str:
    return (
        f"  {place:>2}. {name:<24} 7{w:>4}{d:>4}{lost:>4}  {gf:>3}:{ga:<3}{gf - ga:>+5}"
        f"{2 * w + d:>5}{note}"
    )


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    capsys.readouterr()
    tk(*argv)
    return [line.rstrip() for line in capsys.readouterr().out.splitlines()]


def play_the_day(folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    for name in ("players.txt", "ranking.txt"):
        shutil.copy(TESTS / "ithf" / name, folder / name)
    file = folder / "day.yaml"
    tk("new", str(file), "--rules", "ithf", "--names", str(folder / "players.txt"), "--tables", "4")
    text = file.read_text(encoding="utf-8")
    file.write_text(text.split("stages:\n")[0] + DAY_STAGES, encoding="utf-8")  # the plan
    tk("draw", "--ranking", str(folder / "ranking.txt"), "--seed", "33", "-f", str(file))
    t = load(file)
    assert {g: list(p[:4]) for g, p in t.basic.items()} == GROUP
    for g, players in t.basic.items():  # the better seed wins 1:0: places as drawn
        play(file, f"group {g}", by_seat(list(players), {}))
    return file


def test_an_ithf_day_with_interleaved_final_groups_and_a_crossed_play_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = play_the_day(tmp_path, capsys)
    f = str(file)
    t = load(file)
    # A1 by hand: 1/1, 3/1, 2/2, 4/2, 1/3, 3/3, 2/4, 4/4 (seat order: place, then group)
    s = [GROUP["1"][0], GROUP["3"][0], GROUP["2"][1], GROUP["4"][1]]
    s += [GROUP["1"][2], GROUP["3"][2], GROUP["2"][3], GROUP["4"][3]]
    # A2 the rest: 2/1, 4/1, 1/2, 3/2, 2/3, 4/3, 1/4, 3/4
    u = [GROUP["2"][0], GROUP["4"][0], GROUP["1"][1], GROUP["3"][1]]
    u += [GROUP["2"][2], GROUP["4"][2], GROUP["1"][3], GROUP["3"][3]]
    assert t.groups["A1"] == tuple(s) and t.groups["A2"] == tuple(u)
    assert t.later["A1"].seats[:3] == (Place("1", 1), Place("3", 1), Place("2", 2))
    # the pairs from one basic group do not meet again: their result is carried
    assert len(t.carried("A1")) == 4 and len(t.carried("A2")) == 4 and t.carried("B") == []
    assert len([m for m in t.group_matches.values() if m.group == "A1"]) == 24

    # A1: the better seat wins 1:0, but s[1] draws s[6] and s[7], s[2] beats s[7] 3:0
    play(
        file,
        "group A1",
        by_seat(s, {(s[1], s[6]): "1:1", (s[1], s[7]): "1:1", (s[2], s[7]): "3:0"}),
    )
    # A2: u[3] and u[4] beat u[2]; u[6] draws u[0], u[1], u[3] and u[4]
    special = {(u[3], u[2]): "1:0", (u[4], u[2]): "1:0"}
    special |= {(u[6], u[i]): "1:1" for i in (0, 1, 3, 4)}
    play(file, "group A2", by_seat(u, special))
    play(file, "group B", by_seat(list(load(file).groups["B"]), {}))

    # A1 by hand: s[1] and s[2] have 10 points; s[1] beat s[2], so it is ahead though s[2]
    # has the better goal difference (+5 to +3). Carried (1:0 each, from the basic groups):
    # s[0]–s[4], s[1]–s[5], s[2]–s[6], s[3]–s[7].
    assert printed(capsys, "standings", "A1", "-f", f)[2:] == [
        row(1, s[0], 7, 0, 0, 7, 0),
        row(2, s[1], 4, 2, 1, 6, 3, "  (ahead on head to head)"),
        row(3, s[2], 5, 0, 2, 7, 2),
        row(4, s[3], 4, 0, 3, 4, 3),
        row(5, s[4], 3, 0, 4, 3, 4),
        row(6, s[5], 2, 0, 5, 2, 5),
        row(7, s[6], 1, 1, 5, 2, 6),
        row(8, s[7], 0, 1, 6, 1, 9),
    ]
    # A2 by hand: u[2] and u[6] have 6 points, goal difference -1 each, u[6] more goals (5
    # to 3); u[2] beat u[6] in basic group 1, and that result, carried, puts u[2] ahead
    out = printed(capsys, "standings", "A2", "-f", f)
    assert out[0] == "group A2 (final group, 4 results carried from the basic groups)"
    assert out[2:] == [
        row(1, u[0], 6, 1, 0, 7, 1),
        row(2, u[1], 5, 1, 1, 6, 2),
        row(3, u[3], 4, 1, 2, 5, 3),
        row(4, u[4], 3, 1, 3, 4, 4),
        row(5, u[2], 3, 0, 4, 3, 4, "  (ahead on head to head)"),
        row(6, u[6], 1, 4, 2, 5, 6),
        row(7, u[5], 2, 0, 5, 2, 5),
        row(8, u[7], 0, 0, 7, 0, 7),
    ]

    # the crossed play-off, seeds by hand: A1-1st v A2-4th, A2-2nd v A1-3rd, A2-1st v
    # A1-4th, A1-2nd v A2-3rd
    t = load(file)
    pairs = {m: (t.fixture(m).home, t.fixture(m).away) for m in ("QF1", "QF2", "QF3", "QF4")}
    assert pairs == {
        "QF1": (s[0], u[4]),
        "QF2": (u[1], s[2]),
        "QF3": (u[0], s[3]),
        "QF4": (s[1], u[3]),
    }
    assert [t.best_of(m) for m in ("QF1", "SF1", "F", "3P")] == [7, 7, 7, 5]
    for match in ("QF1", "QF2", "QF3", "QF4", "SF1", "SF2", "3P", "F"):
        for _ in range(load(file).best_of(match) // 2 + 1):  # home wins every game
            tk("result", match, "1:0", "-f", f)
    out = printed(capsys, "bracket", "-f", f)
    assert out[:8] == [
        f"QF1    quarter-final 1    r48 t1  {s[0]} (A1 #1) – {u[4]} (A2 #4)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"QF2    quarter-final 2    r48 t2  {u[1]} (A2 #2) – {s[2]} (A1 #3)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"QF3    quarter-final 3    r48 t3  {u[0]} (A2 #1) – {s[3]} (A1 #4)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"QF4    quarter-final 4    r48 t4  {s[1]} (A1 #2) – {u[3]} (A2 #3)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"SF1    semi-final 1       r49 t1  {s[0]} (winner QF1) – {u[1]} (winner QF2)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"SF2    semi-final 2       r49 t2  {u[0]} (winner QF3) – {s[1]} (winner QF4)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"F      final              r50 t1  {s[0]} (winner SF1) – {u[0]} (winner SF2)  best of 7: "
        "4:0 in games (1:0, 1:0, 1:0, 1:0)",
        f"3P     3rd place          r50 t2  {u[1]} (loser SF1) – {s[1]} (loser SF2)  best of 5: "
        "3:0 in games (1:0, 1:0, 1:0)",
    ]
    # the final ranking: the play-off's places, then those out in the quarter-finals by
    # place (A1's before A2's at the same place), then the rest of A1 and A2 so, then B
    t = load(file)
    places = [n for _, n in t.placings()]
    assert places[:16] == [
        s[0], u[0], u[1], s[1],  # final, bronze
        s[2], u[3], s[3], u[4],  # out in the quarter-finals: 3rd, 3rd, 4th, 4th
        s[4], u[2], s[5], u[6], s[6], u[5], s[7], u[7],  # A1's and A2's 5th … 8th
    ]  # fmt: skip
    assert places[16:24] == [r.player for r in t.standings("B")]
    assert sorted(places) == sorted(t.spec.names)


@pytest.mark.slow
def test_the_day_s_bracket_as_a_process_prints_what_the_desk_sees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = play_the_day(tmp_path, capsys)
    for g in ("A1", "A2", "B"):
        play(file, f"group {g}", by_seat(list(load(file).groups[g]), {}))
    shown = printed(capsys, "bracket", "-f", str(file))
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("timekeeper")),
            "tournament",
            "bracket",
            "-f",
            "day.yaml",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [line.rstrip() for line in done.stdout.splitlines()] == shown
    assert shown[0].startswith("QF1    quarter-final 1    r48 t1  ") and "(A1 #1) – " in shown[0]


def section() -> str:
    return DOCS.read_text(encoding="utf-8").split("## Plans of your own\n", 1)[1].split("\n## ")[0]


def masters(folder: Path) -> Path:
    """docs/tournament.md's Masters file, as the page writes it."""
    file = folder / "masters.yaml"
    file.write_text(section().split("```yaml\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    return file


def test_a_masters_plan_whole_basic_groups_into_final_groups_drawn_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = masters(tmp_path)
    f = str(file)
    tk("draw", "--seed", "5", "-f", f)
    t = load(file)
    assert t.basic == {  # the organiser's own groups, whatever the seed
        "1": ("Ada", "Eva", "Ian", "Max"),
        "2": ("Bea", "Fil", "Joe", "Nia"),
        "3": ("Cyd", "Gus", "Kim", "Oto"),
        "4": ("Dan", "Hal", "Lea", "Pia"),
    }
    assert t.draw is not None and t.draw.method == "hand"
    assert t.later["A1"].seats == tuple(Place(g, p) for g in "13" for p in range(1, 5))
    # whole groups: the 12 pairs from one basic group carry, A1 plays the other 16
    assert len([m for m in t.group_matches.values() if m.group == "A1"]) == 16
    for g, players in t.basic.items():  # as listed, the earlier wins 1:0
        play(file, f"group {g}", by_seat(list(players), {}))
    t = load(file)
    assert t.groups["A1"] == ("Ada", "Eva", "Ian", "Max", "Cyd", "Gus", "Kim", "Oto")
    assert len(t.carried("A1")) == 12
    # A1 by hand: group 3's players beat group 1's, 2:0 each; so Cyd (3 carried wins, 4
    # here) 14, Gus 12, Kim 10, Oto 8; Ada 6 (3 carried wins), Eva 4, Ian 2, Max 0
    a1 = list(t.groups["A1"])
    play(file, "group A1", lambda h, a: "2:0" if a1.index(h) > a1.index(a) else "0:2")
    rows = load(file).standings("A1")
    assert [(r.player, r.points, r.played) for r in rows] == [
        ("Cyd", 14, 7),
        ("Gus", 12, 7),
        ("Kim", 10, 7),
        ("Oto", 8, 7),
        ("Ada", 6, 7),
        ("Eva", 4, 7),
        ("Ian", 2, 7),
        ("Max", 0, 7),
    ]
    play(file, "group A2", by_seat(list(load(file).groups["A2"]), {}))
    t = load(file)
    # crossed: A1-1st v A2-2nd, A2-1st v A1-2nd
    assert (t.fixture("SF1").home, t.fixture("SF1").away) == ("Cyd", "Fil")
    assert (t.fixture("SF2").home, t.fixture("SF2").away) == ("Bea", "Gus")


def test_the_unranked_come_in_the_order_the_file_gives(tmp_path: Path) -> None:
    names = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gil", "Hal"]
    (tmp_path / "ranking.txt").write_text("Cid\nAnn\nHal\n", encoding="utf-8")
    file = tmp_path / "cup.yaml"
    file.write_text(
        f"rules: ithf\ntables: 2\nplayers: [{', '.join(names)}]\nstages:\n"
        "  groups: {size: 4, unranked: [Gil, Bob, Fay]}\n  knockout: {tree: seeded}\n",
        encoding="utf-8",
    )
    for seed in ("1", "2"):
        copy = tmp_path / f"cup{seed}.yaml"
        shutil.copy(file, copy)
        tk("draw", "--ranking", str(tmp_path / "ranking.txt"), "--seed", seed, "-f", str(copy))
        order = load(copy).order
        assert order[:6] == ("Cid", "Ann", "Hal", "Gil", "Bob", "Fay"), seed
        assert set(order[6:]) == {"Dan", "Eve"}  # not named: by lot


@pytest.mark.parametrize(
    ("stages", "refusal"),
    [
        (
            "  groups:\n    set: [[Ada, Eva], [Bea, Ada]]\n",
            r"masters.yaml:7:29: stages.groups.set\[1\]\[1\]: 'Ada' is in group 1 already",
        ),
        (
            "  groups:\n    set: [[Ada, Eva], [Bea]]\n",
            r"masters.yaml:7:23: stages.groups.set\[1\]: a group needs two players",
        ),
        (
            "  groups:\n    set: [[Ada, Eva], [Bea, Fil]]\n",
            r"masters.yaml:7:10: stages.groups.set: every player in a group: Cyd, Dan, Gus, Hal",
        ),
        (
            "  groups: {size: 4}\n  final:\n    A1: {seats: [[1, 1], [5, 1]]}\n",
            r"masters.yaml:8:26: stages.final.A1.seats\[1\]: \[basic group, place\]",
        ),
        (
            "  groups: {size: 4}\n  final:\n    A1: {seats: [[1, 1], [2, 1]], places: [1]}\n",
            r"masters.yaml:8:43: stages.final.A1.places: seats: lists them all",
        ),
        (
            "  groups: {size: 4}\n  final:\n    A1: {places: [1]}\n    A2: {places: [2]}\n"
            "  playoffs:\n    A: {from: [A1, A3]}\n",
            r"masters.yaml:11:20: stages.playoffs.A.from\[1\]: no final or placement group 'A3'",
        ),
        (
            "  groups: {size: 4}\n  final:\n    A1: {places: [1, 2]}\n    A2: {places: [3, 4]}\n"
            "  playoffs:\n    A: {from: [A1, A2], top: 3}\n",
            r"masters.yaml:11:30: stages.playoffs.A.top: 1, 2, 4 … of each, at most 8",
        ),
    ],
)
def test_a_plan_that_cannot_be_played_is_refused_at_load(
    tmp_path: Path, stages: str, refusal: str
) -> None:
    file = tmp_path / "masters.yaml"
    players = "[Ada, Bea, Cyd, Dan, Eva, Fil, Gus, Hal]" if "set:" in stages else None
    players = players or "[" + ", ".join(f"P{i}" for i in range(16)) + "]"
    file.write_text(
        f"title: Masters\nrules: ithf\ntables: 4\nplayers: {players}\nstages:\n{stages}",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=refusal):
        spec.load(file)


@pytest.mark.slow
def test_the_masters_commands_in_the_docs_run_as_written(tmp_path: Path) -> None:
    masters(tmp_path)
    block = section().split("```yaml\n", 1)[1].split("```\n", 1)[1].split("```\n", 2)[1]
    steps = dollar_steps(block)
    assert len(steps) == 3
    for command, shown in steps:
        done = subprocess.run(
            [str(Path(sys.executable).with_name("timekeeper")), *shlex.split(command)[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.splitlines() == shown, command
