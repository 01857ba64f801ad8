"""The desk's results path under fault: half-open connections to its web
port, one box user flooding results, the journal broken by hand while it serves. `hall
serve --tournament` as its own process, on a real Mosquitto with the shipped ACL and a
broker user per table (as `install-pi.sh --hall-user` writes them); the tables are broker
clients with their own users, sending a result as a box does. Each fault ends with every
real result in the tournament's ledger, and the board answering and naming what is wrong."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from boardhall import scene, serving_board
from helpers import free_port, hall_serve, wait_for
from webbox import browser, have_browser

from timekeeper.hall.practice import Mosquitto
from timekeeper.tournament.ledger import open_tournament

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

PLAYERS = ("Adam", "Bela", "Cyril", "Dana", "Emil", "Fiona", "Gustav", "Hana")
REAL = ("1", "2", "3")
WAIT = 40  # s: a result the broker dropped is asked for again within SWEEP (10 s)


class Hall:
    """The broker (shipped ACL and limits, a user per table), a drawn cup with round 1
    called, and the desk serving it."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder
        users = {user: f"pw-{user}" for user in ("desk", *REAL, "4")}
        self.broker = Mosquitto(folder / "broker", users=users, tables=(*REAL, "4")).start()
        self.port = self.broker.port
        self.url = f"mqtt://desk:pw-desk@127.0.0.1:{self.port}"
        self.cup = folder / "cup.yaml"
        self.cup.write_text(
            "title: Desk cup\nrules: radegast\ntables: 4\nplayers:\n"
            + "".join(f"  - {n}\n" for n in PLAYERS),
            encoding="utf-8",
        )
        assert tk("tournament", "draw", "-f", str(self.cup), "--seed", "2026").returncode == 0
        self.journal = folder / "cup.journal.jsonl"
        self.web, self.log = free_port(), folder / "desk.log"
        self.desk: subprocess.Popen | None = None
        self.tables: dict[str, Table] = {}

    def serve(self, ulimit: int | None = None) -> None:
        """`hall serve --tournament cup.yaml` as typed (after `ulimit -n N` where given)."""
        command = hall_serve(self.url, self.web, self.dir / "state", "--tournament", str(self.cup))
        if ulimit is not None:
            command = ["sh", "-c", f'ulimit -n {ulimit} && exec "$@"', "sh", *command]
        with open(self.log, "ab") as log:
            self.desk = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        wait_for(lambda: self.board(), "the desk's board", 30)

    def call_round(self) -> None:
        done = tk("hall", "round", "1", "--tournament", str(self.cup), "--broker", self.url)
        assert done.returncode == 0, done.stdout + done.stderr
        self.tables = {t: Table(t, self.port) for t in REAL}
        for t in self.tables.values():
            wait_for(lambda t=t: t.pairing, f"table {t.name}'s pairing", 20)

    def board(self, source: str = "127.0.0.99") -> dict:
        """`/api/board` from the board screen's own address; {} unless it answers 200."""
        with socket.create_connection(
            ("127.0.0.1", self.web), timeout=5, source_address=(source, 0)
        ) as s:
            s.sendall(b"GET /api/board HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return json.loads(body) if head.startswith(b"HTTP/1.1 200") else {}

    def applied(self) -> int:
        t, _ = open_tournament(self.cup, drawn=True)
        return sum(t.fixture(x.pairing["match"]).result is not None for x in self.tables.values())

    def stop(self) -> None:
        if self.desk is not None and self.desk.poll() is None:
            self.desk.send_signal(signal.SIGTERM)
            self.desk.wait(15)

    def close(self) -> None:
        for t in self.tables.values():
            t.close()
        self.stop()
        self.broker.stop()


class Table:
    """A table's box on the bus: its own user, its pairing, its result (retained)."""

    def __init__(self, name: str, port: int) -> None:
        self.name, self.pairing = name, None
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"t-{name}")
        self.client.username_pw_set(name, f"pw-{name}")
        self.client.on_connect = lambda c, *_: c.subscribe(f"timekeeper/hall/{name}/pairing", 1)
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        if message.payload:
            self.pairing = json.loads(message.payload)

    def send_result(self) -> None:
        body = result_body(self.pairing, self.name)
        sent = self.client.publish(
            f"timekeeper/hall/{self.name}/result", json.dumps(body), qos=1, retain=True
        )
        sent.wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def result_body(pairing: dict | None, table: str, home: int = 2) -> dict:
    return {
        "pairing": pairing,
        "table": table,
        "score": [home, 1],
        "decided": "regulation",
        "goals": [],
        "penalties": [],
        "finished": time.time(),
        "confirmed": False,
    }


