"""bench/faults.py's rows for the web server and the hall's bus under attack:
slowloris at the unit's descriptor limit, a WebSocket ping flood, a flood of bad requests
(bytes logged a minute), a scheduled hall start called off by a reset, a poisoned retained
status. Each row: the match clock (play time against the monotonic clock across the attack),
the controls (ctl and /api/status answering, and how fast), memory and the log's growth."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from faults import Box, row

NOFILE = 256  # systemd/timekeeper.service: LimitNOFILE=256


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid: int) -> tuple[float, float]:
    """(resident MB now, peak MB)."""
    now = peak = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            now = int(line.split()[1]) / 1024
        elif line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return now, peak


def timed(call) -> float | None:
    """Seconds `call` took (None: it failed)."""
    t0 = time.monotonic()
    try:
        call()
    except Exception:
        return None
    return time.monotonic() - t0


def api_status(port: int, source: str = "127.0.0.99") -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=6, source_address=(source, 0)) as s:
        s.sendall(b"GET /api/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = s.recv(64)
        if not got.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(got)


class Watch:
    """Before and after an attack: play time against the monotonic clock, memory, log."""

    def __init__(self, box: Box) -> None:
        self.box = box
        self.play = box.status()["play_time"]
        self.log0 = box.err.stat().st_size
        self.rss0 = rss(box.proc.pid)[0]
        self.t0 = time.monotonic()

    def done(self, port: int | None = None) -> str:
        ctl = timed(self.box.status)
        web = timed(lambda: api_status(port)) if port else None
        play = self.box.status()["play_time"]
        clock = (
            self._cues()
            if play > self.play
            else f"clock not started ({self.box.status()['state']})"
        )
        now, peak = rss(self.box.proc.pid)
        logged = self.box.err.stat().st_size - self.log0
        took = time.monotonic() - self.t0
        answers = f"ctl {_ms(ctl)}" + (f", /api/status {_ms(web)}" if port else "")
        return (
            f"{clock}; {answers}; RSS "
            f"{self.rss0:.0f}→{now:.0f} MB (peak {peak:.0f}); log +{logged / 1024:.1f} KB "
            f"in {took:.0f} s"
        )

    def _cues(self) -> str:
        """The clock, from the events log as flood() reads it: each mark's play time against
        its moment on the box's monotonic clock (ours too) keeps one mapping; none late."""
        events = self.box.dir / "events.jsonl"
        t1 = time.monotonic()
        cues = (
            [
                c
                for c in map(json.loads, events.read_text().splitlines())
                if self.t0 <= c["due"] <= t1 and c["cue"] == "minute"
            ]
            if events.exists()
            else []
        )
        if not cues:
            return "NO CUES LOGGED"
        drift = max(
            abs((c["play_time"] - cues[0]["play_time"]) - (c["due"] - cues[0]["due"])) for c in cues
        )
        late = max(c["played"] - c["due"] for c in cues)
        return (
            f"clock exact to {drift * 1000:.1f} ms over {len(cues)} cues, latest "
            f"{late * 1000:.1f} ms"
        )


def _ms(seconds: float | None) -> str:
    return "NO ANSWER" if seconds is None else f"{seconds * 1000:.0f} ms"


def web_box() -> tuple[Box, int]:
    port = free_port()
    box = Box("--web", f"127.0.0.1:{port}")
    box.args += ["--events", str(box.dir / "events.jsonl")]
    box.start("--fresh")
    hard = resource.prlimit(box.proc.pid, resource.RLIMIT_NOFILE)[1]
    resource.prlimit(box.proc.pid, resource.RLIMIT_NOFILE, (NOFILE, min(hard, NOFILE)))
    box.cmd("start")
    return box, port


# ----------------------------------------------------------------------------- the web


