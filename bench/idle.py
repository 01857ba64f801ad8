"""The first cue after a long idle, on PipeWire with WirePlumber's suspend-on-idle as Pi OS
Desktop has it (suspend-node.lua, session.suspend-timeout-seconds 5): is it on time?

    python bench/idle.py               # 10 idle minutes, as a box waits between marks
    python bench/idle.py --idle 20     # 20 s (CI): still four times the 5-s suspend

On a Pi 5 a player that opens its stream for each sound was heard ~2 s late after idle
(raspberrypi/bookworm-feedback #307): the card is suspended and woken first. The box keeps
one stream running from start-up, writing silence between cues, so the sink should never go
idle. Three runs in the PipeWire stack (bench/stacks), each on a fresh null sink:

  alone       no box: a sound played once with paplay, then the sink's state watched; it must
              go SUSPENDED after ~5 s, or this stack does not suspend and nothing is shown
  box         the box's match (start, IDLE s of nothing, the end signal), no recorder: the
              sink's state watched all along (a recorder on its monitor would keep it awake)
  box, timed  the same match recorded (stacklab's recorder): the end signal's onset − due

Benchmarks are not tests: this measures and prints."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stacklab
from audiolab import SINK
from timing import run_match

from timekeeper.sound.pack import default_pack_dir, load_pack

POLL = 0.25  # s between looks at the sink's state


def state(env: dict[str, str]) -> str:
    """The bench sink's state as pipewire-pulse tells it: RUNNING, IDLE or SUSPENDED."""
    listed = subprocess.run(
        ["pactl", "-s", env["PULSE_SERVER"], "list", "short", "sinks"],
        capture_output=True,
        text=True,
    ).stdout
    for line in listed.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[1] == SINK:
            return fields[-1]
    return "?"


def watch(env: dict[str, str], seconds: float, proc: subprocess.Popen | None = None) -> dict:
    """The states seen for `seconds` (or until `proc` ends): each one's first time and the
    count of looks."""
    seen: dict[str, list[float]] = {}
    t0 = time.monotonic()
    while (now := time.monotonic() - t0) < seconds and (proc is None or proc.poll() is None):
        seen.setdefault(state(env), [now, 0])[1] += 1
        time.sleep(POLL)
    return {name: {"first": round(v[0], 1), "looks": int(v[1])} for name, v in seen.items()}


def profile_file(folder: Path, idle: float) -> Path:
    """A match that starts, then plays nothing for `idle` s but its end signal."""
    path = folder / "idle.yaml"
    path.write_text(f"title: idle {idle:g} s\nprestart: 0\nperiod:\n  length: {idle:g}\n")
    return path


def alone(env: dict[str, str]) -> dict:
    start = default_pack_dir() / "start.wav"
    subprocess.run(["paplay", "-s", env["PULSE_SERVER"], str(start)], check=True)
    return {"run": "alone (paplay once)", "states": watch(env, 10.0)}


def with_box(env: dict[str, str], folder: Path, idle: float) -> dict:
    cmd = [sys.executable, "-m", "timekeeper", "run", "--profile", str(profile_file(folder, idle))]
    cmd += ["--audio", "auto", "--start", "--no-keyboard", "--no-gpio"]
    cmd += ["--state-dir", str(folder), "--control", str(folder / "c.sock")]
    cmd += ["--events", str(folder / "events.jsonl")]
    log = folder / "box.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            cmd,
            env=dict(os.environ, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # (its status lines: only rows go back out)
            stderr=err,
        )
        deadline = time.monotonic() + 30
        while "ready" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        states = watch(env, idle + 5.0, proc)
        proc.terminate()
        proc.wait(timeout=30)
    told = [line for line in log.read_text().splitlines() if "audio" in line]
    return {"run": f"box, {idle:g} s idle", "states": states, "log": told[:3]}


def timed(env: dict[str, str], folder: Path, idle: float) -> dict:
    pack = load_pack(default_pack_dir())
    run = run_match(
        "stream", env, profile_file(folder, idle), [], pack, None, stack="pipewire", output="auto"
    )
    return {
        "run": f"box, {idle:g} s idle, recorded",
        "sink": run.sink,
        "errors": [round(e, 2) for e in run.errors_ms],
        "missing": run.missing,
    }


def inside(idle: float) -> None:
    with tempfile.TemporaryDirectory(prefix="tk-idle-") as tmp:
        folder = Path(tmp)
        with stacklab.server("pipewire") as env:
            stacklab.emit(alone(env))
        for name, run in (("watched", with_box), ("timed", timed)):
            (folder / name).mkdir()
            with stacklab.server("pipewire") as env:
                stacklab.emit(run(env, folder / name, idle))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--idle", type=float, default=600.0, help="seconds of silence before the cue (600)"
    )
    ap.add_argument("--inside", choices=("pipewire",), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        inside(args.idle)
        return
    rows = stacklab.run_inside("pipewire", "idle.py", ["--idle", f"{args.idle:g}"])
    print(
        f"timekeeper idle bench — PipeWire (WirePlumber's suspend-on-idle, 5 s), the first "
        f"cue after {args.idle:g} s of silence; load at the end {os.getloadavg()[0]:.2f}\n"
    )
    for row in rows:
        states = ", ".join(
            f"{name} from {v['first']:g} s ({v['looks']} looks)"
            for name, v in row.get("states", {}).items()
        )
        if "errors" in row:
            end = row["errors"][-1] if row["errors"] else float("nan")
            print(
                f"- {row['run']}: on {row['sink']}, start {row['errors'][0]:+.2f} ms, the cue "
                f"after the idle {end:+.2f} ms; missing {row['missing'] or 'none'}"
            )
        else:
            print(f"- {row['run']}: sink states {states}")
            for line in row.get("log", []):
                print(f"    {line}")


if __name__ == "__main__":
    main()
