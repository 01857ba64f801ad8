"""The Pi's own sound stacks for bench/timing.py and bench/hall.py (`--stack`): each stack's
server and recorder, run where the stack is, and the conditions a row is measured under.

    pulse       this machine: a private PulseAudio server (audiolab.PulseServer), parec
    pipewire    PipeWire 0.3.65 through pipewire-pulse, as on Pi OS Desktop, in a Bookworm
                chroot (bench/stacks/*.sh); null sinks made with pactl, recorded with parec
                on their monitors, the graph's quantum FORCED to 1024 frames while it runs
                (else the monitor recordings get holes)
    alsa-paced  JACK's dummy backend behind ALSA's jack PCM, in a chroot: a paced ALSA
                device without hardware, where the box plays as on Pi OS Lite (ALSA straight
                on the card); recorded by a JACK client (JackRecorder) stamped with JACK's
                own cycle times plus the playback port's latency

A bench given `--stack pipewire` runs itself again inside that stack's chroot
(bench/stacks/run.sh, which builds the chroot once, under /var/cache/timekeeper-bench) with
`--inside pipewire`, and reads its rows back from its output (lines `ROW {json}`).

Conditions: `quiet`; `loaded` (stress-ng --cpu 2 beside it); `cpu25`, `cpu10`: the box held
to 25 % / 10 % of one core (a cgroup v1 cpu quota, bench/cpubudget.py)."""

from __future__ import annotations

import contextlib
import ctypes
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from audiolab import RATE, SINK, PulseServer, Recorder
from cpubudget import CpuBudgetUnavailable, cpu_budget
from standin_mic import PCM as STANDIN

HERE = Path(__file__).resolve().parent
STACKS = ("pulse", "pipewire", "alsa-paced")
CONDITIONS = ("quiet", "loaded", "cpu25", "cpu10")
ROW = "ROW "


def parse_list(values: list[str] | None, allowed: tuple[str, ...], what: str) -> list[str]:
    """`--stack a --stack b,c` → [a, b, c], each checked (exit 2 naming the bad one)."""
    out = [v for value in values or [] for v in value.split(",") if v]
    for v in out:
        if v not in allowed:
            raise SystemExit(f"bench: {what} {v!r} is not one of {', '.join(allowed)}")
    return out


