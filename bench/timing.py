"""Timing bench: real matches through a real audio server, both audio paths side by side.

    python bench/timing.py             # 60-s match on each path + CPU by chunk size (~5 min)
    python bench/timing.py --quick     # short smoke run (CI, about a minute)
    python bench/timing.py --soak      # a 30-minute match on each path (about 65 min)
    python bench/timing.py --paths stream --soak   # only one path
    python bench/timing.py --web-clients 50        # with 50 display pages open (WebSocket)
    python bench/timing.py --quick --stack pulse,pipewire,alsa-paced   # the Pi's own stacks
    python bench/timing.py --stack pipewire --conditions quiet,loaded,cpu25,cpu10

`--stack` (repeatable, or a comma list): the stream path on each sound stack a Pi runs, one
row per stack and condition (bench/stacklab.py: PulseAudio here; PipeWire and a paced ALSA
device in Bookworm chroots that bench/stacks/*.sh build once; the PipeWire graph's quantum
is forced while it records). `--conditions`: quiet, loaded (stress-ng --cpu 2), cpu25 and
cpu10 (the box held to 25 % / 10 % of one core by a cgroup quota).

A private PulseAudio server (null sink, 48 kHz) is started and killed by the bench; parec
records its monitor; every cue of the run's `--events` file is looked for in the recording
and its onset compared with its due time. Also CPU and memory from /proc, start-up until
ready, render speed, and button (gpiozero mock pin) → engine command latency.
Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["TIMEKEEPER_PROFILES_PATH"] = ""

import stacklab
from audiolab import RATE, PulseServer, find_onset
from standin_mic import PCM as STANDIN

from timekeeper.box.controls.socket_client import send
from timekeeper.rules import profile
from timekeeper.sound.pack import default_pack_dir, load_pack

HERE = Path(__file__).resolve().parent
ANSWER_CUES = {"prestart", "pause", "resume", "time_added"}  # sounded when a command comes
TICK = os.sysconf("SC_CLK_TCK")
TARGETS = {"max": 2.0, "cpu": 0.5, "rss": 45.0, "startup": 500.0, "render": 600.0, "button": 1.0}


@dataclass
class Run:
    path: str
    startup_ms: float = 0.0
    cpu_percent: float = 0.0
    rss_mb: float = 0.0
    errors_ms: list[float] = field(default_factory=list)  # timed cues, in order
    first_ms: float | None = None  # the first timed cue (the start signal); None: not found
    first_answer_ms: float | None = None  # the first cue after start-up (pre-start, on START)
    answers_ms: list[float] = field(default_factory=list)  # command-answer cues
    presses_ms: list[float] = field(default_factory=list)  # a command sent → its answer heard
    missing: list[str] = field(default_factory=list)
    rss_parts: str = ""  # private (anonymous) and shared-library (file) pages at the end
    dropouts: list[str] = field(default_factory=list)  # cues heard with a gap or a change
    sink: str = ""  # the stream's sink, as the box's ready line names it
    web_messages: int = 0  # live statuses the open pages received (--web-clients)


def proc_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def proc_rss_mb(pid: int, key: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def schedule(soak: bool, quick: bool) -> list[tuple[float, str]]:
    """Operator commands, seconds after the start signal, kept clear of the marks."""
    if quick:
        return [(2.0, "pause"), (4.0, "resume"), (8.5, "add 2")]
    if not soak:
        return [(15.0, "pause"), (20.0, "resume"), (32.0, "add 10")]
    out = []
    for k in range(6):
        out += [(300 * k + 93, "pause"), (300 * k + 98, "resume"), (300 * k + 203, "add 10")]
    return out


class LivePages:
    """N display pages' worth of WebSocket clients on /api/live, each taking every status
    the box pushes (what a browser's display page does), on a thread of their own."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count, self.messages, self.connected = port, count, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LivePages:
        self._thread.start()
        deadline = time.monotonic() + 20
        while self.connected < self.count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        import asyncio

        import aiohttp

        async def page(n: int) -> None:
            # each page from a loopback address of its own (127.0.1.2, …), as displays on a
            # hall's LAN: the box caps live pages per address (web/server.py)
            local = (f"127.0.{1 + n // 250}.{2 + n % 250}", 0)
            async with (
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=local)) as session,
                session.ws_connect(f"http://127.0.0.1:{self.port}/api/live") as ws,
            ):
                self.connected += 1
                while not self._stop.is_set():
                    try:
                        msg = await ws.receive(timeout=0.5)
                    except TimeoutError:
                        continue
                    if msg.type is not aiohttp.WSMsgType.TEXT:
                        return
                    self.messages += 1

        async def main() -> None:
            await asyncio.gather(*(page(n) for n in range(self.count)), return_exceptions=True)

        asyncio.run(main())


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_match(
    path: str,
    env: dict[str, str],
    profile_file: Path,
    actions,
    pack,
    chunk: int | None,
    web_clients: int = 0,
    stack: str = "pulse",
    preexec=None,
    output: str | None = None,
) -> Run:
    """`stack` (bench/stacklab.py) says how the run is recorded; `preexec`, a function the
    box's process runs before it starts (a CPU budget)."""
    result = Run(path)
    recorder = stacklab.recorder(stack, env, realtime=True)  # (one recorder: audiolab._raise)
    time.sleep(0.5)  # the recorder is running before the program starts
    with tempfile.TemporaryDirectory(prefix="tk-bench-") as tmp:
        events, sock = Path(tmp) / "events.jsonl", Path(tmp) / "ctl.sock"
        cmd = [
            sys.executable,
            "-m",
            "timekeeper",
            "run",
            "--profile",
            str(profile_file),
            "--audio",
            (output or "auto") if path == "stream" else path,
            "--start",
            "--no-keyboard",
            "--control",
            str(sock),
            "--events",
            str(events),
            "--state-dir",
            tmp,
        ]
        if chunk:
            cmd += ["--audio-chunk", str(chunk)]
        port = free_port()
        if web_clients:
            cmd += ["--web", str(port)]
            cmd.remove("--start")  # the pages open first, then the match starts
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            env=dict(os.environ, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=preexec,
        )
        assert proc.stderr is not None
        log: list[str] = []
        for line in proc.stderr:
            log.append(line)
            if "ready" in line:
                result.startup_ms = (time.perf_counter() - t0) * 1000
                if "audio stream on " in line:
                    result.sink = line.split("audio stream on ", 1)[1].split()[0]
                break
        else:
            raise SystemExit(f"bench: timekeeper run ({path}) failed:\n{''.join(log)}")
        threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()
        pages = contextlib.ExitStack()
        if web_clients:
            opened = pages.enter_context(LivePages(port, web_clients))
            if opened.connected < web_clients:
                raise SystemExit(f"bench: only {opened.connected} of {web_clients} pages opened")
            time.sleep(1.0)
            send(sock, "start")

        def cues() -> list[dict]:
            if not events.exists():
                return []
            return [json.loads(x) for x in events.read_text().splitlines() if x.strip()]

        start = wait_for(lambda: next((c for c in cues() if c["cue"] == "start"), None), 30)
        cpu0, t_cpu0 = proc_ticks(proc.pid), time.monotonic()
        rss = proc_rss_mb(proc.pid)
        sent: list[float] = []  # when each command was sent (the box's clock: monotonic)
        for at, line in actions:
            while time.monotonic() < start["due"] + at:
                time.sleep(min(0.5, start["due"] + at - time.monotonic()))
                rss = max(rss, proc_rss_mb(proc.pid))
            sent.append(time.monotonic())
            answer = send(sock, line)
            if not answer.get("ok"):
                print(f"  ({path}: {line} refused: {answer.get('error')})", file=sys.stderr)
        end = None
        while end is None:
            time.sleep(0.5)
            rss = max(rss, proc_rss_mb(proc.pid))
            end = next((c for c in cues() if c["cue"] == "end"), None)
            if proc.poll() is not None:
                raise SystemExit(
                    f"bench: timekeeper run ({path}) died (exit {proc.returncode}):\n{''.join(log)}"
                )
        cpu1, t_cpu1 = proc_ticks(proc.pid), time.monotonic()
        result.cpu_percent = (cpu1 - cpu0) / TICK / (t_cpu1 - t_cpu0) * 100
        result.rss_mb = max(rss, proc_rss_mb(proc.pid, "VmHWM"))
        result.rss_parts = (
            f"RssAnon {proc_rss_mb(proc.pid, 'RssAnon'):.1f} MB + RssFile "
            f"{proc_rss_mb(proc.pid, 'RssFile'):.1f} MB"
        )
        time.sleep(3.0)  # the end signal (2.5 s) plays out from its due, up to the lead after
        pages.close()
        if web_clients:
            result.web_messages = opened.messages
        proc.terminate()
        proc.wait(timeout=60)  # (a loaded machine: other jobs at load 20+)
        played = cues()
    recording = recorder.stop().copy()  # (found cues are taken out of it, below)
    if keep := os.environ.get("TK_BENCH_KEEP"):  # (a folder: the recording, its cues)
        Path(keep).mkdir(parents=True, exist_ok=True)
        recording.tofile(Path(keep) / "recording.f32")
        (Path(keep) / "cues.json").write_text(
            json.dumps({"cues": played, "stamps": recorder.stamps})
        )
    timed_seen = answers_seen = 0
    for cue in played:
        answer = cue["cue"] in ANSWER_CUES
        timed_seen += not answer
        answers_seen += answer
        ref = pack.sounds[cue["cue"]].samples
        origin = recorder.origin_near(round((cue["due"] - recorder.origin) * RATE))
        # (an answer is looked for up to 3 s late: the first one, at start-up, is heard late
        # on an idle null sink — see docs/timing.md)
        onset = find_onset(
            recording, ref, round((cue["due"] - origin) * RATE), after=3 * RATE if answer else RATE
        )
        if onset is None:
            result.missing.append(
                cue["cue"] + (" (a stop)" if cue.get("stop") else "") + f" at {cue['due']:.2f}"
            )
            continue
        # taken out of the recording once found: a cue that overlaps it (the start signal
        # over a pre-start heard late at start-up) is then found on its own
        heard = recording[onset : onset + len(ref)]
        heard -= np.clip(ref[: len(heard)], -1.0, 1.0)
        if not answer and float(np.sum(heard**2)) > 0.01 * float(np.sum(ref**2)):  # a gap
            result.dropouts.append(cue["cue"])
        error = (origin + onset / RATE - cue["due"]) * 1000
        if answer:
            result.answers_ms.append(error)
            # press → heard: from the last command sent before the answer was heard
            heard_at = origin + onset / RATE
            press = max((s for s in sent if s <= heard_at), default=None)
            if press is not None and heard_at - press < 2.0 and cue["cue"] != "prestart":
                result.presses_ms.append((heard_at - press) * 1000)
            if answers_seen == 1:
                result.first_answer_ms = error
        else:
            result.errors_ms.append(error)
            if timed_seen == 1:
                result.first_ms = error
    return result


