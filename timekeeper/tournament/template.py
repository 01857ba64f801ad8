"""A new tournament file, written with comments so the desk can fill it in by hand."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from timekeeper.tournament.rulesets import BUILT_IN
from timekeeper.tournament.spec import LANGUAGES

STAGES = {
    "radegast": "stages:\n  groups:\n    size: 4          # a draw into groups of four, round "
    "robin\n    advance: 2       # the top two go to the knock-out\n  knockout:\n"
    "    tree: {tree:<11} # {tree_note}\n    third_place: true\n",
    "hokejbal": "stages:\n  groups:\n    size: {half:<12} # two groups (VHT 6: 8 teams or more)\n"
    "    advance: 3       # VHT 6: 1st to the semi-finals, 2nd and 3rd to the "
    "quarter-finals\n  knockout:\n    tree: vht6       # … and the last of each "
    "group play for the second-to-last place\n    third_place: true\n",
    "few": "stages:\n  groups:\n    size: {count:<12} # one group, everyone plays everyone\n"
    "    advance: 2\n  knockout:\n    tree: cross      # the top two play the final\n",
    "ithf": "stages:\n  groups:\n    size: 8          # basic groups of eight, round robin "
    "(`draw --ranking ranking.txt`: a snake by the ITHF ranking)\n  final:\n"
    "    A: {{places: [1, 2]}}   # the top two of every basic group; results between two of "
    "the same basic group carry over\n  placement:\n    B: {{places: [3, 4]}}   # the next "
    "two of every group: everyone plays everyone anew\n  playoffs:\n    A:\n      top: {top}"
    "           # A's best: a bracket by seed, bronze and final\n      best_of: {{default: 7, "
    "3P: 5}}   # every A play-off match best of seven, the bronze best of five\n",
    "pl-ko": "stages:\n  knockout:\n    tree: seeded     # drawn (or seeded by --ranking), "
    "byes to the best seeds\n    third_place: false\n",
}


def text(rules: str, players: Sequence[str], tables: int, title: str) -> str:
    if rules not in BUILT_IN:
        raise ValueError(f"rules: one of {', '.join(BUILT_IN)}")
    ball_hockey = rules.startswith("hokejbal")
    few = len(players) < (16 if rules == "ithf" else 8)
    stages = STAGES[
        "few" if (ball_hockey or rules == "ithf") and few else "hokejbal" if ball_hockey else rules
    ]
    groups = -(-len(players) // 4)
    cross = groups & (groups - 1) == 0
    stages = stages.format(
        half=-(-len(players) // 2),
        count=len(players),
        top=min(8, 2 * -(-len(players) // 8)),
        tree="cross" if cross else "seeded",
        tree_note="A1–B2, C1–D2 … B1–A2, D1–C2 …"
        if cross
        else f"{groups} groups: by seed (winners, then runners-up), byes",
    )
    names = "\n".join(f"  - {json.dumps(p, ensure_ascii=False)}" for p in players)
    return f"""\
# A tournament (docs/tournament.md). Change what you need, then:
#   timekeeper tournament draw -f THIS_FILE
title: {json.dumps(title, ensure_ascii=False)}
date: ""            # e.g. 2026-12-01 (for the sheets and the ITHF form)
place: ""           # the venue or city
country: ""         # e.g. CZE
# language: cs      # the round calls' and the desk's pages' (else the desk's config's):
#                   # {", ".join(LANGUAGES)}
start: "17:00"      # the first round (the sheets print each round's planned time)
rules: {rules:<12} # {", ".join(BUILT_IN)}, or a mapping (extends: …)
tables: {tables:<11} # how many (or a list of names: [A, B, C])
changeover: 120     # seconds between two matches at a table (for the evening's length)
# public: {{points: hidden, results_for_minutes: 15, freeze_last_rounds: 3}}
#                   # what the open pages keep back during the groups (docs/board.md)
players:            # one a line; or {{name: …, club: …, country: …}}
{names}
{stages}"""


def write(file: Path, rules: str, players: Sequence[str], tables: int, title: str) -> None:
    """Refuses to overwrite: a tournament file is the desk's, and its ledger depends on it."""
    with open(file, "x", encoding="utf-8") as stream:
        stream.write(text(rules, players, tables, title))
