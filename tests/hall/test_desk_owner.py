"""While `hall serve --tournament` runs it is the one writer of the tournament's ledger: the
terminal's commands hand it their entries over its socket (`cup.desk.sock`) and it writes
them, shows them at once and answers; with no desk, or only a dead desk's socket left, the
commands write the ledger themselves under its lock.

The requests' checks (size, rate, range) are tested in-process; the rest drives the
processes a director runs: `hall serve` on a real Mosquitto, `timekeeper tournament …` and
`hall round` in processes of their own."""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path

import pytest
from deskhall import FakeTables, Served, drawn_cup, round_of, tk
from helpers import HALL_WAIT, wait_for

from timekeeper.cli import desk_client
from timekeeper.hall.desk import desksocket
from timekeeper.hall.desk.desksocket import BadRequest, parse, socket_path
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.state import TournamentError
from timekeeper.web.ratelimit import Bucket

RESULT = {
    "round": 1,
    "table": "1",
    "score": "3:1",
    "decided": "regulation",
    "forfeit": None,
    "reason": "",
    "game": None,
    "one_game": False,
}


def line(op: str = "result", fields: dict | None = None, file: str = "/x/cup.yaml") -> str:
    return json.dumps({"file": file, "op": op, "fields": RESULT if fields is None else fields})


# ---------------------------------------------------------------- requests, in-process


def test_a_request_is_taken_whole_and_typed() -> None:
    request = parse(line().encode())
    assert (request.op, request.fields["round"], request.fields["score"]) == ("result", 1, "3:1")
    assert parse(line("round", {"number": 3}).encode()).fields == {"number": 3}
    lot = {"group": "A", "order": ["Adam", "Běla"], "seed": None}
    assert parse(line("lot", lot).encode()).fields["order"] == ["Adam", "Běla"]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"\xff\xfe", "not a JSON request"),
        (b"[1, 2]", "a request is"),
        (b'{"file": "/x", "op": "result"}', "a request is"),
        (line("draw", {}).encode(), "op: one of"),
        (line("result", {**RESULT, "extra": 1}).encode(), "fields of result"),
        (line("result", {k: v for k, v in RESULT.items() if k != "game"}).encode(), "fields"),
        (line("result", {**RESULT, "round": 0}).encode(), "result round"),
        (line("result", {**RESULT, "round": 10_001}).encode(), "result round"),
        (line("result", {**RESULT, "round": 1.5}).encode(), "result round"),
        (line("result", {**RESULT, "round": True}).encode(), "result round"),
        (line("result", {**RESULT, "game": -1}).encode(), "result game"),
        (line("result", {**RESULT, "decided": "bribe"}).encode(), "result decided"),
        (line("result", {**RESULT, "forfeit": "both"}).encode(), "result forfeit"),
        (line("result", {**RESULT, "score": "1" * 17}).encode(), "result score"),
        (line("result", {**RESULT, "reason": "x" * 201}).encode(), "result reason"),
        (line("result", {**RESULT, "one_game": 1}).encode(), "result one_game"),
        (line("lot", {"group": "A", "order": ["n"] * 513, "seed": None}).encode(), "lot order"),
        (line("lot", {"group": "A", "order": None, "seed": -1}).encode(), "lot seed"),
        (line("round", {"number": "3"}).encode(), "round number"),
        (line(file="").encode(), "file"),
        (b" " * (desksocket.MAX_REQUEST + 1), "more than"),
    ],
)
def test_a_request_out_of_its_size_or_range_is_refused_naming_the_field(
    raw: bytes, said: str
) -> None:
    with pytest.raises(BadRequest, match=said):
        parse(raw)


def test_the_rate_is_a_burst_then_so_many_a_second() -> None:
    now = [100.0]
    bucket = Bucket(rate=10, burst=20, clock=lambda: now[0])
    assert all(bucket.take() for _ in range(20))
    assert not bucket.take()
    now[0] += 0.25  # two more a quarter of a second later
    assert bucket.take() and bucket.take() and not bucket.take()