def wait_for(fn, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.02)
    raise SystemExit("bench: timed out waiting for the match to start")


def idle_cpu(path: str, env: dict[str, str], chunk: int, seconds: float) -> float:
    """CPU of a ready, idle `timekeeper run` (stream running, no match)."""
    with tempfile.TemporaryDirectory(prefix="tk-bench-") as tmp:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "run",
                "--profile",
                "ithf",
                "--audio",
                "auto" if path == "stream" else path,
                "--audio-chunk",
                str(chunk),
                "--no-keyboard",
                "--control",
                str(Path(tmp) / "c"),
                "--state-dir",
                tmp,
            ],
            env=dict(os.environ, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        for line in proc.stderr:
            if "ready" in line:
                break
        time.sleep(1.0)
        c0, t0 = proc_ticks(proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = proc_ticks(proc.pid), time.monotonic()
        proc.terminate()
        proc.wait(timeout=60)  # (a loaded machine: other jobs at load 20+)
    return (c1 - c0) / TICK / (t1 - t0) * 100


def render_speed(repeat: int) -> float:
    from timekeeper.sound.render import render

    ithf = profile.load("ithf")
    pack = load_pack(default_pack_dir(), ithf.cue_names)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "m.wav"
        times, seconds = [], 0.0
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = render(ithf, pack, out)
            times.append(time.perf_counter() - t0)
            seconds = result.end + 0.5
    return seconds / statistics.median(times)


def button_latency(presses: int) -> list[float]:
    """The box's real button path on a gpiozero MockFactory pin: a press of STOP/RESUME,
    decided on release (ButtonPanel) → the runner's engine is handed the command. Timed
    from the release, when the press becomes a command."""
    from gpiozero.pins.mock import MockFactory

    from timekeeper.box.controls.buttons import ButtonPanel
    from timekeeper.box.runner import Runner
    from timekeeper.box.wiring import default_gpio
    from timekeeper.rules.commands import Action, Command
    from timekeeper.rules.engine import Engine

    handled = threading.Event()
    stamp: list[float] = []

    class StampingEngine(Engine):  # the real engine, noting when a command reaches it
        def handle(self, command, now):
            stamp.append(time.perf_counter())
            try:
                return super().handle(command, now)
            finally:
                handled.set()

    factory = MockFactory()
    runner = Runner(StampingEngine(profile.load("ithf")), [])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    panel = ButtonPanel(default_gpio(), runner.submit, runner.clock, factory)
    pin = factory.pin(27)  # STOP/RESUME
    out = []
    for _ in range(presses):
        handled.clear()
        stamp.clear()
        pin.drive_low()
        time.sleep(0.03)  # a press, longer than the 20-ms bounce filter
        t0 = time.perf_counter()
        pin.drive_high()
        handled.wait(5)
        out.append((stamp[0] - t0) * 1000)
        time.sleep(0.002)
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(timeout=5)
    panel.close()
    return out


def import_rss() -> list[tuple[str, float]]:
    """What each import costs in resident memory (a fresh interpreter for each)."""
    steps = [
        ("python alone", ""),
        ("+ numpy", "import numpy"),
        ("+ numpy + pygame", "import numpy, pygame"),
        ("+ numpy + pygame._sdl2.audio only", "import numpy, pygame._sdl2.audio"),
    ]
    out = []
    for name, code in steps:
        script = (
            f"{code}\nimport re\nprint(re.search(r'VmRSS:\\s+(\\d+)', "
            "open('/proc/self/status').read()).group(1))"
        )
        text = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYGAME_HIDE_SUPPORT_PROMPT="1"),
        ).stdout
        out.append((name, int(text.split()[-1]) / 1024))
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def fmt(x: float | None, digits: int = 2) -> str:
    """A figure; "missed" when the cue was not found in the recording (see the list)."""
    return "missed" if x is None else "—" if x != x else f"{x:.{digits}f}"


