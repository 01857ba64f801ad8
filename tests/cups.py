"""Tournaments the tests of more than one wing share: the clerk's rule and the desk's
command line play the same cup. Imported, never collected."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


# a best-of-3 final of two players at one table, its games on the series' quick profile
SERIES_NIGHT = """\
title: Series night
rules: {extends: radegast}
tables: 1
players: [Novák, Dvořák]
stages:
  knockout:
    tree: seeded
    profile: quick
    final_profile: quick
    best_of: 3
"""


def ithf_final_group(a: Sequence[str], b: Sequence[str]) -> Callable[[str, str], str]:
    """The ITHF day's final group A by hand: draws 1:1 but for these (home's goals first,
    from the named side); `a`, `b`: the basic groups' winners and runners-up."""
    special = {
        (a[0], b[1]): (2, 0),
        (a[1], a[2]): (1, 0),
        (a[1], a[3]): (3, 0),
        (a[2], a[3]): (2, 2),
        (a[1], b[0]): (0, 1),
        (a[1], b[2]): (0, 1),
        (a[2], b[3]): (1, 0),
        (a[3], b[0]): (3, 0),
    }

    def score(home: str, away: str) -> str:
        if (home, away) in special:
            x, y = special[home, away]
        elif (away, home) in special:
            y, x = special[away, home]
        else:
            x, y = 1, 1
        return f"{x}:{y}"

    return score


def ithf_placement_group(c: Sequence[str], d: Sequence[str]) -> Callable[[str, str], str]:
    """The ITHF day's placement group B by hand: the 3rd (`c`) beat the 4th (`d`) 2:0, but
    d_i beats c_i (from the same basic group, played again) 1:0; among the 3rd and among
    the 4th the better group wins 1:0."""

    def score(home: str, away: str) -> str:
        rank = {p: (0 if p in c else 1, (c if p in c else d).index(p)) for p in (*c, *d)}
        (hk, hi), (ak, ai) = rank[home], rank[away]
        if hk == ak:
            return "1:0" if hi < ai else "0:1"
        if hi == ai:
            return "0:1" if hk == 0 else "1:0"
        return "2:0" if hk == 0 else "0:2"

    return score


PLAYOFF = (
    "title: Play-off night\nrules: {extends: radegast}\ntables: 2\n"
    "players: [Novák, Dvořák, Svoboda, Černý]\nstages:\n  knockout:\n    tree: seeded\n"
    "    profile: ithf-playoff\n    final_profile: ithf-playoff\n"
)


def drawn(tmp_path: Path, best_of: str = "{F: 7, 3P: 5, SF: 3}") -> Path:
    file = tmp_path / "po.yaml"
    file.write_text(PLAYOFF + f"    best_of: {best_of}\n", encoding="utf-8")
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))  # seeds: 1. Černý, 2. Novák, 3. Svoboda, 4. Dvořák
    return file


class Published:
    def wait_for_publish(self, timeout: float) -> None:
        return None


class Client:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bool]] = []

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False):
        self.sent.append((topic, payload, retain))
        return Published()
