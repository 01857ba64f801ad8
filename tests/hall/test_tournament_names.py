"""Names checked once, at load: a table's name is one level of the hall's bus
topics, so `+`, `#`, `/`, NUL, empty or over 32 characters (and `all`, the topic of the
hall's commands to every table) are refused with file:line and the field; a player's name is
checked as every box checks a side's name (rules/commands.check_name: at most 32 printable
characters, also through YAML escapes). The longest names the file takes are on every box
after a round call; a calls file line no box could take is skipped and named."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import HALL_WAIT, wait_for
from helpers import cup_error as error_of
from helpers import write_cup as write

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.desk.callbook import CallBook, calls_path
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import spec

PLAYERS = "players: [Ann, Bob, Cid, Dan]\n"


def tk(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "timekeeper", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "table", ['"+"', '"#"', "a/b", '""', "x" * 33, "all", '"a\\0b"', '"a b"', "[1]", "true"]
)
def test_a_table_name_that_cannot_be_one_topic_level_is_refused_at_load(
    tmp_path: Path, table: str
) -> None:
    said = error_of(write(tmp_path, f"rules: radegast\ntables:\n  - 1\n  - {table}\n{PLAYERS}"))
    assert re.search(r"cup.yaml:4:5: tables\[1\]: a table's name is part of the hall's", said), said


def test_a_table_named_twice_is_named_by_its_line(tmp_path: Path) -> None:
    said = error_of(write(tmp_path, f"rules: radegast\ntables: [A, B, A]\n{PLAYERS}"))
    assert re.search(r"cup.yaml:2:16: tables\[2\]: table 'A' is named twice", said), said


@pytest.mark.slow
def test_draw_refuses_a_wildcard_table_with_exit_2_naming_file_line_and_field(
    tmp_path: Path,
) -> None:
    file = write(tmp_path, f'rules: radegast\ntables: ["1", "+"]\n{PLAYERS}')
    done = tk("tournament", "draw", "-f", str(file))
    assert done.returncode == 2, done
    assert f"{file}:2:15: tables[1]: a table's name is part of the hall's bus topics" in (
        done.stderr
    ), done.stderr
    assert not spec.ledger_path(file).exists()  # (nothing drawn, nothing written)


@pytest.mark.parametrize(
    ("player", "field", "why"),
    [
        ("X" * 33, "players[1]", "a name is at most 32 characters"),
        ('"a\\x07b"', "players[1]", "U+0007"),  # BEL through a YAML escape
        ('"a\\eb"', "players[1]", "U+001B"),
        ('"a\\x7fb"', "players[1]", "U+007F"),
        ('"a\\u200bb"', "players[1]", "U+200B"),
        ('{name: "a\\x07b", club: HC}', "players[1].name", "U+0007"),
        ("{name: " + "Ž" * 33 + "}", "players[1].name", "at most 32 characters"),
        ('"-"', "players[1]", "a name of 1 to 32 characters"),
    ],
)
def test_a_name_a_box_would_refuse_is_refused_at_load(
    tmp_path: Path, player: str, field: str, why: str
) -> None:
    text = f"rules: radegast\nplayers:\n  - Ann\n  - {player}\n  - Cid\n  - Dan\n"
    said = error_of(write(tmp_path, text))
    assert "cup.yaml:4:" in said and f": {field}: " in said and why in said, said


def test_a_name_is_kept_as_the_boxes_show_it(tmp_path: Path) -> None:
    """Composed and single-spaced (as check_name makes it at every box), so that the names
    the desk sends are the names the boxes show; two that are one there are one here."""
    text = "rules: radegast\nplayers: [Ann, 'Be\u0301la  Nová', Cid, Dan]\n"
    assert spec.load(write(tmp_path, text)).names == ("Ann", "Béla Nová", "Cid", "Dan")
    text = "rules: radegast\nplayers: [Ann, 'Béla Nová', 'Be\u0301la  Nová', Dan]\n"
    assert "'Béla Nová' is already player 2" in error_of(write(tmp_path, text))


@pytest.mark.slow
def test_draw_refuses_a_control_character_with_exit_2(tmp_path: Path) -> None:
    file = write(tmp_path, 'rules: radegast\nplayers: [Ann, "Bob\\x07", Cid, Dan]\n')
    done = tk("tournament", "draw", "-f", str(file))
    assert done.returncode == 2, done
    assert f"{file}:2:16: players[1]: a name must be printable text" in done.stderr, done.stderr


def test_a_calls_line_no_box_could_take_is_skipped_and_named(tmp_path: Path, caplog) -> None:
    """A call written before names were checked at load (a name over 32 characters, which
    every box refused): skipped with its file:line, the calls after it read as ever."""
    file = tmp_path / "cup.yaml"
    good = Pairing("A.2.1.x", 1, "A.2", "group A", "Cid", "Dan", "radegast", 1.0)
    bad = Pairing("A.1.1.x", 1, "A.1", "group A", "A" * 40, "Bob", "radegast", 1.0)
    calls_path(file).write_text(
        '{"confirmed": "Z.1"}\n' + bad.to_json().decode() + "\n" + good.to_json().decode() + "\n"
    )
    with caplog.at_level(logging.WARNING):
        book = CallBook(file)
        book.read()
    assert set(book.issued) == {"A.2.1.x"}
    assert f"{calls_path(file)}:2: not a call (home must be a name as the box shows it" in (
        caplog.text
    ), caplog.text


def longest_name(tmp_path: Path) -> int:
    """The longest player's name the tournament file takes (found by loading it)."""
    ok = 1
    for length in range(2, 200):
        names = ", ".join(f"{c * length}" for c in "ABCD")
        try:
            spec.load(write(tmp_path, f"rules: radegast\nplayers: [{names}]\n"))
        except ConfigError:
            break
        ok = length
    return ok


