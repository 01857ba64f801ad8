"""The ITHF ranking's result form as a director fills it in from an ITHF day: `new --rules
ithf`, the draw from a ranking file, every result typed through the command line, then
`export --form` and the exported `ithf-form.txt`: each field as it is pasted, the standings
one name a line, the winner first, a name the draw matched written as the ranking writes
it, any other as typed; the switch; the shared places noted below, never in the block."""

from __future__ import annotations

import csv
import shlex
from pathlib import Path

import pytest
from helpers import ROOT, dollar_steps

from timekeeper import cli
from timekeeper.tournament import clerk, export, spec
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.state import Tournament

# as the ITHF writes it: first name first, no diacritics; a suffix tells father from son;
# two players share rank 9
RANKING = """\
1\t20037\tJan Novak\tTHC Praha\tCZE
2\t20074\tErik Aberg\tStiga Stockholm\tSWE
3\t20111\tMikko Virtanen\tHelsinki TH\tFIN
4\t20148\tPetr Dvorak\tTHC Praha\tCZE
5\t20185\tJanis Berzins\tRiga HT\tLAT
6\t20222\tJiri Chylik ml.\tSK Kladno\tCZE
7\t20259\tOndrej Kucera\tHC Tygr\tCZE
8\t20296\tJiri Chylik st.\tSK Kladno\tCZE
9\t20333\tAmund Fylling\tOslo BHK\tNOR
9\t20370\tLars Lindstrom\tStiga Stockholm\tSWE
11\t20407\tOleg Ivanov\tMoskva\tRUS
12\t20444\tTomas Cerny\tTHC Praha\tCZE
13\t20481\tMichal Kovac\t\tSVK
14\t20518\tStefan Weiss\tBerlin Tischhockey\tGER
"""
# as the entrants write themselves: diacritics, some surname first; three not on the list
TYPED = (
    "Jan Novák",
    "Åberg Erik",
    "Mikko Virtanen",
    "Dvořák Petr",
    "Jānis Bērziņš",
    "Jiří Chylík ml.",
    "Ondřej Kučera",
    "Jiří Chylík st.",
    "Amund Fylling",
    "Lars Lindström",
    "Oleg Ivanov",
    "Tomáš Černý",
    "Michal Kováč",
    "Karel Nový",
    "Mia Berg",
    "Olli Rantanen",
)
FIELDS = """\
Tournament: Praha Open 2026
Date: 12.5.2026
Series:
Country: Czech Republic
City: Praha
Number of participants: 16
"""
# the better seed wins every match: Novák the day, the A play-off of four by seed; places
# 9–16 the basic groups' 5th to 8th, each pair level on place and record
STANDINGS = """\
Jan Novak
Erik Aberg
Mikko Virtanen
Petr Dvorak
Janis Berzins
Jiri Chylik ml.
Ondrej Kucera
Jiri Chylik st.
Amund Fylling
Lars Lindstrom
Oleg Ivanov
Tomas Cerny
Michal Kovac
Olli Rantanen
Karel Nový
Mia Berg
"""
INFO = (
    "Additional info: new to the ranking: "
    "Olli Rantanen; Karel Nový (CZE, SK Kladno); Mia Berg (NOR)\n"
)
NOTES = """\
note: shared places 9–10, 11–12, 13–14, 15–16: one name a line, in the draw's order
note: not matched at the draw, written as typed: Olli Rantanen, Karel Nový, Mia Berg
"""


def tk(*argv: str) -> None:
    assert cli.main(["tournament", *argv]) == 0, argv