def run_inside(stack: str, script: str, argv: list[str]) -> list[dict]:
    """Run `script` (bench/timing.py, bench/hall.py) with `argv` inside `stack`'s chroot;
    its rows. Its other output goes to our stderr as it comes."""
    proc = subprocess.Popen(
        [*inside_command(stack, script, argv), "--inside", stack],
        stdout=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    rows = []
    for line in proc.stdout:
        if line.startswith(ROW):
            rows.append(json.loads(line[len(ROW) :]))
        else:
            sys.stderr.write(line)
    if proc.wait() != 0:
        raise SystemExit(f"bench: the {stack} stack's run failed (exit {proc.returncode})")
    return rows


def inside_command(stack: str, script: str, argv: list[str]) -> list[str]:
    """The command that runs `script` (a bench of bench/) with `argv` inside `stack`'s chroot
    (bench/stacks/run.sh: the stack's daemons started for it)."""
    return [str(HERE / "stacks" / "run.sh"), stack, sys.executable, str(HERE / script), *argv]


@contextlib.contextmanager
def calibrate_input(stack: str, sink: str, folder: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The input `timekeeper calibrate --input` hears `sink` through on `stack`, and what its
    environment needs for it: on PulseAudio and PipeWire the null sink's monitor, an ALSA PCM
    through the server's own ALSA plugin (defined in `folder`/alsa/asoundrc; on PipeWire its
    monitor made the default source); on the paced
    device the stand-in microphone (bench/standin_mic.py) on the sink's JACK port, running
    while inside."""
    if stack == "alsa-paced":
        port = sink[3:] if sink.startswith("box") else "1"
        mic = subprocess.Popen(
            [sys.executable, str(HERE / "standin_mic.py"), f"system:playback_{port}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert mic.stdout is not None
            mic.stdout.readline()  # ("standin: ready …")
            yield STANDIN, {}
        finally:
            mic.terminate()
            mic.wait(10)
        return
    heard = f'type pulse; device "{sink}.monitor"'  # (libpulse: $PULSE_SERVER's server)
    if stack == "pipewire":
        heard = f'type pipewire; capture_node "{sink}"'
        # (PipeWire's ALSA plugin took the default source, the first sink's monitor, whatever
        # capture_node said: on the second sink calibrate heard 0 of 12 clicks)
        server = os.environ["PULSE_SERVER"]
        subprocess.run(["pactl", "-s", server, "set-default-source", f"{sink}.monitor"], check=True)
    (folder / "alsa").mkdir(parents=True, exist_ok=True)
    (folder / "alsa" / "asoundrc").write_text(f"pcm.heard_{sink} {{ {heard} }}\n")
    yield f"heard_{sink}", {"XDG_CONFIG_HOME": str(folder)}


def emit(row: dict) -> None:
    """(inside a chroot) hand a row back to the bench outside."""
    print(ROW + json.dumps(row), flush=True)


class ExternalServer:
    """The stack's own pulse server (pipewire-pulse, started by bench/stacks/inside.sh): the
    null sinks the bench needs are made on it with pactl, and unloaded at the end."""

    def __init__(self, sinks: tuple[str, ...] = (SINK,)) -> None:
        self.sinks, self.modules = sinks, []
        self.server = os.environ["PULSE_SERVER"]

    def __enter__(self) -> dict[str, str]:
        for sink in self.sinks:
            self.modules.append(
                subprocess.run(
                    [
                        "pactl",
                        "-s",
                        self.server,
                        "load-module",
                        "module-null-sink",
                        f"sink_name={sink}",
                        f"rate={RATE}",
                        "channels=1",
                        "format=float32le",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
            )
        subprocess.run(["pactl", "-s", self.server, "set-default-sink", self.sinks[0]], check=True)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # (the sinks show up in the graph a moment later)
            have = subprocess.run(
                ["pactl", "-s", self.server, "list", "short", "sinks"],
                capture_output=True,
                text=True,
            ).stdout
            if all(s in have for s in self.sinks):
                break
            time.sleep(0.05)
        return {"PULSE_SERVER": self.server, "PULSE_SINK": self.sinks[0]}

    def __exit__(self, *_exc: object) -> None:
        for module in self.modules:
            subprocess.run(
                ["pactl", "-s", self.server, "unload-module", module], capture_output=True
            )


@contextlib.contextmanager
def server(stack: str, sinks: tuple[str, ...] = (SINK,)) -> Iterator[dict[str, str]]:
    """The environment a box of `stack` runs with (its sound server, or its ALSA device)."""
    if stack == "pulse":
        with PulseServer(sinks) as env:
            yield env
    elif stack == "pipewire":
        with ExternalServer(sinks) as env:
            yield env
    elif stack == "alsa-paced":  # (ALSA's default is the jack PCM: bench/stacks/build.sh)
        yield {"PULSE_SERVER": "unix:/nonexistent", "SDL_AUDIODRIVER": "alsa"}
    else:
        raise ValueError(stack)


def recorder(stack: str, env: dict[str, str], sink: str = SINK, realtime: bool = False):
    """The stack's instrument: parec on PulseAudio (as every earlier figure); on PipeWire a
    record stream stamped by the server's own reports (ServerStampedRecorder); on the paced
    ALSA device a JACK client stamped by JACK's cycles (JackRecorder)."""
    if stack == "alsa-paced":  # (the default device plays to port 1; box<N> to port N)
        port = sink[3:] if sink.startswith("box") else "1"
        return JackRecorder(f"feeds:system:playback_{port}")
    if stack == "pipewire" and os.environ.get("TK_RECORDER") == "pw-jack":
        return JackRecorder(f"{sink}[ :]*monitor_*")  # (pw-jack: "bench Audio/Sink sink:…")
    if stack == "pipewire" and os.environ.get("TK_RECORDER") == "stamped":
        return ServerStampedRecorder(env, sink)
    return Recorder(env, sink, realtime)


class _Recording:
    """What both recorders below share with audiolab.Recorder: stamps (t, frame), each saying
    frame `frame` is heard at monotonic time `t`, and the earliest origin near a frame."""

    dir: Path
    proc: subprocess.Popen

    def _wait_started(self) -> None:
        self.origin = float("inf")
        self.stamps: list[tuple[float, int]] = []
        deadline = time.monotonic() + 10
        while not (self.dir / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    def origin_near(self, frame: int, span: float = 2.0, after: float = 0.5) -> float:
        near = [
            t - f / RATE for t, f in self.stamps if frame - span * RATE <= f <= frame + after * RATE
        ]
        return min(near) if near else self.origin

    def stop(self) -> np.ndarray:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)
        stamps = np.fromfile(self.dir / "stamps", np.float64).reshape(-1, 2)
        self.stamps = [(float(t), int(f)) for t, f in stamps]
        self.origin = min((t - f / RATE for t, f in self.stamps), default=float("inf"))
        audio = np.fromfile(self.dir / "audio", np.float32)
        shutil.rmtree(self.dir, ignore_errors=True)
        return audio


class ServerStampedRecorder(_Recording):
    """The sink's monitor through a libpulse record stream whose every chunk is stamped by
    the server's own timing report (its write index and the instant of the graph cycle that
    captured it), not by when our read returned. Why on PipeWire: pipewire-pulse hands the
    monitor over a whole quantum (21 ms at 1024 frames) at a time, so parec's read times say
    nothing finer than that; the server's reports are stamped at its cycle."""

    def __init__(self, env: dict[str, str], sink: str = SINK) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tk-srec-"))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--pulse-record", env["PULSE_SERVER"], sink, str(self.dir)],
            stdin=subprocess.DEVNULL,
        )
        self._wait_started()