@pytest.mark.slow
def test_the_longest_names_the_file_takes_are_on_every_box_after_a_round_call(
    boxes, tmp_path: Path
) -> None:
    """Eight players with names as long as the file allows, four tables, four real boxes:
    `hall round 1` pairs every table, each box showing both names as sent."""
    length = longest_name(tmp_path)
    names = [(c + " Řehoř" + "ž" * length)[:length] for c in "ABCDEFGH"]
    file = write(
        tmp_path,
        "title: Long names\nrules: radegast\ntables: 4\nplayers:\n"
        + "".join(f"  - {n}\n" for n in names),
    )
    assert tk("tournament", "draw", "-f", str(file), "--seed", "31").returncode == 0
    url = boxes["broker"]["url"]
    boxes["start"]("1", "2", "3", "4")
    tables = boxes["tables"]
    wait_for(lambda: len(tables()) == 4, "four boxes joined", HALL_WAIT)
    done = tk("hall", "round", "1", "--tournament", str(file), "--broker", url)
    assert done.returncode == 0, done.stdout + done.stderr

    def shown() -> dict[str, tuple[str, str]]:
        out = {}
        for table, body in tables().items():
            p, s = body.get("pairing") or {}, body.get("status") or {}
            if p.get("round") == 1 and s.get("names") == {"home": p["home"], "away": p["away"]}:
                out[table] = (p["home"], p["away"])
        return out

    paired = wait_for(lambda: len(shown()) == 4 and shown(), "every table paired", HALL_WAIT)
    assert {n for pair in paired.values() for n in pair} == set(names)
    assert all(len(n) == length for n in names) and length == 32


def test_a_pairing_with_a_name_no_engine_takes_is_refused_and_the_engine_never_crashes() -> None:
    """Before: a pairing took 48 characters, the engine 32: the box's NAMES raised ValueError
    out of the runner's step (its thread gone). Now the pairing is refused at the box (its
    status says why) and the engine refuses such names as any command it cannot take."""
    from timekeeper.hall.bus.messages import BadMessage
    from timekeeper.hall.bus.pairing import parse_pairing
    from timekeeper.rules import profile
    from timekeeper.rules.commands import Action, Command, Refused
    from timekeeper.rules.engine import Engine

    long = Pairing("A.1.1.x", 1, "A.1", "group A", "A" * 40, "Bob", "radegast", 1.0)
    with pytest.raises(BadMessage, match="home must be a name as the box shows it"):
        parse_pairing(long.to_json())
    bell = Pairing("A.1.1.x", 1, "A.1", "group A", "Ann", "B\x7fob", "radegast", 1.0)
    with pytest.raises(BadMessage, match="away must be a name"):
        parse_pairing(bell.to_json())
    engine = Engine(profile.load("radegast"))
    with pytest.raises(Refused, match="at most 32 characters"):
        engine.handle(Command(Action.NAMES, names=("A" * 40, "Bob")), 0.0)
