"""A result counts only from its own table: on a broker with the project's own ACL
and a user per table as `scripts/install-pi.sh --hall-user` writes them, table 2's login
sends on its own topic what it may: table 1's pairing id (the tokenless board shows it), its
own id with table 1's match and names, `confirmed: true`, table 1's real result confirmed.
None of it is applied anywhere: it waits for the director, named, and table 1's real result
counts when it comes. `hall serve` runs as the docs say, in a process of its own; the tables
are paho clients logged in as `1` and `2`."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from boardhall import BoardDesk, call, cup
from deskhall import Served, drawn_cup, round_of, tk
from helpers import HALL_WAIT, wait_for

from timekeeper.hall.bus.broker import Broker, make_client
from timekeeper.hall.bus.pairing import Pairing, pairing_topic, parse_pairing
from timekeeper.hall.bus.result import MatchResult, result_topic
from timekeeper.hall.desk.director import Director
from timekeeper.hall.practice import Mosquitto

SECRETS = {"desk": "desk-secret", "1": "table-1-secret", "2": "table-2-secret"}


class Table:
    """A table's box as the broker sees it: logged in as its own user, it reads its own
    pairing and may write its own result topic (and nothing else: the ACL)."""

    def __init__(self, url: str, table: str) -> None:
        self.table, self.pairing = table, None
        broker = Broker.parse(url)
        self.client = make_client(
            f"test-table-{table}", dataclasses.replace(broker, user=table, password=SECRETS[table])
        )
        self.client.on_message = self._message
        self.client.on_connect = lambda c, *_: c.subscribe(pairing_topic("hall", table), 1)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def _message(self, client, userdata, message) -> None:
        if message.payload:
            self.pairing = parse_pairing(message.payload)

    def send(self, r: MatchResult) -> None:
        """On this table's own result topic, retained, as a box sends it."""
        sent = self.client.publish(result_topic("hall", self.table), r.to_json(), 1, True)
        sent.wait_for_publish(HALL_WAIT)
        assert sent.rc == 0

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def result(p: Pairing, table: str, score: tuple[int, int], confirmed: bool = False):
    return MatchResult(p, table, score, "regulation", (), (), time.time(), confirmed)


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[dict]:
    """The broker (ACL, users desk/1/2), `hall serve --config desk.yaml --tournament cup.yaml`,
    round 1 called with `hall round 1`, and tables 1 and 2 holding their pairings."""
    # the shipped config and ACL, with the users `install-pi.sh --hall-user` adds: desk, 1
    # and 2 (a table's block as it appends it)
    broker = Mosquitto(tmp_path / "mq", users=SECRETS, tables=("1", "2")).start()
    served = None
    tables: list[Table] = []
    try:
        url = broker.url
        (tmp_path / "desk.pass").write_text(SECRETS["desk"] + "\n")
        config = tmp_path / "desk.yaml"
        config.write_text(f"hall:\n  broker: {url}\n  user: desk\n  password_file: desk.pass\n")
        file = drawn_cup(tmp_path, ("Adam", "Běla", "Cyril", "Dana"), tables=2)
        served = Served(url, file, tmp_path / "state", "--config", str(config))
        tables = [Table(url, "1"), Table(url, "2")]
        called = tk("hall", "round", "1", "--config", str(config), "--tournament", str(file))
        assert called.returncode == 0, called.stdout + called.stderr
        expected = round_of(file, 1)
        until(
            lambda: {t.table: t.pairing.match for t in tables if t.pairing} == expected,
            "each table's pairing",
        )
        yield {"served": served, "one": tables[0], "two": tables[1]}
    finally:
        for t in tables:
            t.close()
        if served is not None:
            served.stop()
        broker.stop()


def until(predicate, what: str, timeout: float = HALL_WAIT):
    """wait_for, polling the board a few times a second (its rate limit answers 429 sooner)."""
    return wait_for(predicate, what, timeout, interval=0.25)


def tile(served: Served, table: str) -> dict:
    return next(t for t in served.board()["tables"] if t["table"] == table)


def waiting(served: Served, table: str, match: str) -> list[dict]:
    return [p for p in served.board()["pending"] if p["table"] == table and p["match"] == match]


def desk_log(served: Served) -> str:
    _, err = served.stop()
    return err


@pytest.mark.slow
def test_another_tables_pairing_id_waits_and_the_real_result_counts(hall) -> None:
    """Table 2 sends table 1's pairing (its id read off the tokenless board) with 5:0 and
    `confirmed: true`: it waits, named; table 1's real 1:0 is applied afterwards, unconfirmed."""
    served, one, two = hall["served"], hall["one"], hall["two"]
    board_pairing = tile(served, "1")["pairing"]
    first = parse_pairing(json.dumps(board_pairing).encode())
    assert first == one.pairing
    two.send(result(first, "2", (5, 0), confirmed=True))
    until(lambda: waiting(served, "2", first.match), "the forgery waiting")
    assert tile(served, "1")["result"] is None
    one.send(result(one.pairing, "1", (1, 0)))
    until(lambda: tile(served, "1")["result"] == "1:0", "table 1's real result")
    board = served.board()
    assert tile(served, "1")["confirmed"] is False  # (the forgery's confirmed: true is nothing)
    assert tile(served, "2")["result"] is None
    (forged,) = waiting(served, "2", first.match)
    assert forged["score"] == "5:0" and forged["id"] == f"{first.id}:2", board["pending"]
    assert "called at table 1" in forged["why"], forged
    said = desk_log(served)
    assert f"table 2: result 5:0 for {first.match} waits for the director" in said, said


