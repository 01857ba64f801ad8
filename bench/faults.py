"""Faults, floods and hostile input against a live box: what the match did, the play
time lost, and how many commands were answered.

    python bench/faults.py            # the probe's figures: 20 kill -9s, a 20-s flood, 100 MB lines
    python bench/faults.py --quick    # a smoke run (CI, about two minutes)
    python bench/faults_desk.py       # the desk's rows alone

Each scenario starts a real `timekeeper run` (SDL's dummy audio, mock GPIO) in a folder of its
own. The full disk mounts a 64 KiB tmpfs (root only; skipped otherwise). The frozen sound
server row comes from bench/faults_audio.py when it is there. Benchmarks are not tests:
nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (faults_audio beside this file)
os.environ["TIMEKEEPER_PROFILES_PATH"] = ""

from timekeeper.box.controls.socket_client import send
from timekeeper.box.journal import FILE_NAME

HOUR = "title: a quarter\nprestart: 0\nperiod: {length: 900, marks: 1, mark_beeps: single}\n"


class Box:
    """A live box in a folder of its own (short path: AF_UNIX)."""

    def __init__(self, *args: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tk-f-", dir="/tmp"))
        (self.dir / "profiles").mkdir()
        (self.dir / "profiles" / "hour.yaml").write_text(HOUR)
        (self.dir / "state").mkdir()
        self.sock, self.journal = self.dir / "c.sock", self.dir / "state" / FILE_NAME
        self.args = list(args)
        self.env = {
            **os.environ,
            "SDL_AUDIODRIVER": "dummy",
            "GPIOZERO_PIN_FACTORY": "mock",
            "TIMEKEEPER_PROFILES_PATH": str(self.dir / "profiles"),
            "TIMEKEEPER_CONTROL": str(self.sock),
            "STATE_DIRECTORY": str(self.dir / "state"),
        }
        self.proc: subprocess.Popen | None = None
        self.err = self.dir / "stderr.txt"

    def start(self, *extra: str) -> Box:
        with open(self.err, "a") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "timekeeper",
                    "run",
                    "--audio",
                    "sdl",
                    "--profile",
                    "hour",
                    "--no-keyboard",
                    *self.args,
                    *extra,
                ],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        for _ in range(1500):
            if self.proc.poll() is not None:
                raise RuntimeError(f"the box exited: {self.err.read_text()[-500:]}")
            with contextlib.suppress(ConnectionError, OSError):
                send(self.sock, "status", timeout=2)
                return self
            time.sleep(0.01)
        raise RuntimeError("the box never answered")

    def status(self) -> dict:
        return send(self.sock, "status", timeout=5)["status"]

    def played(self) -> tuple[float, float]:
        """(play time, the monotonic time it was true at: the middle of the round trip)."""
        before = time.monotonic()
        play = self.status()["play_time"]
        return play, (before + time.monotonic()) / 2

    def cmd(self, line: str) -> dict:
        return send(self.sock, line, timeout=5)

    def signal(self, sig: int) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        shutil.rmtree(self.dir, ignore_errors=True)


def rss_peak(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def row(fault: str, did: str, lost: str = "-", answered: str = "-") -> dict:
    return {"fault": fault, "match": did, "lost": lost, "answered": answered}


# ----------------------------------------------------------------------------- scenarios


def kill_9(repeat: int) -> dict:
    """kill -9 at random moments of a running match; the restart must come back stopped at
    the journaled time: lost = play time at the kill − play time resumed."""
    box, losses, right = Box(), [], 0
    try:
        box.start("--fresh")
        box.cmd("start")
        for _ in range(repeat):
            seen, at = box.played()
            time.sleep(random.uniform(0.3, 2.5))
            killed = time.monotonic()
            box.proc.kill()
            box.proc.wait(30)
            truth = seen + (killed - at)
            back = box.start().status()
            losses.append(truth - back["play_time"])
            # (negative down to about -0.1 s: the play time seen is known to half a round trip,
            # and a journal written as a cue is looked ahead may be the stream's 43-ms lead on)
            right += back["state"] == "stopped" and -0.1 <= truth - back["play_time"] <= 1.0
            box.cmd("resume")
    finally:
        box.close()
    return row(
        f"kill -9 at random moments (×{repeat})",
        f"resumed stopped at the journaled time {right}/{repeat}",
        f"max {max(losses):.2f} s, mean {sum(losses) / len(losses):.2f} s, "
        f"min {min(losses) * 1000:.0f} ms",
    )


def stop_signal(sig: signal.Signals) -> dict:
    box = Box()
    try:
        box.start("--fresh")
        box.cmd("start")
        time.sleep(0.5)
        seen, at = box.played()
        time.sleep(0.3)
        signalled = time.monotonic()
        code = box.signal(sig)
        kept = json.loads(box.journal.read_text())
        lost = seen + (signalled - at) - kept["play_time"]
        gone = "socket removed" if not box.sock.exists() else "SOCKET LEFT"
        return row(
            sig.name,
            f"exit {code}, journaled {kept['state']}, {gone}",
            f"{max(0.0, lost) * 1000:.0f} ms (±1 ms)",
        )
    finally:
        box.close()


def flood(seconds: float, clients: int = 4) -> dict:
    """Many clients sending as fast as they can: status, refused and invalid commands, ids.
    The clock must stay exact: each cue's play time against its moment on the box's monotonic
    clock (the events log; the same clock as ours) keeps one mapping, and no cue is late."""
    box = Box()
    events = box.dir / "events.jsonl"
    box.args = ["--events", str(events)]
    lines = [
        "status",
        "start",
        "frobnicate",
        "add 99999",
        "pause now",
        "penalty home minor",
        '{"id": "x", "command": "start"}',
        "quit",
    ]  # none of them may touch the clock
    sent = answered = 0
    lock = threading.Lock()
    try:
        box.start("--fresh")
        box.cmd("start")
        t0 = time.monotonic()
        stop_at = t0 + seconds

        def client() -> None:
            nonlocal sent, answered
            while time.monotonic() < stop_at:
                line = random.choice(lines)
                try:
                    reply = send(box.sock, line, timeout=5)
                    ok = isinstance(reply, dict)
                except (ConnectionError, OSError):
                    ok = False
                with lock:
                    sent += 1
                    answered += ok

        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        t1 = time.monotonic()
        box.signal(signal.SIGTERM)
        cues = [
            c
            for c in map(json.loads, events.read_text().splitlines())
            if t0 <= c["due"] <= t1 and c["cue"] == "minute"
        ]  # the marks, each second
    finally:
        box.close()
    if not cues:
        return row(f"flood: {sent:,} socket requests in {seconds:g} s", "NO CUES LOGGED")
    drift = max(
        abs((c["play_time"] - cues[0]["play_time"]) - (c["due"] - cues[0]["due"])) for c in cues
    )
    late = max(c["played"] - c["due"] for c in cues)
    return row(
        f"flood: {sent:,} socket requests in {seconds:g} s",
        f"clock exact to {drift * 1000:.1f} ms over {len(cues)} cues (play time vs "
        f"the monotonic clock); latest cue {late * 1000:.1f} ms",
        "0",
        f"{answered:,}/{sent:,}",
    )


def full_disk() -> dict:
    box = Box()
    disk = box.dir / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        box.close()
        return row(
            "full disk (--events, state dir)",
            f"skipped: cannot mount a tmpfs ({mounted.stderr.strip()[:40]})",
        )
    try:
        events = disk / "events.jsonl"
        box.args = ["--events", str(events), "--state-dir", str(disk / "state")]
        with open(disk / "filler", "wb", buffering=0) as out, contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 1024)
        box.start("--fresh")
        box.cmd("start")
        t0 = time.monotonic()
        answered = sum(box.cmd("status")["ok"] for _ in range(20))
        time.sleep(2.5)
        t1 = time.monotonic()
        (disk / "filler").unlink()
        time.sleep(1.5)
        box.signal(signal.SIGTERM)
        err = box.err.read_text()
        told = err.count("cannot write the events log") + err.count("cannot write the journal")
        back = "written again" in err
        marks = [
            c
            for c in map(json.loads, events.read_text().splitlines())
            if t0 <= c["due"] <= t1 and c["cue"] == "minute"
        ]  # written once space came
        drift = max(
            (
                abs((c["play_time"] - marks[0]["play_time"]) - (c["due"] - marks[0]["due"]))
                for c in marks
            ),
            default=float("nan"),
        )
        return row(
            "full disk (--events, state dir)",
            f"{len(marks)} marks while full, all logged later, clock exact to "
            f"{drift * 1000:.1f} ms; told {told}× (log, journal); "
            f"{'resumed writing' if back else 'NOT RESUMED'}",
            "0",
            f"{answered}/20",
        )
    finally:
        if box.proc is not None and box.proc.poll() is None:
            box.proc.kill()
            box.proc.wait()
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
        box.close()


def emfile() -> dict:
    box = Box()
    try:
        box.start("--fresh")
        box.cmd("start")
        pid = box.proc.pid
        used = len(os.listdir(f"/proc/{pid}/fd"))
        hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)[1]
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (used + 4, hard))
        held = []
        for _ in range(1020):  # the probe's figure
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(str(box.sock))
            except BlockingIOError:
                sock.close()
                continue
            held.append(sock)
        time.sleep(0.5)
        closed = time.monotonic()
        for sock in held:
            sock.close()
        while True:
            try:
                box.status()
                break
            except (ConnectionError, OSError):
                time.sleep(0.05)
        back = time.monotonic() - closed
        err = box.err.read_text()
        state = box.status()["state"]
        return row(
            "EMFILE: 1,020 connection attempts, RLIMIT_NOFILE lowered",
            f"{state}; socket answers {back:.1f} s after they close; told "
            f"{err.count('cannot accept a connection')}×",
            "0",
        )
    finally:
        box.close()


def long_lines(size: int) -> list[dict]:
    rows = []
    for label, data, newline in (
        ("line", b"add " + b"9" * size, True),
        ("without a newline", b"x" * (3 * size), False),
    ):
        box = Box()
        try:
            box.start("--fresh")
            before = rss_peak(box.proc.pid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(str(box.sock))
                with contextlib.suppress(OSError):
                    sock.sendall(data + (b"\n" if newline else b""))
                reply = b""
                with contextlib.suppress(OSError):
                    while chunk := sock.recv(65536):
                        reply += chunk
            grew = rss_peak(box.proc.pid) - before
            ok = box.cmd("status")["ok"]
            what = json.loads(reply)["error"] if reply else "no reply"
            rows.append(
                row(
                    f"{len(data) / 1e6:g} MB {label}",
                    f"refused in {len(reply)} bytes ({what[:28]}); memory "
                    f"+{grew:.1f} MB; status {'answers' if ok else 'FAILS'}",
                )
            )
        finally:
            box.close()
    return rows


def bad_journals() -> dict:
    cases = {
        "nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
        "86,400 s added": json.dumps(
            {
                "format": 1,
                "profile": "hour",
                "state": "stopped",
                "period": 1,
                "play_time": 10,
                "added": 86_400,
                "shots": 0,
                "shootout": False,
            }
        ),
        "random bytes": os.urandom(300).decode("latin-1"),
        "a penalty's since as text": json.dumps(
            {
                "format": 1,
                "profile": "hour",
                "state": "stopped",
                "period": 1,
                "play_time": 10,
                "added": 0,
                "shots": 0,
                "shootout": False,
                "extra": {
                    "box": {
                        "running_max": 2,
                        "next_id": 2,
                        "penalties": [
                            {
                                "id": 1,
                                "team": "home",
                                "kinds": ["minor"],
                                "segments": [120],
                                "player": "",
                                "state": "running",
                                "served": 0,
                                "since": "ten",
                            }
                        ],
                    }
                },
            }
        ),
    }
    fine = 0
    for text in cases.values():
        box = Box()
        try:
            box.journal.write_text(text)
            box.start()
            fine += box.status()["state"] == "idle" and bool(
                list(box.journal.parent.glob(f"{FILE_NAME}.*.bad"))
            )
        except RuntimeError:
            pass
        finally:
            box.close()
    return row(f"bad journals ({', '.join(cases)})", f"set aside, clean start {fine}/{len(cases)}")


def quit_over_socket() -> dict:
    box = Box()
    try:
        box.start("--fresh")
        reply = box.cmd("quit")
        alive = box.proc.poll() is None and box.status()["state"] == "idle"
        runs = "runs on" if alive else "STOPPED"
        return row("`quit` on the socket", f"{reply['result']}; box {runs}")
    finally:
        box.close()


def frozen_server(freeze: float) -> list[dict]:
    try:
        from faults_audio import scenario_frozen_server  # bench/faults_audio.py
    except ImportError:
        return [row("frozen sound server", "not measured here (bench/faults_audio.py absent)")]
    try:
        got = scenario_frozen_server(freeze=freeze)
    except Exception as exc:  # (no PulseAudio here: ./bootstrap.sh --bench installs it)
        return [row("frozen sound server", f"not measured: {str(exc)[:70]}")]
    if {"fault", "match", "lost", "answered"} <= set(got):
        return [got]
    values = [str(v) for v in got.values()]  # other names: taken in this table's order
    return [row(*(values + ["-"] * 4)[:4])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter runs (CI smoke)")
    args = ap.parse_args()
    random.seed(10)
    t0 = time.monotonic()
    rows = [kill_9(5 if args.quick else 20)]
    rows += [stop_signal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)]
    rows.append(flood(3 if args.quick else 20))
    rows.append(full_disk())
    rows.append(emfile())
    rows += long_lines(10_000_000 if args.quick else 100_000_000)
    rows.append(bad_journals())
    rows.append(quit_over_socket())
    rows += frozen_server(5.0 if args.quick else 20.0)
    from faults_attack import attack_rows  # (the web server and the hall's bus)

    rows += attack_rows(args.quick)
    from faults_desk import desk_rows  # (the desk's results path)

    for r in desk_rows(args.quick):
        rows.append(
            row(
                f"desk: {r['fault']}",
                f"results {r.get('applied', '?')}; {r.get('board', '')}; peak RSS "
                f"{r.get('rss', '?')}; log {r.get('log', '?')}",
            )
        )
    widths = {k: max(len(k), *(len(str(r.get(k, ""))) for r in rows)) for k in rows[0]}
    head = {
        "fault": "fault",
        "match": "what the match did",
        "lost": "play time lost",
        "answered": "commands answered",
    }
    widths = {k: max(w, len(head[k])) for k, w in widths.items()}
    print(" | ".join(head[k].ljust(w) for k, w in widths.items()))
    print("-+-".join("-" * w for w in widths.values()))
    for r in rows:
        print(" | ".join(str(r.get(k, "")).ljust(w) for k, w in widths.items()))
    print(
        f"\n({time.monotonic() - t0:.0f} s; {os.cpu_count()} cores, shared with other work: "
        "treat timings as indicative)"
    )


if __name__ == "__main__":
    main()
