"""Tournaments the tests of more than one wing share: the clerk's rule and the desk's
command line play the same cup. Imported, never collected."""

from __future__ import annotations

from pathlib import Path

from timekeeper.tournament import clerk
from timekeeper.tournament.ledger import open_tournament

CUP = """\
title: Corrections
rules: radegast
tables: 2
players: [Adam, Běla, Cyril, Dana, Emil, Fiona]
stages:
  groups: {size: 3, advance: 2}
  knockout: {tree: cross, third_place: true}
"""
STRENGTH = {"Adam": 6, "Běla": 5, "Cyril": 4, "Dana": 3, "Emil": 2, "Fiona": 1}


def groups_played(folder: Path):
    """The cup drawn and its groups played, the stronger side winning 1:0: A1 Cyril, A2 Emil,
    B1 Adam, B2 Běla; SF1 Cyril – Běla, SF2 Adam – Emil."""
    file = folder / "cup.yaml"
    file.write_text(CUP, encoding="utf-8")
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))
    for m in [m for m in t.fixtures() if not m.knockout]:
        score = "1:0" if STRENGTH[m.home] > STRENGTH[m.away] else "0:1"
        ledger.record(t, clerk.result(t, m.slot.round, m.slot.table, score))
    assert t.fixture("SF1").sides == "Cyril – Běla" and t.fixture("SF2").sides == "Adam – Emil"
    return t, ledger
