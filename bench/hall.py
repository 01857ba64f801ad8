"""Hall bench: many boxes on this machine, each its own `timekeeper run` process, joined to a
real Mosquitto on localhost and started by one `timekeeper hall start`.

    python bench/hall.py                  # recorded: 5 runs of 4 boxes + 1 of 8, quiet and
                                          # under stress-ng --cpu 2; then 50 dummy boxes,
                                          # skewed clocks, faults
    python bench/hall.py --quick          # CI: 4 recorded boxes once, 4 dummy, a broker fault
    python bench/hall.py --recorded-only --load stress   # only the hall as heard, under load
    python bench/hall.py --recorded-only --sdl            # the same on the SDL stream of before
    python bench/hall.py --recorded-only --as-unit        # the boxes without real-time
    python bench/hall.py --stack pulse,pipewire,alsa-paced --runs 1 --big 0   # the Pi's stacks
    python bench/hall.py --mixed --load quiet   # one hall of boxes on all three stacks at once,
                                                # before and after each is calibrated

`--stack` (repeatable or a comma list): only the recorded hall, on each sound stack a Pi
runs (bench/stacklab.py: PipeWire and a paced ALSA device in chroots built once by
bench/stacks/*.sh; PipeWire's quantum forced while it records), one row per stack and load.

`--mixed [N]`: N boxes (2; --quick 1) on each of PulseAudio, PipeWire and the paced ALSA
device (or the `--stack` list) at once, each on its own stack (a process a stack, in its
chroot), all joined to one Mosquitto and started by one `hall start --at`; each box's
recordings timed against that one instant, mapped once from the wall clock to the monotonic
one. Twice: the boxes as they come, then each calibrated the same way (`timekeeper calibrate`
hearing its sink's monitor on PulseAudio and PipeWire, the stand-in microphone on the paced
device): each box's error and the hall's spread, before and after.

Recorded boxes play through a private PulseAudio server, each into its own null sink (each
box has its own speaker, as in a hall), and a recorder of its own (bench/audiolab.py) records
every sink's monitor: every cue of every box is found in its recording and compared with its
due time; per run the worst error, and the spread between boxes of the first cue after the
hall start (the pre-start), the start signal, the marks and the end. Dummy boxes (SDL's dummy
driver) give the spread of their logged instants. All boxes share this machine's monotonic
clock, so their instants compare directly. The 1-minute load average is printed with each
run: other jobs on the machine make "quiet" only as quiet as they let it be.
Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["TIMEKEEPER_PROFILES_PATH"] = ""

from timekeeper.hall.practice import TIMEKEEPER, Mosquitto, box_command

HERE = Path(__file__).resolve().parent
PROFILE = HERE / "profiles" / "quick15.yaml"  # pre-start 2 s, 15 s, marks every 5 s
SKEWED = HERE.parent / "tests" / "skewedbox.py"  # a box whose clock is off by OFFSET s
TICK = os.sysconf("SC_CLK_TCK")
TIMED = ("prestart", "start", "minute", "end")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Box:
    table: str
    folder: Path
    proc: subprocess.Popen
    env: dict[str, str] = field(default_factory=dict)

    def events(self) -> list[dict]:
        path = self.folder / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


PREFIX: list[str] = []  # --as-unit: the box's threads as the service unit leaves them
# The unit (Nice=-5, LimitNICE=-15, RestrictRealtime=yes) gives the runner's and the writer's
# threads nice -15 and no real-time. Its LimitNICE cannot be set in this container (no
# CAP_SYS_RESOURCE), so the box starts at nice -15 without CAP_SYS_NICE: those two threads as
# the unit has them, its other threads at -15 instead of -5 (a little kinder than the unit).
AS_UNIT = ["nice", "-n", "-15", "setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"]
SDL_LATENCY = "32"  # ms: the SDL stream's old constant (0.75 of a 2048-frame chunk)
BOX_ARGS: list[str] = []  # --sdl: ["--audio-latency", SDL_LATENCY] keeps boxes on SDL


def start_box(
    table: str,
    root: Path,
    url: str,
    env: dict[str, str],
    fresh: bool = True,
    skew: float | None = None,
    output: str | None = None,
    config: Path | None = None,
) -> Box:
    """A box on this machine (`--sync local`), or one whose clock is `skew` s off: on its
    recorder's PulseAudio server where `env` names one, else on SDL's (dummy) driver."""
    folder = root / f"box{table}"
    folder.mkdir(exist_ok=True)
    argv = box_command(
        url,
        table,
        folder,
        *("--audio", output or ("pulse" if "PULSE_SERVER" in env else "sdl")),
        *("--profile", str(PROFILE), "--events", str(folder / "events.jsonl")),
        *(["--fresh"] if fresh else []),
        *(["--config", str(config)] if config else []),
        *BOX_ARGS,
        control=folder / "c.sock",
    )
    if skew is not None:
        argv = [sys.executable, str(SKEWED), str(skew), *argv[len(TIMEKEEPER) :]]
    cmd = [*PREFIX, *argv]
    full = dict(os.environ) | env
    proc = subprocess.Popen(
        cmd,
        env=full,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(folder / "log.txt").open("a"),
    )
    return Box(table, folder, proc, env)


def wait_ready(boxes: list[Box], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    for box in boxes:
        while not (box.folder / "c.sock").exists():
            if box.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"bench: box {box.table} did not start:\n"
                    + (box.folder / "log.txt").read_text()[-2000:]
                )
            time.sleep(0.05)


def hall(url: str, *args: str, stderr: bool = True) -> str:
    """What `timekeeper hall ARGS` printed (`stderr=False`: stdout alone, for --json: the
    warning of an anonymous broker goes to stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "timekeeper", "hall", *args, "--broker", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout + done.stderr if stderr else done.stdout


def joined(url: str, n: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline:
        text = hall(url, "status", "--json", stderr=False)
        try:
            count = sum(1 for s in json.loads(text).values() if s.get("online"))
        except ValueError:
            count = 0
        if count >= n:
            break
        time.sleep(0.5)
    return count


def wait_end(boxes: list[Box], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for box in boxes:
        while not any(e["cue"] == "end" for e in box.events()):
            if time.monotonic() > deadline:
                return
            time.sleep(0.1)


def stop(boxes: list[Box]) -> None:
    for box in boxes:
        if box.proc.poll() is None:
            box.proc.send_signal(signal.SIGTERM)
    for box in boxes:
        try:
            box.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            box.proc.kill()


def spread_ms(values: list[float]) -> float:
    return (max(values) - min(values)) * 1000 if len(values) > 1 else float("nan")


def logged_spread(boxes: list[Box], key: str = "played") -> dict[str, float]:
    """Per timed cue: the spread (ms) of the logged instants between boxes."""
    out = {}
    for cue in TIMED:
        per_box = []
        for box in boxes:
            found = [e[key] for e in box.events() if e["cue"] == cue]
            if found:
                per_box.append(found[-1] if cue != "minute" else found[0])
        out[cue] = spread_ms(per_box) if len(per_box) == len(boxes) else float("nan")
    return out


def cpu_mem(pids: list[int], seconds: float) -> tuple[list[float], list[float]]:
    """CPU (% of a core) over `seconds` and resident memory (MB) of each pid."""

    def ticks(pid: int) -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def rss(pid: int) -> float:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    alive = [p for p in pids if Path(f"/proc/{p}").exists()]
    t0, c0 = time.monotonic(), {p: ticks(p) for p in alive}
    time.sleep(seconds)
    t1 = time.monotonic()
    cpu = [(ticks(p) - c0[p]) / TICK / (t1 - t0) * 100 for p in alive]
    return cpu, [rss(p) for p in alive]


# ---------------------------------------------------------------- the scenarios


def dummy_hall(n: int, root: Path, broker: Mosquitto) -> dict:
    """n dummy-audio boxes, one hall start: how many joined, the spread of logged instants,
    and CPU and memory of boxes and broker while the match runs."""
    boxes = []
    for i in range(n):
        boxes.append(start_box(str(i + 1), root, broker.url, {"SDL_AUDIODRIVER": "dummy"}))
        time.sleep(0.05)
    wait_ready(boxes)
    count = joined(broker.url, n)
    answer = hall(broker.url, "start", "--in", f"{max(3, n // 10)}s")
    refused = answer.count("REFUSED")
    time.sleep(max(3, n // 10) + 3)
    assert broker.proc is not None
    cpu, mem = cpu_mem([b.proc.pid for b in boxes], 5.0)
    bcpu, bmem = cpu_mem([broker.proc.pid], 5.0)
    wait_end(boxes)
    stop(boxes)
    return {
        "boxes": n,
        "joined": count,
        "refused": refused,
        "spread": logged_spread(boxes),
        "box_cpu": statistics.median(cpu) if cpu else float("nan"),
        "box_cpu_sum": sum(cpu),
        "box_mem": statistics.median(mem) if mem else float("nan"),
        "broker_cpu": bcpu[0] if bcpu else float("nan"),
        "broker_mem": bmem[0] if bmem else float("nan"),
    }


def load_start(kind: str) -> list[subprocess.Popen]:
    """Keep both cores busy (`stress`: Debian's stress-ng --cpu 2), or nothing (`quiet`)."""
    if kind == "quiet":
        return []
    exe = shutil.which("stress-ng")
    if exe is None:
        raise SystemExit("bench: stress-ng is missing; run ./bootstrap.sh --bench")
    return [
        subprocess.Popen(
            [exe, "--cpu", "2", "--quiet"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    ]


def load_stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def box_env(stack: str, sink: str, env: dict[str, str]) -> tuple[dict[str, str], str]:
    """What a box playing to `sink` on `stack` (bench/stacklab.py) runs with: its environment
    and its --audio. PulseAudio: its null sink; PipeWire: as a box runs there (auto, PipeWire's
    ALSA plugin) on its null sink; the paced ALSA device: ALSA PCMs box1…box8 on JACK's
    playback ports 1…8, named in the box's config (box_config)."""
    if stack == "alsa-paced":
        return env, "alsa"
    if stack == "pipewire":
        return env | {"PULSE_SINK": sink, "PIPEWIRE_NODE": sink}, "auto"
    return env | {"PULSE_SINK": sink}, "pulse"


def box_config(stack: str, sink: str, path: Path) -> Path:
    """A box's config file: its sink (box_env), and on the paced stack its ALSA device."""
    _env, output = box_env(stack, sink, {})
    device = f"  device: {sink}\n" if stack == "alsa-paced" else ""
    path.write_text(f"audio:\n  sink: {output}\n{device}")
    return path


def stack_box(
    stack: str, sink: str, table: str, root: Path, url: str, env: dict[str, str], config: Path
) -> Box:
    """Table `table`'s box on `stack`, playing to `sink`, with `config` (box_config)."""
    to, output = box_env(stack, sink, env)
    return start_box(table, root, url, to, output=output, config=config)


def last_line(box: Box) -> str:
    lines = (box.folder / "log.txt").read_text(errors="replace").splitlines()
    return (lines or [""])[-1][:120]


def warnings(box: Box, most: int = 6) -> list[str]:
    """What the box's log says of its sound going wrong (lost, back, late, not heard), the
    last `most` lines."""
    lines = (box.folder / "log.txt").read_text(errors="replace").splitlines()
    said = ("audio lost", "audio is back", "still down", "not heard", "too late", "stalled")
    return [x[:200] for x in lines if any(w in x for w in said)][-most:]


def listen(box: Box, recorder, recording, pack) -> list[dict]:
    """Each cue of `box` that sounds, looked for in its recording near its due time: its
    `cue`, `nth` (0 for its first), `due`, when it was heard (`at`, monotonic; None: not
    found), and `silent`, ms of silence where it sounds (a dropout: a block written late,
    docs/timing.md, the fifth pass)."""
    import numpy as np
    from audiolab import RATE, find_onset

    out: list[dict] = []
    seen: dict[str, int] = {}
    for cue in box.events():
        name = cue["cue"]
        if name not in pack.sounds or cue.get("stop"):
            continue
        nth = seen[name] = seen.get(name, -1) + 1
        ref = pack.sounds[name].samples
        origin = recorder.origin_near(round((cue["due"] - recorder.origin) * RATE))
        onset = find_onset(recording, ref, round((cue["due"] - origin) * RATE))
        heard = {"cue": name, "nth": nth, "due": cue["due"], "at": None, "silent": 0.0}
        if onset is not None:  # (the whole sound, not only its head: silence is a dropout)
            whole = recording[onset : onset + len(ref)]
            silent = int(np.sum((np.abs(whole) < 1e-7) & (np.abs(ref[: len(whole)]) > 0.05)))
            heard.update(at=origin + onset / RATE, silent=silent / RATE * 1e3)
        out.append(heard)
    return out


def recorded_hall(
    n: int,
    root: Path,
    broker: Mosquitto,
    load: str = "quiet",
    keep: bool = False,
    stack: str = "pulse",
) -> dict:
    """n boxes through a private PulseAudio server, a null sink and a recorder each (the
    hall as heard: each box has its own speaker): every cue of every box found in its
    recording and compared with its due time, and the spread between boxes of each.
    `stack` (bench/stacklab.py): PipeWire's pulse server and its null sinks instead, or a
    paced ALSA device a box (ALSA PCMs box1…box8 on JACK's playback ports 1…8)."""
    import stacklab

    from timekeeper.sound.pack import default_pack_dir, load_pack

    pack = load_pack(default_pack_dir())
    sinks = tuple(f"box{i + 1}" for i in range(n))
    loadavg = float(Path("/proc/loadavg").read_text().split()[0])
    stack_name = stack
    with contextlib.ExitStack() as stack:
        # one server, a sink each: a server a box (as each table's Pi has) was tried and
        # is a heavier instrument here (docs/timing.md)
        env = stack.enter_context(stacklab.server(stack_name, sinks))
        recorders = [stacklab.recorder(stack_name, env, sink) for sink in sinks]
        for recorder in recorders:  # (a bench that fails leaves no recorder or box behind)
            stack.callback(lambda p=recorder.proc: p.poll() is None and p.kill())
        time.sleep(0.5)
        boxes: list[Box] = []
        stack.callback(stop, boxes)
        for i, sink in enumerate(sinks):
            config = box_config(stack_name, sink, root / f"box{i + 1}.yaml")
            boxes.append(stack_box(stack_name, sink, str(i + 1), root, broker.url, env, config))
        wait_ready(boxes)
        count = joined(broker.url, n)
        stress = load_start(load)
        try:
            time.sleep(1.0 if stress else 0.0)  # the boxes feel the load before the start
            hall(broker.url, "start", "--in", "4s")
            wait_end(boxes)
            time.sleep(3.0)  # the end signal (2.5 s) plays out from its due time, up to the
            #                  lead after the box logged it
            loadavg = max(loadavg, float(Path("/proc/loadavg").read_text().split()[0]))
        finally:
            load_stop(stress)
        stop(boxes)
        recordings = [r.stop() for r in recorders]
    if keep:  # (with --keep: each recording beside its box's log, float32 mono at RATE)
        for box, recorder, recording in zip(boxes, recorders, recordings, strict=True):
            recording.tofile(box.folder / "recording.f32")
            (box.folder / "recording-origin.txt").write_text(f"{recorder.origin!r}\n")
    heard: dict[tuple[str, int], list[float]] = {}  # (cue, n-th) → onset − due per box (ms)
    missing: list[str] = []
    dropouts: list[str] = []  # cues found with silence inside them
    for box, recorder, recording in zip(boxes, recorders, recordings, strict=True):
        if not box.events():  # (e.g. it refused a start that came after its instant)
            missing.append(f"box {box.table}: no cue at all ({last_line(box)})")
        for cue in listen(box, recorder, recording, pack):
            name = cue["cue"]
            if cue["at"] is None:
                missing.append(f"box {box.table} {name}")
                continue
            if cue["silent"]:
                dropouts.append(f"box {box.table} {name}: {cue['silent']:.1f} ms")
            heard.setdefault((name, cue["nth"]), []).append((cue["at"] - cue["due"]) * 1000)
    errors = [e for v in heard.values() for e in v]
    for (name, nth), v in heard.items():  # (on stderr: every cue, box by box)
        print(f"    {name} {nth}: " + " ".join(f"{e:+.2f}" for e in v), file=sys.stderr)

    def spread(name: str) -> float:
        spreads = [max(v) - min(v) for (c, _), v in heard.items() if c == name and len(v) > 1]
        return max(spreads, default=float("nan"))

    first = heard.get(("prestart", 0), [])
    return {
        "stack": stack_name,
        "boxes": n,
        "joined": count,
        "load": load,
        "loadavg": loadavg,
        "missing": missing,
        "dropouts": dropouts,
        "worst": max(map(abs, errors), default=float("nan")),
        "median": statistics.median(errors) if errors else float("nan"),
        "first_worst": max(map(abs, first), default=float("nan")),
        "spread": {c: spread(c) for c in ("prestart", "start", "minute", "end")},
        "logged": logged_spread(boxes),
    }


def skewed_hall(root: Path, broker: Mosquitto) -> dict:
    """Boxes whose clocks are off by an injected offset (test-only setting): below the 2-ms
    limit they start, their offset showing in the spread; above it they refuse."""
    offsets = {"1": 0.0, "2": 0.001, "3": -0.0015, "4": 0.005}
    boxes = [
        start_box(t, root, broker.url, {"SDL_AUDIODRIVER": "dummy"}, skew=o)
        for t, o in offsets.items()
    ]
    wait_ready(boxes)
    joined(broker.url, len(boxes))
    answer = hall(broker.url, "start", "--in", "3s")
    started = [b for b in boxes if "REFUSED" not in _line(answer, b.table)]
    wait_end(started)
    stop(boxes)
    return {
        "offsets": offsets,
        "refused": [b.table for b in boxes if b not in started],
        "spread": logged_spread(started, "due"),
        "expected": (
            max(offsets[b.table] for b in started) - min(offsets[b.table] for b in started)
        )
        * 1000,
    }


def _line(answer: str, table: str) -> str:
    return next((line for line in answer.splitlines() if f"table {table}:" in line), "")


def broker_fault(n: int, root: Path, broker: Mosquitto) -> dict:
    """The broker killed 3 s into the match and started again 3 s later."""
    boxes = [
        start_box(str(i + 1), root, broker.url, {"SDL_AUDIODRIVER": "dummy"}) for i in range(n)
    ]
    wait_ready(boxes)
    joined(broker.url, n)
    hall(broker.url, "start", "--in", "3s")
    time.sleep(3 + 2 + 3)  # lead, pre-start, 3 s of play
    broker.stop()
    time.sleep(3)
    broker.start()
    back = joined(broker.url, n, timeout=20)
    wait_end(boxes)
    stop(boxes)
    ended = sum(1 for b in boxes if any(e["cue"] == "end" for e in b.events()))
    return {"boxes": n, "ended": ended, "republished": back, "spread": logged_spread(boxes)}


def box_fault(n: int, root: Path, broker: Mosquitto) -> dict:
    """One box killed (kill -9) mid-match and restarted: it comes back stopped from its
    journal; a hall stop, then a hall resume at one instant, bring every table together."""
    boxes = [
        start_box(str(i + 1), root, broker.url, {"SDL_AUDIODRIVER": "dummy"}) for i in range(n)
    ]
    wait_ready(boxes)
    joined(broker.url, n)
    hall(broker.url, "start", "--in", "3s")
    time.sleep(3 + 2 + 4)
    victim = boxes[0]
    start_due = next(e["due"] for e in victim.events() if e["cue"] == "start")
    victim.proc.kill()
    killed_at = time.monotonic()
    victim.proc.wait()
    hall(broker.url, "stop")  # a hall interruption
    (victim.folder / "c.sock").unlink(missing_ok=True)
    boxes[0] = start_box(victim.table, root, broker.url, victim.env, fresh=False)
    wait_ready([boxes[0]])
    joined(broker.url, n)
    plays = []
    for box in boxes:
        from timekeeper.box.controls.socket_client import send

        plays.append(send(box.folder / "c.sock", "status")["status"]["play_time"])
    answer = hall(broker.url, "resume", "--in", "3s")
    wait_end(boxes)
    stop(boxes)
    return {
        "boxes": n,
        "resumed": answer.count(": ok"),
        "journal_lost": (killed_at - start_due) - plays[0],
        "behind": max(plays) - plays[0],
        "spread_end": logged_spread(boxes)["end"],
    }


# ---------------------------------------------------------------- the table


def fmt(x: float, digits: int = 2) -> str:
    return "—" if x != x else f"{x:.{digits}f}"


def recorded_table(results: list[dict]) -> list[str]:
    """One line per recorded run: the hall as heard (ms)."""
    head = (
        "| run | load (1-min avg) | boxes | worst \\|onset − due\\| | first cue: worst / "
        "spread | start signal spread | marks spread | end spread | median | not found | "
        "dropouts |"
    )
    lines = [head, "|" + "---|" * 11]
    for i, r in enumerate(results, 1):
        sp = r["spread"]
        lines.append(
            f"| {i} | {r['load']} ({r['loadavg']:.1f}) | {r['boxes']} | {fmt(r['worst'])} | "
            f"{fmt(r['first_worst'])} / {fmt(sp['prestart'])} | {fmt(sp['start'])} | "
            f"{fmt(sp['minute'])} | {fmt(sp['end'])} | {fmt(r['median'])} | "
            f"{', '.join(r['missing']) or 0} | {', '.join(r['dropouts']) or 0} |"
        )
    return lines


def by_stack(stacks: list[str], args: argparse.Namespace) -> None:
    """The recorded hall on each stack; a stack in a chroot runs this bench there
    (`--inside`), its rows read back."""
    import stacklab

    loads = (
        ["quiet"] if args.quick else (["quiet", "stress"] if args.load == "both" else [args.load])
    )
    plan = (
        [args.recorded]
        if args.quick
        else [args.recorded] * args.runs + ([args.big] if args.big else [])
    )
    results: list[dict] = []
    for stack in stacks:
        if stack != "pulse" and not args.inside:
            argv = ["--runs", str(args.runs), "--big", str(args.big), "--load", args.load]
            argv += ["--recorded", str(args.recorded)] + (["--quick"] if args.quick else [])
            results += stacklab.run_inside(stack, "hall.py", argv)
            continue
        with tempfile.TemporaryDirectory(prefix="tk-hall-") as tmp:
            broker = Mosquitto(Path(tmp))
            broker.start()
            try:
                for load in loads:
                    for n in plan:
                        print(f"  {stack}: {n} recorded boxes, {load} …", file=sys.stderr)
                        folder = Path(tmp) / f"rec{len(results)}"
                        folder.mkdir()
                        r = recorded_hall(n, folder, broker, load, stack=stack)
                        if args.inside:
                            stacklab.emit(r)
                        results.append(r)
            finally:
                broker.stop()
    if args.inside:
        return
    print(
        "The hall as heard, by stack (ms; every cue of every box against its due time; goal: "
        "every figure ≤ 2; PipeWire's quantum forced to 1024 while it records)\n"
    )
    head = (
        "| stack | load (1-min avg) | boxes | worst \\|onset − due\\| | median | first cue "
        "spread | start spread | marks spread | end spread | not found | dropouts |"
    )
    print(head)
    print("|" + "---|" * 11)
    for r in results:
        sp = r["spread"]
        print(
            f"| {r['stack']} | {r['load']} ({r['loadavg']:.1f}) | {r['boxes']} | "
            f"{fmt(r['worst'])} | {fmt(r['median'])} | {fmt(sp['prestart'])} | "
            f"{fmt(sp['start'])} | {fmt(sp['minute'])} | {fmt(sp['end'])} | {len(r['missing'])} | "
            f"{len(r['dropouts'])} |"
        )


# ---------------------------------------------------------------- the mixed hall

PHASES = ("before", "after")  # the hall as the boxes come, then each calibrated
SHORT = {"pulse": "pulse", "pipewire": "pipewire", "alsa-paced": "paced"}  # table names
MIXED_LEAD = 8.0  # s from `hall start` to its instant (3 stacks' boxes on a busy machine)


def calibrate_box(stack: str, sink: str, config: Path, env: dict[str, str], root: Path) -> dict:
    """`timekeeper calibrate --config F --input DEV` for one box, hearing its speaker as its
    stack offers (stacklab.calibrate_input): the latency it wrote (ms) and what it said."""
    import stacklab

    from timekeeper.box import config as box_config_file

    to, _output = box_env(stack, sink, env)
    with stacklab.calibrate_input(stack, sink, root) as (device, more):
        done = subprocess.run(
            [*TIMEKEEPER, "calibrate", "--config", str(config), "--input", device],
            env=dict(os.environ) | to | more,
            capture_output=True,
            text=True,
            timeout=180,
        )
    ok = done.returncode == 0
    said = [x for x in (done.stdout + done.stderr).splitlines() if not x.startswith("timekeeper: ")]
    return {
        "latency": box_config_file.load(config).audio_offset * 1e3 if ok else float("nan"),
        "said": (said[0] if ok else " / ".join(said)) if said else f"exit {done.returncode}",
    }


def mixed_part(stack: str, per: int, url: str) -> None:
    """(one stack's share of a mixed hall, on that stack: in its chroot, or here for
    PulseAudio) `per` boxes joined to the hall's broker at `url`, run twice: as they come,
    then each calibrated. Each time: their recorders and boxes started, `ready` told, the
    match the hall starts played and recorded; every cue's due and heard instants told back
    (lines `ROW {json}`: the bench outside times them against the hall's start instant)."""
    import stacklab

    from timekeeper.sound.pack import default_pack_dir, load_pack

    pack = load_pack(default_pack_dir())
    sinks = tuple(f"box{i + 1}" for i in range(per))
    tables = [f"{SHORT[stack]}{i + 1}" for i in range(per)]
    with (
        tempfile.TemporaryDirectory(prefix="tk-mixed-") as tmp,
        stacklab.server(stack, sinks) as env,
    ):
        root = Path(tmp)
        configs = [
            box_config(stack, s, root / f"{t}.yaml") for s, t in zip(sinks, tables, strict=True)
        ]
        for phase in PHASES:
            if phase == "after":  # (when told: one stack at a time; one box at a time, as
                # the stand-in hears one port)
                sys.stdin.readline()
                for sink, table, config in zip(sinks, tables, configs, strict=True):
                    found = calibrate_box(stack, sink, config, env, root)
                    said = {"kind": "calibrated", "phase": phase, "stack": stack, "table": table}
                    stacklab.emit(said | found)
                sys.stdin.readline()  # (every stack calibrated: the boxes start)
            folder = root / phase
            folder.mkdir()
            with contextlib.ExitStack() as running:
                recorders = [stacklab.recorder(stack, env, sink) for sink in sinks]
                for recorder in recorders:
                    running.callback(lambda p=recorder.proc: p.poll() is None and p.kill())
                time.sleep(0.5)
                boxes: list[Box] = []
                running.callback(stop, boxes)
                for sink, table, config in zip(sinks, tables, configs, strict=True):
                    boxes.append(stack_box(stack, sink, table, folder, url, env, config))
                wait_ready(boxes)
                stacklab.emit({"kind": "ready", "stack": stack, "phase": phase})
                wait_end(boxes, timeout=900)  # (the hall starts when every stack is ready)
                time.sleep(3.0)  # the end signal plays out
                stop(boxes)
                recordings = [r.stop() for r in recorders]
            for box, recorder, recording in zip(boxes, recorders, recordings, strict=True):
                stacklab.emit(
                    {
                        "kind": "heard",
                        "stack": stack,
                        "phase": phase,
                        "table": box.table,
                        "cues": listen(box, recorder, recording, pack),
                        "log": "" if box.events() else last_line(box),
                        "warnings": warnings(box),
                        "whole_log": (box.folder / "log.txt").read_text(errors="replace")[-20000:],
                    }
                )


class Parts:
    """The mixed hall's parts, one process a stack (mixed_part), and the rows they told."""

    def __init__(self, stacks: list[str], per: int, url: str) -> None:
        import queue
        import threading

        import stacklab

        self.rows: queue.Queue[tuple[str, dict | None]] = queue.Queue()
        self.got: list[dict] = []
        self.procs: dict[str, subprocess.Popen] = {}
        for stack in stacks:
            argv = ["--mixed-part", stack, "--mixed", str(per), "--broker", url]
            cmd = (
                [sys.executable, __file__, *argv]
                if stack == "pulse"
                else stacklab.inside_command(stack, "hall.py", argv)
            )
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
            self.procs[stack] = proc
            threading.Thread(target=self._read, args=(stack, proc), daemon=True).start()

    def _read(self, stack: str, proc: subprocess.Popen) -> None:
        import stacklab

        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(stacklab.ROW):
                self.rows.put((stack, json.loads(line[len(stacklab.ROW) :])))
            else:
                sys.stderr.write(line)
        self.rows.put((stack, None))  # (its end)

    def wait(self, kind: str, phase: str, count: int, timeout: float = 900) -> list[dict]:
        """The rows of `kind` for `phase`, `count` of them, from every part."""
        import queue

        deadline = time.monotonic() + timeout
        while True:
            mine = [r for r in self.got if r["kind"] == kind and r.get("phase") == phase]
            if len(mine) >= count:
                return mine
            try:
                stack, row = self.rows.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise SystemExit(
                    f"bench: the mixed hall's {kind} rows ({phase}) never came"
                ) from None
            if row is None:
                code = self.procs[stack].wait()
                if code != 0:
                    raise SystemExit(f"bench: the {stack} part of the mixed hall failed ({code})")
                continue
            self.got.append(row)

    def tell(self, stack: str) -> None:
        """Let `stack`'s part go on to its next step (mixed_part)."""
        proc = self.procs[stack]
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)


def mixed_hall(stacks: list[str], per: int, load: str, root: Path) -> dict:
    """Boxes on each stack (`per` a stack, each on its own server or device, as bench/
    stacklab.py runs them), joined to one Mosquitto; the hall started at one instant
    (`hall start --at`) twice: the boxes as they come, then each calibrated the same way
    (`timekeeper calibrate`). The instant is on the wall clock; the bench maps it to the
    monotonic clock once (as a box does), and every heard cue is timed against it: error =
    heard − (instant + the cue's place in the match)."""
    import datetime as dt

    from timekeeper.hall.bus import timesync

    broker = Mosquitto(root)
    broker.start()
    parts = Parts(stacks, per, broker.url)
    out: dict = {"stacks": stacks, "per": per, "load": load, "phases": {}}
    try:
        for phase in PHASES:
            parts.wait("ready", phase, len(stacks))
            count = joined(broker.url, per * len(stacks))
            stress = load_start(load)
            try:
                time.sleep(1.0 if stress else 0.0)
                instant = float(int(time.time() + MIXED_LEAD))
                at = dt.datetime.fromtimestamp(instant).strftime("%H:%M:%S")
                answer = hall(broker.url, "start", "--at", at)
                mono = timesync.to_clock(instant, time.monotonic)
                heard = parts.wait("heard", phase, per * len(stacks), timeout=300)
                loadavg = os.getloadavg()[0]
            finally:
                load_stop(stress)
            for h in heard:  # (each box's log beside the bench's other files: --keep)
                (root / f"{phase}-{h['table']}.log").write_text(h["whole_log"])
            out["phases"][phase] = {
                "joined": count,
                "refused": answer.count("REFUSED"),
                "loadavg": loadavg,
                "boxes": {h["table"]: box_errors(h, mono) | {"stack": h["stack"]} for h in heard},
            }
            if phase == "before":  # each stack calibrated in turn, the others idle (in quick
                # halls, calibrating beside another stack's boxes starting heard clicks a
                # quantum or more late), then every stack's boxes start
                for k, stack in enumerate(stacks):
                    parts.tell(stack)
                    parts.wait("calibrated", "after", per * (k + 1))
                for stack in stacks:
                    parts.tell(stack)
        out["calibrated"] = {r["table"]: r for r in parts.got if r["kind"] == "calibrated"}
    finally:
        parts.close()
        broker.stop()
    return out


def box_errors(heard: dict, mono: float) -> dict:
    """One box's cues against the hall's instant `mono` (monotonic): each error (ms), its
    median and worst, what was not found, and how far its own mapping of the instant (its
    first pre-start's due) is from the bench's (µs)."""
    cues = heard["cues"]
    first = next((c["due"] for c in cues if c["cue"] == "prestart"), None)
    if first is None:
        return {
            "errors": {},
            "warnings": heard["warnings"],
            "missing": ["every cue: " + heard["log"]],
            "mapped_us": None,
        }
    errors = {
        f"{c['cue']} {c['nth']}": (c["at"] - (mono + c["due"] - first)) * 1e3
        for c in cues
        if c["at"] is not None
    }
    return {
        "errors": errors,
        "warnings": heard["warnings"],
        "missing": [f"{c['cue']} {c['nth']}" for c in cues if c["at"] is None],
        "dropouts": [f"{c['cue']} {c['nth']}" for c in cues if c["silent"]],
        "mapped_us": (first - mono) * 1e6,
    }


def hall_spread(phase: dict) -> tuple[float, float, float]:
    """The hall's spread (ms): of the boxes' medians, of each cue across the boxes (its
    worst), and the worst single cue's error."""
    boxes = [b for b in phase["boxes"].values() if b["errors"]]
    medians = [statistics.median(b["errors"].values()) for b in boxes]
    keys = set.intersection(*(set(b["errors"]) for b in boxes)) if boxes else set()
    per_cue = [spread_ms([b["errors"][k] / 1e3 for b in boxes]) for k in keys]
    worst = max((abs(e) for b in boxes for e in b["errors"].values()), default=float("nan"))
    return spread_ms([m / 1e3 for m in medians]), max(per_cue, default=float("nan")), worst


def mixed_table(r: dict) -> list[str]:
    """Each box's error (median, worst) before and after calibrate, the latency calibrate
    wrote, and the hall's spread (max − min across the boxes)."""
    before, after = r["phases"]["before"], r["phases"]["after"]

    def cell(b: dict | None) -> str:
        if b is None or not b["errors"]:
            return "— (not heard)"
        e = list(b["errors"].values())
        med, worst = statistics.median(e), max(map(abs, e))
        lost = len(b["missing"])
        return f"{med:+.2f} / {worst:.2f}" + (f" ({lost} not found)" if lost else "")

    lines = [
        "| box | stack | before: median / worst | calibrate wrote | after: median / worst |",
        "|---|---|---|---|---|",
    ]
    for table, b in before["boxes"].items():
        cal = r["calibrated"].get(table, {})
        wrote = f"{cal['latency']:+.2f} ms" if cal.get("latency") == cal.get("latency") else "—"
        lines.append(
            f"| {table} | {b['stack']} | {cell(b)} | {wrote} | {cell(after['boxes'].get(table))} |"
        )
    sb, sa = hall_spread(before), hall_spread(after)
    lines.append(
        f"| **hall** (spread of medians / worst cue's spread / worst error) | "
        f"{len(before['boxes'])} boxes | {fmt(sb[0])} / {fmt(sb[1])} / {fmt(sb[2])} | | "
        f"**{fmt(sa[0])} / {fmt(sa[1])} / {fmt(sa[2])}** |"
    )
    return lines


def mixed(args: argparse.Namespace, stacks: list[str]) -> None:
    """--mixed: the mixed hall's row, per load."""
    per = 1 if args.quick else args.mixed
    loads = (
        ["quiet"] if args.quick else (["quiet", "stress"] if args.load == "both" else [args.load])
    )
    for load in loads:
        print(
            f"  mixed hall: {per} box(es) on each of {', '.join(stacks)}, {load} …", file=sys.stderr
        )
        with tempfile.TemporaryDirectory(prefix="tk-hall-") as tmp:
            root = Path(tmp) if args.keep is None else args.keep
            root.mkdir(parents=True, exist_ok=True)
            r = mixed_hall(stacks, per, load, root)
        for phase in PHASES:
            p = r["phases"][phase]
            for table, b in p["boxes"].items():
                each = " ".join(f"{k} {e:+.2f}" for k, e in b["errors"].items())
                print(
                    f"    {phase} {table}: mapped {b['mapped_us'] or float('nan'):+.0f} µs; {each}"
                    + (f"; NOT FOUND {b['missing']}" if b["missing"] else "")
                    + "".join(f"\n      {w}" for w in b["warnings"]),
                    file=sys.stderr,
                )
        for table, cal in r["calibrated"].items():
            print(f"    calibrate {table}: {cal['said']}", file=sys.stderr)
        said = {ph: r["phases"][ph] for ph in PHASES}
        print(
            f"The mixed hall (ms; every cue of every box against the hall's one start instant, "
            f"mapped once from the wall clock to the monotonic one; goal: after calibrate, the "
            f"hall within 2), {load}, the paced device at "
            f"{os.environ.get('TK_JACK_PERIOD', '256')}-frame JACK periods, 1-min load average "
            f"{said['before']['loadavg']:.1f} / {said['after']['loadavg']:.1f}; joined "
            f"{said['before']['joined']} / {said['after']['joined']}, refused "
            f"{said['before']['refused']} / {said['after']['refused']}\n"
        )
        print("\n".join(mixed_table(r)) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="CI: 4 recorded boxes once, 4 dummy boxes, one broker fault",
    )
    ap.add_argument("--boxes", type=int, default=50, help="dummy boxes (default %(default)s)")
    ap.add_argument("--recorded", type=int, default=4, help="recorded boxes (default 4)")
    ap.add_argument("--runs", type=int, default=5, help="recorded runs per load (default 5)")
    ap.add_argument(
        "--big",
        type=int,
        default=8,
        help="boxes of one more recorded run per load (default 8; 0: none)",
    )
    ap.add_argument(
        "--load",
        choices=("quiet", "stress", "both"),
        default="both",
        help="recorded runs quiet, under stress-ng --cpu 2, or both (default)",
    )
    ap.add_argument(
        "--sdl",
        action="store_true",
        help="the boxes on the SDL stream of before (a callback fit and a constant "
        f"{SDL_LATENCY}-ms latency), to compare",
    )
    ap.add_argument(
        "--as-unit",
        action="store_true",
        help="the boxes without real-time priority, at the service unit's nice "
        "values (default: what this user may have; root: SCHED_FIFO)",
    )
    ap.add_argument("--keep", type=Path, help="keep the boxes' folders (logs, events) here")
    ap.add_argument(
        "--recorded-only",
        action="store_true",
        help="only the recorded runs (no dummy boxes, skew or faults)",
    )
    ap.add_argument(
        "--stack",
        action="append",
        metavar="STACK",
        help="only the recorded hall, on these sound stacks (pulse, pipewire, alsa-paced; "
        "repeatable or a comma list): a row each",
    )
    ap.add_argument(
        "--mixed",
        nargs="?",
        type=int,
        const=2,
        metavar="N",
        help="a mixed hall: N boxes (default 2; --quick: 1) on each --stack (default all "
        "three) at once, one broker, one hall start; before and after each box is calibrated",
    )
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    ap.add_argument("--mixed-part", help=argparse.SUPPRESS)
    ap.add_argument("--broker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mixed_part:  # (one stack's boxes of a mixed hall, where that stack runs)
        mixed_part(args.mixed_part, args.mixed, args.broker)
        return
    import stacklab

    stacks = stacklab.parse_list(args.stack, stacklab.STACKS, "stack")
    if args.inside:
        stacks = [args.inside]
    if args.sdl:
        BOX_ARGS[:] = ["--audio-latency", SDL_LATENCY]
    if args.as_unit:
        PREFIX[:] = AS_UNIT
    print(
        f"timekeeper hall bench — {PROFILE.name}, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cpus, Mosquitto on localhost\n"
    )
    rows: list[tuple[str, str, str]] = []
    recorded: list[dict] = []
    if args.mixed is not None:
        mixed(args, stacks or list(stacklab.STACKS))
        return
    if stacks:
        by_stack(stacks, args)
        return
    with tempfile.TemporaryDirectory(prefix="tk-hall-") as tmp:
        root = Path(tmp) if args.keep is None else args.keep
        root.mkdir(parents=True, exist_ok=True)
        broker = Mosquitto(root)
        broker.start()
        try:
            loads = (
                ["quiet"]
                if args.quick
                else (["quiet", "stress"] if args.load == "both" else [args.load])
            )
            plan = (
                [args.recorded]
                if args.quick
                else ([args.recorded] * args.runs + ([args.big] if args.big else []))
            )
            for load in loads:
                for n in plan:
                    print(f"  {n} recorded boxes, {load} …", file=sys.stderr)
                    folder = root / f"rec{len(recorded)}"
                    folder.mkdir()
                    recorded.append(
                        recorded_hall(n, folder, broker, load, keep=args.keep is not None)
                    )
                    print("  " + recorded_table(recorded)[-1], file=sys.stderr)
            if args.recorded_only:
                return
            n = 4 if args.quick else args.boxes
            print(f"  {n} dummy boxes …", file=sys.stderr)
            (root / "dummy").mkdir()
            d = dummy_hall(n, root / "dummy", broker)
            rows += [
                (f"{n} dummy boxes: joined / refused", "", f"{d['joined']} / {d['refused']}"),
                (
                    f"{n} dummy boxes: spread of logged start (ms)",
                    "≤ 5",
                    fmt(d["spread"]["start"], 3),
                ),
                (f"{n} dummy boxes: spread of logged end (ms)", "≤ 5", fmt(d["spread"]["end"], 3)),
                ("box CPU while the match runs, median (% of a core)", "", fmt(d["box_cpu"])),
                (f"all {n} boxes' CPU together (% of a core)", "", fmt(d["box_cpu_sum"], 1)),
                ("box resident memory, median (MB)", "", fmt(d["box_mem"], 1)),
                (
                    "broker CPU (% of a core) / memory (MB)",
                    "",
                    f"{fmt(d['broker_cpu'])} / {fmt(d['broker_mem'], 1)}",
                ),
            ]
            if not args.quick:
                print("  skewed clocks …", file=sys.stderr)
                (root / "skew").mkdir()
                s = skewed_hall(root / "skew", broker)
                rows += [
                    (
                        "skew 0, +1, −1.5, +5 ms: refused (NOT SYNCED)",
                        "+5 ms",
                        ", ".join(f"table {t}" for t in s["refused"]) or "none",
                    ),
                    (
                        "skew: spread of the started boxes' start (ms)",
                        f"≈ {s['expected']:.1f}",
                        fmt(s["spread"]["start"], 3),
                    ),
                ]
                print("  a box killed and restarted …", file=sys.stderr)
                (root / "boxfault").mkdir()
                b = box_fault(4, root / "boxfault", broker)
                rows += [
                    (
                        "box kill -9 + restart: play time its journal lost (s)",
                        "≤ 1",
                        fmt(b["journal_lost"], 3),
                    ),
                    (
                        "… behind the others at the hall stop (s; + the stop's delivery)",
                        "",
                        fmt(b["behind"], 3),
                    ),
                    (
                        "… after a hall resume at one instant: spread of end (ms)",
                        "= behind",
                        fmt(b["spread_end"], 1),
                    ),
                ]
            print("  the broker killed and restarted mid-match …", file=sys.stderr)
            (root / "brokerfault").mkdir()
            f = broker_fault(4, root / "brokerfault", broker)
            rows += [
                (
                    "broker down 3 s mid-match: boxes that ended on time",
                    "all",
                    f"{f['ended']} / {f['boxes']}",
                ),
                (
                    "… boxes that republished their status",
                    "all",
                    f"{f['republished']} / {f['boxes']}",
                ),
                ("… spread of the end signal (ms)", "≤ 5", fmt(f["spread"]["end"], 3)),
            ]
        finally:
            broker.stop()
            if recorded:
                print(
                    "The hall as heard (ms; every cue of every box against its due time; "
                    "goal: every figure ≤ 2)\n"
                )
                print("\n".join(recorded_table(recorded)) + "\n")
    if not rows:
        return
    width = max(len(r[0]) for r in rows)
    print(f"| {'figure':<{width}} | {'goal':>6} | {'measured':>12} |")
    print(f"|{'-' * (width + 2)}|{'-' * 8}|{'-' * 14}|")
    for name, goal, value in rows:
        print(f"| {name:<{width}} | {goal:>6} | {value:>12} |")


if __name__ == "__main__":
    main()
