"""The wall sheets explain themselves: the groups' sheet says what separated players level on
points (as the board says it), numbers its cross-table by place, the bracket marks each
match's winner, and both say what the rule set is and that its text is this project's
reading. One ITHF group of four, played in this process."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from helpers import write_tournament

from timekeeper.tournament import clerk, sheets
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.rulesets import SAID
from timekeeper.tournament.state import Tournament

STAGES = (
    "stages:\n  groups:\n    size: 4\n    advance: 2\n"
    "  knockout:\n    tree: seeded\n    third_place: true\n"
)
# drawn (seed 7) as Dan, Bob, Ann, Cid; Cid and Dan end level on points, their own match a
# draw and its goals alike: the goal difference puts Cid above Dan
SCORES = {"A.1": "2:2", "A.2": "3:1", "A.3": "5:0", "A.4": "1:0", "A.5": "0:5", "A.6": "0:1"}


@pytest.fixture
def played(tmp_path: Path) -> Path:
    head = "title: Sheet cup\nrules: ithf\ntables: 2\n"
    file = write_tournament(tmp_path / "cup.yaml", head, ["Ann", "Bob", "Cid", "Dan"], STAGES)
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 7))
    t, _ = open_tournament(file, drawn=True)
    for slot in t.slots:
        if slot.match in SCORES:
            t, ledger = open_tournament(file, drawn=True)
            ledger.record(t, clerk.result(t, slot.round, slot.table, SCORES[slot.match]))
    return file


def text_of(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


def rows_of(table: str) -> list[list[str]]:
    return [
        [
            unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r)
        ]
        for r in re.findall(r"<tr>(.*?)</tr>", table)
    ]


def test_the_groups_sheet_says_what_separated_each_tie(played: Path) -> None:
    t, _ = open_tournament(played, drawn=True)
    table = rows_of(sheets.groups_sheet(t).split("<table")[1])
    said = {row[1]: row[-1] for row in table[1:]}
    assert said["Cid"] == "ahead by goal difference", said  # level with Dan on points
    for row in t.standings("A"):  # each as the board reads it (standings.tie_told)
        if row.ahead_by not in ("", "points"):
            assert said[row.player] == f"ahead by {SAID[row.ahead_by]}"
    assert said["Ann"] == ""  # (ahead on points: nothing to explain)


def test_the_cross_table_is_numbered_by_place(played: Path) -> None:
    t, _ = open_tournament(played, drawn=True)
    order = [r.player for r in t.standings("A")]
    assert order != list(t.groups["A"])  # (the draw order is another)
    cross = rows_of(sheets.groups_sheet(t).split("<table class=cross>")[1].split("</table>")[0])
    assert cross[0][2:] == ["1", "2", "3", "4"]
    assert [row[:2] for row in cross[1:]] == [[str(i), p] for i, p in enumerate(order, 1)]
    ann = cross[1]  # Ann, first: her score against each column's player, from her side
    assert ann[2:] == ["×", "3:1", "1:0", "5:0"]


def final_played(file: Path) -> Tournament:
    t, ledger = open_tournament(file, drawn=True)
    final = next(s for s in t.slots if s.match == "F")
    ledger.record(t, clerk.result(t, final.round, final.table, "1:2"))
    t, _ = open_tournament(file, drawn=True)
    return t


def test_the_bracket_sheet_marks_the_winner(played: Path) -> None:
    t = final_played(played)
    winner, loser = t.outcome("F") or ("", "")
    sheet = sheets.bracket_sheet(t)
    assert f"<span class=won>{winner} ✔</span>" in sheet
    assert f"{loser} ✔" not in sheet and sheet.count("class=won>") == 1
    assert "✔ the winner" in text_of(sheet)


def test_the_sheets_say_what_the_rule_set_is(played: Path) -> None:
    t = final_played(played)
    for sheet in (sheets.groups_sheet(t), sheets.bracket_sheet(t)):
        said = " ".join(text_of(sheet).split())
        assert "could not be read" not in said
        assert "Rule set: ITHF tournament (ithf)" in said
        assert "The text is this project's reading of the rules" in said
        order = ", then ".join(SAID[c] for c in t.spec.rules.tiebreakers)
        assert f"Places by {order}." in said
        assert "points, then head-to-head points, then head-to-head goal difference" in said
        assert "Points: win 2, draw 1, loss 0." in said
