"""`timekeeper tournament …` as the desk types it: exit codes, what is printed, what the
journal and the exports hold."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, dollar_steps

from timekeeper import cli
from timekeeper.tournament import export, spec
from timekeeper.tournament.events import EntryError, ResultEvent
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.results import Result
from timekeeper.tournament.state import Tournament

DOCS = ROOT / "docs" / "tournament.md"


def tk(file: Path, *argv: str) -> int:
    return cli.main(["tournament", argv[0], "-f", str(file), *argv[1:]])


def load(file: Path) -> Tournament:
    return open_tournament(file)[0]


def test_new_writes_a_file_that_loads_and_never_overwrites(tmp_path: Path, capsys) -> None:
    file = tmp_path / "club.yaml"
    assert cli.main(["tournament", "new", str(file), "--rules", "pl-ko", "--players", "6"]) == 0
    assert spec.load(file).knockout and not spec.load(file).groups
    assert tk(file, "draw", "--seed", "2") == 0  # a knock-out alone: III.4's final profile
    t = load(file)
    assert (t.profile_of("SF1"), t.profile_of("F")) == ("pl-3x6-ko", "pl-3x6-final")
    assert "3P" not in t.nodes  # the Polish seed has no 3rd-place match
    file.with_name("club.journal.jsonl").unlink()
    before = file.read_text(encoding="utf-8")
    assert cli.main(["tournament", "new", str(file)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert file.read_text(encoding="utf-8") == before


def test_an_ithf_file_from_new_plays_its_a_play_off_best_of_seven_and_the_bronze_of_five(
    tmp_path: Path, capsys
) -> None:
    file = tmp_path / "day.yaml"
    argv = ["tournament", "new", str(file), "--rules", "ithf", "--players", "32", "--tables", "4"]
    assert cli.main(argv) == 0
    assert tk(file, "draw", "--seed", "1") == 0
    t = load(file)
    assert {n.id: n.best_of for n in t.nodes.values()} == {
        **{m: 7 for m in ("QF1", "QF2", "QF3", "QF4", "SF1", "SF2", "F")},
        "3P": 5,
    }
    capsys.readouterr()
    assert tk(file, "bracket") == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].endswith("A1 – A8  best of 7") and shown[-1].endswith("best of 5"), shown


def test_the_docs_show_the_stages_new_writes_for_an_ithf_day(tmp_path: Path) -> None:
    """docs/tournament.md shows the `stages:` of `new --rules ithf --players 32` as written."""
    file = tmp_path / "day.yaml"
    assert cli.main(["tournament", "new", str(file), "--rules", "ithf", "--players", "32"]) == 0
    written = file.read_text(encoding="utf-8")
    stages = written[written.index("stages:\n") :]
    assert "```yaml\n" + stages + "```" in (ROOT / "docs" / "tournament.md").read_text("utf-8")


def test_the_draw_prints_its_seed_and_happens_once(cup: Path, capsys) -> None:
    assert tk(cup, "draw") == 2
    assert "already drawn (seed 11)" in capsys.readouterr().err
    again = cup.with_name("again.yaml")
    again.write_text(cup.read_text(encoding="utf-8"), encoding="utf-8")
    assert tk(again, "draw", "--seed", "11") == 0
    assert "seed 11" in capsys.readouterr().out
    assert load(again).groups == load(cup).groups  # the printed seed repeats the draw


def test_the_rules_cannot_change_under_a_drawn_tournament(cup: Path, capsys) -> None:
    assert tk(cup, "result", "1", "1", "2:2") == 0
    capsys.readouterr()
    text = cup.read_text(encoding="utf-8")
    cup.write_text(re.sub(r"(?m)^rules: radegast", "rules: hokejbal-3pt", text), encoding="utf-8")
    assert tk(cup, "standings") == 2  # a 2:2 that hokejbal-3pt cannot count: not re-ranked
    err = capsys.readouterr().err
    assert "cup.yaml: rules: hokejbal-3pt does not score as the radegast rules" in err
    assert "points" in err and "put the rules back" in err
    custom = "rules:\n  extends: radegast\n  title: our cup\n"  # the same scoring, renamed
    cup.write_text(re.sub(r"(?m)^rules: radegast.*$", custom, text), encoding="utf-8")
    assert tk(cup, "standings") == 0


def test_a_radegast_evening_beyond_the_seeds_venue_gets_a_note(tmp_path: Path, capsys) -> None:
    file = tmp_path / "big.yaml"
    assert cli.main(["tournament", "new", str(file), "--players", "40", "--tables", "6"]) == 0
    assert "at most 32 players a venue" in capsys.readouterr().out
    assert tk(file, "draw", "--seed", "3") == 0  # a note, not a refusal
    assert "this file has 40 players and 6 tables" in capsys.readouterr().out
    small = tmp_path / "small.yaml"
    assert cli.main(["tournament", "new", str(small), "--players", "32"]) == 0
    assert tk(small, "draw", "--seed", "3") == 0
    assert "note:" not in capsys.readouterr().out


def test_a_correction_needs_a_reason_and_both_stay_in_the_history(cup: Path, capsys) -> None:
    assert tk(cup, "result", "1", "1", "3:1") == 0
    assert tk(cup, "result", "1", "1", "1:3") == 2
    assert "a correction needs --reason" in capsys.readouterr().err
    assert tk(cup, "result", "1", "1", "1:3", "--reason", "home and away swapped") == 0
    results = [e for e in load(cup).history() if isinstance(e, ResultEvent)]
    assert [(e.result.home, e.result.away) for e in results] == [(3, 1), (1, 3)]
    assert results[-1].corrects is not None and results[-1].corrects.home == 3
    assert tk(cup, "history") == 0
    assert "home and away swapped" in capsys.readouterr().out


def test_a_replay_sets_the_result_aside_until_the_new_one(cup: Path, capsys) -> None:
    assert tk(cup, "result", "1", "2", "2:0") == 0
    assert tk(cup, "replay", "1", "2", "--reason", "timer failed (ITHF 4.5)") == 0
    m = load(cup).at(1, "2")
    assert m.result is None and m.replay
    assert tk(cup, "rounds") == 0
    assert "replay ordered" in capsys.readouterr().out
    assert tk(cup, "result", "1", "2", "2:1") == 0
    assert load(cup).at(1, "2").result.home == 2 and not load(cup).at(1, "2").replay


def test_a_late_result_never_holds_up_another_table(cup: Path, capsys) -> None:
    t = load(cup)
    for m in t.fixtures():
        if m.slot.round == 1 and m.slot.table != "4":
            assert tk(cup, "result", "1", m.slot.table, "1:0") == 0
    late = t.at(1, "4")  # round 1 at table 4 has no result yet
    for m in t.fixtures():  # round 2 goes on at every table whose players are free
        if m.slot.round == 2 and not {m.home, m.away} & {late.home, late.away}:
            assert tk(cup, "result", "2", m.slot.table, "2:2") == 0
    capsys.readouterr()
    assert tk(cup, "rounds", "--next") == 0
    out = capsys.readouterr().out
    assert "table 4: round 1" in out
    assert "still plays round 1 at table 4" in out or "(ready)" in out


def test_a_correction_that_would_change_a_played_knockout_match_is_refused(
    cup: Path, capsys
) -> None:
    t = load(cup)
    for m in t.fixtures():
        if not m.knockout:
            assert tk(cup, "result", str(m.slot.round), m.slot.table, "3:0") == 0
    t = load(cup)
    for group in t.groups:
        for tie in t.pending_lots(group):
            assert tk(cup, "lot", group, "--order", ",".join(tie)) == 0
    sf1 = load(cup).fixture("SF1")
    assert tk(cup, "result", str(sf1.slot.round), sf1.slot.table, "2:1") == 0
    first = next(m for m in load(cup).fixtures() if m.home == sf1.home and not m.knockout)
    flipped = "0:9" if first.home == sf1.home else "9:0"
    capsys.readouterr()
    assert tk(cup, "result", str(first.slot.round), first.slot.table, flipped, "--reason", "x") == 2
    assert "order a replay of SF1 first" in capsys.readouterr().err


def test_export_writes_documented_csv_json_a4_sheets_and_the_ithf_form(cup: Path) -> None:
    assert tk(cup, "result", "1", "1", "3:1") == 0
    out = cup.parent / "out"
    assert tk(cup, "export", "--out", str(out)) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "bracket.html",
        "final.csv",
        "groups.html",
        "ithf-form.txt",
        "results.csv",
        "results.json",
        "rounds.html",
        "standings.csv",
        "standings.json",
    ]
    with open(out / "results.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert tuple(rows[0]) == export.RESULT_FIELDS and rows[0]["home_goals"] == "3"
    with open(out / "standings.csv", encoding="utf-8") as stream:
        assert tuple(next(csv.DictReader(stream))) == export.STANDING_FIELDS
    data = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    assert set(data) == {"tournament", "groups", "final"} and data["tournament"]["seed"] == 11
    for sheet in ("groups.html", "bracket.html", "rounds.html"):
        html = (out / sheet).read_text(encoding="utf-8")
        assert "@page { size: A4" in html and "break-inside: avoid" in html
    ithf = (out / "ithf-form.txt").read_text(encoding="utf-8").splitlines()
    assert ithf[0] == "Tournament: cup" and len([n for n in ithf if n.startswith("Player")]) == 8
    documented = DOCS.read_text(encoding="utf-8")
    for field in (*export.RESULT_FIELDS, *export.STANDING_FIELDS, *export.FINAL_FIELDS):
        assert f"`{field}`" in documented, f"{field} is not documented in docs/tournament.md"


def test_a_bad_tournament_file_exits_2_with_its_line(tmp_path: Path, capsys) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text("rules: radegast\nplayers: [a, b]\ntables: many\n", encoding="utf-8")
    assert tk(file, "draw") == 2
    assert "bad.yaml:3:9: tables: must be a whole number" in capsys.readouterr().err


def test_the_file_may_come_from_the_environment(cup: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("TIMEKEEPER_TOURNAMENT", str(cup))
    assert cli.main(["tournament", "standings", "A"]) == 0
    assert "group A (still playing)" in capsys.readouterr().out


def test_a_player_who_withdraws_forfeits_every_match_still_to_play(cup: Path, capsys) -> None:
    t = load(cup)
    player = t.groups["A"][0]
    first = next(m for m in t.fixtures() if player in (m.home, m.away))
    assert tk(cup, "result", str(first.slot.round), first.slot.table, "1:1") == 0
    assert tk(cup, "withdraw", player.lower(), "--reason", "went home") == 0
    assert capsys.readouterr().out.count("\nforfeit: ") == 2
    t = load(cup)
    mine = [m for m in t.fixtures() if player in (m.home, m.away) and not m.knockout]
    assert [m.result.decided for m in mine] == ["regulation", "forfeit", "forfeit"]
    assert all(m.result.at_fault == ("home" if m.home == player else "away") for m in mine[1:])
    assert tk(cup, "withdraw", player, "--reason", "again") == 2


def test_a_withdrawal_naming_nobody_offers_the_closest_names(tmp_path: Path, capsys) -> None:
    file = tmp_path / "club.yaml"
    players = "[Adam, Běla, Cyril, Dana, Jan Novák, Svoboda]"
    file.write_text(f"rules: radegast\ntables: 2\nplayers: {players}\n", encoding="utf-8")
    assert tk(file, "draw", "--seed", "1") == 0
    capsys.readouterr()
    assert tk(file, "withdraw", "Adm", "--reason", "went home") == 2
    assert "'Adm' names nobody here; the closest: Adam" in capsys.readouterr().err
    assert tk(file, "withdraw", "novak", "--reason", "went home") == 2  # (accents aside)
    assert "the closest: Jan Novák" in capsys.readouterr().err
    assert tk(file, "withdraw", "Xyz", "--reason", "went home") == 2
    assert capsys.readouterr().err.rstrip().endswith("'Xyz' names nobody here")


def test_the_walkthrough_in_the_docs_runs_as_written(tmp_path: Path, monkeypatch, capsys) -> None:
    """docs/tournament.md's first example, command by command, prints what it shows (a `…`
    line ends what is shown; the draw gets the seed the page shows it printing)."""
    import shlex

    block = DOCS.read_text(encoding="utf-8").split("```\n", 2)[1]
    steps = dollar_steps(block)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "players.txt").write_text(
        "Adam\nBěla\nCyril\nDana\nEmil\nFiona\nGustav\nHana\n", encoding="utf-8"
    )
    assert len(steps) >= 8
    for command, shown in steps:
        argv = shlex.split(command)[1:]
        if argv[1] == "draw":
            argv += ["--seed", "4711"]
        assert cli.main(argv) == 0, command
        printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
        if "…" in [s.strip() for s in shown]:
            shown = shown[: [s.strip() for s in shown].index("…")]
            printed = printed[: len(shown)]
        assert printed == [s.rstrip() for s in shown] or not shown, command


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.slow
@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="needs Debian's chromium")
def test_the_sheets_print_on_a4_in_a_real_browser(cup: Path, tmp_path: Path) -> None:
    """Chromium's own print to PDF: every page of every sheet is A4 (595 × 842 pt)."""
    t = load(cup)
    for m in t.fixtures():
        if not m.knockout:
            assert tk(cup, "result", str(m.slot.round), m.slot.table, "2:1") == 0
    out = tmp_path / "out"
    assert tk(cup, "export", "--out", str(out)) == 0
    for sheet in ("groups", "bracket", "rounds"):
        pdf = out / f"{sheet}.pdf"
        subprocess.run(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--disable-extensions",
                f"--user-data-dir={tmp_path / 'chromium'}",
                "--no-pdf-header-footer",
                f"--print-to-pdf={pdf}",
                (out / f"{sheet}.html").as_uri(),
            ],
            capture_output=True,
            timeout=180,
            check=False,
        )
        boxes = re.findall(rb"/MediaBox \[([^\]]*)\]", pdf.read_bytes())
        assert boxes, f"{sheet}: no page printed"
        for box in boxes:
            width, height = (float(v) for v in box.split()[2:4])
            assert abs(width - 595) < 1 and abs(height - 842) < 1, (sheet, box)


