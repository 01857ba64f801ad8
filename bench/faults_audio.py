"""A frozen sound server: PulseAudio stopped with SIGSTOP mid-match while `timekeeper run
--audio pulse` plays through it. What did the match do, how much play time was counted
wrongly, and did the controls answer?

    python bench/faults_audio.py                # one 20-s freeze
    python bench/faults_audio.py --freeze 15 25 # one row per freeze length
    python bench/faults_audio.py --quick        # a 4-s freeze (smoke run)

Needs PulseAudio and its tools (./bootstrap.sh --bench). The server is private (bench/
audiolab.py) and killed at the end. Benchmarks are not tests: this measures and prints.
`scenario_frozen_server()` is also a row of bench/faults.py's table."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audiolab import PulseServer

from timekeeper.box.controls.socket_client import send

# one beep every 2 s: a dozen cues fall into a 20-s freeze
PROFILE = """\
title: frozen-server bench, marks every 2 s
prestart: 0
period: {length: 300, marks: 2, mark_beeps: single}
"""
ASK_TIMEOUT = 8.0  # s a bench client waits for an answer (the box's own limit is 5 s)


def _ask(sock: Path, line: str) -> tuple[dict | None, float, float]:
    """(the answer or None, when it was sent, seconds to the answer)."""
    sent = time.monotonic()
    try:
        answer = send(sock, line, timeout=ASK_TIMEOUT)
    except (OSError, ValueError):
        answer = None
    return answer, sent, time.monotonic() - sent


def _status(sock: Path) -> tuple[float, float]:
    """(play time, the monotonic time it stood for: the middle of the request)."""
    answer, sent, took = _ask(sock, "status")
    if not answer or not answer.get("ok"):
        raise RuntimeError(f"no status: {answer}")
    return answer["status"]["play_time"], sent + took / 2


def scenario_frozen_server(freeze: float = 20.0, audio: str = "pulse") -> dict[str, str]:
    """One match through a private PulseAudio server frozen for `freeze` seconds: a status
    every second and a pause/resume during the freeze, then SIGCONT; then a second freeze
    with SIGTERM in it. Returns a row of the faults table."""
    folder = Path(tempfile.mkdtemp(prefix="tk-freeze-", dir="/tmp"))
    (folder / "profiles").mkdir()
    (folder / "profiles" / "freeze.yaml").write_text(PROFILE)
    sock, events, errors = folder / "c.sock", folder / "events.jsonl", folder / "stderr.txt"
    pulse = PulseServer()
    with pulse as pulse_env, errors.open("w") as err:
        assert pulse.proc is not None
        server = pulse.proc.pid
        env = {
            **os.environ,
            **pulse_env,
            "TIMEKEEPER_PROFILES_PATH": str(folder / "profiles"),
            "XDG_STATE_HOME": str(folder / "state"),
            "PYTHONUNBUFFERED": "1",
        }
        box = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "run",
                "--profile",
                "freeze",
                "--start",
                "--fresh",
                "--no-keyboard",
                "--no-gpio",
                "--audio",
                audio,
                "--events",
                str(events),
                "--control",
                str(sock),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and box.poll() is None:
                answer, _, _ = _ask(sock, "status")
                if answer and answer["status"]["state"] == "running":
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError(f"the box did not start: {errors.read_text()[-1500:]}")
            time.sleep(3.0)  # the stream is steady
            play0, t0 = _status(sock)
            os.kill(server, signal.SIGSTOP)
            frozen_at = time.monotonic()
            latencies: list[float] = []
            asked = answered = 0
            slow: list[str] = []
            pause_error = None
            paused_at = resumed_at = None
            step = 0
            while time.monotonic() - frozen_at < freeze:
                step += 1
                line = "status"
                if paused_at is None and time.monotonic() - frozen_at >= min(3.0, freeze / 3):
                    line = "pause"
                elif (
                    paused_at is not None
                    and resumed_at is None
                    and time.monotonic() - paused_at >= min(3.0, freeze / 3)
                ):
                    line = "resume"
                answer, sent, took = _ask(sock, line)
                asked += 1
                if answer and answer.get("ok"):
                    answered += 1
                    latencies.append(took)
                slow.extend(
                    [f"{line} at +{sent - frozen_at:.1f} s: {took * 1e3:.0f} ms"]
                    if took > 0.2
                    else []
                )
                if line == "pause":
                    paused_at = sent
                    if answer and answer.get("ok"):
                        # positive: play counted that never happened
                        pause_error = answer["status"]["play_time"] - (play0 + sent - t0)
                elif line == "resume":
                    resumed_at = sent
                time.sleep(max(0.0, frozen_at + step * 1.0 - time.monotonic()))
            os.kill(server, signal.SIGCONT)
            thawed = time.monotonic()
            back = None
            while time.monotonic() - thawed < 20:
                if "audio is back" in errors.read_text():
                    back = time.monotonic() - thawed
                    break
                time.sleep(0.1)
            play1, t1 = _status(sock)
            expected = play0 + (paused_at or t1) - t0 + (t1 - resumed_at if resumed_at else 0)
            drift = play1 - expected  # the whole run's error in counted play
            # a second freeze, and SIGTERM in it
            os.kill(server, signal.SIGSTOP)
            time.sleep(2.0)
            box.send_signal(signal.SIGTERM)
            stopping = time.monotonic()
            try:
                box.wait(timeout=30)
                exit_took, code = time.monotonic() - stopping, box.returncode
            except subprocess.TimeoutExpired:
                exit_took, code = None, None
            os.kill(server, signal.SIGCONT)
        finally:
            if box.poll() is None:
                box.kill()
                box.wait()
            with contextlib.suppress(OSError):
                os.kill(server, signal.SIGCONT)
    tail = errors.read_text()
    cues = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    during = [c for c in cues if frozen_at <= c["due"] <= thawed]  # (the same monotonic clock)
    not_heard = sum(1 for c in during if c.get("heard") is False)
    late = [c["played"] - c["due"] for c in during if c.get("heard", True)]
    latency = f", max {max(latencies) * 1e3:.0f} ms" if latencies else ""
    did = (
        f"clock ran on; {len(during)} cues in the freeze: {not_heard} logged not heard"
        + (f", {len(late)} logged as heard (logged up to {max(late):.1f} s late)" if late else "")
        + (
            f"; audio back {back:.1f} s after SIGCONT"
            if back is not None
            else "; audio NOT back"
            if "audio lost" in tail
            else "; no audio fault seen"
        )
        + (
            "; SIGTERM mid-freeze: exit "
            + (f"{code} in {exit_took:.1f} s" if exit_took is not None else "hung >30 s")
        )
    )
    row = {
        "fault": f"sound server frozen {freeze:g} s (SIGSTOP), --audio {audio}",
        "what the match did": did,
        "play lost": (
            f"pause {pause_error:+.2f} s, run {drift:+.2f} s"
            if pause_error is not None
            else f"pause unanswered, run {drift:+.2f} s"
        ),
        "commands answered": f"{answered}/{asked}{latency}",
    }
    if os.environ.get("BENCH_VERBOSE"):
        print("\n".join(["slow answers:", *slow, "box log:", tail[-3000:]]), file=sys.stderr)
    if "Traceback" in tail:
        row["what the match did"] += " (TRACEBACK in stderr)"
    shutil.rmtree(folder, ignore_errors=True)
    return row


def print_table(rows: list[dict[str, str]]) -> None:
    keys = ["fault", "what the match did", "play lost", "commands answered"]
    widths = {k: max(len(k), *(len(r[k]) for r in rows)) for k in keys}
    print(" | ".join(k.ljust(widths[k]) for k in keys))
    print("-|-".join("-" * widths[k] for k in keys))
    for r in rows:
        print(" | ".join(r[k].ljust(widths[k]) for k in keys))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--freeze",
        type=float,
        nargs="+",
        default=[20.0],
        help="freeze lengths in seconds (default 20)",
    )
    parser.add_argument("--quick", action="store_true", help="one 4-s freeze")
    parser.add_argument(
        "--audio",
        nargs="+",
        default=["pulse"],
        help="the box's --audio, one row each (default: pulse; mixer: the fallback)",
    )
    args = parser.parse_args()
    freezes = [4.0] if args.quick else args.freeze
    print(
        f"bench/faults_audio.py: {os.cpu_count()} cpus, private PulseAudio "
        f"(a beep every 2 s; a status every 1 s and a pause/resume during the freeze)\n"
    )
    print_table([scenario_frozen_server(f, kind) for kind in args.audio for f in freezes])


if __name__ == "__main__":
    main()
