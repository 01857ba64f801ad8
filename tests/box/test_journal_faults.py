"""Journals that cannot be resumed: whatever is
wrong with one, the box sets it aside under a name of its own and starts clean; never an
exception, never a crash loop. Fuzzed with hypothesis from real journals."""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timekeeper.box.journal import FILE_NAME, Journal, dumps
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine, Snapshot


def real_journal(key: str) -> dict:
    """A journal of a match under way: for hokejbal with penalties running and waiting."""
    engine = Engine(profile.load(key))
    engine.handle(Command(Action.START), 0.0)
    now = 0.0
    while engine.state.value != "running":
        now = engine.next_deadline() or now
        engine.advance(now)
    if key == "hokejbal":
        engine.handle(Command(Action.PAUSE), now + 20)
        for kinds in (("minor",), ("major", "game"), ("minor", "minor", "personal")):
            engine.handle(Command(Action.PENALTY, team="home", kinds=kinds, player="17"), now + 21)
        engine.handle(Command(Action.RESUME), now + 30)
    else:
        engine.handle(Command(Action.ADD, 10.0), now + 1)
    return json.loads(dumps(engine.snapshot(now + 40)))


REAL = {key: real_journal(key) for key in ("ithf", "hokejbal")}


def resume(folder: Path, key: str, text: str | bytes) -> tuple[Journal, Snapshot | None]:
    path = folder / FILE_NAME
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    journal = Journal(folder, Engine(profile.load(key)))
    return journal, journal.resume()


def assert_resumed_or_set_aside(folder: Path, journal: Journal, snap: Snapshot | None) -> None:
    kept = list(folder.glob(f"{FILE_NAME}.*.bad"))
    engine = journal.engine
    if snap is None:  # set aside (or nothing to go on with): the box starts clean
        assert engine.state.value == "idle"
        assert kept or (folder / FILE_NAME).exists()
    else:  # a snapshot that restores: the match goes on and plays out without an exception
        assert not kept
        engine.handle(Command(Action.RESUME), 0.0) if engine.state.value == "stopped" else None
        now = 0.0
        for _ in range(50):
            deadline = engine.next_deadline()
            if deadline is None:
                break
            now = max(now, deadline)
            engine.advance(now)
            engine.status(now)
        journal.save(now)


def test_deep_nesting_is_set_aside_not_a_recursion_error(tmp_path: Path) -> None:
    _journal, snap = resume(tmp_path, "ithf", "[" * 100_000 + "]" * 100_000)
    assert snap is None and len(list(tmp_path.glob(f"{FILE_NAME}.*.bad"))) == 1


def test_a_penalty_field_of_the_wrong_type_is_set_aside(tmp_path: Path, caplog) -> None:
    record = json.loads(json.dumps(REAL["hokejbal"]))
    record["extra"]["box"]["penalties"][0]["since"] = "twelve"
    _journal, snap = resume(tmp_path, "hokejbal", json.dumps(record))
    assert snap is None and "extra.box.penalties[0].since" in caplog.text


def test_absurd_added_time_is_out_of_range(tmp_path: Path, caplog) -> None:
    record = REAL["ithf"] | {"added": 86_400}
    _journal, snap = resume(tmp_path, "ithf", json.dumps(record))
    assert snap is None and "'added' out of range" in caplog.text


def test_a_real_journal_resumes(tmp_path: Path) -> None:
    for key, record in REAL.items():
        folder = tmp_path / key
        folder.mkdir()
        journal, snap = resume(folder, key, json.dumps(record))
        assert snap is not None and journal.engine.state.value == "stopped", key


def test_set_aside_files_are_never_overwritten(tmp_path: Path) -> None:
    for _ in range(3):
        resume(tmp_path, "ithf", "garbage")
    assert len(list(tmp_path.glob(f"{FILE_NAME}.*.bad"))) == 3


