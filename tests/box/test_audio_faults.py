"""Sound faults during a match, with a stand-in sound card (an Output): the runner is never
held up by the device, a command counts from when it was given, and the events log says
which cues nobody heard, and why. The real frozen server is in tests/box/test_service.py."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Cue, Engine
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.guard import AudioGuard
from timekeeper.sound.output import Output

BEEPS = """\
    title: a beep every second
    prestart: 0
    period: {length: 60, marks: 1, mark_beeps: single}
"""


class Speaker(Output):
    """A stand-in sound card. `gone` makes it report a fault (as a stalled stream does);
    while `answering` is clear, asking it anything (health, close) hangs, as a call into a
    frozen sound server does. Playing never blocks, as the stream's does not."""

    def __init__(self, plays_before_gone: int | None = None) -> None:
        self.played: list[str] = []
        self.gone: str | None = None
        self.plays_before_gone = plays_before_gone
        self.answering = threading.Event()
        self.answering.set()
        self.closed = False

    def play(self, cue: Cue, now: float) -> str | None:
        if self.plays_before_gone is not None and len(self.played) >= self.plays_before_gone:
            self.gone = "speaker unplugged"
        if self.gone:
            return self.gone
        self.played.append(cue.name)
        return None

    def fault(self) -> str | None:
        self.answering.wait()
        return self.gone

    def close(self) -> None:
        self.answering.wait()
        self.closed = True


def returns_at_once(call, *args) -> object:
    """Run `call`; fail (instead of hanging the test run) if it blocks."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(call(*args)), daemon=True)
    worker.start()
    worker.join(5.0)
    assert not worker.is_alive(), f"{call.__name__} blocked"
    return result[0]


def settle(guard: AudioGuard) -> None:
    """Wait until the guard's thread has done what it was asked (it is not hung)."""
    for job in list(guard._jobs):
        assert job.done.wait(5.0)


@pytest.fixture
def beeps(write_profile):
    return profile.load(str(write_profile("beeps", BEEPS)))


def test_cues_nobody_heard_are_logged_so_and_commands_count_from_when_given(
    beeps, tmp_path: Path, caplog
) -> None:
    speaker = Speaker(plays_before_gone=3)
    guard = AudioGuard(lambda: speaker)
    guard.prepare(beeps)
    t = [0.0]
    events = EventLog(tmp_path / "events.jsonl", profile="beeps")
    runner = Runner(Engine(beeps), [guard], events, clock=lambda: t[0])
    runner.submit(Command(Action.START))
    t[0] = 4.6
    runner.submit(Command(Action.PAUSE))
    runner.submit(Command(Action.QUIT))
    t[0] = 100.0  # the runner gets to them late (a slow disk, a busy CPU): no matter
    with caplog.at_level(logging.WARNING):
        runner.run()
    events.close()
    # stopped at 4.6 s of play, as given: not at 100 s
    assert runner.engine.status(100.0).play_time == pytest.approx(4.6)
    lines = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    heard = [e for e in lines if "heard" not in e]
    unheard = [e for e in lines if e.get("heard") is False]
    assert [(e["cue"], round(e["play_time"])) for e in heard] == [
        ("start", 0),
        ("minute", 1),
        ("minute", 2),
    ]
    assert [(e["cue"], round(e["play_time"])) for e in unheard] == [
        ("minute", 3),
        ("minute", 4),
        ("pause", 5),
    ]
    assert all(e["why"] == "audio lost: speaker unplugged" for e in unheard)
    assert speaker.played == ["start", "minute", "minute"]
    assert guard.faulty
    assert "not heard: audio lost: speaker unplugged" in caplog.text
    settle(guard)
    assert speaker.closed  # on the guard's thread


