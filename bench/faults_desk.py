"""bench/faults.py's rows for the desk: `hall serve --tournament` as a director
starts it, on a real Mosquitto with the shipped config and ACL and a broker user per table
(as `install-pi.sh --hall-user` writes them), while three real tables send their results home:

    python bench/faults_desk.py           # 1,000 half-open connections, a 20-s flood
    python bench/faults_desk.py --quick   # 300 connections, a 5-s flood

- half-open connections to the desk's web port (from 50 addresses, half sending nothing, half
  a request head never finished, each reopened when the desk closes it);
- a results flood from one box user (table 4: uncalled results and garbage on its own topic,
  as fast as paho sends them);
- the tournament's journal hand-broken (a torn line appended) while the desk serves, a
  result arriving meanwhile, then the journal repaired.

Each row: `/api/board`'s latency during the fault (p50 and max, and how many of its asks
answered 200), the results applied in the end (of 3), the desk's peak memory and its log's
growth (bytes, tracebacks). The desk runs with `ulimit -n 1024`, a Pi's default, and the
half-open row again under `ulimit -n 150`. Benchmarks are not tests: nothing here passes or
fails, it measures and prints."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pwd
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("Adam", "Bela", "Cyril", "Dana", "Emil", "Fiona", "Gustav", "Hana")
REAL = ("1", "2", "3")  # the tables whose results count
FLOODER = "4"
NOFILE = 1024  # a Pi's default `ulimit -n` for the desk's terminal
LOW_NOFILE = 150  # a desk under a tight limit (a unit's LimitNOFILE): below the web's caps
BOARD_FROM = "127.0.0.99"  # the board's screen: an address of its own
SETTLE = 30.0  # s: at most this long after a fault for the results to be applied


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tk(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "timekeeper", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def until(predicate, seconds: float, every: float = 0.05):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if got := predicate():
                return got
        time.sleep(every)
    return None


class Hall:
    """A broker with the real ACL and a user per table, a drawn cup and `hall serve` on it,
    round 1 called; the tables as broker clients of their own users."""

    def __init__(self, nofile: int = NOFILE) -> None:
        self.dir, self.nofile = Path(tempfile.mkdtemp(prefix="tk-desk-")), nofile
        passwd = self.dir / "passwd"
        passwd.touch()
        self.users = ("desk", *REAL, FLOODER)
        for user in self.users:
            subprocess.run(["mosquitto_passwd", "-b", str(passwd), user, f"pw-{user}"], check=True)
        acl = self.dir / "timekeeper.acl"
        acl.write_text(
            (ROOT / "systemd" / "mosquitto-hall.acl").read_text()
            + "".join(
                f"\nuser {n}\ntopic read timekeeper/+/all/command\n" for n in (*REAL, FLOODER)
            )
        )
        shipped = (ROOT / "systemd" / "mosquitto-hall.conf").read_text().splitlines()
        limits = [line for line in shipped if line.startswith("max_")]
        self.port = free_port()
        conf = self.dir / "mosquitto.conf"
        conf.write_text(
            "\n".join(
                [
                    f"listener {self.port} 127.0.0.1",
                    "allow_anonymous false",
                    f"password_file {passwd}",
                    f"acl_file {acl}",
                    f"user {pwd.getpwuid(os.getuid()).pw_name}",
                    "persistence false",
                    *limits,
                ]
            )
            + "\n"
        )
        self.broker = subprocess.Popen(
            ["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        until(lambda: socket.create_connection(("127.0.0.1", self.port), 1).close() or 1, 10)
        self.url = f"mqtt://desk:pw-desk@127.0.0.1:{self.port}"
        self.cup = self.dir / "cup.yaml"
        self.cup.write_text(
            "title: Desk bench\nrules: radegast\ntables: 4\nplayers:\n"
            + "".join(f"  - {n}\n" for n in PLAYERS),
            encoding="utf-8",
        )
        done = tk("tournament", "draw", "-f", str(self.cup), "--seed", "2026")
        assert done.returncode == 0, done.stderr
        self.journal = self.dir / "cup.journal.jsonl"
        self.web = free_port()
        self.log = self.dir / "desk.log"
        self.desk: subprocess.Popen | None = None
        self.start_desk()
        called = tk("hall", "round", "1", "--tournament", str(self.cup), "--broker", self.url)
        assert called.returncode == 0, called.stdout + called.stderr
        self.tables = {t: Table(t, self.port) for t in REAL}
        for t in self.tables.values():
            assert until(lambda t=t: t.pairing, 20), f"no pairing at table {t.name}"

    def start_desk(self) -> None:
        with open(self.log, "ab") as log:
            self.desk = subprocess.Popen(
                [
                    "sh",
                    "-c",
                    f'ulimit -n {self.nofile} && exec "$@"',
                    "sh",
                    sys.executable,
                    "-m",
                    "timekeeper",
                    "hall",
                    "serve",
                    "--broker",
                    self.url,
                    "--listen",
                    str(self.web),
                    "--state-dir",
                    str(self.dir / "state"),
                    "--tournament",
                    str(self.cup),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        assert until(lambda: board(self.web, timeout=2)[0] == 200, 30), self.log.read_text()

    def applied(self) -> int:
        """How many of the real tables' results are in the tournament's ledger."""
        from timekeeper.tournament.ledger import open_tournament

        try:
            t, _ = open_tournament(self.cup, drawn=True)
        except Exception:
            return -1
        done = 0
        for table in self.tables.values():
            p = table.pairing
            if p is not None and t.fixture(p["match"]).result is not None:
                done += 1
        return done

    def close(self) -> None:
        for t in self.tables.values():
            t.close()
        for proc in (self.desk, self.broker):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


class Table:
    """A table's box as the bus sees it: its own user, its pairing, its result (retained)."""

    def __init__(self, name: str, port: int) -> None:
        self.name, self.pairing = name, None
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{name}")
        self.client.username_pw_set(name, f"pw-{name}")
        self.client.on_connect = lambda c, *_: c.subscribe(f"timekeeper/hall/{name}/pairing", 1)
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        if message.payload:
            self.pairing = json.loads(message.payload)

    def send_result(self, home: int = 2, away: int = 1) -> None:
        body = {
            "pairing": self.pairing,
            "table": self.name,
            "score": [home, away],
            "decided": "regulation",
            "goals": [],
            "penalties": [],
            "finished": time.time(),
            "confirmed": False,
        }
        sent = self.client.publish(
            f"timekeeper/hall/{self.name}/result", json.dumps(body), qos=1, retain=True
        )
        sent.wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def board(port: int, timeout: float = 5.0) -> tuple[int, float]:
    """(HTTP status or 0, seconds) of one `/api/board` from the board's own address."""
    t0 = time.monotonic()
    try:
        with socket.create_connection(
            ("127.0.0.1", port), timeout=timeout, source_address=(BOARD_FROM, 0)
        ) as s:
            s.settimeout(timeout)
            s.sendall(b"GET /api/board HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
    except (OSError, ValueError, IndexError):
        status = 0
    return status, time.monotonic() - t0


class BoardWatch:
    """`/api/board` asked every 0.25 s during a fault, as the board's screen asks."""

    def __init__(self, port: int) -> None:
        self.port, self.asks = port, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.asks.append(board(self.port))

    def done(self) -> str:
        self._stop.set()
        self._thread.join(10)
        times = [t for s, t in self.asks]
        ok = sum(s == 200 for s, _ in self.asks)
        codes = sorted({s for s, _ in self.asks if s != 200})
        other = f" (others: {', '.join(map(str, codes))})" if codes else ""
        if not times:
            return "board not asked"
        return (
            f"board p50 {statistics.median(times) * 1000:.0f} ms, max "
            f"{max(times) * 1000:.0f} ms, {ok}/{len(self.asks)} answered 200{other}"
        )


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def outcome(hall: Hall, watch: BoardWatch, log0: int) -> dict[str, str]:
    """After a fault: the results applied (waited for, at most SETTLE s), memory, the log."""
    got = until(lambda: hall.applied() == len(REAL) and len(REAL), SETTLE) or hall.applied()
    assert hall.desk is not None
    text = hall.log.read_bytes()[log0:]
    return {
        "board": watch.done(),
        "applied": f"{max(got, 0)}/{len(REAL)}" + (" (journal unreadable)" if got < 0 else ""),
        "rss": f"{peak_mb(hall.desk.pid):.0f} MB",
        "log": f"+{len(text):,} B, {text.count(b'Traceback')} tracebacks",
    }


# ----------------------------------------------------------------------------- the faults


def half_open(hall: Hall, sockets: int, hold: float, addresses: int = 50) -> dict[str, str]:
    """`sockets` half-open connections from `addresses` addresses held `hold` s (each
    reopened when the desk closes it); the real results sent a second into it."""
    log0, stop = hall.log.stat().st_size, threading.Event()
    held: list[socket.socket | None] = [None] * sockets

    def opener(n: int) -> socket.socket | None:
        try:
            s = socket.create_connection(
                ("127.0.0.1", hall.web), timeout=1, source_address=(_address(n, addresses), 0)
            )
            if n % 2:
                s.sendall(b"GET /api/board HTTP/1.1\r\nHost: x\r\n")
            s.setblocking(False)
            return s
        except OSError:
            return None

    def keep() -> None:
        while not stop.is_set():
            for n in range(sockets):
                if stop.is_set():
                    break
                s = held[n]
                if s is not None and not _closed(s):
                    continue
                if s is not None:
                    s.close()
                held[n] = opener(n)
            stop.wait(0.2)

    keeper = threading.Thread(target=keep, daemon=True)
    keeper.start()
    until(lambda: sum(s is not None for s in held) >= sockets * 0.9, 20)
    watch = BoardWatch(hall.web)
    time.sleep(1.0)
    for t in hall.tables.values():
        t.send_result()
    time.sleep(hold)
    open_now = sum(s is not None and not _closed(s) for s in held)
    stop.set()
    keeper.join(30)
    for s in held:
        if s is not None:
            s.close()
    got = outcome(hall, watch, log0)
    got["fault"] = (
        f"{sockets:,} half-open connections from {addresses} addresses, ulimit -n "
        f"{hall.nofile} ({open_now} open at the end), {hold:g} s"
    )
    return got


def _address(n: int, addresses: int) -> str:
    """The n-th connection's source address, one of `addresses` in 127.0.0.0/8."""
    k = 2 + n % addresses
    return f"127.0.{k // 250}.{k % 250 + 2}"


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def flood(hall: Hall, seconds: float) -> dict[str, str]:
    """Table 4's user floods its own result topic with uncalled results and garbage, as fast
    as paho sends; the three real results are sent a second into it."""
    log0, stop = hall.log.stat().st_size, threading.Event()
    sent = [0]
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-flood")
    c.username_pw_set(FLOODER, f"pw-{FLOODER}")
    c.max_queued_messages_set(0)
    c.connect("127.0.0.1", hall.port)
    c.loop_start()
    topic = f"timekeeper/hall/{FLOODER}/result"

    def fake(n: int) -> bytes:
        if n % 3 == 0:
            return b'{"not": "a result"' + bytes([n % 256])
        pairing = {
            "id": f"X.{n}.{random.getrandbits(32):08x}",
            "round": 1,
            "match": "A.1",
            "stage": "group A",
            "home": "Adam",
            "away": "Bela",
            "profile": "radegast",
            "sent": time.time(),
            "knockout": False,
        }
        return json.dumps(
            {
                "pairing": pairing,
                "table": FLOODER,
                "score": [n % 10, 0],
                "decided": "regulation",
                "goals": [],
                "penalties": [],
                "finished": time.time(),
                "confirmed": False,
            }
        ).encode()

    def run() -> None:
        n = 0
        while not stop.is_set():
            c.publish(topic, fake(n), qos=n % 2)
            n += 1
            sent[0] = n

    flooder = threading.Thread(target=run, daemon=True)
    flooder.start()
    watch = BoardWatch(hall.web)
    time.sleep(1.0)
    for t in hall.tables.values():
        t.send_result()
    time.sleep(seconds)
    stop.set()
    flooder.join(10)
    c.disconnect()
    c.loop_stop()
    got = outcome(hall, watch, log0)
    got["fault"] = f"results flood from table 4's user: {sent[0]:,} messages in {seconds:g} s"
    return got


def broken_journal(hall: Hall, seconds: float) -> dict[str, str]:
    """A torn line appended to the journal by hand while the desk serves; a real result
    arrives; `seconds` later the line is taken out again (the repair)."""
    log0 = hall.log.stat().st_size
    good = hall.journal.read_bytes()
    lines = good.count(b"\n")
    with open(hall.journal, "ab") as out:
        out.write(b'{"type": "result", "round": 1, "tab\n')
    watch = BoardWatch(hall.web)
    time.sleep(1.0)
    for t in hall.tables.values():
        t.send_result()
    time.sleep(seconds)
    broken_board = board(hall.web)[0]
    hall.journal.write_bytes(good)
    got = outcome(hall, watch, log0)
    got["fault"] = (
        f"journal torn at line {lines + 1} for {seconds:g} s, then repaired "
        f"(board while broken: {broken_board})"
    )
    return got


def desk_rows(quick: bool) -> list[dict[str, str]]:
    """Each fault on a hall of its own (its results not yet in)."""
    rows = []
    for nofile, fault in (
        (NOFILE, lambda h: half_open(h, 300 if quick else 1000, 5.0 if quick else 20.0)),
        (LOW_NOFILE, lambda h: half_open(h, 300 if quick else 1000, 5.0 if quick else 20.0)),
        (NOFILE, lambda h: flood(h, 5.0 if quick else 20.0)),
        (NOFILE, lambda h: broken_journal(h, 3.0 if quick else 10.0)),
    ):
        hall = Hall(nofile)
        try:
            rows.append(fault(hall))
        except Exception as exc:  # (a bench measures: what broke is its figure)
            rows.append({"fault": f"{fault}", "board": f"bench failed: {exc!r}"[:200]})
        finally:
            hall.close()
    return rows


def print_rows(rows: list[dict[str, str]]) -> None:
    head = {
        "fault": "desk fault",
        "board": "/api/board during it",
        "applied": "results",
        "rss": "peak RSS",
        "log": "log growth",
    }
    widths = {k: max(len(h), *(len(r.get(k, "")) for r in rows)) for k, h in head.items()}
    print(" | ".join(head[k].ljust(w) for k, w in widths.items()))
    print("-+-".join("-" * w for w in widths.values()))
    for r in rows:
        print(" | ".join(r.get(k, "").ljust(w) for k, w in widths.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter runs")
    args = ap.parse_args()
    random.seed(31)
    t0 = time.monotonic()
    print_rows(desk_rows(args.quick))
    print(
        f"\n({time.monotonic() - t0:.0f} s; {os.cpu_count()} cores, shared with other work: "
        "treat timings as indicative)"
    )


if __name__ == "__main__":
    main()
