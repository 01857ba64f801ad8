"""docs/tournament.md's play-off in series as typed (the page's block: each command a
process of its own; the other cases run by the command line's main in this process): a
best-of-7 final with a game drawn and decided in sudden-death overtime and a game corrected,
a best-of-5 bronze won by a walkover; what each prints, the bracket with each game's score,
the exports by game, and the file's bad `best_of:` as the page quotes it."""

from __future__ import annotations

import csv
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, dollar_steps, in_process

DOCS = ROOT / "docs" / "tournament.md"
BIN = Path(sys.executable).parent / "timekeeper"  # .venv/bin/timekeeper, as a user types it


def section() -> str:
    text = DOCS.read_text(encoding="utf-8")
    return text.split("## A play-off in series\n", 1)[1].split("\n## ", 1)[0]


def typed(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN), *argv],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow  # (each command a process of its own, as typed)
def test_the_series_in_the_docs_run_as_written(tmp_path: Path) -> None:
    page = section()
    yaml = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "playoff.yaml").write_text(yaml, encoding="utf-8")
    after = page.split("```yaml\n", 1)[1].split("```\n", 1)[1]
    block = after.split("```\n", 2)[1]
    steps = dollar_steps(block)
    assert len(steps) >= 12
    for command, shown in steps:
        done = typed(shlex.split(command)[1:], tmp_path)
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.splitlines() == shown, command
    # no game after the series is decided, said as the page says it
    done = typed(["tournament", "result", "F", "2:1", "-f", "playoff.yaml"], tmp_path)
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert said in " ".join(page.split()), said
    with open(tmp_path / "playoff-export" / "results.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    final = [r for r in rows if r["match"] == "F"]
    assert [(r["game"], r["home_goals"], r["away_goals"], r["decided"]) for r in final] == [
        ("", "4", "2", "series"),
        ("1", "3", "1", "regulation"),
        ("2", "3", "4", "sudden_death"),
        ("3", "1", "2", "regulation"),
        ("4", "4", "2", "regulation"),
        ("5", "5", "1", "regulation"),
        ("6", "2", "1", "regulation"),
    ]
    assert [r["corrections"] for r in final] == ["1", "0", "0", "1", "0", "0", "0"]
    bronze = [(r["game"], r["decided"], r["at_fault"]) for r in rows if r["match"] == "3P"]
    assert bronze == [("", "series", "home"), ("1", "regulation", ""), ("2", "walkover", "home")]
    sheet = (tmp_path / "playoff-export" / "bracket.html").read_text(encoding="utf-8")
    assert "best of 7 · 1: 3:1 · 2: 3:4 (SD) · 3: 1:2 · 4: 4:2 · 5: 5:1 · 6: 2:1" in sheet


def test_a_bad_best_of_is_refused_as_the_docs_say(tmp_path: Path) -> None:
    page = section()
    yaml = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "playoff.yaml").write_text(yaml.replace("F: 7", "F: 4"), encoding="utf-8")
    done = in_process("tournament", "draw", "-f", "playoff.yaml", cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "playoff.journal.jsonl").exists()
    said = done.stderr.strip().removeprefix("timekeeper: ")
    assert " ".join(said.split()) in " ".join(page.split()), said


def test_a_player_who_withdraws_mid_series_walks_it_over_and_no_game_follows(
    tmp_path: Path,
) -> None:
    """The newcomer's case: the final at 1:0 in games, the loser withdraws: the series is
    a walkover (the bracket says W.O., the export's series row is in games), and a game
    typed after it is refused."""
    page = section()
    yaml = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "playoff.yaml").write_text(yaml, encoding="utf-8")
    for argv in (
        ["draw", "--seed", "1"],
        ["result", "SF1", "2:1"],
        ["result", "SF2", "2:3", "--sd"],
        ["result", "F", "3:1"],
        ["withdraw", "Svoboda", "--reason", "ill"],
    ):
        done = in_process("tournament", *argv, "-f", "playoff.yaml", cwd=tmp_path)
        assert done.returncode == 0, (argv, done.stderr)
    done = in_process("tournament", "bracket", "-f", "playoff.yaml", cwd=tmp_path)
    final = next(line for line in done.stdout.splitlines() if line.startswith("F "))
    assert "W.O." in final, final
    done = in_process("tournament", "result", "F", "2:1", "-f", "playoff.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "decided" in done.stderr, done.stderr