def test_the_status_says_the_sound_is_lost_at_once_and_the_status_line_too(beeps) -> None:
    """`audio_fault` in every status (ctl, the pages, the hall) from the moment the sound
    is lost, told to the listeners then, not at the next change."""
    from timekeeper.show.status import status_text
    from timekeeper.sound.listener import RunnerListener

    class Screens(RunnerListener):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def match_changed(self, status, now: float) -> None:
            self.seen.append(status.audio_fault)

    speaker = Speaker(plays_before_gone=1)
    guard = AudioGuard(lambda: speaker)
    guard.prepare(beeps)
    t = [0.0]
    runner = Runner(Engine(beeps), [guard], clock=lambda: t[0])
    screens = Screens()
    runner.listeners.append(screens)
    runner.step(Command(Action.START), 0.0)  # the start signal is heard
    assert runner.status().audio_fault == ""
    t[0] = 1.0
    runner.step(None)  # the first mark: the speaker is gone
    assert runner.status().audio_fault == "speaker unplugged"
    assert "speaker unplugged" in screens.seen  # (told with the fault, not later)
    assert "NO SOUND" in status_text(runner.status())
    assert runner.status().to_dict()["audio_fault"] == "speaker unplugged"


def test_a_hung_device_never_holds_up_the_runner(beeps, caplog) -> None:
    first, second = Speaker(), Speaker()
    opened = iter([first, second])
    opening = threading.Event()

    def opener() -> Output:
        speaker = next(opened)
        if speaker is second:
            opening.wait()  # reopening on a frozen server hangs too
        return speaker

    guard = AudioGuard(opener)
    guard.prepare(beeps)
    guard.start_checks(0.0)
    first.answering.clear()  # the server freezes: asking the device hangs
    returns_at_once(guard.fire, 1.0)  # asks for a health check, which hangs
    assert returns_at_once(guard.play, Cue("mark", 1.5), 1.4) is None  # still playing
    with caplog.at_level(logging.WARNING):
        returns_at_once(guard.fire, 3.5)
    assert "the audio device has not answered for 2 s (check)" in caplog.text
    first.gone = "audio stream stalled: no callback for 3.0 s"
    first.answering.set()
    settle(guard)
    returns_at_once(guard.fire, 4.0)  # the check's answer: lost; closing it
    assert guard.faulty
    assert returns_at_once(guard.play, Cue("mark", 4.2), 4.1) == (
        "audio lost: audio stream stalled: no callback for 3.0 s"
    )
    settle(guard)
    returns_at_once(guard.fire, 4.1)  # closed
    assert first.closed
    returns_at_once(guard.fire, 4.6)  # reopening: hangs, and the runner goes on
    returns_at_once(guard.fire, 5.0)
    assert guard.faulty
    opening.set()
    settle(guard)
    with caplog.at_level(logging.WARNING):
        returns_at_once(guard.fire, 6.0)
    assert not guard.faulty and guard.output is second
    assert "audio is back (it had failed: audio stream stalled" in caplog.text
    assert returns_at_once(guard.play, Cue("mark", 6.5), 6.4) is None
    assert second.played == ["mark"]


def test_closing_a_hung_device_does_not_hold_up_shutdown(beeps, caplog) -> None:
    speaker = Speaker()
    guard = AudioGuard(lambda: speaker)
    guard.prepare(beeps)
    speaker.answering.clear()
    with caplog.at_level(logging.WARNING):
        returns_at_once(guard.close, 0.1)
    assert "did not answer at shutdown" in caplog.text and guard.output is None
    speaker.answering.set()


def test_the_guard_prepares_every_output_it_opens_for_its_profile(beeps) -> None:
    """`prepare(profile)` is the guard's as much as any output's: the device opened at
    start-up, and one reopened mid-match, are prepared for that profile."""

    class Card(Output):
        def __init__(self) -> None:
            self.prepared: list[str] = []

        def prepare(self, profile) -> None:
            self.prepared.append(profile.title)

        def play(self, cue: Cue, now: float) -> str | None:
            return None

    first, second = Card(), Card()
    opened = iter([first, second])
    guard = AudioGuard(lambda: next(opened))
    guard.prepare(beeps)
    assert first.prepared == ["a beep every second"]
    guard.start_checks(0.0)
    guard._lost(1.0, "speaker unplugged")  # as a failed check or play would find it
    for now in (1.1, 1.7, 1.8):  # closed; reopened after the back-off; collected
        settle(guard)
        guard.fire(now)
    assert guard.output is second and second.prepared == ["a beep every second"]