def test_the_socket_lives_beside_the_tournament_unless_its_path_is_too_long(
    tmp_path, monkeypatch
) -> None:
    assert socket_path(tmp_path / "cup.yaml") == tmp_path / "cup.desk.sock"
    deep = tmp_path / ("d" * 120) / "cup.yaml"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    far = socket_path(deep)
    assert far.parent == tmp_path and far.name.startswith("timekeeper-desk-")
    assert far == socket_path(deep) != socket_path(tmp_path / ("e" * 120) / "cup.yaml")


def test_a_dead_desks_socket_is_said_and_left_to_the_lock(tmp_path, capsys) -> None:
    """A socket nobody listens on (its desk killed) is no desk: `ask` says so and answers
    None, so that the command writes the ledger itself."""
    path = socket_path(tmp_path / "cup.yaml")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # (the file stays, as a SIGKILL leaves it)
    assert path.is_socket()
    assert desk_client.ask(tmp_path / "cup.yaml", "round", {"number": 1}) is None
    assert "no desk answers at" in capsys.readouterr().err


class RefusingDirector:
    """Enough of a Director for the socket: every entry refused as the clerk refuses."""

    def __init__(self, file: Path) -> None:
        self.file, self.asked = file, 0

    def submit(self, make) -> None:
        from timekeeper.tournament.state import TournamentError

        self.asked += 1
        raise TournamentError("round 1 table 1 is 3:1 already: a correction needs --reason")


