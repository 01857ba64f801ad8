"""The desk as a director runs it: `hall serve --tournament` in one process, each
`hall round`, `hall start` in another, on a real Mosquitto. A round called from any terminal
is the serving desk's own call; `hall round` never hangs on results retained on the broker;
a hall start starts the round's tables only; the desk's terminal stays readable. The tables
are fakes that answer a pairing with a result as a box does (a real box is not the point
here) except where the hall start is: there they are `timekeeper run` boxes."""

from __future__ import annotations

import time

import pytest
from deskhall import PLAYERS, FakeTables, Served, drawn_cup, round_of, tk
from helpers import HALL_WAIT, wait_for

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)


def play(tables: FakeTables, number: int, expected: dict[str, str]) -> None:
    """Every table of round `number` gets its pairing and sends its result home (1:0)."""
    wait_for(
        lambda: {t: p.match for t, p in tables.of_round(number).items()} == expected,
        f"round {number}'s pairings at the tables",
        HALL_WAIT,
    )
    for table in expected:
        tables.result(table, 1, 0)


def test_a_round_called_in_another_terminal_is_the_serving_desks_own(broker, tmp_path) -> None:
    """`hall round 1` in its own process; the serving desk shows those tables busy,
    takes their results (none waits for the director as a match it did not call) and then
    offers round 2, not round 1 again."""
    file = drawn_cup(tmp_path)
    served = Served(broker["url"], file, tmp_path / "desk")
    tables = FakeTables(broker["url"])
    try:
        assert served.board()["next"]["round"] == 1
        called = tk("hall", "round", "1", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        first = round_of(file, 1)
        board = wait_for(
            lambda: (
                (b := served.board())
                and {t["table"] for t in b["tables"] if t["pairing"]} == set(first)
                and b
            ),
            "the serving desk to show round 1's tables busy",
            HALL_WAIT,
        )
        assert board["round"] == 1 and board["next"]["round"] is None  # (not round 1 again)
        play(tables, 1, first)
        board = wait_for(
            lambda: (
                (b := served.board())
                and all(t["result"] for t in b["tables"] if t["pairing"])
                and b
            ),
            "round 1's results on the board",
            HALL_WAIT,
        )
        assert board["pending"] == []
        assert board["next"]["round"] == 2
    finally:
        tables.close()
        out, err = served.stop()
    assert "did not call" not in out + err


def test_hall_round_does_not_hang_on_the_results_the_broker_keeps(broker, tmp_path) -> None:
    """With round 1's four results retained on the broker, `hall round 2` in its own
    process ends well inside the 20 s its Director's thread used to hang (a lock held over
    each publish), and every table of round 2 has its pairing."""
    file = drawn_cup(tmp_path)
    served = Served(broker["url"], file, tmp_path / "desk")
    tables = FakeTables(broker["url"])
    try:
        called = tk("hall", "round", "1", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        play(tables, 1, round_of(file, 1))  # (their results retained on the broker)
        second = round_of(file, 2)
        for attempt in range(2):  # (twice: the hang took whichever thread won the lock)
            began = time.monotonic()
            called = tk("hall", "round", "2", "--tournament", str(file), "--broker", broker["url"])
            took = time.monotonic() - began
            print(f"hall round 2 took {took:.2f} s")
            assert called.returncode == 0, called.stderr
            assert took < 8.0, f"hall round 2 took {took:.1f} s (attempt {attempt + 1})"
            for table in second:
                assert f"table {table}: {second[table]}" in called.stdout, called.stdout
            wait_for(
                lambda: {t: p.match for t, p in tables.of_round(2).items()} == second,
                "every pairing of round 2 delivered",
                HALL_WAIT,
            )
    finally:
        tables.close()
        served.stop()


def test_a_hall_start_starts_the_rounds_tables_only_and_the_board_shows_that_round(
    boxes, tmp_path
) -> None:
    """Five players on three tables: round 1 is played on tables 1 and 2, round 2
    on table 1 alone. Each `hall start` (its own process) starts the round's tables and names
    the others as skipped, which stay idle (no phantom 0:0 with old names); the board shows
    round 2 with table 2 free, not its round-1 tile with a confirm button."""
    file = drawn_cup(tmp_path, PLAYERS[:5], tables=3)
    assert round_of(file, 1) == {"1": "A.1", "2": "B.1"} and round_of(file, 2) == {"1": "A.2"}
    url = boxes["broker"]["url"]
    boxes["start"]("1", "2", "3")
    served = Served(url, file, tmp_path / "desk")
    tables = boxes["tables"]

    def state(table: str) -> str:
        return ((tables().get(table) or {}).get("status") or {}).get("state", "")

    def has_round(table: str, number: int) -> bool:
        return ((tables().get(table) or {}).get("pairing") or {}).get("round") == number

    try:
        wait_for(lambda: len(tables()) == 3, "three boxes joined", HALL_WAIT)
        assert tk("hall", "round", "1", "--tournament", str(file), "--broker", url).returncode == 0
        wait_for(lambda: has_round("1", 1) and has_round("2", 1), "round 1 at 1, 2", HALL_WAIT)
        started = tk("hall", "start", "--in", "3s", "--broker", url)
        assert started.returncode == 0, started.stdout + started.stderr
        assert "table 3: skipped  no match in round 1" in started.stdout, started.stdout
        assert "table 1: ok" in started.stdout and "table 2: ok" in started.stdout
        wait_for(lambda: state("1") == state("2") == "finished", "round 1 played", HALL_WAIT + 10)
        assert state("3") == "idle"  # never started
        wait_for(
            lambda: all(t["result"] for t in served.board()["tables"] if t["pairing"]),
            "round 1's results home",
            HALL_WAIT,
        )
        assert tk("hall", "reset", "--broker", url).returncode == 0
        wait_for(lambda: state("1") == state("2") == "idle", "tables reset", HALL_WAIT)
        assert tk("hall", "round", "2", "--tournament", str(file), "--broker", url).returncode == 0
        wait_for(lambda: has_round("1", 2), "round 2 at table 1", HALL_WAIT)
        board = served.board()
        assert board["round"] == 2
        two = next(t for t in board["tables"] if t["table"] == "2")
        assert two["pairing"] is None and two["result_id"] is None  # free in round 2
        assert {u["match"] for u in board["unconfirmed"]} == {"A.1", "B.1"}
        started = tk("hall", "start", "--in", "3s", "--broker", url)
        assert started.returncode == 0, started.stdout + started.stderr
        assert "table 2: skipped  no match in round 2 (its last: round 1, B.1" in started.stdout
        assert "table 3: skipped  no match in round 2" in started.stdout
        assert "table 1: ok" in started.stdout
        wait_for(lambda: state("1") == "finished", "round 2 played", HALL_WAIT + 10)
        assert state("2") == "idle" and state("3") == "idle"
    finally:
        served.stop()


def test_hall_serve_keeps_the_terminal_readable(broker, tmp_path) -> None:
    """The board asks every second; `hall serve` logs no request unless asked
    (`--access-log`), and warns of the anonymous broker once."""
    file = drawn_cup(tmp_path, PLAYERS[:4], tables=2)
    for more in ((), ("--access-log",)):
        served = Served(broker["url"], file, tmp_path / "desk", *more)
        try:
            for _ in range(10):
                served.board()
                served.get("/board")
        finally:
            out, err = served.stop()
        said = out + err
        assert said.count("lets anonymous clients in") == 1, said
        assert ("GET /api/board" in said) == bool(more), said
        if not more:
            assert len(said.splitlines()) <= 5, said  # the warning, the links


def test_a_correction_on_the_board_and_at_the_command_line_reseeds_until_its_table_begins(
    boxes, tmp_path
) -> None:
    """Corrections after the bracket moved, on the board and with `timekeeper tournament
    result`, the same way: a group correction that changes a semi-final's players is taken
    while that semi-final's table has not begun it (the desk calls it again, with the new
    names); once its box has begun it (a hall start), both refuse, naming the match and the
    way out; after `hall reset --table 1` both take it again."""
    from cups import groups_played

    t, _ = groups_played(tmp_path)
    file = t.spec.file
    url = boxes["broker"]["url"]
    boxes["start"]("1", "2")
    served = Served(url, file, tmp_path / "desk")
    tables = boxes["tables"]

    def sides(table: str) -> tuple[str, str]:
        p = (tables().get(table) or {}).get("pairing") or {}
        return p.get("home", ""), p.get("away", "")

    def correct(score: str, reason: str) -> tuple[int, dict]:
        return served.post(
            "/api/board/result", {"round": 2, "table": "1", "score": score, "reason": reason}
        )

    try:
        wait_for(lambda: len(tables()) == 2, "two boxes joined", HALL_WAIT)
        assert tk("hall", "round", "4", "--tournament", str(file), "--broker", url).returncode == 0
        wait_for(lambda: sides("1") == ("Cyril", "Běla"), "SF1 at table 1", HALL_WAIT)
        code, answer = correct("3:0", "the score sheet")  # Emil – Cyril: Emil first of A
        assert code == 200 and "A.2 Emil – Cyril 3:0" in answer["done"], answer
        wait_for(lambda: sides("1") == ("Emil", "Běla"), "SF1 called again", HALL_WAIT)
        wait_for(lambda: sides("2") == ("Adam", "Cyril"), "SF2 called again", HALL_WAIT)
        started = tk("hall", "start", "--table", "1", "--in", "3s", "--broker", url)
        assert started.returncode == 0, started.stdout
        calls = file.with_name("cup.calls.jsonl")
        wait_for(lambda: '{"begun":' in calls.read_text(), "the desk saw SF1 begun", HALL_WAIT)
        code, answer = correct("0:1", "the sheet was right")
        assert code == 400, answer
        assert "SF1 (Emil – Běla, under way at its table" in answer["error"], answer
        assert "hall reset --table 1" in answer["error"]
        typed = tk("tournament", "result", "2", "1", "0:1", "--reason", "x", "-f", str(file))
        assert typed.returncode == 2 and "SF1 (Emil – Běla, under way" in typed.stderr, typed
        assert tk("hall", "reset", "--table", "1", "--broker", url).returncode == 0
        typed = wait_for(
            lambda: (
                (
                    r := tk(
                        "tournament", "result", "2", "1", "0:1", "--reason", "x", "-f", str(file)
                    )
                ).returncode
                == 0
                and r
            ),
            "the command line's correction once table 1 is reset",
            HALL_WAIT,
        )
        assert "corrected" in typed.stdout
        wait_for(lambda: sides("1") == ("Cyril", "Běla"), "SF1 called again", HALL_WAIT)
        board = served.board()
        assert any("called again" in e for e in board["events"]), board["events"]
    finally:
        served.stop()