@pytest.mark.parametrize(
    ("rules", "players"),
    [
        ("radegast", 32),
        ("radegast", 12),
        ("hokejbal", 6),
        ("hokejbal", 10),
        ("hokejbal-3pt", 8),
        ("pl-ko", 13),
    ],
)
def test_every_new_file_can_be_drawn(tmp_path: Path, rules: str, players: int) -> None:
    file = tmp_path / f"{rules}.yaml"
    assert (
        cli.main(["tournament", "new", str(file), "--rules", rules, "--players", str(players)]) == 0
    )
    assert tk(file, "draw", "--seed", "5") == 0
    t = load(file)
    assert sorted(p for g in t.groups.values() for p in g) == sorted(t.spec.names) or (
        not t.groups and sorted(t.order) == sorted(t.spec.names)
    )
    finals = [s for s in t.slots if s.match == "F"]
    assert finals and finals[0].round == max(s.round for s in t.slots)
    assert finals[0].table == t.spec.tables[0]


def _playoff(tmp_path: Path, profile: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    file = tmp_path / "playoff.yaml"
    file.write_text(
        "rules: radegast\ntables: 2\nplayers: [Novák, Dvořák, Svoboda, Černý]\nstages:\n"
        f"  knockout: {{tree: seeded, third_place: true, profile: {profile}, "
        f"final_profile: {profile}}}\n",
        encoding="utf-8",
    )
    assert tk(file, "draw", "--seed", "1") == 0
    return file


def test_a_sudden_death_overtime_is_typed_sd_and_ends_on_one_goal(tmp_path: Path, capsys) -> None:
    """ITHF 4.8: a drawn play-off match goes to an overtime one goal ends; `--ot` (an
    overtime played in full) is refused with what to type, a `--sd` two goals apart too, and
    the profile's missing shoot-out; the box reports such a game as sudden death."""
    file = _playoff(tmp_path, "ithf-playoff")
    capsys.readouterr()
    for typed, said in (
        (("2:4", "--ot"), "ithf-playoff's overtime is sudden death (one goal ends it): type --sd"),
        (("2:3", "--ot"), "type --sd, not --ot"),
        (("2:4", "--sd"), "a sudden death ends on one goal"),
        (("3:2", "--so"), "ithf-playoff has no shoot-out: overtime (--sd)"),
        (("2:2",), "a knock-out match has a winner: 2:2 needs overtime (--sd) with"),
    ):
        assert tk(file, "result", "SF2", *typed) == 2, typed
        assert said in capsys.readouterr().err, typed
    assert load(file).fixture("SF2").result is None
    assert tk(file, "result", "SF2", "2:3", "--sd") == 0
    assert load(file).fixture("SF2").result == Result(2, 3, "sudden_death")


def test_an_overtime_played_in_full_is_typed_ot_and_a_later_sudden_death_sd(
    tmp_path: Path, capsys
) -> None:
    """Radegast's play-off: 3 minutes played in full (any margin, `--ot`), then sudden
    death (`--sd`); hokejbal's 5 minutes are sudden death: `--ot` refused there."""
    file = _playoff(tmp_path, "radegast-playoff")
    assert tk(file, "result", "SF1", "5:2", "--ot") == 0
    assert tk(file, "result", "SF2", "2:3", "--sd") == 0
    assert tk(file, "result", "F", "3:2", "--so") == 2
    assert "radegast-playoff has no shoot-out: overtime (--ot, --sd)" in capsys.readouterr().err
    other = _playoff(tmp_path / "hokejbal", "hokejbal-playoff")
    assert tk(other, "result", "SF1", "3:2", "--ot") == 2
    assert "type --sd, not --ot" in capsys.readouterr().err
    assert tk(other, "result", "SF1", "3:2", "--sd") == 0
    assert tk(other, "result", "SF2", "3:2", "--so") == 0


def test_a_ledger_with_an_overtime_typed_ot_for_a_sudden_death_still_loads(tmp_path: Path) -> None:
    """A result the ledger holds already is read as it was taken: its score's rule (one goal
    for a sudden death), not the option the profile would take today."""
    file = _playoff(tmp_path, "ithf-playoff")
    t = load(file)
    sf1, sf2 = t.fixture("SF1").slot, t.fixture("SF2").slot
    t.apply(ResultEvent("SF2", sf2.round, sf2.table, Result(2, 3, "overtime")))
    with pytest.raises(EntryError, match="a sudden death ends on one goal"):
        t.apply(ResultEvent("SF1", sf1.round, sf1.table, Result(1, 3, "sudden_death")))


def test_an_entrys_time_has_one_format_whoever_writes_it() -> None:
    """The desk (from its wall clock) and the terminal's commands write `time` alike."""
    from timekeeper.tournament.ledger import stamp

    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", stamp(1_780_000_000.0))
    assert stamp(1_780_000_000.0) == stamp(1_780_000_000.4)
