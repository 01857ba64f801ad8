"""What the desk's help, export and README say agrees with what they do."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from helpers import ROOT

from timekeeper import cli
from timekeeper.tournament import clerk, export
from timekeeper.tournament.ledger import open_tournament


def test_hall_serves_help_names_the_state_folder_the_code_uses() -> None:
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        cli.main(["hall", "serve", "--help"])
    text = " ".join(shown.getvalue().split())
    assert "journal's folder" not in text
    assert "~/.local/state/timekeeper" in text and "--access-log" in text


@pytest.mark.parametrize(
    ("argv", "foreign"),
    [
        (["hall", "start", "--listen", "9000"], "--listen 9000"),
        (["hall", "status", "--say"], "--say"),
        (["hall", "serve", "--at", "12:00:00"], "--at 12:00:00"),
        (["hall", "round", "1", "--profile", "ithf"], "--profile ithf"),
        (["hall", "practice", "--broker", "mqtt://127.0.0.1"], "--broker mqtt://127.0.0.1"),
    ],
)
def test_each_hall_command_takes_only_its_own_options(
    argv: list[str], foreign: str, capsys
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    assert f"unrecognized arguments: {foreign}" in capsys.readouterr().err


def test_hall_lists_its_commands_and_each_help_is_its_own() -> None:
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        cli.main(["hall", "--help"])
    listed = shown.getvalue()
    for action in ("start", "stop", "add", "status", "serve", "round", "announce", "practice"):
        assert f"\n    {action} " in listed, action
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit):
        cli.main(["hall", "round", "--help"])
    text = " ".join(shown.getvalue().split())
    assert "--say" in text and "--at" not in text and "serve:" not in text and "round:" not in text


def test_export_marks_a_lot_pending_only_once_the_group_is_complete(tmp_path: Path) -> None:
    file = tmp_path / "cup.yaml"
    file.write_text(
        "title: Lots\nrules: radegast\ntables: 2\nplayers:\n  - Adam\n  - Běla\n  - Cyril\n"
        "  - Dana\n",
        encoding="utf-8",
    )
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))
    for round_ in (1, 2, 3):
        for slot in [s for s in t.slots if s.round == round_]:
            ledger.record(t, clerk.result(t, round_, slot.table, "1:1"))
        lots = {row["lot"] for row in export.standing_rows(t)}
        if round_ < 3:  # every match drawn so far: tied, no lot to draw yet
            assert "pending" not in lots and "tied" in lots, (round_, lots)
        else:
            assert lots == {"pending"}


def test_the_readmes_finish_key_says_what_it_does() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`f` finish (the match is decided)" not in readme
    assert "`f` finish (ends the match once regulation is over" in readme
    assert "it does not stop the match early" in readme