def tk(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "timekeeper", *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[Hall]:
    h = Hall(tmp_path)
    try:
        yield h
    finally:
        h.close()


def test_half_open_connections_leave_the_board_and_the_results_their_descriptors(
    hall: Hall,
) -> None:
    """200 half-open connections from 20 addresses (none over the cap per address) against a
    desk under `ulimit -n 150`: the connections are capped below the limit, the board answers
    while they are held, and the three results that come home meanwhile are applied (before:
    the desk ran out of descriptors, failed to read cup.yaml and dropped them for good)."""
    hall.serve(ulimit=150)
    hall.call_round()
    held = []
    try:
        for n in range(200):
            s = socket.create_connection(
                ("127.0.0.1", hall.web), timeout=5, source_address=(f"127.0.1.{2 + n % 20}", 0)
            )
            if n % 2:
                s.sendall(b"GET /api/board HTTP/1.1\r\nHost: x\r\n")  # (never finished)
            held.append(s)
        for t in hall.tables.values():
            t.send_result()
        wait_for(lambda: hall.applied() == 3, "the three results in the ledger", WAIT)
        board = wait_for(hall.board, "the board during the connections", WAIT)
        assert board["trouble"] == []
    finally:
        for s in held:
            s.close()
    assert "Traceback" not in hall.log.read_text()


def test_one_boxs_flood_costs_that_box_not_the_halls_results(hall: Hall) -> None:
    """Table 4's broker user floods its own result topic (uncalled results and garbage, as
    fast as paho sends) while tables 1-3 send their real results: all three are applied, the
    board names table 4, and the desk's log stays a few lines long (before: the desk re-read
    the tournament for every message, the broker dropped the real results, 0 of 3)."""
    hall.serve()
    hall.call_round()
    flooder = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="t-4")
    flooder.username_pw_set("4", "pw-4")
    flooder.connect("127.0.0.1", hall.port)
    flooder.loop_start()
    stop, sent = threading.Event(), [0]
    fake = dict(next(iter(hall.tables.values())).pairing or {})

    def flood() -> None:
        while not stop.is_set():
            n = sent[0]
            if n % 3 == 0:
                payload = b'{"not": "a result"'
            else:
                fake["id"] = f"X.{n}.forged"
                payload = json.dumps(result_body(fake, "4", n % 10)).encode()
            flooder.publish("timekeeper/hall/4/result", payload, qos=n % 2)
            sent[0] = n + 1

    thread = threading.Thread(target=flood, daemon=True)
    log0 = hall.log.stat().st_size
    thread.start()
    try:
        wait_for(lambda: sent[0] > 5000, "the flood under way", WAIT)
        for t in hall.tables.values():
            t.send_result()
        wait_for(lambda: sent[0] > 20000, "20,000 messages of the flood", WAIT)
    finally:
        stop.set()
        thread.join(10)
        flooder.disconnect()
        flooder.loop_stop()
    wait_for(lambda: hall.applied() == 3, "the three real results in the ledger", WAIT)
    board = hall.board()
    assert any("table 4 sends too many results" in x for x in board["trouble"]), board
    assert not any("table 1" in x or "table 2" in x for x in board["trouble"]), board
    grown = hall.log.read_text()[log0:]
    assert "Traceback" not in grown and len(grown) < 20_000, (len(grown), grown[-2000:])