@pytest.fixture
def day(tmp_path: Path) -> Path:
    """A 16-player ITHF day from `new`, the file filled in as a director does, drawn from the
    ranking and played to its end, each result typed: the better seed wins 1:0."""
    (tmp_path / "players.txt").write_text("\n".join(TYPED) + "\n", encoding="utf-8")
    (tmp_path / "ranking.txt").write_text(RANKING, encoding="utf-8")
    file = tmp_path / "day.yaml"
    names = str(tmp_path / "players.txt")
    tk("new", str(file), "--rules", "ithf", "--names", names, "--title", "Praha Open 2026")
    text = file.read_text(encoding="utf-8")
    for old, new in (
        ('date: ""', "date: 2026-05-12"),
        ('place: ""', 'place: "Praha"'),
        ('country: ""', "country: CZE"),  # (the code, as the template says: named in English)
        ('  - "Karel Nový"', '  - {name: "Karel Nový", club: "SK Kladno", country: "CZE"}'),
        ('  - "Mia Berg"', '  - {name: "Mia Berg", country: "NOR"}'),
    ):
        assert old in text, old
        text = text.replace(old, new)
    file.write_text(text, encoding="utf-8")
    tk("draw", "--ranking", str(tmp_path / "ranking.txt"), "--seed", "7", "-f", str(file))
    for _ in range(200):
        t = open_tournament(file)[0]
        todo = [m for m in t.fixtures() if m.result is None and m.home and m.away]
        if not todo:
            break
        m = todo[0]
        score = "1:0" if t.order.index(m.home) < t.order.index(m.away) else "0:1"
        tk("result", str(m.slot.round), m.slot.table, score, "-f", str(file))
    assert open_tournament(file)[0].outcome("F") is not None
    return file


