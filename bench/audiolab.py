"""A private PulseAudio server with a null sink, a recorder on its monitor, and the onset
finder: what bench/timing.py needs to hear what a live run really played, and when.

The server is started by the bench and killed at its end; it never touches a desktop's own
sound server (its own XDG_RUNTIME_DIR, socket and HOME). It works as root too: PulseAudio
only warns there, as long as it is started without --system and without autospawn."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RATE = 48000
SINK = "bench"


class PulseServer:
    """`with PulseServer() as env:` — env holds PULSE_SERVER and SDL_AUDIODRIVER for clients."""

    def __init__(self, sinks: tuple[str, ...] = (SINK,)) -> None:
        """`sinks`: the null sinks to make (bench/hall.py gives each box its own)."""
        self.sinks = sinks
        for tool in ("pulseaudio", "parec", "pactl"):
            if shutil.which(tool) is None:
                raise SystemExit(f"bench: {tool} is missing; run ./bootstrap.sh --bench")
        self.dir = Path(tempfile.mkdtemp(prefix="tk-pulse-"))
        self.socket = self.dir / "native"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> dict[str, str]:
        env = dict(
            os.environ,
            XDG_RUNTIME_DIR=str(self.dir),
            HOME=str(self.dir),
            PULSE_RUNTIME_PATH=str(self.dir),
        )
        self.proc = subprocess.Popen(
            # --no-cpu-limit: at load 20+ with 8 boxes PulseAudio's own CPU limiter ended the
            # server mid-run (every box: "Connection refused"); the bench measures the boxes
            [
                "pulseaudio",
                "-n",
                "--daemonize=no",
                "--exit-idle-time=-1",
                "--disallow-exit",
                "--no-cpu-limit",
                "--use-pid-file=no",
                "--disable-shm=yes",
                "--log-target=stderr",
                *(
                    f"--load=module-null-sink sink_name={sink} rate={RATE} channels=1 "
                    "format=float32le"
                    for sink in self.sinks
                ),
                f"--load=module-native-protocol-unix auth-anonymous=1 socket={self.socket}",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "pulse.log").open("w"),
        )
        self.env = {
            "PULSE_SERVER": f"unix:{self.socket}",
            "SDL_AUDIODRIVER": "pulseaudio",
            "PULSE_SINK": self.sinks[0],
        }
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ok = (
                subprocess.run(
                    ["pactl", "-s", f"unix:{self.socket}", "info"], capture_output=True
                ).returncode
                == 0
            )
            if ok:
                return self.env
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        log = (self.dir / "pulse.log").read_text(errors="replace")[-2000:]
        self.__exit__()
        raise SystemExit(f"bench: PulseAudio did not start:\n{log}")

    def __exit__(self, *_exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _raise(realtime: bool) -> None:
    """The capture and its stamps run ahead of a load put on the boxes, where permitted:
    at SCHED_FIFO 30 (`realtime`: one recorder, bench/timing.py), else at nice −10.

    Why not real-time for a hall (as until 2026-12-02): 8 recorders and their 8 `parec` at
    2-ms latency took 110 s of CPU in a 2-minute run of 8 boxes, and at SCHED_FIFO 30 they
    went before the sound server's sink threads (RR 5) and its main thread (nice −11): the
    spreads across the tables were 0.6-1.2 ms, and in 1 run of 7 the server stalled every box
    for 2.4-3.2 s. At nice −10, 3 runs: spreads 0.17-0.34 ms, no stall (the stamps need no
    real-time: an origin is the earliest of many, docs/timing.md). One recorder takes ~20 %
    of a core and starves nothing: it stays real-time, as for every earlier single-box
    figure."""
    with contextlib.suppress(OSError):
        if realtime:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(30))
        else:
            os.nice(-10)


class Recorder:
    """parec on the null sink's monitor, float32 mono at 48 kHz, read in small pieces by a
    process of its own (`python audiolab.py --record`: no GIL shared with the bench, ahead
    of the boxes where permitted (_raise), a 1-MB pipe), so that a busy machine neither
    delays its stamps nor makes parec drop data.

    Every piece read is stamped with time.monotonic(); the earliest (stamp − frames so far)
    near a frame tells when frame 0 was captured as seen from there (give or take the capture
    latency, a few ms, the same for every cue and both audio paths). Taken near each cue, not
    over the whole recording: the server's sample clock and the system clock drift apart by
    a few hundred ppm here, which over a minute is already milliseconds."""

    def __init__(self, env: dict[str, str], sink: str = SINK, realtime: bool = False) -> None:
        """`realtime`: at SCHED_FIFO where permitted, for one recorder alone (_raise)."""
        self.dir = Path(tempfile.mkdtemp(prefix="tk-rec-"))
        self.proc = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--record",
                env["PULSE_SERVER"],
                sink,
                str(self.dir),
                "realtime" if realtime else "nice",
            ],
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.origin = float("inf")
        self.stamps: list[tuple[float, int]] = []
        deadline = time.monotonic() + 10
        while not (self.dir / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    def origin_near(self, frame: int, span: float = 2.0, after: float = 0.5) -> float:
        """Monotonic time of frame 0, from the reads from `span` seconds before `frame` to
        `after` seconds after it (not further: once the players have gone, an idle null
        sink hands its monitor data over in bursts ahead of time)."""
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
        raw = (self.dir / "audio").read_bytes()
        shutil.rmtree(self.dir, ignore_errors=True)
        return np.frombuffer(raw[: len(raw) // 4 * 4], np.float32)


def _record(server: str, sink: str, folder: Path, realtime: bool) -> None:
    """The recorder's own process: parec's output to `audio`, (stamp, frames) to `stamps`."""
    _raise(realtime)
    proc = subprocess.Popen(
        [
            "parec",
            "-s",
            server,
            f"--device={sink}.monitor",
            "--raw",
            f"--rate={RATE}",
            "--channels=1",
            "--format=float32le",
            "--latency-msec=2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    try:
        import fcntl

        fcntl.fcntl(fd, 1031, 1 << 20)  # F_SETPIPE_SZ: a stall of ours never blocks parec
    except OSError:
        pass
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    total = 0
    with open(folder / "audio", "wb") as audio, open(folder / "stamps", "wb") as stamps:
        (folder / "started").touch()
        while True:
            piece = os.read(fd, 1 << 16)
            now = time.monotonic()
            if not piece:
                break
            audio.write(piece)
            total += len(piece)
            stamps.write(np.array([now, total // 4], np.float64).tobytes())
    proc.wait()


def find_onset(
    recording: np.ndarray,
    reference: np.ndarray,
    around: int,
    before: int = RATE // 20,
    after: int = RATE,
) -> int | None:
    """The recording sample where `reference` starts, searched from `around - before` to
    `around + after`: the first sample over a third of the sound's own opening peak, moved
    back by where the reference crosses that level, then refined to the best match within a
    few samples. None when nothing like it is there."""
    head = reference[: RATE // 20]
    level = np.abs(head).max() / 3
    ref_cross = int(np.argmax(np.abs(head) > level))
    lo, hi = max(0, around - before), min(len(recording), around + after)
    window = np.abs(recording[lo:hi]) > level
    if not window.any():
        return None
    guess = lo + int(np.argmax(window)) - ref_cross
    best, best_err = None, np.inf
    for shift in range(-4, 5):
        start = guess + shift
        if start < 0 or start + len(head) > len(recording):
            continue
        err = float(np.mean((recording[start : start + len(head)] - head) ** 2))
        if err < best_err:
            best, best_err = start, err
    if best is None or best_err > 0.05 * float(np.mean(head**2)):
        return None  # something sounded, but not this cue
    return best


if __name__ == "__main__" and sys.argv[1:2] == ["--record"]:
    _record(sys.argv[2], sys.argv[3], Path(sys.argv[4]), sys.argv[5:6] == ["realtime"])
