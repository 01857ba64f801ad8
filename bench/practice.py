"""Practice-hall bench: the director's evening as the docs type it, each command its own
process (docs/hall.md, "A whole evening in the practice hall"), timed.

`timekeeper tournament draw`, `timekeeper hall practice --tournament cup.yaml` until it says
`ready`, `hall round 1` (every table's pairing pushed), `hall start --at` a whole second,
and from the instant the round's matches are due to end (start + pre-start + the period,
the boxes end on their deadline) until `/api/board` counts every result in the group's table:
a round's end to the standings on the board (the board's page polls that JSON once a
second, so a screen shows it at most 1 s later). Then round 2 called and Ctrl-C: every
process gone.

    .venv/bin/python bench/practice.py [--tables 4] [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROFILE = "title: a bench match, 15 s\nprestart: 3\nperiod: {length: 15, marks: none, melody: 0}\n"
PRESTART, LENGTH = 3.0, 15.0
NAMES = ["Adam", "Běla", "Cyril", "Dana", "Emil", "Fany", "Gustav", "Hana", "Ivan", "Jana"]
BROKER = "mqtt://127.0.0.1:1884"


def tk(*args: str, cwd: Path, timeout: float = 60) -> tuple[float, str]:
    """(seconds, output) of one `timekeeper …` command, as typed in a terminal."""
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "timekeeper", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise SystemExit(
            f"bench: timekeeper {' '.join(args)}: exit {done.returncode}\n"
            f"{done.stdout}{done.stderr}"
        )
    return time.monotonic() - t0, done.stdout + done.stderr


def board(base: str) -> dict:
    with urllib.request.urlopen(f"{base}/api/board", timeout=5) as answer:
        return json.loads(answer.read())


def one_evening(folder: Path, tables: int) -> dict[str, float]:
    players = NAMES[: 2 * tables]
    (folder / "quick.yaml").write_text(PROFILE, encoding="utf-8")
    (folder / "cup.yaml").write_text(
        f"title: Bench cup\nrules: radegast\ntables: {tables}\n"
        f"players: [{', '.join(players)}]\n"
        f"stages:\n  groups: {{size: {len(players)}, advance: 2, profile: ./quick.yaml}}\n",
        encoding="utf-8",
    )
    tk("tournament", "draw", "-f", "cup.yaml", cwd=folder)
    t0 = time.monotonic()
    hall = subprocess.Popen(
        [sys.executable, "-m", "timekeeper", "hall", "practice", "--tournament", "cup.yaml"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    try:
        assert hall.stdout is not None
        for line in hall.stdout:
            lines.append(line)
            if line.strip() == "ready":
                break
        else:
            raise SystemExit("bench: hall practice ended:\n" + "".join(lines))
        ready = time.monotonic() - t0
        base = next(
            m.group(1) for x in lines if (m := re.search(r"board:\s+(http://\S+)/board", x))
        )
        push, _ = tk(
            "hall", "round", "1", "--tournament", "cup.yaml", "--broker", BROKER, cwd=folder
        )
        at = int(time.time()) + 6
        tk(
            "hall",
            "start",
            "--at",
            dt.datetime.fromtimestamp(at).strftime("%H:%M:%S"),
            "--broker",
            BROKER,
            cwd=folder,
        )
        due_end = at + PRESTART + LENGTH
        group = "A"
        while True:
            rows = board(base)["groups"][group]
            if sum(r["played"] for r in rows) >= 2 * tables:
                seen = time.time()
                break
            if time.time() > due_end + 30:
                raise SystemExit("bench: round 1's results never reached the board")
            time.sleep(0.02 if time.time() > due_end - 0.5 else 0.2)
        push2, _ = tk(
            "hall", "round", "2", "--tournament", "cup.yaml", "--broker", BROKER, cwd=folder
        )
        t1 = time.monotonic()
        os.killpg(hall.pid, signal.SIGINT)
        hall.wait(30)
        stopped = time.monotonic() - t1
        left = subprocess.run(["pgrep", "-g", str(hall.pid)], capture_output=True, text=True)
        return {
            "ready": ready,
            "push": push,
            "push2": push2,
            "board": seen - due_end,
            "stopped": stopped,
            "left": float(len(left.stdout.split())),
        }
    finally:
        if hall.poll() is None:
            os.killpg(hall.pid, signal.SIGKILL)
            hall.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    runs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="tk-practice-") as folder:
            runs.append(one_evening(Path(folder), args.tables))
    print(
        f"practice bench: {args.tables} tables, {2 * args.tables} players, 15-s matches, "
        f"{args.runs} evenings, {os.cpu_count()} cpus"
    )
    print("| figure | median | max |\n|---|---|---|")
    for key, what, scale in (
        ("ready", "`hall practice` to `ready` (s)", 1),
        ("push", "`hall round 1`, the command's whole run (s)", 1),
        ("board", "the round's due end → every result in /api/board's standings (ms)", 1000),
        ("push2", "`hall round 2` with round 1's results kept on the broker (s)", 1),
        ("stopped", "Ctrl-C → `hall practice` gone (s)", 1),
        ("left", "processes left after Ctrl-C", 1),
    ):
        values = [r[key] * scale for r in runs]
        print(f"| {what} | {statistics.median(values):.2f} | {max(values):.2f} |")


if __name__ == "__main__":
    main()