def test_an_ithf_day_fills_in_the_form_field_by_field(day: Path, capsys, monkeypatch) -> None:
    capsys.readouterr()
    tk("export", "--form", "-f", str(day))
    shown = capsys.readouterr().out
    form = FIELDS + "Surname is stated: last\n\nStandings:\n" + STANDINGS + "\n" + INFO
    assert shown == form + "\n" + NOTES
    # docs/tournament.md shows this day's form: its command, as written, prints it
    page = (ROOT / "docs" / "tournament.md").read_text(encoding="utf-8")
    block = page.split("### The ITHF ranking's result form", 1)[1].split("```\n")[1]
    [(command, lines)] = dollar_steps(block)
    monkeypatch.chdir(day.parent)
    assert cli.main(shlex.split(command)[1:]) == 0
    assert capsys.readouterr().out.splitlines() == lines == shown.splitlines()
    # the export writes what is pasted, and nothing of the notes; a program reads the ids
    tk("export", "-f", str(day))
    out = day.with_name("day-export")
    assert (out / "ithf-form.txt").read_text(encoding="utf-8") == form
    assert not (out / "ithf.txt").exists()
    with open(out / "final.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert tuple(rows[0]) == export.FINAL_FIELDS
    assert [r["ithf_name"] or r["player"] for r in rows] == STANDINGS.splitlines()
    assert rows[0] == {
        "place": "1",
        "player": "Jan Novák",
        "ithf_id": "20037",
        "ithf_name": "Jan Novak",
        "club": "THC Praha",
        "nation": "CZE",
    }
    assert rows[14] == {
        "place": "15",
        "player": "Karel Nový",
        "ithf_id": "",
        "ithf_name": "",
        "club": "SK Kladno",
        "nation": "CZE",
    }


def test_the_switch_says_where_the_surname_stands_and_no_name_is_turned(day: Path, capsys) -> None:
    capsys.readouterr()
    tk("export", "--form", "--surname", "first", "-f", str(day))
    shown = capsys.readouterr().out
    assert "\nSurname is stated: first\n\nStandings:\n" + STANDINGS + "\n" in shown
    tk("export", "--surname", "first", "-f", str(day))
    saved = day.with_name("day-export") / "ithf-form.txt"
    assert "Surname is stated: first\n" in saved.read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as refused:
        cli.main(["tournament", "export", "--surname", "middle", "-f", str(day)])
    assert refused.value.code == 2


def test_a_nickname_and_a_suffix_go_to_the_form_as_the_ranking_writes_them(
    tmp_path: Path,
) -> None:
    """What the draw kept of each ranking line is what the form writes: the name whole,
    nickname and suffix too; a day not finished says so, and the empty fields are named."""
    file = tmp_path / "cup.yaml"
    file.write_text(
        "rules: ithf\ntables: 2\nplayers: [Raivis Miglinieks, Jiří Chylík, Jan Novák, Eva Malá]\n",
        encoding="utf-8",
    )
    t = Tournament(spec.load(file))
    entries = {
        "Raivis Miglinieks": {"rank": 1, "id": "9", "name": 'Raivis Miglinieks "The Cobra"'},
        "Jiří Chylík": {"rank": 2, "id": "8", "name": "Jiri Chylik ml."},
        "Jan Novák": {"rank": 3, "id": "7", "name": "Jan Novak"},
    }
    t.apply(clerk.draw(t, 1, list(entries), "", entries))
    form = export.form(t)
    names = dict(zip([n for _, n in t.placings()], form.standings, strict=True))
    assert names == {
        "Raivis Miglinieks": 'Raivis Miglinieks "The Cobra"',
        "Jiří Chylík": "Jiri Chylik ml.",
        "Jan Novák": "Jan Novak",
        "Eva Malá": "Eva Malá",
    }
    assert form.typed == ("Eva Malá",)
    assert form.notes()[:4] == [
        "Date: empty, and the form needs it",
        "Country: empty, and the form needs it",
        "City: empty, and the form needs it",
        "the final is not played yet: these are the standings so far",
    ]


def test_a_cup_without_a_ranking_shares_the_places_no_match_decided(cup: Path) -> None:
    """Groups of four, semi-finals, bronze and final, the better seed winning every match:
    places 1–4 decided by matches; the two groups' 3rds level on place and record, and the
    4ths, so one name a line in the draw's order, and said so."""
    for _ in range(50):
        t = open_tournament(cup)[0]
        todo = [m for m in t.fixtures() if m.result is None and m.home and m.away]
        if not todo:
            break
        m = todo[0]
        score = "1:0" if t.order.index(m.home) < t.order.index(m.away) else "0:1"
        tk("result", str(m.slot.round), m.slot.table, score, "-f", str(cup))
    form = export.form(open_tournament(cup)[0])
    assert form.finished and form.shared == ((5, 6), (7, 8))
    assert form.notes()[3:] == [
        "shared places 5–6, 7–8: one name a line, in the draw's order",
        "the draw used no ranking list: every name is written as typed",
    ]
    assert form.standings == tuple(n for _, n in open_tournament(cup)[0].placings())
    assert "\nAdditional info:\n" in form.text()


def test_the_country_is_the_english_name_of_its_code_and_a_code_it_cannot_name_is_said(
    tmp_path: Path,
) -> None:
    """The site's country list names countries in English: the file's `country:` code (IOC
    or ISO) is written as that name; a name is written as typed; a code the export cannot
    name is written as is, and the `--form` view says so."""
    assert export.country_name("CZE") == ("Czech Republic", False)
    assert export.country_name("lva") == ("Latvia", False)
    assert export.country_name("DEU") == export.country_name("GER") == ("Germany", False)
    assert export.country_name("Czech Republic") == ("Czech Republic", False)
    assert export.country_name("") == ("", False)
    file = tmp_path / "cup.yaml"
    file.write_text(
        "rules: ithf\ntables: 2\ncountry: XYZ\nplayers: [Ann, Bea, Cid, Dan]\n",
        encoding="utf-8",
    )
    made = export.form(Tournament(spec.load(file)))
    assert ("Country", "XYZ") in made.fields
    assert any("XYZ is a code this export cannot name" in n for n in made.notes())
    file.write_text(file.read_text(encoding="utf-8").replace("XYZ", "SVK"), encoding="utf-8")
    made = export.form(Tournament(spec.load(file)))
    assert ("Country", "Slovakia") in made.fields and not any("XYZ" in n for n in made.notes())
