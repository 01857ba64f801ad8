"""Figures of the table-side box: what a journal write costs, how fast a box killed mid-match
is back (stopped at its journaled time), and how much writing a day of matches means.

    python bench/box.py            # full run
    python bench/box.py --quick    # a smoke run (CI)

Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["TIMEKEEPER_PROFILES_PATH"] = ""

from timekeeper.box.controls.socket_client import send
from timekeeper.box.journal import FILE_NAME, Journal
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine


def journal_writes(count: int, folder: Path) -> list[float]:
    """One atomic journal write each (temporary file, fsync, rename, fsync of the folder)."""
    engine = Engine(profile.load("pl-3x6"))
    engine.handle(Command(Action.START), 0.0)
    journal = Journal(folder, engine)
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        journal.save(1.0 + i * 0.5)  # a new play time each time: a real write
        times.append(time.perf_counter() - t0)
    return times


def _start(cmd: list[str], env: dict, sock: Path) -> tuple[subprocess.Popen, float]:
    """Start a box; (the process, seconds until its socket answers)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while True:
        try:
            send(sock, "status")
            return proc, time.perf_counter() - t0
        except (ConnectionError, OSError):
            time.sleep(0.005)


def recovery(repeat: int) -> list[tuple[float, float]]:
    """kill -9 a box mid-match; (seconds from the new process's start until it answers,
    stopped; play time lost against the moment of the kill)."""
    out = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            env = dict(
                os.environ,
                SDL_AUDIODRIVER="dummy",
                GPIOZERO_PIN_FACTORY="mock",
                STATE_DIRECTORY=tmp,
                TIMEKEEPER_CONTROL=f"{tmp}/c.sock",
            )
            cmd = [
                sys.executable,
                "-m",
                "timekeeper",
                "run",
                "--audio",
                "sdl",
                "--profile",
                "radegast",
                "--no-keyboard",
            ]

            proc, _ = _start(cmd, env, Path(tmp) / "c.sock")
            send(Path(tmp) / "c.sock", "start")
            time.sleep(random.uniform(3.0, 4.0))  # anywhere between two journal writes
            played = send(Path(tmp) / "c.sock", "status")["status"]["play_time"]
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            again, ready = _start(cmd, env, Path(tmp) / "c.sock")
            back = send(Path(tmp) / "c.sock", "status")["status"]
            assert back["state"] == "stopped"
            out.append((ready, played - back["play_time"]))
            again.terminate()
            again.wait(timeout=10)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    args = ap.parse_args()
    writes, kills = (50, 1) if args.quick else (500, 5)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_STATE_DIR")) as tmp:
        w = sorted(journal_writes(writes, Path(tmp)))
        size = (Path(tmp) / FILE_NAME).stat().st_size
    r = recovery(kills)
    p99 = w[min(len(w) - 1, int(len(w) * 0.99))]
    print(f"timekeeper box — python {sys.version.split()[0]}, {os.cpu_count()} cpus\n")
    print("| what | median | p99 / max | note |")
    print("|---|---|---|---|")
    print(
        f"| journal write (atomic, 2 fsyncs), {writes}x | {statistics.median(w) * 1e3:.2f} ms "
        f"| {p99 * 1e3:.2f} / {w[-1] * 1e3:.2f} ms | {size} bytes a write |"
    )
    print(
        f"| writes while a clock runs | 1 a second | | 3,600 an hour of play, "
        f"{3600 * size / 1e6:.1f} MB of journal an hour |"
    )
    ready = [x for x, _ in r]
    lost = [x for _, x in r]
    print(
        f"| kill -9 mid-match → box answers again, stopped ({kills}x) | "
        f"{statistics.median(ready) * 1e3:.0f} ms | {max(ready) * 1e3:.0f} ms | "
        "process start to ctl answer, dummy audio |"
    )
    print(
        f"| play time not journaled at the kill | {statistics.median(lost):.2f} s | "
        f"{max(lost):.2f} s | at most the 1-s journal interval |"
    )
    print(
        f"\n(journal folder: {os.environ.get('BENCH_STATE_DIR') or tempfile.gettempdir()}; "
        "set BENCH_STATE_DIR to measure the SD card)"
    )


if __name__ == "__main__":
    main()
