"""Two tournaments replayed end to end through the command line, results typed in as the
desk would, standings and final places computed by hand (the comments show the sums)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_tournament

from timekeeper import cli
from timekeeper.tournament import plan
from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.state import Tournament


def load(file: Path) -> Tournament:
    return open_tournament(file)[0]


def run(file: Path, *argv: str) -> None:
    assert cli.main(["tournament", argv[0], "-f", str(file), *argv[1:]]) == 0, argv


def play(file: Path, a: str, b: str, a_goals: int, b_goals: int, *flags: str) -> None:
    """Types in the match between a and b, wherever the rounds put it, from a's side."""
    t = load(file)
    m = next(m for m in t.fixtures() if {m.home, m.away} == {a, b})
    home, away = (a_goals, b_goals) if m.home == a else (b_goals, a_goals)
    flags = tuple(
        {"a": "home" if m.home == a else "away", "b": "away" if m.home == a else "home"}.get(f, f)
        for f in flags
    )
    run(file, "result", str(m.slot.round), m.slot.table, f"{home}:{away}", *flags)


def knockout(file: Path, match: str, score: str, *flags: str) -> None:
    m = load(file).fixture(match)
    run(file, "result", str(m.slot.round), m.slot.table, score, *flags)


# ------------------------------------------------------------------ a Radegast evening

# Each group's results by draw position (0–3): (i, j) -> i's goals, j's goals.
CLEAN = {
    (0, 1): (3, 1),
    (0, 2): (2, 0),
    (0, 3): (4, 1),
    (1, 2): (2, 1),
    (1, 3): (3, 0),
    (2, 3): (1, 1),
}
# 0: 9 pts; 1: 6; 2 and 3: 1 each, 2 ahead on goal difference (2:5 −3 against 2:8 −6)
HEAD_TO_HEAD = {
    (1, 2): (2, 1),
    (0, 1): (3, 0),
    (1, 3): (4, 1),
    (2, 0): (2, 1),
    (2, 3): (3, 2),
    (0, 3): (2, 2),
}
# 1 and 2: 6 pts, 6:5 each (points, score, goals level) — 1 beat 2: head-to-head; 0: 4; 3: 1
ALL_DRAWN = {pair: (1, 1) for pair in CLEAN}  # all 3 pts, 3:3: only the lot
GOALS = {
    (0, 1): (2, 2),
    (0, 2): (4, 1),
    (0, 3): (0, 2),
    (1, 2): (3, 0),
    (1, 3): (0, 2),
    (2, 3): (1, 0),
}
# 3: 6 pts; 0 and 1: 4 pts, +1 each, 0 scored 6 and 1 scored 5: goals scored; 2: 3
FORFEIT = {(0, 1): (1, 1), (0, 2): (0, 2), (1, 2): (3, 0), (1, 3): (2, 0), (2, 3): (1, 0)}
# (0, 3): 3 walks out while 0 leads 2:1 → 0:5 plus 2:1 = 7:1 for 0.
# 1: 7 pts (6:1); 2: 6 (3:3); 0: 4 (8:4); 3: 0 (1:10)
PATTERNS = {
    "A": CLEAN,
    "B": HEAD_TO_HEAD,
    "C": ALL_DRAWN,
    "D": FORFEIT,
    "E": CLEAN,
    "F": GOALS,
    "G": CLEAN,
    "H": HEAD_TO_HEAD,
}
ORDER = {
    "A": [0, 1, 2, 3],
    "B": [1, 2, 0, 3],
    "C": [3, 1, 0, 2],
    "D": [1, 2, 0, 3],
    "E": [0, 1, 2, 3],
    "F": [3, 0, 1, 2],
    "G": [0, 1, 2, 3],
    "H": [1, 2, 0, 3],
}
POINTS = {
    "A": [9, 6, 1, 1],
    "B": [6, 6, 4, 1],
    "C": [3, 3, 3, 3],
    "D": [7, 6, 4, 0],
    "E": [9, 6, 1, 1],
    "F": [6, 4, 4, 3],
    "G": [9, 6, 1, 1],
    "H": [6, 6, 4, 1],
}
AHEAD_BY = {
    "A": ["points", "points", "goal_difference"],
    "B": ["head_to_head", "points", "points"],
    "C": ["lot", "lot", "lot"],
    "D": ["points", "points", "points"],
    "F": ["points", "goals_for", "points"],
}

NAMES = [
    "Adam",
    "Bedřich",
    "Cyril",
    "David",
    "Emil",
    "František",
    "Gustav",
    "Hugo",
    "Ivan",
    "Jakub",
    "Karel",
    "Lukáš",
    "Marek",
    "Norbert",
    "Oldřich",
    "Petr",
    "Quido",
    "Radek",
    "Stanislav",
    "Tomáš",
    "Urban",
    "Václav",
    "Walter",
    "Xaver",
    "Yvona",
    "Zdeněk",
    "Alena",
    "Běla",
    "Cecílie",
    "Dana",
    "Eva",
    "Fiona",
]