def test_a_journal_broken_by_hand_shows_the_last_standings_and_holds_the_results(
    hall: Hall,
) -> None:
    """A torn line appended to cup.journal.jsonl while the desk serves: the board answers
    with the standings as last read and names the journal's line; the results that come home
    meanwhile are held, said on the board, and applied once the line is taken out again
    (before: the board answered 500 and the results were dropped for good)."""
    hall.serve()
    hall.call_round()
    good = hall.journal.read_bytes()
    line = good.count(b"\n") + 1
    with open(hall.journal, "ab") as out:
        out.write(b'{"type": "result", "round": 1, "tab\n')
    for t in hall.tables.values():
        t.send_result()
    board = wait_for(
        lambda: (
            (b := hall.board()) and any("3 results not applied" in x for x in b["trouble"]) and b
        ),
        "the board saying the three results wait",
        WAIT,
    )
    said = "\n".join(board["trouble"])
    assert f"cup.journal.jsonl:{line}" in said, said
    assert board["groups"] and all(len(rows) == 4 for rows in board["groups"].values())
    hall.journal.write_bytes(good)
    wait_for(lambda: hall.applied() == 3, "the three held results in the ledger", WAIT)
    wait_for(lambda: hall.board().get("trouble") == [], "the board clear again", WAIT)
    assert hall.log.read_text().count("Traceback") == 0


def test_a_result_held_when_the_desk_stops_is_applied_by_the_next_desk(hall: Hall) -> None:
    """What keeps a held result across a restart is the broker's retained copy of it: the
    desk stopped while the journal is broken, the journal mended, the desk started again —
    the result is in."""
    hall.serve()
    hall.call_round()
    good = hall.journal.read_bytes()
    with open(hall.journal, "ab") as out:
        out.write(b"{torn\n")
    table = hall.tables["1"]
    table.send_result()
    wait_for(
        lambda: any("1 result not applied" in x for x in hall.board()["trouble"]),
        "the result held",
        WAIT,
    )
    hall.stop()
    hall.journal.write_bytes(good)
    hall.serve()
    wait_for(lambda: hall.applied() == 1, "the held result in the ledger", WAIT)


@pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver")
def test_the_board_page_names_a_broken_journal_and_keeps_the_standings(tmp_path: Path) -> None:
    """The board on the TV (Chromium, the real Director and Board) while the journal is
    broken by hand: not DESK OFFLINE, the standings and the tables as last read, and the
    journal's line named in the header, readably; gone once the line is mended."""
    desk, file = scene(tmp_path)
    journal = file.with_name("cup.journal.jsonl")
    with (
        serving_board(desk, file, tmp_path / "desk") as (url, _, _director),
        browser(1920, 1080) as page,
    ):
        page.get(f"{url}/board")
        wait_for(lambda: page.execute_script("return window.tkBoard.last() !== null"), "drawn", 10)
        cards = page.execute_script("return document.querySelectorAll('.card').length")
        good = journal.read_bytes()
        line = good.count(b"\n") + 1
        with open(journal, "ab") as out:
            out.write(b'{"type": "result", "tab\n')
        trouble = lambda: page.find_element("id", "trouble")  # noqa: E731
        wait_for(
            lambda: trouble().is_displayed() and f"cup.journal.jsonl:{line}" in trouble().text,
            "the broken line named on the board",
            10,
        )
        body = page.find_element("tag name", "body").text
        assert "DESK OFFLINE" not in body
        assert page.execute_script("return document.querySelectorAll('.card').length") == cards
        size = page.execute_script(
            "return parseFloat(getComputedStyle(document.getElementById('trouble')).fontSize)"
        )
        assert size >= 0.03 * 1080
        journal.write_bytes(good)
        wait_for(lambda: not trouble().is_displayed(), "the board clear again", 10)
