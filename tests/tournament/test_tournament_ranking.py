"""The ITHF ranking as it is published, read by `tournament draw --ranking` as a desk types
it: a 24-player day seeded from a file laid out like the ITHF's `ranking.txt` (title with the
date, 7-field header, shared ranks, a nickname, `ml.`/`st.`, `???` and NUL) with the names
typed as entrants write them; then each list that is not what it claims, refused with its
file:line: field (exit 2, the ledger as it was) or read as docs/tournament.md says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ithfranking
import pytest

from timekeeper import cli

TIMEKEEPER = str(Path(sys.executable).with_name("timekeeper"))

# (rank, name as the ranking writes it, club, nation); the tournament's players among others
LISTED = [
    (1, "Jan Novak", "THC Praha", "CZE"),
    (2, "Ivan Popov", "Moskva", "RUS"),
    (3, 'Raivis Miglinieks "The Cobra"', "Riga HT", "LAT"),
    (4, "Jiri Chylik ml.", "THC Praha", "CZE"),
    (5, "Sergey Lebedev", "Moskva", "RUS"),
    (6, "Erik Aberg", "Stiga Stockholm", "SWE"),
    (6, "Tomas Cerny", "SK Kladno", "CZE"),  # a shared rank: seeded in the file's order
    (8, "Hakon Sorensen", "???", ""),
    (9, "Bjorn Oberg", "Stiga Stockholm", "\0"),
    (10, "Lars Hansen", "Oslo BHK", "NOR"),
    (11, "Mikko Virtanen", "Helsinki TH", "FIN"),
    (12, "Amund Fylling", "Oslo BHK", "NOR"),
    (13, "Pawel Lukasik", "Krakow", "POL"),
    (14, "Alexey Sokolov", "Moskva", "RUS"),
    (15, "Jurgen Muller", "Berlin Tischhockey", "GER"),
    (16, "Uwe Fuchs", "Berlin Tischhockey", "GER"),
    (17, "Janis Berzins", "Riga HT", "LAT"),
    (18, "Stale Ostby", "Oslo BHK", "NOR"),
    (19, "Anders Soderberg", "Stiga Stockholm", "SWE"),
    (20, "Antti Jarvinen", "Helsinki TH", "FIN"),
    (21, "Lukas Prochazka", "HC Tygr", "CZE"),
    (22, "Jiri Chylik st.", "HC Tygr", "CZE"),
    (23, "Grzegorz Kaminski", "Krakow", "POL"),
    (24, "Ondrej Kucera", "SK Kladno", "CZE"),
    (25, "Oleg Ivanov", "Moskva", "RUS"),
    (26, "Michal Kovac", "???", "SVK"),
    (27, "Jorg Kohler", "Berlin Tischhockey", "GER"),
    (28, "Jari Makinen", "Helsinki TH", "FIN"),
    (29, "Edgars Zarins", "Riga HT", "LAT"),
    (30, "Sami Lahteenmaki", "Helsinki TH", "FIN"),
    (31, "Wojciech Zuk", "Krakow", "POL"),
    (32, "Dmitry Smirnov", "Moskva", "RUS"),
    (33, "Peter Toth", "", "SVK"),
    (34, "Juraj Simko", "???", ""),
    (35, "Goran Ekstrom", "Stiga Stockholm", "SWE"),
    (36, "Karlis Ozolins", "Riga HT", "LAT"),
    (37, "Sergey Kuznetsov", "Moskva", "RUS"),
    (38, "Stefan Weiss", "Berlin Tischhockey", "GER"),
    (39, "Radek Ruzicka", "THC Praha", "CZE"),
    (40, "Maris Liepins", "Riga HT", "LAT"),
    (41, "Jyrki Hamalainen", "Helsinki TH", "FIN"),
    (42, "Soren Schafer", "Berlin Tischhockey", "GER"),
    (43, "Michal Wojcik", "Krakow", "POL"),
    (44, "Martin Varga", "", "SVK"),
    (45, "Oyvind Johansen", "Oslo BHK", "NOR"),
    (46, "Bjorn Nystrom", "Stiga Stockholm", "SWE"),
    (47, "Zdenek Hajek", "THC Praha", "CZE"),
    (48, "Andris Kalnins", "Riga HT", "LAT"),
    (49, "Dmitry Sokolov", "Moskva", "RUS"),
    (50, "Ludovit Lukac", "???", "\0"),
    (51, "Petr Marek", "SK Kladno", "CZE"),
    (51, "Jakub Horak", "HC Tygr", "CZE"),
    (51, "Mans Lindstrom", "Stiga Stockholm", "SWE"),  # the last rank below the lines
]
# the 24 entrants as they write themselves: diacritics, the other order, no nickname; two
# not on the list; Černý before Åberg, who shares his rank and is above him in the file
TYPED = {
    "Jan Novák": 1,
    "Raivis Miglinieks": 3,
    "Jiří Chylík ml.": 4,
    "Tomáš Černý": 6,
    "Åberg Erik": 6,
    "Håkon Sørensen": 8,
    "Björn Öberg": 9,
    "Virtanen Mikko": 11,
    "Paweł Łukasik": 13,
    "Jürgen Müller": 15,
    "Jānis Bērziņš": 17,
    "Anders Söderberg": 19,
    "Lukáš Procházka": 21,
    "Chylík Jiří st.": 22,
    "Ondřej Kučera": 24,
    "Michal Kováč": 26,
    "Jari Mäkinen": 28,
    "Sami Lähteenmäki": 30,
    "Dmitry Smirnov": 32,
    "Juraj Šimko": 34,
    "Kārlis Ozoliņš": 36,
    "Stefan Weiß": 38,
    "Karel Nový": 0,
    "Mia Berg": 0,
}


def published(rows: list[tuple[int, str, str, str]], day: str = "12.5.2026") -> str:
    return ithfranking.text(
        [
            ithfranking.line(rank, 20000 + 37 * i, name, club, nation, 3000 - 20 * rank)
            for i, (rank, name, club, nation) in enumerate(rows)
        ],
        day,
    )


def tk(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TIMEKEEPER, "tournament", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def new_day(folder: Path, names: list[str], rules: str = "ithf") -> Path:
    (folder / "players.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    file = folder / "day.yaml"
    argv = ["tournament", "new", str(file), "--rules", rules, "--names"]
    assert cli.main([*argv, str(folder / "players.txt"), "--tables", "4"]) == 0
    return file


def ledger(file: Path) -> bytes | None:
    path = file.with_suffix(".journal.jsonl")
    return path.read_bytes() if path.exists() else None


@pytest.mark.slow
def test_a_day_of_24_seeded_from_the_ranking_as_published(tmp_path: Path) -> None:
    (tmp_path / "ranking.txt").write_text(published(LISTED), encoding="utf-8")
    (tmp_path / "players.txt").write_text("\n".join(TYPED) + "\n", encoding="utf-8")
    assert (
        tk(tmp_path, "new", "day.yaml", "--rules", "ithf", "--names", "players.txt").returncode == 0
    )
    done = tk(tmp_path, "draw", "--ranking", "ranking.txt", "--seed", "5", "-f", "day.yaml")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    said = done.stdout
    assert "Tomáš Černý and Åberg Erik share rank 6" not in said  # the file's order, not typed
    assert "(Åberg Erik and Tomáš Černý share rank 6 on ranking.txt: seeded in its order)" in said
    assert "not on ranking.txt (2, unranked: drawn by lot after the 22 ranked)" in said
    assert "lines with the club ??? (unknown), read as no club" in said
    assert "lines with no nation (empty or NUL), read as unknown" in said

    event = json.loads((tmp_path / "day.journal.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert event["event"] == "draw" and event["method"] == "snake"
    assert event["ranking_date"] == "2026-05-12"
    ranks = {name: entry["rank"] for name, entry in event["ranking"].items()}
    assert ranks == {name: rank for name, rank in TYPED.items() if rank}
    assert event["ranking"]["Raivis Miglinieks"]["name"] == 'Raivis Miglinieks "The Cobra"'
    assert event["ranking"]["Jiří Chylík ml."]["name"] == "Jiri Chylik ml."
    assert event["ranking"]["Chylík Jiří st."]["name"] == "Jiri Chylik st."
    assert event["ranking"]["Håkon Sørensen"]["club"] == ""
    assert event["ranking"]["Björn Öberg"]["nation"] == ""
    # the snake over 3 groups of 8: the ranked best first (a shared rank in the file's order)
    order = [n for n in TYPED if TYPED[n] and n != "Tomáš Černý"]
    order.insert(order.index("Åberg Erik") + 1, "Tomáš Černý")
    assert event["order"][:22] == order
    assert set(event["order"][22:]) == {"Karel Nový", "Mia Berg"}
    lanes = {0: "1", 1: "2", 2: "3", 3: "3", 4: "2", 5: "1"}
    for at, name in enumerate(event["order"]):
        assert name in event["groups"][lanes[at % 6]], (at, name)

    assert tk(tmp_path, "export", "-f", "day.yaml").returncode == 0
    out = tmp_path / "day-export"
    about = json.loads((out / "standings.json").read_text(encoding="utf-8"))["tournament"]
    assert about["ranking_date"] == "12.5.2026"
    for sheet in ("groups.html", "rounds.html", "bracket.html"):
        assert "seeded from the ITHF ranking of 12.5.2026" in (out / sheet).read_text("utf-8")
    for path in [tmp_path / "day.journal.jsonl", *out.iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert "???" not in text and "\0" not in text and "\\u0000" not in text, path.name


def test_the_published_file_is_read_with_or_without_its_title(tmp_path: Path) -> None:
    from timekeeper.tournament import ranking

    file = tmp_path / "ranking.txt"
    text = published(LISTED)
    file.write_text("# downloaded from the ITHF\n" + text.split("\n", 1)[1], encoding="utf-8")
    untitled = ranking.read(file)  # a header after a comment is a header
    file.write_text(text, encoding="utf-8")
    titled = ranking.read(file)
    assert titled.entries == untitled.entries and len(titled.entries) == len(LISTED)
    assert str(titled.date) == "2026-05-12" and untitled.date is None
    file.write_text(text.replace("12.5.2026", "31.2.2026"), encoding="utf-8")
    with pytest.raises(ranking.ConfigError, match=r"ranking.txt:1: title: a date d.m.yyyy"):
        ranking.read(file)


def draw(file: Path, rows: str, *more: str) -> int:
    (file.parent / "ranking.txt").write_text(rows, encoding="utf-8")
    argv = ["tournament", "draw", "--ranking", str(file.parent / "ranking.txt"), "--seed", "3"]
    return cli.main([*argv, "-f", str(file), *more])


def test_what_is_not_a_regular_file_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_day(tmp_path, ["Jan Novák", "Petr Dvořák", "Erik Åberg", "Mia Berg"], "radegast")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = -1
    for source in ("/dev/zero", str(fifo), str(fifo)):
        argv = ["tournament", "draw", "--ranking", source, "-f", str(file)]
        assert cli.main(argv) == 2, source  # never read: no hang, no MemoryError
        assert f"{source}: not a regular file" in capsys.readouterr().err
        assert ledger(file) is None
        if writer < 0:  # the second time with a writer holding the pipe open
            writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            os.write(writer, b"1\t1\tJan Novak\tTHC\tCZE\n" * 100)
    os.close(writer)


@pytest.mark.parametrize(
    ("rows", "error"),
    [
        (
            [(1, "Jan Novak", "THC", "CZE"), ("²", "Petr Dvorak", "THC", "CZE")],
            "ranking.txt:4: rank: a rank 1 to 50000, not '²'",
        ),
        (
            [(1, "Jan Novak", "THC", "CZE"), (2, "Petr Dvorak", "THC", "CZE")],
            "ranking.txt:4: id: 20000 is 'Petr Dvorak' here and 'Jan Novak' on line 3",
        ),
        (
            [
                (1, "Jan Novak\u2028", "THC", "CZE"),
                (2, "Petr Dvorak\x1e\x85", "THC", "CZE"),
                (3, "Erik Aberg", "THC", "SWE"),
                (0, "Mia Berg", "THC", "SWE"),
            ],
            "ranking.txt:6: rank: a rank 1 to 50000, not '0'",
        ),
    ],
)
def test_a_line_that_is_not_a_ranking_line_is_refused_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list, error: str
) -> None:
    file = new_day(tmp_path, ["Jan Novák", "Petr Dvořák", "Erik Åberg", "Mia Berg"], "radegast")
    lines = [
        ithfranking.line(r, 20000 + 37 * i, n, c, x, 100) for i, (r, n, c, x) in enumerate(rows)
    ]
    if "id:" in error:
        lines[1] = lines[1].replace("20037", "20000")
    assert draw(file, ithfranking.text(lines)) == 2
    assert f"{tmp_path}/{error}" in capsys.readouterr().err
    assert ledger(file) is None


def test_two_entrants_on_one_line_or_one_on_two_are_refused_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_day(tmp_path, ["Jan Novák", "Novak Jan", "Petr Dvořák", "Mia Berg"], "radegast")
    assert draw(file, published(LISTED)) == 2
    err = capsys.readouterr().err
    assert (
        "ranking.txt:3: 'Jan Novák' and 'Novak Jan' are both 'Jan Novak' (rank 1, id 20000)" in err
    )
    assert ledger(file) is None
    file.with_suffix(".yaml").write_text(
        file.read_text(encoding="utf-8").replace('"Novak Jan"', '"Jiri Chylik"'), encoding="utf-8"
    )
    assert draw(file, published(LISTED)) == 2
    err = capsys.readouterr().err
    assert (
        "the player 'Jiri Chylik' fits 'Jiri Chylik ml.' (line 6, rank 4) and "
        "'Jiri Chylik st.' (line 24, rank 22)"
    ) in err
    assert ledger(file) is None


def test_a_ranking_naming_no_one_is_refused_and_under_half_is_said_loudly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["Jan Novak", "Petr Dvořák", "Erik Åberg", "Mia Berg", "Karel Nový"]
    file = new_day(tmp_path, names, "radegast")
    for rows in ("", ithfranking.text([]), published(LISTED[1:2])):
        assert draw(file, rows) == 2
        err = capsys.readouterr().err
        assert "names none of the 5 players (is it the ranking?)" in err, rows
        assert "`--unranked-ok` draws them all by lot" in err
        assert ledger(file) is None
    assert draw(file, published(LISTED[1:2]), "--unranked-ok") == 0
    assert "drawn (random) with seed 3" in capsys.readouterr().out
    file.with_suffix(".journal.jsonl").unlink()
    assert draw(file, published([(12, "Jan Novak", "THC", "CZE"), (13, "Erik Aberg", "", "")])) == 0
    captured = capsys.readouterr()
    assert "WARNING: only 2 of the 5 players are on ranking.txt" in captured.err
    assert "Petr Dvořák — did you mean" not in captured.err  # nothing close
    assert "Karel Nový — nothing close on ranking.txt" in captured.err
    assert "drawn (seeded pots) with seed 3" in captured.out


def test_a_plain_list_with_a_name_twice_says_so_and_moves_no_one_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_day(tmp_path, ["Ann", "Bob", "Cid", "Dan"], "pl-ko")
    assert draw(file, "# club ranking\nBob\nAnn\nbob\nCid\n") == 0
    out = capsys.readouterr().out
    assert "1 line naming a player again (first on line 2): the first counts" in out
    assert "(first ranking.txt:4)" in out
    assert "  seeds: 1. Bob, 2. Ann, 3. Cid, 4. Dan" in out
    event = json.loads(file.with_suffix(".journal.jsonl").read_text("utf-8").splitlines()[0])
    assert {n: e["rank"] for n, e in event["ranking"].items()} == {"Bob": 1, "Ann": 2, "Cid": 4}


def test_control_characters_in_a_name_or_club_are_stripped_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_day(tmp_path, ["Jan Novák", "Petr Dvořák", "Erik Åberg", "Mia Berg"], "radegast")
    rows = [
        (1, "Jan\0 Novak", "THC\u202e Praha", "CZE"),
        (2, "Petr Dvorak\u2066", "THC", "CZE"),
        (3, "Erik Aberg", "Stiga", "SWE"),
    ]
    assert draw(file, published(rows)) == 0
    out = capsys.readouterr().out
    assert "1 line with control characters (U+0000) stripped from the name" in out
    assert "1 line with control characters (U+202E) stripped from the club" in out
    assert "1 line with control characters (U+2066) stripped from the name" in out
    text = file.with_suffix(".journal.jsonl").read_text(encoding="utf-8")
    assert "\u202e" not in text and "\\u0000" not in text and "\u2066" not in text
    assert json.loads(text.splitlines()[0])["ranking"]["Jan Novák"]["club"] == "THC Praha"


def test_a_ranking_naming_no_one_names_the_near_misses_wherever_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal of a list that names nobody gives the near misses (the under-half
    warning's "did you mean"), not the first few players each with nothing close."""
    names = ["Jan Novak", "Petr Dvořák", "Erik Åberg", "Mia Berg", "Karel Nový"]
    file = new_day(tmp_path, names, "radegast")
    assert draw(file, published([(1, "Olli Rantanen", "", ""), (2, "Karel Novi", "", "")])) == 2
    err = capsys.readouterr().err
    assert "names none of the 5 players (is it the ranking?): " in err
    assert "Karel Nový — did you mean Karel Novi (rank 2)?; nothing close for the other 4;" in err
    assert "Jan Novak — nothing close" not in err
    assert ledger(file) is None


def test_only_one_player_on_the_list_is_said_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_day(tmp_path, ["Jan Novak", "Petr Dvořák", "Erik Åberg", "Mia Berg"], "radegast")
    assert draw(file, published([(12, "Jan Novak", "THC", "CZE")])) == 0
    assert "WARNING: only 1 of the 4 players is on ranking.txt;" in capsys.readouterr().err


def test_unranked_ok_without_a_ranking_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = new_day(tmp_path, ["Ann", "Bob", "Cid", "Dan"], "radegast")
    assert cli.main(["tournament", "draw", "--unranked-ok", "-f", str(file)]) == 2
    assert "--unranked-ok goes with --ranking LIST" in capsys.readouterr().err
    assert ledger(file) is None
