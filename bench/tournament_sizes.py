"""The tournament at the file's limits: how long `draw` takes and how long its ledger line
is, against the ledger's line limit, for the largest fields the file takes (and the sizes
that once broke it, which the file now refuses at load).

    .venv/bin/python bench/tournament_sizes.py [--timeout 120]

Each row is `timekeeper tournament draw` and `rounds --next` run as typed, in a process of
their own, on a file written here: names as long as the file allows, in four-byte
characters (the longest line a name can make), tables named as long as allowed. Prints the
exit code, the seconds, the draw line's bytes and the ledger's limit."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timekeeper.tournament import ledger, spec

CASES = [  # (players, group size, tables, what)
    (256, 256, 64, "one group of 256 (refused)"),
    (256, 128, 64, "two groups of 128 (refused)"),
    (256, 4, 64, "256 in groups of 4"),
    (256, 8, 64, "256 in groups of 8"),
    (256, 9, 64, "256 in groups of 9 (refused)"),
    (42, 42, 64, "one group of 42 (861 matches)"),
]


def write(folder: Path, players: int, size: int, tables: int) -> Path:
    name = "𝄞" * (spec.MAX_PLAYER_NAME - 4)  # four bytes a character in UTF-8
    lines = [
        "rules: radegast",
        f"tables: [{', '.join(f'T{t:031d}' for t in range(tables))}]",
        "players:",
        *(f'  - "{name}{i:04d}"' for i in range(players)),
        "stages:",
        f"  groups: {{size: {size}, advance: 1}}",
        "  knockout: {tree: seeded}",
    ]
    file = folder / f"p{players}-s{size}.yaml"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


def run(file: Path, timeout: float, *argv: str) -> tuple[int | str, float, str]:
    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "timekeeper", "tournament", *argv, "-f", str(file)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start, ""
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return done.returncode, time.monotonic() - start, last


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=120.0)
    args = p.parse_args()
    print(
        f"ledger line limit {ledger.MAX_LINE:,} bytes; "
        f"names of {spec.MAX_PLAYER_NAME} characters, tables of 32"
    )
    print(f"{'field':<30} {'draw':>6} {'s':>7} {'line bytes':>11} {'next':>5} {'s':>6}  refusal")
    with tempfile.TemporaryDirectory() as tmp:
        for players, size, tables, what in CASES:
            file = write(Path(tmp), players, size, tables)
            code, seconds, err = run(file, args.timeout, "draw", "--seed", "1")
            journal = spec.ledger_path(file)
            line = len(journal.read_bytes()) if journal.exists() else 0
            after: tuple[int | str, float, str] = ("-", 0.0, "")
            if code == 0:
                after = run(file, args.timeout, "rounds", "--next")
            print(
                f"{what:<30} {code!s:>6} {seconds:>7.1f} {line:>11,} {after[0]!s:>5} "
                f"{after[1]:>6.1f}  {(err or after[2])[:90]}"
            )


if __name__ == "__main__":
    main()