def test_the_desks_socket_answers_refuses_and_limits_in_process(tmp_path, monkeypatch) -> None:
    """Over a real socket, in-process: the socket is 0600; an entry the desk refuses comes
    back with its words; a request for another tournament and one out of range change
    nothing; past the burst the desk answers busy without asking the director."""
    file = tmp_path / "cup.yaml"
    director = RefusingDirector(file)
    now = [0.0]
    served = desksocket.DeskSocket(director, clock=lambda: now[0]).start()
    try:
        assert stat.S_IMODE(os.lstat(served.path).st_mode) == 0o600
        with pytest.raises(TournamentError, match="the desk refused it: round 1 table 1"):
            desk_client.ask(file, "result", RESULT)
        assert director.asked == 1

        def raw(text: str) -> dict:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(str(served.path))
                sock.sendall(text.encode() + b"\n")
                return json.loads(sock.makefile("rb").readline())

        other = raw(line(file=str(tmp_path / "other.yaml")))
        assert not other["ok"] and "this desk serves" in other["error"]
        wrong = raw(line("result", {**RESULT, "round": -3}, file=str(file)))
        assert not wrong["ok"] and "result round" in wrong["error"]
        answers = [raw(line("round", {"number": 1}, file=str(tmp_path / "x"))) for _ in range(20)]
        assert answers[-1]["result"] == "busy" and "a second" in answers[-1]["error"]
        assert director.asked == 1
        # a command told "busy" (nothing changed) asks again after a pause, not an error:
        # a script typing a round's results is slowed to the desk's rate, never refused
        monkeypatch.setattr(time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
        with pytest.raises(TournamentError, match="the desk refused it: round 1 table 1"):
            desk_client.ask(file, "result", RESULT)
        assert director.asked == 2 and now[0] > 0
    finally:
        served.close()
    assert not served.path.exists()


# ---------------------------------------------------------------- the processes


def history(file: Path) -> list[str]:
    t, _ = open_tournament(file)
    return [e.text() for e in t.history()]


@pytest.mark.slow
def test_a_result_typed_at_a_terminal_is_written_by_the_serving_desk(broker, tmp_path) -> None:
    """`tournament result` in its own process while `hall serve` runs: the desk writes the
    entry (its log says it was typed at a terminal) and its board shows it the moment the
    command returns, with no file to poll; the command prints what it always printed. The
    socket is the user's alone."""
    file = drawn_cup(tmp_path)
    served = Served(broker["url"], file, tmp_path / "desk")
    try:
        sock = socket_path(file)
        wait_for(sock.is_socket, "the desk's socket", HALL_WAIT)
        assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600
        match = round_of(file, 1)["1"]
        typed = tk("tournament", "result", "-f", str(file), "1", "1", "3:1")
        assert typed.returncode == 0, typed.stderr
        assert f"result: round 1 table 1  {match}" in typed.stdout
        assert "(ledger entry 2)" in typed.stdout and typed.stderr == ""
        board = served.board()  # (at once: not waited for)
        assert any("typed at a terminal" in e and match in e for e in board["events"]), board
        played = {r["player"]: r["played"] for g in board["groups"].values() for r in g}
        assert sorted(played.values()).count(1) == 2
        wrong = tk("tournament", "result", "-f", str(file), "1", "1", "2:2")
        assert wrong.returncode != 0 and "the desk refused it" in wrong.stderr, wrong.stderr
        assert len(history(file)) == 2  # (the draw and the result: nothing more)
    finally:
        served.stop()
    assert not socket_path(file).exists()  # (a desk stopped takes its socket with it)


@pytest.mark.slow
def test_a_round_called_at_a_terminal_goes_through_the_serving_desk(broker, tmp_path) -> None:
    """`hall round 1` in its own process while `hall serve` runs: the desk calls it (its
    board shows round 1 the moment the command returns) and the tables get their pairings."""
    file = drawn_cup(tmp_path)
    served = Served(broker["url"], file, tmp_path / "desk")
    tables = FakeTables(broker["url"])
    try:
        wait_for(socket_path(file).is_socket, "the desk's socket", HALL_WAIT)
        first = round_of(file, 1)
        called = tk("hall", "round", "1", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        for table, match in first.items():
            assert f"table {table}: {match}" in called.stdout, called.stdout
        board = served.board()  # (at once: not waited for)
        assert board["round"] == 1
        assert any("round 1 called" in e for e in board["events"]), board["events"]
        assert {t["table"] for t in board["tables"] if t["pairing"]} == set(first)
        wait_for(
            lambda: {t: p.match for t, p in tables.of_round(1).items()} == first,
            "round 1's pairings at the tables",
            HALL_WAIT,
        )
    finally:
        tables.close()
        served.stop()


@pytest.mark.slow
def test_with_no_desk_or_a_killed_ones_socket_the_command_writes_the_ledger(
    broker,
    tmp_path,
) -> None:
    """No desk: the command writes the ledger as always, silently. A desk killed (SIGKILL:
    its socket left behind): the command says so and writes it under the lock; the next
    `hall serve` replaces the dead socket and takes the commands again."""
    file = drawn_cup(tmp_path)
    alone = tk("tournament", "result", "-f", str(file), "1", "1", "3:1")
    assert alone.returncode == 0 and alone.stderr == "", alone.stderr
    served = Served(broker["url"], file, tmp_path / "desk")
    wait_for(socket_path(file).is_socket, "the desk's socket", HALL_WAIT)
    served.proc.kill()
    served.proc.communicate(timeout=15)
    assert socket_path(file).is_socket()  # (left behind)
    typed = tk("tournament", "result", "-f", str(file), "1", "2", "0:2")
    assert typed.returncode == 0, typed.stderr
    assert "no desk answers at" in typed.stderr and "(ledger entry 3)" in typed.stdout
    again = Served(broker["url"], file, tmp_path / "desk")
    try:
        wait_for(lambda: socket_path(file).is_socket(), "the new desk's socket", HALL_WAIT)
        third = tk("tournament", "result", "-f", str(file), "1", "3", "1:0")
        assert third.returncode == 0 and third.stderr == "", third.stderr
        assert any("typed at a terminal" in e for e in again.board()["events"])
    finally:
        again.stop()
    assert len(history(file)) == 4