def ratio(naive: float | None, chosen: float | None) -> str:
    if naive is None or chosen is None or chosen == 0 or naive != naive or chosen != chosen:
        return "—"
    return f"{naive / chosen:.1f}×"


def table(runs: dict[str, Run], render_x: float, button: list[float]) -> list[str]:
    naive, chosen = runs.get("mixer"), runs.get("stream")

    def stat(run: Run | None, fn):
        return float("nan") if run is None else fn(run)

    def absmax(xs):
        return max((abs(x) for x in xs), default=float("nan"))

    def spread(xs):
        if not xs:
            return float("nan")
        med = statistics.median(xs)
        return max(abs(x - med) for x in xs)

    def drift(xs):
        if len(xs) < 4:
            return float("nan")
        k = max(2, len(xs) // 5)
        return statistics.mean(xs[-k:]) - statistics.mean(xs[:k])

    rows = [
        (
            "timed cues: max |onset − due| (ms)",
            "≤ 2",
            lambda r: absmax(r.errors_ms),
            lambda v: v <= TARGETS["max"],
        ),
        (
            "timed cues: median onset − due (ms)",
            "",
            lambda r: statistics.median(r.errors_ms) if r.errors_ms else float("nan"),
            None,
        ),
        ("timed cues: spread, max |e − median| (ms)", "", lambda r: spread(r.errors_ms), None),
        (
            "first timed cue: start signal (ms)",
            "≤ 2",
            lambda r: abs(r.first_ms) if r.first_ms is not None else None,
            lambda v: v <= TARGETS["max"],
        ),
        (
            "drift, last fifth − first fifth (ms)",
            "≈ 0",
            lambda r: drift(r.errors_ms),
            lambda v: abs(v) <= TARGETS["max"],
        ),
        ("first cue after start-up: pre-start (ms)", "", lambda r: r.first_answer_ms, None),
        (
            "command-answer cues: median late (ms)",
            "",
            lambda r: statistics.median(r.answers_ms) if r.answers_ms else None,
            None,
        ),
        (
            "CPU while the match runs (% of a core)",
            "≤ 0.5",
            lambda r: r.cpu_percent,
            lambda v: v <= TARGETS["cpu"],
        ),
        ("resident memory, peak (MB)", "≤ 45", lambda r: r.rss_mb, lambda v: v <= TARGETS["rss"]),
        (
            "start-up until ready (ms)",
            "≤ 500",
            lambda r: r.startup_ms,
            lambda v: v <= TARGETS["startup"],
        ),
    ]
    lines = [
        f"| {'figure':<42} | {'target':>6} | {'mixer (naive)':>13} | {'stream':>8} | "
        f"{'naive/stream':>12} | {'met (stream)':<12} |",
        f"|{'-' * 44}|{'-' * 8}|{'-' * 15}|{'-' * 10}|{'-' * 14}|{'-' * 14}|",
    ]
    for name, target, fn, ok in rows:
        a, b = stat(naive, fn), stat(chosen, fn)
        met = "—" if ok is None or b != b else "NO" if b is None or not ok(b) else "yes"
        lines.append(
            f"| {name:<42} | {target:>6} | {fmt(a):>13} | {fmt(b):>8} | "
            f"{ratio(a, b):>12} | {met:<12} |"
        )
    p99 = percentile(button, 99)
    lines.append(
        f"| {'render ithf to WAV (× real time)':<42} | {'≥ 600':>6} | {'(one path)':>13} "
        f"| {render_x:>8.0f} | {'':>12} | "
        f"{'yes' if render_x >= TARGETS['render'] else 'NO':<12} |"
    )
    lines.append(
        f"| {'button (mock pin) → engine, p99 (ms)':<42} | {'≤ 1':>6} | "
        f"{'(one path)':>13} | {fmt(p99, 3):>8} | {'':>12} | "
        f"{'yes' if p99 <= TARGETS['button'] else 'NO':<12} |"
    )
    return lines


def stack_rows(
    stack: str, conditions: list[str], profile_file: Path, actions, pack, output: str | None = None
) -> list[dict]:
    """One box's match on `stack` under each condition: a row each (stream path)."""
    rows = []
    with stacklab.server(stack) as env:
        for condition in conditions:
            print(f"  {stack}: {profile_file.stem}, {condition} …", file=sys.stderr)
            with stacklab.Load(condition), stacklab.budget(condition) as preexec:
                run = run_match(
                    "stream",
                    env,
                    profile_file,
                    actions,
                    pack,
                    None,
                    stack=stack,
                    preexec=preexec,
                    output=output,
                )
                calibrated = after_calibrate(
                    stack, env, profile_file, actions, pack, preexec, output
                )
            errors = run.errors_ms
            med = statistics.median(errors) if errors else float("nan")
            rows.append(
                {
                    "stack": stack,
                    "condition": condition,
                    "period": stack_period(stack),
                    "sink": run.sink,
                    "worst": max((abs(e) for e in errors), default=float("nan")),
                    "median": med,
                    "spread": max((abs(e - med) for e in errors), default=float("nan")),
                    "cpu": run.cpu_percent,
                    "rss": run.rss_mb,
                    "startup": run.startup_ms,
                    "cues": len(errors),
                    "missing": run.missing,
                    "dropouts": run.dropouts,
                    "errors": [round(e, 2) for e in errors],
                    "answers": [round(e, 1) for e in run.answers_ms],
                    "presses": [round(e, 1) for e in run.presses_ms],
                    "memory": run.rss_parts,
                    **calibrated,
                }
            )
    return rows


def after_calibrate(
    stack: str, env: dict[str, str], profile_file: Path, actions, pack, preexec, output
) -> dict:
    """(the paced stack) `timekeeper calibrate` hearing the box through the stand-in
    microphone (bench/standin_mic.py), then the same match with the config it wrote: the
    latency it found and the worst cue after it ({} on other stacks: no stand-in there)."""
    if stack != "alsa-paced":
        return {}
    from timekeeper.box import config as box_config

    with tempfile.TemporaryDirectory(prefix="tk-cal-") as tmp:
        cfg = Path(tmp) / "config.yaml"
        cfg.write_text(f"audio:\n  sink: {output}\n" if output else "# calibrated\n")
        mic = subprocess.Popen(
            [sys.executable, str(HERE / "standin_mic.py")], stdout=subprocess.PIPE, text=True
        )
        try:
            assert mic.stdout is not None
            mic.stdout.readline()  # ("standin: ready …")
            calibrate = ["calibrate", "--config", str(cfg), "--input", STANDIN]
            done = subprocess.run(
                [sys.executable, "-m", "timekeeper", *calibrate],
                env=dict(os.environ, **env),
                capture_output=True,
                text=True,
            )
        finally:
            mic.terminate()
            mic.wait(10)
        print(f"  {stack}: {done.stdout.strip()}{done.stderr.strip()}", file=sys.stderr)
        if done.returncode != 0:
            return {"calibrated": float("nan"), "after": float("nan")}
        latency = box_config.load(cfg).audio_offset
        run = run_match(
            "stream",
            dict(env, TIMEKEEPER_CONFIG=str(cfg)),
            profile_file,
            actions,
            pack,
            None,
            stack=stack,
            preexec=preexec,
            output=output,
        )
    return {
        "calibrated": latency * 1e3,
        "after": max((abs(e) for e in run.errors_ms), default=float("nan")),
        "errors_after": [round(e, 2) for e in run.errors_ms],
    }


def stack_period(stack: str) -> int | None:
    """Frames a step of the stack's position (inside its chroot: bench/stacks/run.sh sets
    them): JACK's period on the paced ALSA device, the graph's quantum on PipeWire."""
    if stack == "alsa-paced":
        return int(os.environ.get("TK_JACK_PERIOD", "256"))
    if stack == "pipewire":
        return int(os.environ.get("TK_QUANTUM", "1024"))
    return None


def met(r: dict) -> bool:
    """A stack row's targets: every cue within 2 ms of due, CPU ≤ 0.5 % of a core, peak
    memory ≤ 45 MB, nothing missing, no dropout."""
    return (
        r["worst"] <= TARGETS["max"]
        and r["cpu"] <= TARGETS["cpu"]
        and r["rss"] <= TARGETS["rss"]
        and not r["missing"]
        and not r["dropouts"]
    )


def _period(r: dict) -> str:
    p = r.get("period")
    return "—" if p is None else f"{p} ({p / RATE * 1000:.1f} ms)"


def _after(r: dict) -> str:
    """The worst cue after calibrate and the latency it wrote; "calibrate failed" where it
    wrote none (its message is in the bench's log); — where the stack has no stand-in."""
    if "after" not in r:
        return "—"
    if math.isnan(r["calibrated"]):
        return "calibrate failed"
    return f"{r['after']:.2f} (at {r['calibrated']:+.1f})"


# the stack table's columns: (heading, width, the cell of a row); another figure of a row
# (a key its dict carries) is one more entry here
STACK_COLUMNS: list[tuple[str, int, Callable[[dict], str]]] = [
    ("stack", 10, lambda r: r["stack"]),
    ("condition", 9, lambda r: r["condition"]),
    ("period (step)", 16, _period),
    ("sink", 5, lambda r: r["sink"]),
    ("worst ms", 8, lambda r: f"{r['worst']:.2f}"),
    ("median", 7, lambda r: f"{r['median']:+.2f}"),
    ("spread", 6, lambda r: f"{r['spread']:.2f}"),
    ("CPU %", 5, lambda r: f"{r['cpu']:.2f}"),
    ("peak MB", 7, lambda r: f"{r['rss']:.1f}"),
    ("ready ms", 8, lambda r: f"{r['startup']:.0f}"),
    ("missing", 7, lambda r: str(len(r["missing"]))),
    ("dropouts", 8, lambda r: str(len(r["dropouts"]))),
    ("press ms", 8, lambda r: f"{max(r['presses'], default=float('nan')):.0f}"),
    ("met", 3, lambda r: "yes" if met(r) else "NO"),
    ("worst after calibrate", 21, _after),
]


def stack_table(rows: list[dict]) -> list[str]:
    """One row per stack, period and condition (STACK_COLUMNS); `median` is the constant
    offset (on the paced device JACK's own latency, which no report carries), `spread` the
    cues' largest distance from it."""

    def line(cells: list[str]) -> str:
        widths = [w for _h, w, _f in STACK_COLUMNS]
        return (
            "| "
            + " | ".join(
                c.ljust(w) if k < 3 else c.rjust(w)
                for k, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
            + " |"
        )

    lines = [line([h for h, _w, _f in STACK_COLUMNS])]
    lines.append("|" + "|".join("-" * (w + 2) for _h, w, _f in STACK_COLUMNS) + "|")
    lines += [line([f(r) for _h, _w, f in STACK_COLUMNS]) for r in rows]
    return lines


@contextlib.contextmanager
def jack_period(frames: int | None) -> Iterator[None]:
    """The paced stack's JACK period for the runs inside (bench/stacks/run.sh reads it)."""
    old = os.environ.get("TK_JACK_PERIOD")
    if frames is not None:
        os.environ["TK_JACK_PERIOD"] = str(frames)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TK_JACK_PERIOD", None)
        else:
            os.environ["TK_JACK_PERIOD"] = old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short smoke run (CI)")
    ap.add_argument("--soak", action="store_true", help="a 30-minute match on each path")
    ap.add_argument("--paths", default="mixer,stream", help="audio paths to run (%(default)s)")
    ap.add_argument(
        "--chunk",
        type=int,
        help="audio chunk for the match runs (defaults: mixer 512, stream 2048)",
    )
    ap.add_argument(
        "--chunks",
        default="512,1024,2048,4096",
        help="chunk sizes for the idle-CPU scan ('' to skip)",
    )
    ap.add_argument(
        "--web-clients",
        type=int,
        default=0,
        metavar="N",
        help="run the box with its web server and N live display pages open",
    )
    ap.add_argument(
        "--stack",
        action="append",
        metavar="STACK",
        help=f"measure the stream on these sound stacks ({', '.join(stacklab.STACKS)}; "
        "repeatable or a comma list): a row each",
    )
    ap.add_argument(
        "--conditions",
        default="quiet",
        help=f"with --stack: {', '.join(stacklab.CONDITIONS)} (comma list, %(default)s)",
    )
    ap.add_argument(
        "--audio",
        help="with --stack: the box's --audio (default: auto, as a box runs)",
    )
    ap.add_argument(
        "--periods",
        help="with --stack alsa-paced: JACK periods in frames, a row each (comma list; "
        "default $TK_JACK_PERIOD if set, else 256,480,1024: 5.3 ms, the Pi's 10 ms, 21.3 ms)",
    )
    ap.add_argument("--inside", choices=stacklab.STACKS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    paths = [p for p in args.paths.split(",") if p]
    stacks = stacklab.parse_list(args.stack, stacklab.STACKS, "stack")
    conditions = stacklab.parse_list([args.conditions], stacklab.CONDITIONS, "condition")
    if args.soak:
        profile_file = HERE / "profiles" / "soak30.yaml"
    elif args.quick:
        profile_file = HERE / "profiles" / "quick15.yaml"
    else:
        profile_file = HERE / "profiles" / "match60.yaml"
    actions = schedule(args.soak, args.quick)
    pack = load_pack(default_pack_dir())
    chunks = [] if args.quick else [int(c) for c in args.chunks.split(",") if c]
    if args.inside:  # (in the stack's chroot, from stack mode below)
        for row in stack_rows(args.inside, conditions, profile_file, actions, pack, args.audio):
            stacklab.emit(row)
        return
    periods = [
        int(p)
        for p in (args.periods or os.environ.get("TK_JACK_PERIOD") or "256,480,1024").split(",")
        if p
    ]
    if stacks:
        rows: list[dict] = []
        for stack in stacks:
            if stack == "pulse":
                rows += stack_rows(stack, conditions, profile_file, actions, pack, args.audio)
                continue
            argv = ["--conditions", ",".join(conditions)]
            argv += ["--audio", args.audio] if args.audio else []
            argv += ["--quick"] if args.quick else ["--soak"] if args.soak else []
            for frames in periods if stack == "alsa-paced" else [None]:
                with jack_period(frames):
                    rows += stacklab.run_inside(stack, "timing.py", argv)
        print(
            f"timekeeper timing bench, by stack — {profile_file.name}, one box, stream path; "
            f"load at the end: {os.getloadavg()[0]:.2f} (PipeWire's quantum forced to 1024)\n"
        )
        for line in stack_table(rows):
            print(line)
        for r in rows:
            print(
                f"\n{r['stack']} {_period(r)} {r['condition']}: timed cues {r['errors']} ms; "
                f"answers {r['answers']} ms; press → heard {r['presses']} ms; memory at the end: "
                f"{r['memory']}"
                + (f"; NOT FOUND {r['missing']}" if r["missing"] else "")
                + (f"; DROPOUTS {r['dropouts']}" if r["dropouts"] else "")
                + (f"; after calibrate {r['errors_after']} ms" if "errors_after" in r else "")
            )
        return

    print(
        f"timekeeper timing bench — {profile_file.name}, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cpus, PulseAudio null sink at {RATE} Hz, recorded with parec"
        + (f", {args.web_clients} live web pages open" if args.web_clients else "")
        + "\n"
    )
    runs: dict[str, Run] = {}
    scan: list[tuple[int, dict[str, float]]] = []
    with PulseServer() as env:
        for path in paths:
            print(f"  running {profile_file.stem} on the {path} path …", file=sys.stderr)
            runs[path] = run_match(
                path, env, profile_file, actions, pack, args.chunk, args.web_clients
            )
        for chunk in chunks:
            print(f"  idle CPU at chunk {chunk} …", file=sys.stderr)
            scan.append((chunk, {p: idle_cpu(p, env, chunk, 10.0) for p in paths}))
    render_x = render_speed(2 if args.quick else 5)
    button = button_latency(200 if args.quick else 2000)

    for line in table(runs, render_x, button):
        print(line)
    for path, run in runs.items():
        print(
            f"\n{path}: {len(run.errors_ms)} timed cues "
            f"[{', '.join(f'{e:+.2f}' for e in run.errors_ms)}] ms; "
            f"{len(run.answers_ms)} command answers "
            f"[{', '.join(f'{e:+.1f}' for e in run.answers_ms)}] ms"
            + (f"; NOT FOUND: {', '.join(run.missing)}" if run.missing else "")
            + f"; memory at the end: {run.rss_parts}"
            + (f"; {run.web_messages} live statuses to the web pages" if run.web_messages else "")
        )
    if scan:
        print(
            f"\nidle CPU (% of a core, ready and waiting, 10 s) by chunk size:\n"
            f"| {'chunk (frames)':>14} | {'ms':>6} | " + " | ".join(f"{p:>8}" for p in paths) + " |"
        )
        print(f"|{'-' * 16}|{'-' * 8}|" + "|".join("-" * 10 for _ in paths) + "|")
        for chunk, cpu in scan:
            print(
                f"| {chunk:>14} | {chunk / RATE * 1000:>6.1f} | "
                + " | ".join(f"{cpu[p]:>8.2f}" for p in paths)
                + " |"
            )
    print("\nresident memory of imports (fresh interpreter each):")
    for name, mb in import_rss():
        print(f"  {name:<36} {mb:6.1f} MB")
    print(
        f"\nbutton → engine over {len(button)} presses: median "
        f"{statistics.median(button):.3f} ms, p99 {percentile(button, 99):.3f} ms, "
        f"max {max(button):.3f} ms"
    )


if __name__ == "__main__":
    main()