def slowloris(box: Box, port: int, hold: float, sockets: int = 400) -> dict:
    """400 half-open connections (a request head never finished) from 50 addresses, held
    for `hold` s against a box under LimitNOFILE=256."""
    watch = Watch(box)
    held = []
    for n in range(sockets):
        try:
            s = socket.create_connection(
                ("127.0.0.1", port), timeout=2, source_address=(f"127.0.0.{2 + n % 50}", 0)
            )
            s.sendall(b"GET /api/status HTTP/1.1\r\nHost: x\r\n")
            held.append(s)
        except OSError:
            pass
    fds_during = len(os.listdir(f"/proc/{box.proc.pid}/fd"))
    during = timed(lambda: api_status(port))
    ctl_during = timed(box.status)
    time.sleep(hold)
    dropped = sum(_closed(s) for s in held)
    for s in held:
        s.close()
    fds = len(os.listdir(f"/proc/{box.proc.pid}/fd"))
    did = watch.done(port)
    return row(
        f"slowloris: {sockets} half-open connections, LimitNOFILE={NOFILE}, {hold:g} s",
        f"{did}; during: ctl {_ms(ctl_during)}, /api/status "
        f"{_ms(during)}; {dropped}/{len(held)} closed by the box; box fds {fds_during} "
        f"during, {fds} after",
        "0",
    )


def _closed(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


async def _still_open(ws) -> bool:
    import aiohttp

    try:
        while True:
            msg = await ws.receive(timeout=0.3)
            if msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.ERROR,
            ):
                return False
    except TimeoutError:
        return True
    except Exception:
        return False


def ping_flood(box: Box, port: int, seconds: float, pages: int = 195) -> dict:
    """195 /api/live pages from one address sending pings and never reading."""
    import aiohttp

    async def flood() -> tuple[int, int]:
        opened = refused = 0
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            sockets = []
            for _ in range(pages):
                try:
                    sockets.append(
                        await session.ws_connect(
                            f"http://127.0.0.1:{port}/api/live", autoping=False
                        )
                    )
                    opened += 1
                except aiohttp.ClientError:
                    refused += 1
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                for ws in sockets:
                    if not ws.closed:
                        with contextlib.suppress(Exception):
                            await ws.ping(b"p" * 120)
                await asyncio.sleep(0.005)
            alive = 0
            for ws in sockets:  # (read now: what the box did to each while we did not)
                alive += await _still_open(ws)
                await ws.close()
            return opened, refused, alive

    watch = Watch(box)
    opened, refused, alive = asyncio.run(flood())
    return row(
        f"ping flood: {pages} live pages from one address, pings never read, {seconds:g} s",
        f"{watch.done(port)}; {opened} opened ({refused} refused: "
        f"the cap per address), {opened - alive} closed by the box for flooding",
        "0",
    )


def log_flood(box: Box, port: int, seconds: float) -> dict:
    """Malformed HTTP, 5,000-character /static/ names and non-ASCII tokens, as fast as one
    address can send them: what reaches the log, a minute."""
    bad = [
        b"\x16\x03\x01 not http\r\n\r\n",
        f"GET /static/{'x' * 5000} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
        f"GET /static/{'y' * 1800} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
        "POST /api/command HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer žžž\r\n"
        "Content-Length: 2\r\n\r\n{}".encode(),
    ]
    watch = Watch(box)
    sent, until = 0, time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                s.sendall(bad[sent % len(bad)])
                s.recv(256)
        except OSError:
            pass
        sent += 1
    return row(
        f"log flood: {sent:,} bad requests from one address in {seconds:g} s", watch.done(port), "0"
    )


# ----------------------------------------------------------------------------- the hall


