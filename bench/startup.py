"""Start-up until ready, as a newcomer sees it: `timekeeper run --profile ithf` in a real
terminal (a tmux pane) on a machine with no sound card, SDL's ALSA driver.

    .venv/bin/python bench/startup.py [--runs 3] [--driver alsa] [--cpu 0.25,0.10] [-- run args]

Prints, per run, when the first line appeared, when the no-sound-card message appeared, when
the match was ready (status line up, silent or not), the CPU time the box had used by then
(the figure a busy machine changes least: at a share f of a core, start-up takes at least
CPU s / f) and how many `ALSA lib` lines reached the screen. Where `run` offers to go on
silent, the bench presses Enter as a user would.
Each run has its own HOME, state folder and control socket; the tmux server is the bench's
own (-L) and is killed at the end. `--cpu 0.25,0.10` adds rows with the box held to 25 % and
10 % of one core (bench/cpubudget.py: a cgroup v1 cpu quota, as root; docs/pi.md says which
share stands for which Pi), after the rows at full speed, which are then one whole core held
the same way: each row's box has the first claim on its share, whatever else this machine
runs (the tmux server and this bench do not)."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpubudget import CpuBudgetUnavailable, cpu_budget, cpu_controller

ROOT = Path(__file__).resolve().parent.parent
TIMEKEEPER = ROOT / ".venv" / "bin" / "timekeeper"
SOCKET = f"tk-startup-{os.getpid()}"


def tmux(*args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False
    ).stdout


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) of a process and all its descendants so far."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, IndexError, ValueError):
        return total
    return total + sum(cpu_seconds(int(child)) for child in children)


def one_run(
    driver: str, extra: list[str], limit: float, group: Path | None = None
) -> dict[str, object]:
    home = Path(tempfile.mkdtemp(prefix="tk-startup-"))
    env = {"HOME": str(home), "XDG_RUNTIME_DIR": str(home)}
    if driver:  # (--driver "": SDL chooses, as on a fresh machine)
        env["SDL_AUDIODRIVER"] = driver
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    # held to a CPU share: a shell joins the group, then becomes the box (exec)
    held = f"sh -c 'echo $$ > {group} && exec \"$@\"' sh " if group else ""
    command = (
        f"cd {ROOT} && {held}env -u TIMEKEEPER_CONFIG -u PULSE_SERVER -u PULSE_RUNTIME_PATH "
        "-u SDL_AUDIODRIVER "
        f"{exports} {TIMEKEEPER} run --profile ithf {' '.join(extra)}; "
        "echo EXITED $?; sleep 60"
    )
    tmux("kill-server")
    start = time.monotonic()
    tmux("new-session", "-d", "-x", "100", "-y", "50", command)
    first = told = ready = cpu = None
    pressed = False
    screen = ""
    while time.monotonic() - start < limit:
        screen = tmux("capture-pane", "-p", "-J", "-S", "-500")
        t = time.monotonic() - start
        if first is None and screen.strip():
            first = t
        if told is None and ("No sound card" in screen or "cannot open" in screen):
            told = t
        if "Press Enter" in screen and not pressed:
            tmux("send-keys", "Enter")
            pressed = True
        if "IDLE" in screen:  # the status line is up: the box is ready
            ready = t
            pane = tmux("list-panes", "-F", "#{pane_pid}").split()
            cpu = cpu_seconds(int(pane[0])) if pane else None
            break
        if "EXITED" in screen:
            break
        time.sleep(0.05)
    tmux("send-keys", "q")
    time.sleep(0.3)
    tmux("kill-server")
    shutil.rmtree(home, ignore_errors=True)
    if os.environ.get("BENCH_SHOW"):
        print(screen)
    alsa = sum(1 for line in screen.splitlines() if line.startswith("ALSA lib"))
    exited = next((line for line in screen.splitlines() if line.startswith("EXITED")), "")
    return {
        "first": first,
        "told": told,
        "ready": ready,
        "alsa": alsa,
        "silent": "SILENT" in screen,
        "exit": exited.removeprefix("EXITED ").strip(),
        "ended": time.monotonic() - start,
        "cpu": cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--driver", default="alsa")
    parser.add_argument("--limit", type=float, default=60.0, help="give up after (s)")
    parser.add_argument(
        "--cpu",
        default="",
        help="also at these fractions of one core, e.g. 0.25,0.10 (cgroup v1 cpu quota; root)",
    )
    parser.add_argument("extra", nargs="*", help="more `run` arguments (after --)")
    args = parser.parse_args()
    if not TIMEKEEPER.exists():
        sys.exit("bench: run ./bootstrap.sh first")
    if subprocess.run(["which", "tmux"], capture_output=True).returncode:
        sys.exit("bench: tmux is missing (apt-get install tmux)")
    try:  # (with --cpu, the full-speed rows are one core, 100 %, held the same way)
        shares = [1.0, *(float(f) for f in args.cpu.split(",") if f.strip())]
    except ValueError:
        sys.exit(f"bench: --cpu {args.cpu}: fractions of a core, e.g. 0.25,0.10")
    budget = len(shares) > 1
    if budget:
        try:
            cpu_controller()
        except CpuBudgetUnavailable as error:
            sys.exit(f"bench: --cpu: {error}")
    print(f"run --profile ithf, SDL_AUDIODRIVER={args.driver or '(unset)'}, in a 100x50 tmux pane")
    print(
        f"{'cpu':>4}  {'run':>3}  {'1st line':>8}  {'told':>6}  {'ready':>6}  {'CPU s':>6}  "
        f"{'ALSA lib':>8}  {'SILENT':>6}  exit"
    )

    def secs(value: object) -> str:
        return "-" if value is None else f"{value:.2f}"

    try:
        for share in shares:
            with contextlib.ExitStack() as stack:
                group = stack.enter_context(cpu_budget(share)).procs if budget else None
                label = f"{share:.0%}" if budget else "-"
                for i in range(1, args.runs + 1):
                    r = one_run(args.driver, args.extra, args.limit, group)
                    exit_text = r["exit"] or "running"
                    if r["ready"] is None and r["exit"]:
                        exit_text += f" at {r['ended']:.1f} s"
                    print(
                        f"{label:>4}  {i:>3}  {secs(r['first']):>8}  {secs(r['told']):>6}  "
                        f"{secs(r['ready']):>6}  {secs(r['cpu']):>6}  {r['alsa']:>8}  "
                        f"{r['silent']!s:>6}  {exit_text}"
                    )
    finally:
        tmux("kill-server")
    return 0


if __name__ == "__main__":
    sys.exit(main())