def radegast_file(tmp_path: Path) -> Path:
    head = (
        "title: Radegast Cup, U Zeleného stromu\ndate: 2010-03-12\n"
        "place: Frýdek-Místek\ncountry: CZE\nrules: radegast\ntables: 4\n"
    )
    return write_tournament(tmp_path / "radegast.yaml", head, NAMES)


def test_a_radegast_evening_32_players_8_groups_4_tables(tmp_path: Path) -> None:
    file = radegast_file(tmp_path)
    run(file, "draw", "--seed", "2010")
    t = load(file)
    assert list(t.groups) == list("ABCDEFGH") and all(len(p) == 4 for p in t.groups.values())
    group_rounds = {m.slot.round for m in t.fixtures() if not m.knockout}
    assert group_rounds == set(range(1, 13))  # 48 matches, 4 tables, no table idle
    for group, pattern in PATTERNS.items():
        who = t.groups[group]
        for (i, j), (gi, gj) in pattern.items():
            if group == "E" and (i, j) == (0, 1):
                play(file, who[i], who[j], gj, gi)  # typed the wrong way round …
                play(file, who[i], who[j], gi, gj, "--reason", "sheet read upside down")
                continue
            play(file, who[i], who[j], gi, gj)
        if group == "D":
            play(file, who[0], who[3], 2, 1, "--forfeit", "b")
    t = load(file)
    assert t.pending_lots("C") == [tuple(t.groups["C"])]  # the draw order, until the lot
    c = t.groups["C"]
    run(file, "lot", "C", "--order", ",".join(c[i] for i in ORDER["C"]))

    t = load(file)
    for group, order in ORDER.items():
        rows = t.standings(group)
        assert [r.player for r in rows] == [t.groups[group][i] for i in order], group
        assert [r.points for r in rows] == POINTS[group], group
        if group in AHEAD_BY:
            assert [r.ahead_by for r in rows[:3]] == AHEAD_BY[group], group
    d = {r.player: r for r in t.standings("D")}
    assert (d[t.groups["D"][0]].goals_for, d[t.groups["D"][0]].goals_against) == (8, 4)
    assert [e.reason for e in t.history() if isinstance(e, ResultEvent) and e.corrects] == [
        "sheet read upside down"
    ]

    def at(place: str) -> str:
        return t.standings(place[0])[int(place[1]) - 1].player

    # the knock-out: A1–B2, C1–D2, E1–F2, G1–H2 in the top half, B1–A2 … in the bottom
    first = [(plan.text(n.home), plan.text(n.away)) for n in t.nodes.values() if n.level == 0]
    assert first == [
        ("A1", "B2"),
        ("C1", "D2"),
        ("E1", "F2"),
        ("G1", "H2"),
        ("B1", "A2"),
        ("D1", "C2"),
        ("F1", "E2"),
        ("H1", "G2"),
    ]
    for i in range(1, 9):
        knockout(file, f"R16-{i}", "0:1" if i == 2 else "2:1", *(["--sd"] if i == 2 else []))
    knockout(file, "QF1", "3:0")  # A1 – D2
    knockout(file, "QF2", "4:3", "--ot")  # E1 – G1, the 3-minute overtime
    knockout(file, "QF3", "2:0")  # B1 – D1
    knockout(file, "QF4", "1:0")  # F1 – H1
    knockout(file, "SF1", "2:1")  # A1 – E1
    knockout(file, "SF2", "5:2")  # B1 – F1
    knockout(file, "3P", "", "--forfeit", "away")  # F1 does not come: 5:0 for E1
    knockout(file, "F", "1:2", "--sd")  # A1 – B1: B1 wins the cup
    t = load(file)
    assert t.fixture("3P").result.text().startswith("5:0 forfeit")
    places = [name for _, name in t.placings()]
    # 1–4 from the final and the 3rd place; 5–8 the quarter-final losers by their group
    # record (G1 9 pts, D1 7, H1 6, then the runner-up D2); 9 the one group winner out in
    # the round of 16 (C1), then the other round-of-16 losers, the 3rd and the 4th places
    assert places[:9] == [
        at("B1"),
        at("A1"),
        at("E1"),
        at("F1"),
        at("G1"),
        at("D1"),
        at("H1"),
        at("D2"),
        at("C1"),
    ]
    assert set(places[9:16]) == {at(g + "2") for g in "ABCEFGH"}
    assert set(places[16:24]) == {at(g + "3") for g in "ABCDEFGH"}
    assert set(places[24:]) == {at(g + "4") for g in "ABCDEFGH"}
    assert [s.round for s in t.slots if s.match in ("F", "3P")] == [17, 17]


