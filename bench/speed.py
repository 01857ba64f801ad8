"""Speed figures of the engine, renders and start-up, printed as a table.

    python bench/speed.py            # full run
    python bench/speed.py --quick    # a smoke run (CI)

Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["TIMEKEEPER_PROFILES_PATH"] = ""  # the built-in profiles only, whoever runs it

from timekeeper.rules import profile
from timekeeper.rules.replay import parse_actions, replay
from timekeeper.sound.pack import default_pack_dir, load_pack
from timekeeper.sound.render import render

ACTIONS = "120:pause,135:resume,200:add=10"


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def startup_until_ready(repeat: int) -> list[float]:
    """Process start → 'ready' line (audio open and warm, pack decoded), dummy audio driver."""
    env = dict(os.environ, SDL_AUDIODRIVER=os.environ.get("SDL_AUDIODRIVER", "dummy"))
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "timekeeper",
                    "run",
                    "--audio",
                    "sdl",
                    "--profile",
                    "ithf",
                    "--no-keyboard",
                    "--control",
                    str(Path(tmp) / "c.sock"),
                    "--state-dir",
                    tmp,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                text=True,
            )
            assert proc.stderr is not None
            for line in proc.stderr:
                if "ready" in line:
                    times.append(time.perf_counter() - t0)
                    break
            proc.terminate()
            proc.wait(timeout=10)
    return times


def row(name: str, values: list[float], unit: str, extra: str = "") -> str:
    med = statistics.median(values)
    scale = 1000 if unit == "ms" else 1
    return (
        f"| {name:<38} | {med * scale:>9.2f} {unit:<2} | {min(values) * scale:>9.2f} | "
        f"{max(values) * scale:>9.2f} | {extra:<22} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    args = ap.parse_args()
    repeat = 2 if args.quick else 7

    print(
        f"timekeeper speed — python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
        f"{repeat} runs each (median, min, max)\n"
    )
    print(f"| {'what':<38} | {'median':>12} | {'min':>9} | {'max':>9} | {'note':<22} |")
    print(f"|{'-' * 40}|{'-' * 14}|{'-' * 11}|{'-' * 11}|{'-' * 24}|")

    steps = parse_actions(ACTIONS)
    for name in profile.available():
        p = profile.load(name)
        result = replay(p, steps if name == "ithf" else [])
        length = result.end - result.start
        times = timed(lambda p=p, name=name: replay(p, steps if name == "ithf" else []), repeat)
        speed = length / statistics.median(times)
        print(row(f"replay {name} (engine only)", times, "ms", f"{speed:,.0f}x real time"))

    ithf = profile.load("ithf")
    pack = load_pack(default_pack_dir(), ithf.cue_names)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "m.wav"
        result = render(ithf, pack, out, steps)
        seconds = result.end + 0.5
        times = timed(lambda: render(ithf, pack, out, steps), repeat)
        print(
            row(
                "render ithf + actions to WAV",
                times,
                "ms",
                f"{seconds / statistics.median(times):,.0f}x real time",
            )
        )
        final = profile.load("pl-3x6-final")
        fpack = load_pack(default_pack_dir(), final.cue_names)
        fresult = render(final, fpack, out)
        times = timed(lambda: render(final, fpack, out), max(1, repeat // 2))
        print(
            row(
                "render pl-3x6-final to WAV",
                times,
                "ms",
                f"{(fresult.end + 0.5) / statistics.median(times):,.0f}x real time",
            )
        )

    times = timed(lambda: load_pack(default_pack_dir()), repeat)
    print(row("decode the default pack (15 cues)", times, "ms"))
    print(
        row(
            "`timekeeper run` start-up until ready",
            startup_until_ready(repeat),
            "ms",
            "SDL dummy driver",
        )
    )


if __name__ == "__main__":
    main()