@pytest.mark.slow
def test_its_own_pairing_with_another_matchs_names_waits(hall) -> None:
    """Table 2 sends its own pairing id with table 1's match and names: table 1's match does
    not take the forged score; both tables' real results count afterwards."""
    served, one, two = hall["served"], hall["one"], hall["two"]
    own, theirs = two.pairing, one.pairing
    forged = dataclasses.replace(
        own, match=theirs.match, stage=theirs.stage, home=theirs.home, away=theirs.away
    )
    two.send(result(forged, "2", (7, 0)))
    until(lambda: waiting(served, "2", theirs.match), "the forgery waiting")
    assert tile(served, "1")["result"] is None and tile(served, "2")["result"] is None
    one.send(result(theirs, "1", (1, 0)))
    two.send(result(own, "2", (2, 2)))
    until(
        lambda: (tile(served, "1")["result"], tile(served, "2")["result"]) == ("1:0", "2:2"),
        "both real results",
    )
    (left,) = waiting(served, "2", theirs.match)
    assert left["score"] == "7:0" and left["id"] == f"{own.id}:2"
    assert f"table 2 was called for {own.match}" in left["why"], left


@pytest.mark.slow
def test_confirming_or_changing_another_tables_result_does_nothing(hall) -> None:
    """Table 1's real 1:0 is in; table 2 sends it back confirmed, then with 0:3: table 1's
    result stays 1:0 and unconfirmed (not a correction), and the forgery waits."""
    served, one, two = hall["served"], hall["one"], hall["two"]
    real = result(one.pairing, "1", (1, 0))
    one.send(real)
    until(lambda: tile(served, "1")["result"] == "1:0", "table 1's real result")
    two.send(dataclasses.replace(real, table="2", confirmed=True))
    until(lambda: waiting(served, "2", real.pairing.match), "the forgery waiting")
    two.send(dataclasses.replace(real, table="2", score=(0, 3)))
    until(
        lambda: [p["score"] for p in waiting(served, "2", real.pairing.match)] == ["0:3"],
        "the second forgery waiting",
    )
    assert tile(served, "1")["result"] == "1:0" and tile(served, "1")["confirmed"] is False
    one.send(dataclasses.replace(real, confirmed=True))  # (its own operator: that counts)
    until(lambda: tile(served, "1")["confirmed"] is True, "table 1's confirm")


# ----------------------------------------------------------------- in one process


def test_a_refused_forgery_never_drops_the_real_result_and_accept_sends_to_typing(
    tmp_path: Path,
) -> None:
    """The director refuses table 2's forgery of table 1's result (or tries to accept it:
    told to type it instead); table 1's own result counts afterwards, and table 2's status
    naming table 1's pairing does not mark table 1's match begun."""
    file = cup(tmp_path, tables=2)
    first, second = call(file, 1, time.time())[:2]
    director = Director(BoardDesk(), file)
    where = {s.match: s.table for s in director.t.slots}
    assert (where[first.match], where[second.match]) == ("1", "2")
    forged = result(first, "2", (4, 0), confirmed=True)
    said = director.receive(forged)
    assert said.startswith("pending: it came from table 2"), said
    key = f"{first.id}:2"
    with pytest.raises(Exception, match="type it"):
        director.accept(key)
    director.status(
        "2", {"online": True, "pairing": {"id": first.id}, "status": {"state": "running"}}
    )
    assert first.id not in director.book.begun
    director.refuse(key)
    assert director.receive(forged) == "known"  # (refused: once)
    assert director.receive(result(first, "1", (1, 0))) == "applied"
    assert director.t.fixture(first.match).result.text() == "1:0"
    assert first.id not in director.confirmed and not director.pending


def test_a_result_for_another_tables_match_the_desk_did_not_call_waits_apart(
    tmp_path: Path,
) -> None:
    """An uncalled id for table 1's match, from table 2: waiting as table 2's, never applied."""
    file = cup(tmp_path, tables=2)
    first = call(file, 1, time.time())[0]
    director = Director(BoardDesk(), file)
    stray = dataclasses.replace(first, id="made.up.1")
    said = director.receive(result(stray, "2", (3, 0)))
    assert "a match of table 1 this desk did not call" in said, said
    assert [p["id"] for p in director.snapshot()["pending"]] == ["made.up.1:2"]
    assert director.receive(result(first, "1", (0, 2))) == "applied"
