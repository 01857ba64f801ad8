"""The match journal and the engine's snapshot/restore: a match survives a crash or a power
cut stopped at its journaled play time; a bad journal means a clean start, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timekeeper.box.journal import (
    FILE_NAME,
    Journal,
    JournalError,
    dumps,
    loads,
    parse_resume_at,
    write_atomic,
)
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine, Snapshot


def go(engine: Engine, action: Action, now: float, seconds: float | None = None) -> list:
    return engine.handle(Command(action, seconds), now)


def restored(snap: Snapshot, key: str | None = None) -> Engine:
    engine = Engine(profile.load(key or snap.profile))
    engine.restore(snap)
    return engine


def test_a_running_match_comes_back_stopped_at_its_play_time() -> None:
    e = Engine(profile.load("ithf"))
    go(e, Action.START, 0.0)
    go(e, Action.ADD, 100.0, 10)  # prestart 20 s: play time 80 s, 10 s added
    snap = e.snapshot(150.0)
    assert (snap.state, snap.index, snap.play_time, snap.added) == ("running", 0, 130.0, 10.0)
    back = restored(snap)
    status = back.status(9999.0)  # any time later: the clock stays stopped
    assert (status.state, status.play_time, status.remaining) == ("stopped", 130.0, 180.0)
    cues = go(back, Action.RESUME, 10_000.0)
    assert [c.name for c in cues] == ["resume"]
    # the marks already passed are not sounded again; the one due at the very instant of the
    # snapshot (3 minutes left) sounds as play resumes (one rule for every correction), then
    # the next at 2 minutes left
    assert back.next_deadline() == pytest.approx(10_000.0)
    assert [(c.name, c.count) for c in back.advance(10_000.0)] == [("minute", 3)]
    assert back.next_deadline() == pytest.approx(10_060.0)
    end = back.advance(10_000.0 + 180.0)
    assert [c.name for c in end][-1] == "end"
    assert end[-1].due == pytest.approx(10_180.0)


def test_a_match_in_its_last_30_seconds_restarts_the_melody_where_it_was() -> None:
    e = Engine(profile.load("ithf"))
    go(e, Action.START, 0.0)
    e.advance(310.0)
    snap = e.snapshot(310.0)  # 10 s left
    back = restored(snap)
    cues = go(back, Action.RESUME, 500.0)
    melody = [c for c in cues if c.name == "last30"]
    assert melody and melody[0].offset == pytest.approx(20.0)


@pytest.mark.parametrize("key", ["pl-3x6", "radegast-playoff", "pl-3x6-final", "ithf-playoff"])
def test_every_state_of_a_match_restores(key: str) -> None:
    """Snapshot a scripted match at many moments; each restores into a sensible state."""
    e = Engine(profile.load(key))
    t = 0.0
    go(e, Action.START, t)
    while e.state.value != "finished" and t < 20_000:
        t += 7.3
        e.advance(t)
        state = e.state.value
        if state in ("waiting", "shootout"):
            go(e, Action.NEXT, t)
        elif state == "running" and e.period is not None and e.period.length is None:
            go(e, Action.NEXT, t)  # an untimed sudden death: the deciding goal
        if e.m.shots >= 3:
            go(e, Action.FINISH, t)
        snap = e.snapshot(t)
        back = restored(snap)
        assert back.state.value in {"idle", "stopped", "waiting", "shootout"}
        if back.state.value == "stopped":
            assert back.status(t).play_time == snap.play_time
        assert loads(dumps(snap)) == snap


def test_restore_refuses_a_snapshot_that_does_not_fit() -> None:
    e = Engine(profile.load("ithf"))
    with pytest.raises(ValueError, match="period 3 does not exist"):
        e.restore(Snapshot("ithf", "stopped", 2, 10.0))
    with pytest.raises(ValueError, match="does not fit"):
        e.restore(Snapshot("ithf", "stopped", 0, 301.0))
    with pytest.raises(ValueError, match="no shoot-out"):
        e.restore(Snapshot("ithf", "shootout", 0, 300.0, shootout=True))


def test_the_file_counts_periods_from_1_under_period_as_it_always_did() -> None:
    """The snapshot's 0-based `index` is written as the 1-based `period` of every journal
    before it: an old journal is read by a new box, and a new one by an old box."""
    record = json.loads(dumps(Snapshot("pl-3x6", "stopped", index=1, play_time=12.5)))
    assert record["period"] == 2 and "index" not in record
    old = (
        '{"format": 1, "profile": "pl-3x6", "state": "stopped", "period": 3, '
        '"play_time": 60, "added": 0, "shots": 0, "shootout": false}'
    )
    assert loads(old).index == 2
    assert loads(dumps(loads(old))) == loads(old)


def test_resume_at_parses_period_and_play_time() -> None:
    assert parse_resume_at("2:01:30", "pl-3x6") == Snapshot("pl-3x6", "stopped", 1, 90.0)
    assert parse_resume_at("1:00:45.5", "ithf") == Snapshot("ithf", "stopped", 0, 45.5)
    for bad, why in [
        ("", "PERIOD:MM:SS"),
        ("2", "PERIOD:MM:SS"),
        ("1:30", "PERIOD:MM:SS"),
        ("x:1:2", "PERIOD:MM:SS"),
        ("1:2:3:4", "PERIOD:MM:SS"),
        ("0:01:00", "count from 1"),
        ("1:01:90", "under 60"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_resume_at(bad, "ithf")


# ----------------------------------------------------------------------------- the file


def test_the_journal_is_written_atomically_and_read_back(tmp_path: Path) -> None:
    e = Engine(profile.load("radegast"))
    journal = Journal(tmp_path / "state", e, interval=2.0)
    go(e, Action.START, 10.0)
    journal.save(10.0)
    assert journal.next_due() == 12.0  # a running clock is journaled every 2 s
    journal.fire(12.0)
    record = json.loads((tmp_path / "state" / FILE_NAME).read_text())
    assert (record["state"], record["period"], record["play_time"]) == ("running", 1, 2.0)
    assert not list((tmp_path / "state").glob(".*tmp"))  # no temporary file left behind
    assert journal.load() == e.snapshot(12.0)
    go(e, Action.PAUSE, 13.0)
    journal.save(13.0)
    assert journal.next_due() is None  # stopped: nothing changes until a command


@pytest.mark.parametrize(
    "text",
    [
        "",
        '{"format": 1, "profile": "radegast", "sta',
        "garbage\x00\x01",
        '{"format": 1}',
        "[1, 2]",
        '{"format": 1, "profile": "radegast", "state": "flying", '
        '"period": 0, "play_time": 1, "added": 0, "shots": 0, '
        '"shootout": false}',
    ],
)
def test_a_corrupt_or_truncated_journal_means_a_clean_start(
    tmp_path: Path, text: str, caplog
) -> None:
    path = tmp_path / FILE_NAME
    path.write_text(text)
    journal = Journal(tmp_path, Engine(profile.load("radegast")))
    assert journal.load() is None
    kept = list(tmp_path.glob(f"{FILE_NAME}.*.bad"))  # time-stamped: never overwritten
    assert not path.exists() and len(kept) == 1 and kept[0].read_text() == text
    assert "starting a new match" in caplog.text


def test_a_journal_of_another_profile_is_left_alone(tmp_path: Path, caplog) -> None:
    write_atomic(tmp_path / FILE_NAME, dumps(Snapshot("ithf", "running", 0, 12.0)))
    journal = Journal(tmp_path, Engine(profile.load("radegast")))
    assert journal.load() is None
    kept = list(tmp_path.glob(f"{FILE_NAME}.*.bad"))  # a match in progress: kept and named
    assert (
        len(kept) == 1
        and f"a match of profile ithf in progress was kept as {kept[0]}" in caplog.text
        and "--profile ithf --resume-from" in caplog.text
    )


def test_a_journal_that_cannot_be_written_does_not_stop_the_match(tmp_path: Path, caplog) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    e = Engine(profile.load("radegast"))
    journal = Journal(blocker, e)
    go(e, Action.START, 0.0)
    journal.save(0.0)
    journal.save(3.0)
    assert caplog.text.count("cannot write the journal") == 1  # said once, not every time


def test_a_sound_packs_folder_is_never_a_journals(tmp_path: Path) -> None:
    from timekeeper.rules.yamldoc import ConfigError
    from timekeeper.sound.pack import default_pack_dir

    (tmp_path / "pack.yaml").write_text("cues: {start: start.wav}\n")
    for pack in (tmp_path, default_pack_dir()):
        with pytest.raises(ConfigError, match="sound pack's folder"):
            Journal(pack, Engine(profile.load("ithf")))
    assert not (tmp_path / FILE_NAME).exists()


def test_loads_rejects_wrong_types() -> None:
    good = json.loads(dumps(Snapshot("ithf", "stopped", 0, 10.0)))
    for field, value in [
        ("period", "1"),
        ("play_time", None),
        ("shootout", 1),
        ("shots", True),
        ("play_time", float("nan")),
        ("added", 1e9),
        ("play_time", -1),
    ]:
        with pytest.raises(JournalError, match=field):
            loads(json.dumps(good | {field: value}))


def test_a_match_stopped_just_before_its_start_instant_comes_back_at_no_time_played() -> None:
    """The runner hands the start over ahead of its instant (its look-ahead): a box stopped
    in those milliseconds journals a running match whose clock has not begun. It comes back
    at 0:00 played, names and all, not set aside as out of range (CI saw -0.015 s)."""
    e = Engine(profile.load("ithf"))
    go(e, Action.START, 0.0)
    e.handle(Command(Action.NAMES, names=("A", "B")), 0.5)
    while e.state.value != "running":
        start = e.next_deadline()
        e.advance(start)
    snap = e.snapshot(start - 0.015)
    assert snap.state == "running" and snap.play_time == 0.0
    back = restored(loads(dumps(snap)))
    status = back.status(9_999.0)
    assert (status.state, status.play_time, back.names) == (
        "stopped",
        0.0,
        {"home": "A", "away": "B"},
    )


def test_a_half_written_temporary_file_never_matters(tmp_path: Path) -> None:
    """A power cut during a write leaves the temporary file, never a half journal."""
    e = Engine(profile.load("radegast"))
    go(e, Action.START, 0.0)
    journal = Journal(tmp_path, e)
    journal.save(5.0)
    (tmp_path / f".{FILE_NAME}.tmp").write_text('{"format": 1, "prof')
    assert journal.load() == e.snapshot(5.0)


def test_a_ball_hockey_match_comes_back_with_its_penalties_and_time_outs() -> None:
    e = Engine(profile.load("hokejbal"))
    e.handle(Command.parse("start"), 0.0)
    e.handle(Command.parse("penalty home minor 17"), 100.0)
    e.handle(Command.parse("penalty home major"), 100.0)
    e.handle(Command.parse("penalty home minor 9"), 100.0)  # third: waits for a place
    e.handle(Command.parse("pause"), 130.0)
    e.handle(Command.parse("timeout away"), 131.0)
    before = e.status(140.0)
    snap = loads(dumps(e.snapshot(140.0)))
    back = restored(snap)
    after = back.status(9_999.0)
    assert after.state == "stopped" and after.play_time == before.play_time
    assert after.teams == before.teams  # the same places, times left and queue
    assert before.teams["home"].timeouts_left == 1
    assert after.teams["away"].timeouts_left == 0
    assert after.timeout is None  # the running time-out is not resumed ...
    with pytest.raises(Exception, match="time-out"):
        back.handle(Command.parse("timeout away"), 10_000.0)  # ... but it was used
    back.handle(Command.parse("resume"), 10_000.0)
    ends = [c for c in back.advance(10_000.0 + 60.0) if c.name == "penalty_end"]
    assert [c.due for c in ends] == [pytest.approx(10_000.0 + 30.0)]  # the minor's last 30 s
