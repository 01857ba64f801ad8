"""Every output that is not the sound fails alone: a lamp whose pin cannot
be set, a relay, a listener that raises. The match goes on, each is told once and tried
again, and told when it works again. Real runner, real clock, gpiozero's mock pins."""

from __future__ import annotations

import logging
import threading

import pytest
from gpiozero.pins.mock import MockFactory
from helpers import wait_for

from timekeeper.box.runner import Runner
from timekeeper.box.signals import Lamp, Relay
from timekeeper.box.wiring import LampConfig, RelayConfig
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.sound.listener import RunnerListener

QUICK = "prestart: 0\nperiod: {length: 60, marks: 1, mark_beeps: single}\n"


def test_a_broken_lamp_relay_and_listener_never_stop_the_cues(write_profile, caplog) -> None:
    caplog.set_level(logging.INFO)
    factory = MockFactory()
    engine = Engine(profile.load(str(write_profile("quick", QUICK))))
    runner = Runner(engine, [])
    lamp = Lamp(LampConfig(23), factory)
    relay = Relay(RelayConfig(24, frozenset({"minute", "start"}), 0.2), factory)
    broken = {"on": True}

    def breakable(pin) -> None:
        real = pin._set_state

        def failing(state: bool) -> None:
            if broken["on"]:
                raise OSError(5, "GPIO chip gone")
            real(state)

        pin._set_state = failing

    breakable(factory.pin(23))
    breakable(factory.pin(24))
    heard: list[str] = []

    class Display(RunnerListener):
        def cue_played(self, cue, status, played, not_heard) -> None:
            heard.append(cue.name)
            raise RuntimeError("a status display that crashes")

    runner.listeners += [lamp, relay, Display()]
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        runner.submit(Command(Action.START)).result(5)
        # (a mark every second of the real clock: these waits are for cues, not for seconds)
        wait_for(lambda: heard.count("minute") >= 2, "two marks with the pins broken", 10)
        broken["on"] = False  # the pin works again
        wait_for(
            lambda: heard.count("minute") >= 3 and "the relay on GPIO24 works again" in caplog.text,
            "a mark with the pins working",
            10,
        )
        assert runner.submit(Command(Action.PAUSE)).result(5).state == "stopped"
        wait_for(lambda: "the lamp (GPIO23) works again" in caplog.text, "the lamp", 5)
    finally:
        runner.submit(Command(Action.QUIT))
        thread.join(5)
        factory.reset()
    assert heard.count("minute") >= 3  # a cue every second, through it all
    assert caplog.text.count("the lamp (GPIO23) failed (") == 1
    assert caplog.text.count("the relay on GPIO24 failed (") == 1
    assert caplog.text.count("Display.cue_played failed (a status display") == 1  # once
    assert "the lamp (GPIO23) works again" in caplog.text
    assert "the relay on GPIO24 works again" in caplog.text


@pytest.mark.parametrize("name", ["events"])
def test_an_events_log_on_a_full_disk_is_told_once_and_catches_up(tmp_path, caplog, name) -> None:
    """(The real full tmpfs is in test_faults_box; here the write itself fails, as on a
    device that went away, and comes back.)"""
    from timekeeper.rules.engine import Cue
    from timekeeper.sound import eventlog

    log = eventlog.EventLog(tmp_path / f"{name}.jsonl", keep_going=True)
    real_write, failing = eventlog.os.write, {"on": True}

    def write(fd: int, data) -> int:
        if failing["on"]:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    eventlog.os.write = write
    try:
        cue = Cue(name="minute", due=1.0, period=0, play_time=1.0)
        for _ in range(5):
            log.record(cue, 1.0)
        failing["on"] = False
        log.record(cue, 2.0)
    finally:
        eventlog.os.write = real_write
        log.close()
    assert caplog.text.count("cannot write the events log") == 1
    assert "written again" in caplog.text
    assert (tmp_path / f"{name}.jsonl").read_text().count("\n") == 6  # none lost, in order
