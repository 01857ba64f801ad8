"""The runner in virtual time: `wake_at()` says when its next turn is due and `step()` takes
it, so a test plays a live scenario (presses, a mute, a look-ahead output, the listeners) on
a clock of its own, in milliseconds, and checks it against the offline replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import Clock

from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Cue, Engine, Status
from timekeeper.rules.replay import Step, replay
from timekeeper.show.status import status_text
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.listener import RunnerListener
from timekeeper.sound.output import Output

MATCH = """\
    title: a minute, marks every 10 s
    prestart: 1
    period: {length: 60, marks: 10, melody: 5}
"""
LEAD = 0.05  # as a stream's look-ahead


class Speaker(Output):
    """An output with a lead, which remembers what it was handed, and when."""

    lead = LEAD

    def __init__(self) -> None:
        self.played: list[tuple[Cue, float]] = []

    def play(self, cue: Cue, now: float) -> None:
        self.played.append((cue, now))


class Told(RunnerListener):
    """Every call, in order, as (method, what)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.statuses: list[Status] = []

    def cue_played(self, cue, status, played, not_heard) -> None:
        self.calls.append(("cue_played", (cue.name, cue.stop, not_heard)))

    def command_applied(self, command, scheduled, status) -> None:
        self.calls.append(("command_applied", command.action.value))

    def state_changed(self, status) -> None:
        self.calls.append(("state_changed", status.state))
        self.statuses.append(status)

    def match_changed(self, status, now) -> None:
        self.calls.append(("match_changed", status.state))


def play(runner: Runner, clock: Clock, script: list[tuple[float, Command]], until: float) -> None:
    """The live loop on a clock of the test's: each command at its time, every other turn
    when the runner says it is due (as `run()` wakes for it)."""
    pending = list(script)
    while True:
        wake = runner.wake_at()
        press = pending[0][0] if pending else None
        due = [t for t in (wake, press) if t is not None]
        if not due or min(due) > until:
            return
        clock.now = max(clock.now, min(due))
        if press is not None and press <= clock.now:
            runner.step(pending.pop(0)[1], clock.now)
        else:
            runner.step()


@pytest.fixture
def match(write_profile) -> profile.Profile:
    return profile.load(str(write_profile("match", MATCH)))


def test_a_live_match_in_virtual_time_sounds_what_the_replay_does(match, tmp_path: Path) -> None:
    clock, speaker, told = Clock(), Speaker(), Told()
    events = EventLog(tmp_path / "events.jsonl")
    runner = Runner(Engine(match), [speaker], events, clock=clock)
    runner.listeners.append(told)
    script = [
        (0.0, Command(Action.START)),
        (21.5, Command(Action.PAUSE)),
        (22.0, Command(Action.MUTE)),
        (30.0, Command(Action.RESUME)),
        (45.25, Command(Action.UNMUTE)),
    ]
    play(runner, clock, script, until=1000.0)
    assert runner.status().state == "finished"
    assert runner.step(Command(Action.QUIT)) is False  # the loop would end here
    events.close()

    # the cues and their instants are the offline replay's, pause and resume included
    offline = replay(
        match, [Step(20.5, Command(Action.PAUSE)), Step(29.0, Command(Action.RESUME))]
    ).cues
    cue_calls = [what for name, what in told.calls if name == "cue_played"]
    assert [(c.name, c.stop) for c in offline] == [(n, s) for n, s, _ in cue_calls]
    # muted from 22 to 45.25 s: the resume's cue and a mark (at 39.5 s) were told, not sounded
    muted = [n for n, s, why in cue_calls if why == "muted by the operator"]
    assert muted == ["resume", "minute"]
    sounded = [c for c, _ in speaker.played]
    assert len(sounded) == len(offline) - len(muted)
    offline_due = {(c.name, c.stop, round(c.due, 6)) for c in offline}
    assert all((c.name, c.stop, round(c.due, 6)) in offline_due for c in sounded)
    # handed over one lead early, never earlier (the clock was set to each wake exactly)
    assert all(
        now == pytest.approx(c.due - LEAD)
        for c, now in speaker.played
        if c.name not in ("prestart", "pause", "resume")
    )
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert len(lines) == sum(1 for c in offline if not c.stop)
    assert sum('"heard": false' in line for line in lines) == len(muted)


def test_a_turn_tells_its_listeners_in_order_and_the_mute_reaches_the_status(match) -> None:
    clock, told = Clock(), Told()
    runner = Runner(Engine(match), [Speaker()], clock=clock)
    runner.listeners.append(told)
    play(runner, clock, [(0.0, Command(Action.START))], until=5.0)
    told.calls.clear()
    clock.now = 5.5
    runner.step(Command(Action.PAUSE), 5.5)
    assert told.calls == [
        ("cue_played", ("pause", False, None)),
        ("command_applied", "pause"),
        ("state_changed", "stopped"),
        ("match_changed", "stopped"),
    ]
    told.calls.clear()
    runner.step(Command(Action.MUTE), 5.5)
    assert told.calls == [("state_changed", "stopped"), ("match_changed", "stopped")]
    assert told.statuses[-1].muted and runner.status().muted
    assert runner.status().to_dict()["muted"] is True
    assert status_text(runner.status()).startswith("MUTED  ")
    runner.step(Command(Action.UNMUTE), 5.5)
    assert not runner.status().muted and "MUTED" not in status_text(runner.status())