# ------------------------------------------------------------------ ball hockey, VHT 6

TEAMS = ["HBK Dukla", "HK Orol", "Sokol", "Lokomotíva", "Slávia", "Tatran", "Baník", "Inter"]
# group A by draw position, (i, j, flag): 3 points a win, 2 an OT/SO win, 1 an OT/SO loss
A_MATCHES = [
    (0, 1, 3, 1, ""),
    (0, 2, 2, 3, "--so"),
    (0, 3, 4, 0, ""),
    (1, 2, 2, 1, "--sd"),
    (1, 3, 1, 0, ""),
    (2, 3, 1, 2, ""),
]
# 0: 3+1+3 = 7; 1: 0+2+3 = 5; 2: 2+1+0 = 3; 3: 0+0+3 = 3, ahead of 2 on head-to-head
B_MATCHES = [
    (0, 1, 2, 1, ""),
    (1, 2, 2, 1, ""),
    (2, 0, 2, 1, ""),
    (0, 3, 3, 0, ""),
    (1, 3, 4, 0, ""),
    (2, 3, 5, 0, ""),
]
# 0, 1, 2: 6 pts and 3 in their mini-table each: goal difference, 2 +5, 1 +4, 0 +3; 3: 0


def test_a_ball_hockey_tournament_8_teams_vht6_three_points(tmp_path: Path) -> None:
    file = vht_drawn(tmp_path, "6", "--tables", "1")
    t = load(file)
    a, b = t.groups["A"], t.groups["B"]
    for who, matches in ((a, A_MATCHES), (b, B_MATCHES)):
        for i, j, gi, gj, flag in matches:
            play(file, who[i], who[j], gi, gj, *([flag] if flag else []))
    t = load(file)
    assert [r.player for r in t.standings("A")] == [a[0], a[1], a[3], a[2]]
    assert [r.points for r in t.standings("A")] == [7, 5, 3, 3]
    assert t.standings("A")[2].ahead_by == "head_to_head"
    assert [r.player for r in t.standings("B")] == [b[2], b[1], b[0], b[3]]
    assert [r.ahead_by for r in t.standings("B")][:2] == ["goal_difference"] * 2
    # the VHT 6 tree: A2–B3, B2–A3, A4–B4 for 7th; A1 and B1 wait in the semi-finals
    knockout(file, "QF1", "3:2", "--so")  # A2 – B3
    knockout(file, "QF2", "1:4")  # B2 – A3
    knockout(file, "P7", "", "--forfeit", "home")  # A4 does not come: 0:5 (no score added)
    knockout(file, "SF1", "2:1")  # A1 – A3
    knockout(file, "SF2", "0:3")  # B1 – A2
    knockout(file, "3P", "2:3", "--sd")  # A3 – B1, rule 1: "decided by a goal"
    knockout(file, "F", "4:2")  # A1 – A2
    t = load(file)
    assert t.fixture("P7").result.text().startswith("0:5 forfeit")
    a_, b_ = ([r.player for r in t.standings(g)] for g in "AB")
    assert [n for _, n in t.placings()] == [a_[0], a_[1], b_[0], a_[2], b_[1], b_[2], b_[3], a_[3]]
    # rule 1: 2 × 8 min in the groups (rule 6's second system: a draw goes on), 2 × 10 after
    assert t.profile_of(t.fixture("F").id) == t.profile_of("QF1") == "hokejbal-playoff"
    assert {t.profile_of(m) for m in t.group_matches} == {"hokejbal-group-ot"}


def _names(tmp_path: Path) -> Path:
    names = tmp_path / "teams.txt"
    names.write_text("\n".join(TEAMS) + "\n", encoding="utf-8")
    return names


def vht_drawn(tmp_path: Path, seed: str, *more: str) -> Path:
    """`tournament new vht.yaml --rules hokejbal-3pt --names teams.txt MORE`, drawn."""
    file = tmp_path / "vht.yaml"
    argv = ["new", str(file), "--rules", "hokejbal-3pt", "--names", str(_names(tmp_path))]
    assert cli.main(["tournament", *argv, *more]) == 0
    run(file, "draw", "--seed", seed)
    return file


@pytest.mark.parametrize("flag", ["", "--ot"])
def test_a_group_draw_is_refused_where_the_rule_set_has_none(
    tmp_path: Path, flag: str, capsys
) -> None:
    file = vht_drawn(tmp_path, "1")
    code = cli.main(
        ["tournament", "result", "1", "1", "2:2", "-f", str(file), *([flag] if flag else [])]
    )
    assert code == 2
    assert "draw" in capsys.readouterr().err
