"""The desk's results inbox (hall/desk/inbox.py) in one process: the log told once a
minute per kind, a table's rate, the results held per table, a held result applied when the
mended ledger changes. Clocks injected."""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

from boardhall import BoardDesk, call, cup
from boardhall import result as typed
from helpers import Clock

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.bus.result import MatchResult
from timekeeper.hall.desk.director import Director
from timekeeper.hall.desk.inbox import RETRY, Gate, Notes, Records


def result(table: str, ident: str) -> MatchResult:
    p = Pairing(ident, 1, "A.1", "group A", "Adam", "Bela", "radegast", 0.0)
    return MatchResult(p, table, (2, 1), "regulation", (), (), 0.0)


def test_each_kind_of_trouble_is_logged_once_a_minute_with_what_was_held_back(caplog) -> None:
    clock = Clock(0.0)
    notes = Notes(60.0, clock)
    with caplog.at_level(logging.WARNING, logger="timekeeper.hall.desk.inbox"):
        for _ in range(1000):
            notes.say("flood:4", "table 4 floods")
        notes.say("bad:4", "a bad result")
        clock.now = 61.0
        notes.say("flood:4", "table 4 floods")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "desk: table 4 floods",
        "desk: a bad result",
        "desk: table 4 floods (999 more like it in the last 60 s)",
    ]


def test_a_table_over_its_rate_is_refused_alone_and_named() -> None:
    clock = Clock(0.0)
    gate = Gate(Notes(60.0, clock), rate=0.0, burst=3, clock=clock)
    assert [gate.allow("4") for _ in range(5)] == [True, True, True, False, False]
    assert gate.allow("1") and gate.allow("2")
    (said,) = gate.flooding()
    assert said.startswith("table 4 sends too many results: 2 refused")


def test_a_forgery_with_a_held_results_id_never_takes_its_place() -> None:
    """Table 2 sends table 1's pairing id while the journal is broken: both are held, the
    real one is still there to apply (the newcomer's run: the board named the wrong table)."""
    records = Records()
    real, forged = result("1", "a"), result("2", "a")
    records.hold(real, "journal line 2 unreadable")
    records.hold(forged, "journal line 2 unreadable")
    assert records.held() == [real, forged]
    records.applied(forged)
    assert records.held() == [real]


def test_held_results_keep_the_latest_per_id_and_a_flood_drops_only_its_own() -> None:
    records = Records(per_table=2)
    records.hold(result("1", "a"), "journal line 2 unreadable")
    for n in range(50):
        records.hold(result("4", f"x{n}"), "journal line 2 unreadable")
    records.hold(result("1", "a"), "journal line 3 unreadable")  # (the same result again)
    assert [(r.table, r.id) for r in records.held()] == [("4", "x48"), ("4", "x49"), ("1", "a")]
    assert records.said() == (
        "3 results not applied yet (tables 1, 4): journal line 3 unreadable; kept and tried again"
    )
    for r in records.held():
        records.applied(r)
    assert records.said() is None and not records.held()


def test_a_held_result_goes_in_when_the_mended_ledger_changes_not_at_the_retry(
    tmp_path: Path,
) -> None:
    """A result comes home while the journal is broken by hand: held. The journal mended,
    the watch's next look (the files changed) applies it, long before the RETRY-s retry."""
    file = cup(tmp_path)
    first = call(file, 1, time.time())[0]
    clock = Clock(100.0)
    director = Director(BoardDesk(), file, clock=clock)
    journal = file.with_name("cup.journal.jsonl")
    good = journal.read_bytes()
    with open(journal, "ab") as out:
        out.write(b'{"type": "result", "round": 1, "tab\n')
    r = MatchResult(first, "1", (2, 1), "regulation", (), (), time.time())
    director.handle("timekeeper/hall/1/result", r.to_json())
    director.watcher.look()  # (the broken journal: said, the result still held)
    assert len(director.held) == 1 and director.unreadable
    clock.now += 1.0
    director.watcher.look()  # (nothing changed, no retry due: still held)
    assert len(director.held) == 1
    journal.write_bytes(good)
    clock.now += 1.0  # (well before RETRY s since the last try)
    assert clock.now - 100.0 < RETRY
    director.watcher.look()
    assert len(director.held) == 0 and not director.unreadable
    m = director.t.fixture(first.match)
    assert m.result is not None and m.result.text() == "2:1"


def test_a_result_is_in_one_place_held_or_waiting_never_both(tmp_path: Path) -> None:
    """A result for a match this desk did not call waits for the director; sent again while
    the journal is broken it is held instead (the board names it once, not as held and as
    waiting); the journal mended, it waits again, and the director's refusal is final."""
    file = cup(tmp_path)
    first = call(file, 1, time.time())[0]
    clock = Clock(100.0)
    director = Director(BoardDesk(), file, clock=clock)
    stray = dataclasses.replace(first, id="made.up.1")
    r = MatchResult(stray, "1", (2, 1), "regulation", (), (), time.time())
    topic = "timekeeper/hall/1/result"
    director.handle(topic, r.to_json())
    assert list(director.pending) == ["made.up.1"] and not director.held
    journal = file.with_name("cup.journal.jsonl")
    good = journal.read_bytes()
    with open(journal, "ab") as out:
        out.write(b'{"type": "result", "round": 1, "tab\n')
    director.handle(topic, r.to_json())
    assert director.held == [r] and not director.pending
    board = director.snapshot()
    assert not board["pending"] and any("1 result not applied yet" in s for s in board["trouble"])
    journal.write_bytes(good)
    clock.now += 1.0
    director.watcher.look()
    assert list(director.pending) == ["made.up.1"] and not director.held
    director.refuse("made.up.1")
    director.handle(topic, r.to_json())
    assert director.refused == {"made.up.1"} and not director.pending and not director.held


def test_a_result_typed_at_the_desk_meanwhile_is_known_if_the_same_else_it_waits(
    tmp_path: Path,
) -> None:
    """The table's result after the same one was typed at the desk is known (nothing
    written twice); a different one waits for the director, named as a correction."""
    file = cup(tmp_path)
    first = call(file, 1, time.time())[0]
    typed(file, 1, "1", "2:1", time.time())
    director = Director(BoardDesk(), file)
    entries = len(director.t.events)
    same = MatchResult(first, "1", (2, 1), "regulation", (), (), time.time())
    assert director.receive(same) == "known"
    other = dataclasses.replace(same, score=(3, 0))
    said = director.receive(other)
    assert said.startswith(f"pending: {first.match} (") and "already 2:1" in said, said
    assert len(director.t.events) == entries and not director.held
    assert [r.score for r, _ in director.pending.values()] == [(3, 0)]
