"""A box on another profile than its pairing's switches between matches, never during one:
the desk's pairing (MatchLink) asks the box's ProfileSwitch, which loads the profile as
`run --profile` does and hands the runner a new engine; the runner swaps it at its next turn
when no match is under way. Played on the runner's own clock, turn by turn."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers import Clock, HallLinkSide, RecordingOutput

from timekeeper.box.controls.keyboard import KeyReader, help_for
from timekeeper.box.journal import Journal
from timekeeper.box.runner import Runner
from timekeeper.box.switch import ProfileSwitch
from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.table.tablematch import MatchLink
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.show.status import StatusLine
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.guard import AudioGuard
from timekeeper.sound.pack import default_pack_dir, load_pack, melody_window


def pairing(ident: str, profile_name: str) -> bytes:
    return Pairing(ident, 1, "A.1", "group A", "Novák", "Svoboda", profile_name, 1.0).to_json()


def turns(runner: Runner) -> None:
    """The runner's turns for what waits in its queue (as its loop takes them)."""
    runner.step()
    while not runner._queue.empty():
        runner.step(*(lambda c, f, g, by: (c, g, f, by))(*runner._queue.get_nowait()))


def test_the_box_switches_profile_between_matches_never_during_one(tmp_path: Path) -> None:
    radegast = profile.load("radegast")
    speaker = RecordingOutput()
    audio = AudioGuard(lambda: speaker)
    audio.prepare(radegast)
    clock = Clock()
    events = EventLog(tmp_path / "events.jsonl", profile="radegast")
    runner = Runner(Engine(radegast), [audio], events, clock=clock)
    journal = Journal(tmp_path, runner.engine)
    runner.listeners.append(journal)
    pack = load_pack(default_pack_dir(), radegast.cue_names, melody_window(radegast))
    switch = ProfileSwitch(runner, pack, max(melody_window(radegast), 30.0), audio)
    link = HallLinkSide(runner)
    match = MatchLink(link, tmp_path, switch=switch)
    runner.listeners.append(match)

    match.handle(pairing("p1", "ithf"))  # idle: taken, the profile switched for it
    turns(runner)
    assert runner.status().profile == "ithf" and link.profile == "ithf"
    assert runner.status().names == {"home": "Novák", "away": "Svoboda"}
    assert journal.engine is runner.engine and speaker.prepared == ["radegast", "ithf"]
    assert match.status_fields()["pairing_note"] == ""

    runner.step(Command(Action.START))  # a match under way: the next pairing waits
    clock.now = 5.0
    turns(runner)
    # the events log's lines (written whole, at once) name the profile played: ithf now
    lines = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert lines and {e["profile"] for e in lines} == {"ithf"}, lines
    match.handle(pairing("p2", "radegast"))
    turns(runner)
    assert runner.engine.profile.key == "ithf" and "after the match under way" in match.note
    runner.step(Command(Action.RESET))  # between matches again: switched back
    turns(runner)
    assert runner.status().profile == "radegast" and match.pairing.id == "p2"
    assert runner.status().state == "idle" and match.note == ""

    match.handle(pairing("p3", "nosuch"))  # a profile the box cannot find: said, kept
    turns(runner)
    assert runner.status().profile == "radegast" and link.profile == "radegast"
    assert "unknown profile 'nosuch'" in match.note and "refused" in match.note


def test_an_engine_asked_for_during_a_match_waits_for_its_end() -> None:
    clock = Clock()
    runner = Runner(Engine(profile.load("radegast")), [RecordingOutput()], clock=clock)
    runner.step(Command(Action.START))
    runner.replace_engine(Engine(profile.load("ithf")))
    clock.now = 1.0
    runner.step()
    assert runner.engine.profile.key == "radegast"  # never during a match
    runner.step(Command(Action.RESET))  # (the reset's turn: the swap comes at the next)
    runner.step()
    assert runner.engine.profile.key == "ithf" and runner.status().state == "idle"


def test_a_box_restarted_before_its_match_switches_again(tmp_path: Path) -> None:
    radegast = profile.load("radegast")
    pack = load_pack(default_pack_dir(), radegast.cue_names, melody_window(radegast))
    for run in (1, 2):  # the same state folder: the second run is the box restarted
        runner = Runner(Engine(radegast), [RecordingOutput()], clock=Clock())
        link = HallLinkSide(runner)
        match = MatchLink(link, tmp_path, switch=ProfileSwitch(runner, pack, 30.0))
        runner.listeners.append(match)
        match.handle(pairing("p1", "ithf"))  # (retained: delivered again after the restart)
        turns(runner)
        assert runner.status().profile == "ithf" and match.pairing.id == "p1", run


