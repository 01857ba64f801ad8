"""A real desk for the tests that play the hall through it: `hall serve --tournament` as its
own process (`Served`), the tables as fakes that answer a pairing with a result on a real
broker (`FakeTables`), a drawn cup, and `timekeeper` run to completion (`tk`). Imported,
never collected."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from helpers import HALL_WAIT, free_port, hall_serve, wait_for, write_tournament

from timekeeper.hall.bus.broker import Broker, make_client
from timekeeper.hall.bus.pairing import Pairing, pairing_topic, parse_pairing
from timekeeper.hall.bus.result import MatchResult, result_topic

PLAYERS = ("Adam", "Běla", "Cyril", "Dana", "Emil", "Fiona", "Gustav", "Hana")


def drawn_cup(folder: Path, players=PLAYERS, tables: int = 4, extra: str = "") -> Path:
    head = f"title: Desk cup\nrules: radegast\ntables: {tables}\n"
    file = write_tournament(folder / "cup.yaml", head, players, extra)
    done = tk("tournament", "draw", "-f", str(file), "--seed", "2026")
    assert done.returncode == 0, done.stderr
    return file


def tk(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "timekeeper", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Served:
    """`hall serve --tournament FILE` as its own process, and its board's JSON."""

    def __init__(self, url: str, file: Path, state: Path, *more: str) -> None:
        self.port, self.state = free_port(), state
        self.proc = subprocess.Popen(
            hall_serve(url, self.port, state, "--tournament", str(file), *more),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(lambda: self.get("/api/hall"), "hall serve to answer", HALL_WAIT)

    def get(self, path: str, token: str = ""):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        request = urllib.request.Request(self.base + path, headers=headers)
        with urllib.request.urlopen(request, timeout=5) as answer:
            body = answer.read().decode()
        return json.loads(body) if path.startswith("/api/") else body

    @property
    def token(self) -> str:
        return (self.state / "hall" / "web-token").read_text().strip()

    def board(self) -> dict:
        """The director's board (with the desk's token: everything)."""
        return self.get("/api/board", self.token)

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.base + path,
            method="POST",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def stop(self) -> tuple[str, str]:
        if self.proc.poll() is None:
            self.proc.terminate()
        out, err = self.proc.communicate(timeout=15)
        return out, err


class FakeTables:
    """The tables as the desk hears them: each table's retained pairing, and a result for it
    published (retained) as a box publishes its finished match's."""

    def __init__(self, url: str) -> None:
        self.pairings: dict[str, Pairing] = {}
        self._lock = threading.Lock()
        self.client = make_client("fake-tables", Broker.parse(url))
        self.client.on_message = self._message
        self.client.on_connect = lambda c, *_: c.subscribe(pairing_topic("hall", "+"), 1)
        broker = Broker.parse(url)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        if message.payload:
            with self._lock:
                self.pairings[message.topic.split("/")[2]] = parse_pairing(message.payload)

    def of_round(self, number: int) -> dict[str, Pairing]:
        with self._lock:
            return {t: p for t, p in self.pairings.items() if p.round == number}

    def result(self, table: str, home: int, away: int) -> MatchResult:
        p = self.pairings[table]
        r = MatchResult(p, table, (home, away), "regulation", (), (), time.time())
        sent = self.client.publish(result_topic("hall", table), r.to_json(), qos=1, retain=True)
        sent.wait_for_publish(HALL_WAIT)  # (kept by the broker from now on)
        return r

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def round_of(file: Path, number: int) -> dict[str, str]:
    """table -> match of round `number`, as the tournament schedules it."""
    from timekeeper.tournament.ledger import open_tournament

    t, _ = open_tournament(file, drawn=True)
    return {s.table: s.match for s in t.slots if s.round == number}