class Hall:
    """A private Mosquitto (anonymous, as bench/hall.py) and one box joined to it."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tk-h-", dir="/tmp"))
        self.port = free_port()
        conf = self.dir / "m.conf"
        conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
            "max_packet_size 4096\npersistence false\n"
        )
        self.broker = subprocess.Popen(
            ["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.box = Box("--hall", self.url, "--table", "1", "--sync", "local")
        self.box.args += ["--events", str(self.box.dir / "events.jsonl")]
        self.box.start("--fresh")
        self.desk = None

    def hall(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "timekeeper", "hall", *args, "--broker", self.url],
            capture_output=True,
            text=True,
            timeout=60,
        )

    def desk_sees(self, what, timeout: float = 20.0) -> dict:
        from timekeeper.hall.desk import Desk
        from timekeeper.hall.link import Broker

        if self.desk is None:
            self.desk = Desk(Broker.parse(self.url), "hall")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            tables = self.desk.tables()
            try:
                if what(tables):
                    return tables
            except (KeyError, TypeError):
                pass
            time.sleep(0.05)
        raise RuntimeError("the desk never saw it")

    def close(self) -> None:
        if self.desk is not None:
            self.desk.close()
        self.box.close()
        self.broker.kill()
        self.broker.wait(5)


def scheduled_reset(hall: Hall, lead: float) -> dict:
    """`hall start --in LEAD`, then `hall reset`: the start must never happen."""
    hall.desk_sees(lambda t: t.get("1", {}).get("online"))
    watch = Watch(hall.box)
    start = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "timekeeper",
            "hall",
            "start",
            "--in",
            f"{lead:g}s",
            "--broker",
            hall.url,
        ],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    instant = time.time() + lead
    shown = hall.desk_sees(lambda t: t["1"]["status"]["scheduled"])["1"]["status"]
    from timekeeper.hall.desk import new_command

    reset = hall.desk.send(new_command("reset"))["1"]
    answer, _ = start.communicate(timeout=lead + 30)
    pending = hall.box.status()["scheduled"]
    while time.time() < instant + 1:
        time.sleep(0.2)
    state = hall.box.status()["state"]
    never = "called off" in answer and state == "idle"
    return row(
        f"a hall start {lead:g} s ahead, then a reset",
        f"{'never started' if never else 'STARTED'} ({state} at its instant); shown "
        f"pending: {shown['scheduled'][0]['command']}; after the reset "
        f"{'ok' if reset.get('ok') else 'REFUSED'}: {len(pending)} pending; the start "
        f"answered {'called off' if 'called off' in answer else 'ok'}, exit "
        f"{start.returncode}; {watch.done()}",
        "-",
    )


def poisoned_status(hall: Hall) -> dict:
    """A retained 1000-deep status and a `"state": 5` on the bus: the desk goes on."""
    import paho.mqtt.publish as publish

    hall.desk_sees(lambda t: t.get("1", {}).get("online"))
    hall.box.cmd("start")
    watch = Watch(hall.box)
    for table, payload in (
        ("8", b"[" * 1000 + b"]" * 1000),
        ("9", json.dumps({"online": True, "status": {"state": 5}})),
    ):
        publish.single(
            f"timekeeper/hall/{table}/status",
            payload,
            qos=1,
            retain=True,
            hostname="127.0.0.1",
            port=hall.port,
        )
    t0 = time.monotonic()
    stop = hall.hall("cancel")  # (a hall command that leaves the match's clock alone)
    took = time.monotonic() - t0
    status = hall.hall("status", "--json")
    tables = json.loads(status.stdout)
    bad = sorted(t for t, s in tables.items() if s.get("bad"))
    traceback = "Traceback" in stop.stdout + stop.stderr + status.stderr
    return row(
        "a poisoned retained status (1000-deep JSON; state 5)",
        f"hall cancel answered in {took:.1f} s, exit {stop.returncode}, table 1 "
        f"{'answered' if 'table 1: REFUSED  no answer' not in stop.stdout else 'SILENT'}"
        f"; BAD tables {', '.join(bad)}; traceback {'YES' if traceback else 'none'}; "
        f"{watch.done()}",
        "-",
    )


def attack_rows(quick: bool) -> list[dict]:
    """One web box for the web's rows and one hall for the hall's (fewer starts: CI's quick
    run stays short). The quick run holds the slowloris shorter than the head timeout (10 s):
    its connections are then closed by the caps, not yet by the timeout."""
    box, port = web_box()
    try:
        rows = [
            slowloris(box, port, 3.0 if quick else 30.0),
            ping_flood(box, port, 2.0 if quick else 7.0),
            log_flood(box, port, 2.0 if quick else 60.0),
        ]
    finally:
        box.close()
    hall = Hall()
    try:
        rows += [scheduled_reset(hall, 8.0 if quick else 20.0), poisoned_status(hall)]
    finally:
        hall.close()
    return rows