def test_a_finished_or_reset_match_of_another_profile_is_not_kept(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO)
    for state in ("finished", "idle"):
        record = REAL["ithf"] | {"state": state}
        _journal, snap = resume(tmp_path, "hokejbal", json.dumps(record))
        assert snap is None and not list(tmp_path.glob("*.bad"))
        assert "held no match in progress" in caplog.text


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def mutate(record: object, data: st.DataObject) -> object:
    """Replace one value somewhere in the record (or a key's value of a dict) with any JSON."""
    if isinstance(record, dict) and record and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(record)))
        return record | {key: mutate(record[key], data)}
    if isinstance(record, list) and record and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(record) - 1))
        return [*record[:i], mutate(record[i], data), *record[i + 1 :]]
    return data.draw(JSON)


FUZZ = settings(
    deadline=None,  # (examples: the profile of conftest; deep: 20,000)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(st.binary(max_size=200))
def test_fuzz_random_bytes(text: bytes) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tk-fz-"))
    try:
        assert_resumed_or_set_aside(folder, *resume(folder, "ithf", text))
    finally:
        shutil.rmtree(folder)


@FUZZ
@given(JSON)
def test_fuzz_random_json(value: object) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tk-fz-"))
    try:
        assert_resumed_or_set_aside(folder, *resume(folder, "ithf", json.dumps(value)))
    finally:
        shutil.rmtree(folder)


@FUZZ
@given(st.sampled_from(sorted(REAL)), st.data())
def test_fuzz_mutations_of_real_journals(key: str, data: st.DataObject) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tk-fz-"))
    try:
        record = mutate(REAL[key], data)
        assert_resumed_or_set_aside(folder, *resume(folder, key, json.dumps(record)))
    finally:
        shutil.rmtree(folder)


def test_a_journal_that_is_a_fifo_or_a_folder_is_set_aside(tmp_path: Path) -> None:
    for make in (os.mkfifo, os.mkdir):
        folder = tmp_path / make.__name__
        folder.mkdir()
        make(folder / FILE_NAME)
        journal = Journal(folder, Engine(profile.load("ithf")))
        assert journal.resume() is None  # (a FIFO opened for reading would block the start)
        assert not (folder / FILE_NAME).exists()


def test_what_the_engine_accepts_fits_the_journals_ranges() -> None:
    """The journal's ranges are the engine's and the parser's: a legit match is never set
    aside, an absurd one is refused before it is played."""
    import pytest

    from timekeeper.rules.commands import MAX_PLAYER, Refused
    from timekeeper.rules.engine import MAX_PENALTIES_HELD

    with pytest.raises(ValueError, match=f"at most {MAX_PLAYER} characters"):
        Command.parse("penalty home minor " + "7" * (MAX_PLAYER + 1))
    with pytest.raises(ValueError, match="at most 4 parts"):
        Command.parse("penalty home " + "+".join(["minor"] * 5))
    engine = Engine(profile.load("hokejbal"))
    engine.handle(Command(Action.START), 0.0)
    now = 0.0
    while engine.state.value != "running":
        now = engine.next_deadline() or now
        engine.advance(now)
    engine.handle(Command(Action.PAUSE), now + 1)
    for team in ("home", "away"):
        for _ in range(MAX_PENALTIES_HELD):
            engine.handle(Command.parse(f"penalty {team} major+game " + "9" * MAX_PLAYER), now + 2)
        with pytest.raises(Refused, match="penalties in the box already"):
            engine.handle(Command.parse(f"penalty {team} minor"), now + 2)
    engine.handle(Command(Action.ADD, 3600.0), now + 3)
    with pytest.raises(Refused, match="at most 3600 s may be added"):
        engine.handle(Command(Action.ADD, 1.0), now + 3)
    folder = Path(tempfile.mkdtemp(prefix="tk-fz-"))
    try:  # the fullest match the engine allows is resumed, not set aside
        _, snap = resume(folder, "hokejbal", dumps(engine.snapshot(now + 4)))
        assert snap is not None and len(snap.extra["box"]["penalties"]) == 2 * MAX_PENALTIES_HELD
    finally:
        shutil.rmtree(folder)
