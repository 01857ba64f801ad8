"""A result typed at the desk is checked once: folded into a copy of the tournament as the
clerk decides, and that copy taken by the ledger's write (no replay of the ledger, no second
fold); a write the disk refuses leaves the tournament as it was."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from timekeeper.tournament import clerk, results
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.state import Tournament

CUP = (
    "title: Cup\nrules: radegast\ntables: 2\nplayers: [A1, B2, C3, D4, E5, F6, G7, H8]\n"
    "stages:\n  groups: {size: 4, advance: 2}\n  knockout: {tree: cross}\n"
)


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"folds": 0, "scores": 0}
    apply, make = Tournament.apply, results.make

    def counted_apply(self: Tournament, *args: object, **kw: object) -> None:
        counts["folds"] += 1
        apply(self, *args, **kw)  # type: ignore[arg-type]

    def counted_make(*args: object, **kw: object) -> results.Result:
        counts["scores"] += 1
        return make(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Tournament, "apply", counted_apply)
    monkeypatch.setattr(results, "make", counted_make)
    if hasattr(results, "judge"):
        judge = results.judge

        def counted_judge(*args: object, **kw: object) -> results.Result:
            counts["scores"] += 1
            return judge(*args, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(results, "judge", counted_judge)
    return counts


def _drawn(tmp_path: Path) -> Path:
    file = tmp_path / "cup.yaml"
    file.write_text(CUP, encoding="utf-8")
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))
    for m in [m for m in t.fixtures() if m.home and m.away][:6]:
        ledger.record(t, clerk.result(t, m.slot.round, m.slot.table, "3:1"))
    return file


def test_a_result_and_a_correction_are_each_folded_and_judged_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = _drawn(tmp_path)
    t, ledger = open_tournament(file)
    m = next(m for m in t.fixtures() if m.home and m.away and m.result is None)
    counts = _counted(monkeypatch)
    ledger.record(t, clerk.result(t, m.slot.round, m.slot.table, "2:1"))
    assert counts == {"folds": 1, "scores": 1}
    counts.update(folds=0, scores=0)
    ledger.record(t, clerk.result(t, m.slot.round, m.slot.table, "1:2", reason="misread"))
    assert counts == {"folds": 1, "scores": 1}
    monkeypatch.undo()
    again, _ = open_tournament(file)  # the state taken is the state the ledger folds to
    assert again.results == t.results and again.events == t.events
    assert [again.standings(g) for g in again.groups] == [t.standings(g) for g in t.groups]


def test_a_write_the_disk_refuses_leaves_the_tournament_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = _drawn(tmp_path)
    t, ledger = open_tournament(file)
    before = (list(t.events), dict(t.results), ledger.path.read_bytes())
    m = next(m for m in t.fixtures() if m.home and m.away and m.result is None)
    event = clerk.result(t, m.slot.round, m.slot.table, "2:1")

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="nothing written"):
        ledger.record(t, event)
    monkeypatch.undo()
    assert (list(t.events), dict(t.results), ledger.path.read_bytes()) == before
    ledger.record(t, event)  # typed again once there is room: taken
    assert t.results[m.id] == results.make(t.spec.rules, False, "2:1")


def test_the_desk_says_each_refusal_as_before_though_the_fold_checks_it(tmp_path: Path) -> None:
    """The one check is the fold's; what the desk is told is the clerk's: the same result
    again (AlreadyIn), a correction without its reason, a score the rule set refuses at its
    round and table, a match whose players are not known."""
    file = _drawn(tmp_path)
    t, _ = open_tournament(file)
    done = next(m for m in t.fixtures() if m.result is not None)
    at = (done.slot.round, done.slot.table)
    with pytest.raises(clerk.AlreadyIn, match=f"{done.id} is already 3:1"):
        clerk.result(t, *at, "3:1")
    with pytest.raises(clerk.TournamentError, match="a correction needs --reason"):
        clerk.result(t, *at, "4:1")
    with pytest.raises(clerk.TournamentError, match=rf"round {at[0]} table {at[1]} \(.*\): "):
        clerk.result(t, *at, "2:2", "overtime", reason="misread")
    later = next(m for m in t.fixtures() if m.home is None)
    with pytest.raises(clerk.TournamentError, match="its players are not known"):
        clerk.result(t, later.slot.round, later.slot.table, "3:1")
    assert len(t.events) == 7 and t.results[done.id] == done.result  # nothing taken