class JackRecorder(_Recording):
    """What a JACK graph plays, with each cycle's own start time: a process of its own
    (`python stacklab.py --jack-record DIR FOLLOW`) connects an input port, as each appears,
    to every client port that feeds a playback port (`feeds:system:playback_N`, JACK's dummy
    backend: frames stamped with the cycle's start plus that port's playback latency, when
    JACK says they reach the output), or to the ports whose names match a glob (PipeWire's
    graph through pipewire-jack, `pw-jack`: a null sink's monitor, stamped with the graph
    cycle that played them minus the port's capture latency)."""

    def __init__(self, follow: str) -> None:
        """`follow`: `feeds:PORT` (what plays to PORT, on JACK), or a port-name glob (on
        PipeWire's graph, through pw-jack)."""
        self.dir = Path(tempfile.mkdtemp(prefix="tk-jrec-"))
        cmd = [sys.executable, __file__, "--jack-record", str(self.dir), follow]
        if not follow.startswith("feeds:"):
            cmd = ["pw-jack", *cmd]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
        self._wait_started()


def _pulse_record(server: str, sink: str, folder: Path) -> None:
    """The server-stamped recorder's own process (ctypes on libpulse, as sound/pulse.py)."""
    sys.path.insert(0, str(HERE.parent))
    from timekeeper.sound import pulse

    lib = pulse._library()
    p, s = ctypes.c_void_p, ctypes.c_size_t
    for name, restype, argtypes in (
        ("pa_stream_connect_record", ctypes.c_int, [p, ctypes.c_char_p, p, ctypes.c_uint32]),
        ("pa_stream_peek", ctypes.c_int, [p, ctypes.POINTER(p), ctypes.POINTER(s)]),
        ("pa_stream_drop", ctypes.c_int, [p]),
        ("pa_stream_update_timing_info", p, [p, p, p]),
        ("pa_operation_unref", None, [p]),
    ):
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes
    with contextlib.suppress(OSError):
        os.nice(-10)
    loop = lib.pa_mainloop_new()
    ctx = lib.pa_context_new(lib.pa_mainloop_get_api(loop), b"tk-recorder")
    lib.pa_context_connect(ctx, server.encode(), 0x0001, None)
    while lib.pa_context_get_state(ctx) != 4:
        if lib.pa_context_get_state(ctx) in (5, 6) or lib.pa_mainloop_iterate(loop, 1, None) < 0:
            raise SystemExit("pulse-record: no server")
    spec = pulse._SampleSpec(5, RATE, 1)
    stream = lib.pa_stream_new(ctx, b"monitor", ctypes.byref(spec), None)
    attr = pulse._BufferAttr(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 256 * 4)
    lib.pa_stream_connect_record(stream, f"{sink}.monitor".encode(), ctypes.byref(attr), 0x0002)
    while lib.pa_stream_get_state(stream) != 2:
        if lib.pa_mainloop_iterate(loop, 1, None) < 0:
            raise SystemExit("pulse-record: no stream")
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    pieces: list[bytes] = []
    stamps: list[tuple[float, int]] = []
    total, last, asked = 0, None, 0.0
    data, size = p(), s()
    real_to = pulse._real_to(time.monotonic)
    (folder / "started").touch()
    while not stop[0]:
        lib.pa_mainloop_iterate(loop, 1, None)
        while lib.pa_stream_peek(stream, ctypes.byref(data), ctypes.byref(size)) == 0 and size:
            n = size.value
            pieces.append(ctypes.string_at(data, n) if data else bytes(n))  # (NULL: a hole)
            total += n // 4
            lib.pa_stream_drop(stream)
        now = time.monotonic()
        if now - asked > 0.05:  # a fresh report 20 times a second
            asked = now
            op = lib.pa_stream_update_timing_info(stream, None, None)
            if op:
                lib.pa_operation_unref(op)
        info = lib.pa_stream_get_timing_info(stream)
        if info:
            i = info.contents
            stamp = (i.timestamp.sec, i.timestamp.usec)
            if stamp != last and not i.write_index_corrupt:
                last = stamp
                at = i.timestamp.sec + i.timestamp.usec / 1e6 + real_to - i.source_usec / 1e6
                stamps.append((at, i.write_index // 4))
    (folder / "audio").write_bytes(b"".join(pieces))
    np.array(stamps, np.float64).tofile(folder / "stamps")


def libjack() -> ctypes.CDLL:
    """libjack through ctypes (no module to install), its calls typed once for the bench's two
    JACK clients: the recorder here and the stand-in microphone (standin_mic.py)."""
    jack = ctypes.CDLL("libjack.so.0")
    p, u32, u64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64
    jack.jack_client_open.restype = p
    jack.jack_client_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    jack.jack_port_register.restype = p
    jack.jack_port_register.argtypes = [
        p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_ulong,
        ctypes.c_ulong,
    ]
    jack.jack_port_get_buffer.restype = p
    jack.jack_port_get_buffer.argtypes = [p, u32]
    jack.jack_get_cycle_times.argtypes = [
        p,
        ctypes.POINTER(u32),
        ctypes.POINTER(u64),
        ctypes.POINTER(u64),
        ctypes.POINTER(ctypes.c_float),
    ]
    jack.jack_get_time.restype = u64
    jack.jack_get_ports.restype = ctypes.POINTER(ctypes.c_char_p)
    jack.jack_get_ports.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
    jack.jack_port_by_name.restype = p
    jack.jack_port_by_name.argtypes = [p, ctypes.c_char_p]
    jack.jack_port_get_all_connections.restype = ctypes.POINTER(ctypes.c_char_p)
    jack.jack_port_get_all_connections.argtypes = [p, p]
    jack.jack_connect.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p]
    jack.jack_port_name.restype = ctypes.c_char_p
    jack.jack_port_name.argtypes = [p]
    jack.jack_free.argtypes = [p]
    jack.jack_port_get_latency_range.argtypes = [p, ctypes.c_int, ctypes.POINTER(u32 * 2)]
    for name in ("jack_activate", "jack_deactivate", "jack_client_close"):
        getattr(jack, name).argtypes = [p]
    jack.jack_set_process_callback.argtypes = [p, p, p]
    jack.jack_get_buffer_size.restype = u32
    jack.jack_get_buffer_size.argtypes = [p]
    return jack


def jack_links(jack: ctypes.CDLL, client: int, name: bytes) -> set[bytes]:
    """The ports connected to port `name` (the bench's JACK clients follow what feeds a
    port: connected to it, they hear what it is handed)."""
    conns = jack.jack_port_get_all_connections(client, jack.jack_port_by_name(client, name))
    linked, j = set(), 0
    while conns and conns[j]:
        linked.add(conns[j])
        j += 1
    if conns:
        jack.jack_free(ctypes.cast(conns, ctypes.c_void_p))
    return linked


def _jack_record(folder: Path, follow: str) -> None:
    """The JACK recorder's own process (ctypes on libjack: no module to install)."""
    jack = libjack()
    p, u32, u64 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(30))
    client = jack.jack_client_open(b"tkrec", 0x01, None)  # JackNoStartServer
    if not client:
        raise SystemExit("jack-record: no JACK server")
    port = jack.jack_port_register(client, b"in", b"32 bit float mono audio", 0x1, 0)
    mine = jack.jack_port_name(port)
    span = (u32 * 2)()
    target = follow[len("feeds:") :].encode() if follow.startswith("feeds:") else None
    if target is not None:
        jack.jack_port_get_latency_range(jack.jack_port_by_name(client, target), 1, span)
    # s from a cycle's start to when its frames are heard: JackPlaybackLatency of the port
    # played to; for a port followed, minus its JackCaptureLatency (how long before the
    # cycle its frames were played), read as it is connected
    latency = [span[0] / RATE]
    # JACK's clock (µs) onto time.monotonic(): the closest of a few back-to-back pairs
    best, offset = float("inf"), 0.0
    for _ in range(5):
        a = time.monotonic()
        j = jack.jack_get_time() / 1e6
        b = time.monotonic()
        if b - a < best:
            best, offset = b - a, (a + b) / 2 - j
    pieces: list[bytes] = []
    stamps: list[tuple[float, int]] = []
    total = [0]
    frames, usecs, nxt, per = u32(), u64(), u64(), ctypes.c_float()

    @ctypes.CFUNCTYPE(ctypes.c_int, u32, p)
    def process(n: int, _arg) -> int:
        jack.jack_get_cycle_times(
            client, ctypes.byref(frames), ctypes.byref(usecs), ctypes.byref(nxt), ctypes.byref(per)
        )
        pieces.append(ctypes.string_at(jack.jack_port_get_buffer(port, n), n * 4))
        stamps.append((usecs.value / 1e6 + offset + latency[0], total[0]))
        total[0] += n
        return 0

    jack.jack_set_process_callback(client, ctypes.cast(process, p), None)
    jack.jack_activate(client)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    (folder / "started").touch()
    while not stop.wait(0.02):  # connect every port followed, as it appears
        names = jack.jack_get_ports(client, None, b"audio", 0x2)  # JackPortIsOutput
        if not names:
            continue
        k = 0
        while names[k]:
            name = names[k]
            k += 1
            if target is None:
                if fnmatch.fnmatchcase(name.decode(errors="replace"), follow) and (
                    jack.jack_connect(client, name, mine) == 0  # (EEXIST: connected)
                ):
                    jack.jack_port_get_latency_range(jack.jack_port_by_name(client, name), 0, span)
                    latency[0] = -span[1] / RATE
                continue
            if name.startswith(b"system:"):
                continue
            linked = jack_links(jack, client, name)
            if target in linked and mine not in linked:
                jack.jack_connect(client, name, mine)
        jack.jack_free(ctypes.cast(names, p))
    jack.jack_deactivate(client)
    jack.jack_client_close(client)
    (folder / "audio").write_bytes(b"".join(pieces))
    np.array(stamps, np.float64).tofile(folder / "stamps")
    print(
        f"jack-record: {total[0] / RATE:.1f} s, cycle start + {latency[0] * 1e3:.2f} ms",
        file=sys.stderr,
    )


class Load:
    """`stress-ng --cpu 2` beside the run (the `loaded` condition), stopped at the end."""

    def __init__(self, condition: str) -> None:
        self.proc: subprocess.Popen | None = None
        if condition == "loaded":
            if shutil.which("stress-ng") is None:
                raise SystemExit("bench: stress-ng is missing (apt-get install stress-ng)")
            self.proc = subprocess.Popen(
                ["stress-ng", "--cpu", "2", "--quiet"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

    def __enter__(self) -> Load:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@contextlib.contextmanager
def budget(condition: str) -> Iterator[object]:
    """A `preexec_fn` that puts the box in a CPU budget (cpu25, cpu10: bench/cpubudget.py),
    else None."""
    if not condition.startswith("cpu"):
        yield None
        return
    try:
        with cpu_budget(int(condition[3:]) / 100) as group:
            yield group.enter
    except CpuBudgetUnavailable as error:
        raise SystemExit(f"bench: {condition}: {error}") from error


if __name__ == "__main__" and sys.argv[1:2] == ["--jack-record"]:
    _jack_record(Path(sys.argv[2]), sys.argv[3])
if __name__ == "__main__" and sys.argv[1:2] == ["--pulse-record"]:
    _pulse_record(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