def test_the_keys_follow_the_profile_the_hall_switched_to() -> None:
    """The keyboard copies no profile fact: after a switch from ithf (a step of 10 s, the
    score keys) to hokejbal (1 s, the penalty keys), `+`/`-` add and take back hokejbal's
    step and `?` shows hokejbal's keys, as live.py wires them (no `take_profile` anywhere)."""
    ithf, hokejbal = profile.load("ithf"), profile.load("hokejbal")
    clock = Clock()
    runner = Runner(Engine(ithf), [RecordingOutput()], clock=clock)
    pack = load_pack(
        default_pack_dir(),
        ithf.cue_names | hokejbal.cue_names,
        max(melody_window(ithf), melody_window(hokejbal)),
    )
    out = io.StringIO()
    line = StatusLine(runner.status, lambda: help_for(runner.engine.profile), out=out)
    assert "1 minor" not in out.getvalue()  # ithf: the score keys only
    assert ProfileSwitch(runner, pack, 30.0)("hokejbal") == ""
    runner.step()
    assert runner.engine.profile.key == "hokejbal"
    keys = KeyReader(state=lambda: runner.engine.state.value, clock=clock)
    for key in "s ":  # START (and its pre-start, if any, counted down), SPACE: stopped
        if (command := keys.feed(key)) is not None:
            runner.step(command)
        clock.now += 10.0
        runner.step()
    assert runner.status().state == "stopped", runner.status()
    runner.step(keys.feed("+"))
    assert runner.status().added == hokejbal.add_step == 1.0
    runner.step(keys.feed("-"))
    assert runner.status().added == 0.0
    line.show_help()
    assert "1 minor" in out.getvalue().rpartition("keys:")[2]  # `?`: hokejbal's keys now


def test_a_restarted_box_goes_on_with_the_journals_profile_and_refuses_one_gone_by_name(
    tmp_path: Path, write_profile, monkeypatch, caplog
) -> None:
    """`run --profile ithf` after the hall switched the box to another profile for its match:
    the journal's profile is played (box/live.py); one that can no longer be loaded is named,
    and the usual one is played (the journal then sets that match aside, saying so)."""
    from timekeeper.box.journal import dumps
    from timekeeper.box.live import _journaled_profile

    quick = write_profile("quick", "title: q\nprestart: 0\nperiod: {length: 60, marks: none}\n")
    monkeypatch.setenv("TIMEKEEPER_PROFILES_PATH", str(quick.parent))
    engine = Engine(profile.load("quick"))
    engine.handle(Command(Action.START), 0.0)
    engine.handle(Command(Action.PAUSE), 5.0)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "match.json").write_text(dumps(engine.snapshot(5.0)))
    ithf = profile.load("ithf")
    caplog.set_level("INFO", logger="timekeeper")
    assert _journaled_profile(tmp_path / "state", ithf).key == "quick"
    assert "played with profile quick, not ithf (--profile): going on with it" in caplog.text
    quick.unlink()  # the profile is gone: refused by name
    assert _journaled_profile(tmp_path / "state", ithf) is ithf
    assert "profile quick, which can no longer be loaded" in caplog.text


QUICK = "title: a practice match, 15 s\nprestart: 3\nperiod: {length: 15, marks: none, melody: 0}\n"


@pytest.mark.parametrize("earlier", [False, True])
@pytest.mark.parametrize("reset", ["ctl", "hall"])
@pytest.mark.parametrize("state", ["running", "stopped", "finished"])
def test_a_held_pairing_is_taken_by_a_reset_from_any_state(
    state: str, reset: str, earlier: bool, write_profile, monkeypatch
) -> None:
    """A box on ithf (with no pairing yet: its match begun by a hall start; or with an
    earlier one) holds the pairing that comes during its match (next:); the reset after
    it, the operator's `ctl reset` or the desk's `hall reset`, takes it: the pairing's
    profile and names for the next match."""
    from timekeeper.hall.desk.link import new_command

    quick = write_profile("quick", QUICK)
    monkeypatch.setenv("TIMEKEEPER_PROFILES_PATH", str(quick.parent))
    ithf, clock = profile.load("ithf"), Clock()
    runner = Runner(Engine(ithf), [RecordingOutput()], clock=clock)
    cues = ithf.cue_names | profile.load("quick").cue_names
    pack = load_pack(default_pack_dir(), cues, melody_window(ithf))
    link = HallLinkSide(runner)
    link.profile = "ithf"
    link.match = match = MatchLink(link, None, switch=ProfileSwitch(runner, pack, 30.0))
    runner.listeners.append(match)
    if earlier:
        match.handle(Pairing("p0", 1, "A.0", "group A", "Běla", "Dana", "ithf", 0.5).to_json())
        turns(runner)

    runner.step(Command(Action.START))
    clock.now = 3000.0 if state == "finished" else 60.0
    turns(runner)
    if state == "stopped":
        runner.step(Command(Action.PAUSE))
    assert runner.status().state == state
    match.handle(Pairing("p1", 1, "A.1", "group A", "Adam", "Cyril", "quick", 1.0).to_json())
    turns(runner)
    assert runner.status().profile == "ithf"
    assert (match.pairing and match.pairing.id) == ("p0" if earlier else None)
    assert match.next_shown() == {"match": "A.1", "home": "Adam", "away": "Cyril"}

    if reset == "ctl":
        runner.step(Command(Action.RESET))
    else:
        link._apply(new_command("reset"))
    turns(runner)
    ready = runner.status()
    assert ready.state == "idle" and ready.profile == "quick" and link.profile == "quick"
    assert ready.names == {"home": "Adam", "away": "Cyril"}
    assert match.pairing.id == "p1" and match.next_shown() is None and match.note == ""
