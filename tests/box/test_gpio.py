"""Buttons, lamp and relays on gpiozero's mock pins: press patterns become commands that
drive the real engine; lamp and horn patterns are checked on the pins."""

from __future__ import annotations

import threading

import pytest
from gpiozero.pins.mock import MockFactory
from helpers import wait_for

from timekeeper.box.controls.buttons import ButtonPanel, GpioUnavailable, pin_factory
from timekeeper.box.runner import Runner
from timekeeper.box.signals import FAST, FAULT, OFF, SLOW, STEADY, Lamp, Relay
from timekeeper.box.wiring import ButtonConfig, GpioConfig, LampConfig, RelayConfig, default_gpio
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Cue, Engine

HOLD = 0.15  # seconds: long presses in these tests


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.reset()


def panel_config(**holds: float) -> GpioConfig:
    buttons = tuple(
        ButtonConfig(b.name, b.pin, holds.get(b.name, HOLD), b.short, b.long)
        for b in default_gpio().buttons
    )
    extra = (
        ButtonConfig("subtract", 5, HOLD, "subtract", "subtract"),
        ButtonConfig("reset", 6, HOLD, None, "reset"),
    )
    return GpioConfig(buttons=buttons + extra, bounce=0.02)


class Panel:
    """The box's buttons on mock pins, recording the commands they queue."""

    def __init__(self, factory, config: GpioConfig | None = None, submit=None) -> None:
        self.commands: list[Command] = []
        self.now = 0.0  # the panel's clock (it tells a press from contact bounce): ours to move
        self.panel = ButtonPanel(
            config or panel_config(), submit or self.commands.append, lambda: self.now, factory
        )
        self.factory = factory

    def pin(self, name: str):
        return {
            "start": self.factory.pin(17),
            "toggle": self.factory.pin(27),
            "add": self.factory.pin(22),
            "subtract": self.factory.pin(5),
            "reset": self.factory.pin(6),
        }[name]

    def down(self, name: str) -> None:
        self.pin(name).drive_low()  # buttons are wired to ground: pressed = low

    def up(self, name: str) -> None:
        self.pin(name).drive_high()

    def press(self, name: str, seconds: float = 0.04) -> None:
        """A short press: `seconds` pass on the panel's clock between down and up."""
        self.down(name)
        self.now += seconds
        self.up(name)

    def wait_held(self, name: str) -> None:
        """gpiozero's own hold timer (HOLD s of real time) has found the button held."""
        wait_for(lambda: self.panel._presses[name].held, f"{name} held", 5)

    def long_press(self, name: str) -> None:
        self.down(name)
        self.wait_held(name)
        self.up(name)

    def close(self) -> None:
        self.panel.close()


@pytest.fixture
def panel(factory):
    p = Panel(factory)
    yield p
    p.close()


def test_short_presses_map_to_their_commands(panel: Panel) -> None:
    """± send a step of whatever profile the engine plays (none is copied into the panel:
    a profile the hall switched to is obeyed at once)."""
    for name in ("start", "toggle", "add", "subtract"):
        panel.press(name)
    assert panel.commands == [
        Command(Action.GO),
        Command(Action.TOGGLE),
        Command(Action.ADD),
        Command(Action.ADD, sign=-1),
    ]


def test_long_presses_are_decided_on_release_and_never_also_short(panel: Panel) -> None:
    panel.down("start")
    panel.wait_held("start")
    assert panel.commands == []  # nothing while it is still held
    panel.up("start")
    panel.long_press("toggle")
    panel.long_press("add")
    assert panel.commands == [
        Command(Action.RESET),
        Command(Action.FINISH),
        Command(Action.ADD, sign=-1),
    ]


def test_reset_never_comes_from_a_short_press(panel: Panel) -> None:
    panel.press("reset")
    assert panel.commands == []
    panel.long_press("reset")
    assert panel.commands == [Command(Action.RESET)]


def test_contact_bounce_is_one_press(panel: Panel) -> None:
    for _ in range(5):  # chatter: edges microseconds apart
        panel.down("toggle")
        panel.up("toggle")
    assert panel.commands == []
    for _ in range(3):  # a real press that bounces on the way down and on the way up
        panel.down("toggle")
        panel.up("toggle")
    panel.down("toggle")
    panel.now += 0.05
    panel.up("toggle")
    panel.down("toggle")
    panel.up("toggle")
    assert panel.commands == [Command(Action.TOGGLE)]


def test_two_buttons_at_once_each_count(panel: Panel) -> None:
    panel.down("start")
    panel.down("add")
    panel.now += 0.04
    panel.up("add")
    panel.up("start")
    assert panel.commands == [Command(Action.ADD), Command(Action.GO)]


def test_a_held_button_does_not_block_another(panel: Panel) -> None:
    panel.down("start")
    panel.press("toggle")
    panel.wait_held("start")
    panel.up("start")
    assert panel.commands == [Command(Action.TOGGLE), Command(Action.RESET)]


def test_buttons_drive_the_engine_through_the_runner(factory) -> None:
    chosen = profile.load("radegast")  # no pre-start: START starts period 1
    runner = Runner(Engine(chosen), [])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    applied: list = []  # the runner's answers, in order
    p = Panel(factory, submit=lambda command: applied.append(runner.submit(command)))
    try:

        def settle() -> str:
            applied[-1].exception(timeout=5)  # applied (or refused) by the runner
            return runner.status().state

        p.press("start")
        assert settle() == "running"
        p.press("toggle")
        assert settle() == "stopped"
        p.press("add")
        settle()
        assert runner.status().added == chosen.add_step  # the engine's profile's step
        p.long_press("add")
        settle()
        assert runner.status().added == 0.0
        p.press("start")  # NEXT while period 1 is played: refused, nothing changes
        assert settle() == "stopped"
        p.press("toggle")
        assert settle() == "running"
        p.long_press("start")
        assert settle() == "idle"
    finally:
        runner.submit(Command(Action.QUIT))
        thread.join(2)
        p.close()


def test_no_gpio_is_one_clear_error(monkeypatch) -> None:
    from gpiozero import Device

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-factory")
    with pytest.raises(GpioUnavailable):
        pin_factory()
    Device.pin_factory = None


# ----------------------------------------------------------------------------- lamp


@pytest.fixture
def lamp(factory):
    lamp = Lamp(LampConfig(23), factory)
    yield lamp, lamp, factory.pin(23)  # (the lamp keeps the state and fault it is told)
    lamp.close()


def run_timer(timer, until: float, start: float) -> list[tuple[float, bool]]:
    """Drive a timer as the runner would, recording (time, level) at every edge."""
    edges, now = [], start
    while (due := timer.next_due()) is not None and due <= until:
        now = due
        timer.fire(now)
        edges.append((round(now, 6), bool(timer.device.value)))
    return edges


def test_lamp_patterns_follow_the_state(lamp) -> None:
    lamp, box, pin = lamp
    lamp.update(100.0)
    assert lamp.pattern is OFF and pin.state is False and lamp.next_due() is None
    box.state = "running"
    lamp.update(101.0)
    assert lamp.pattern is STEADY and pin.state is True and lamp.next_due() is None
    box.state = "stopped"
    lamp.update(102.0)
    assert lamp.pattern is SLOW and pin.state is True
    assert run_timer(lamp, 104.0, 102.0) == [
        (102.5, False),
        (103.0, True),
        (103.5, False),
        (104.0, True),
    ]
    box.state = "prestart"
    lamp.update(110.0)
    assert lamp.pattern is FAST
    assert [t for t, _ in run_timer(lamp, 110.5, 110.0)] == [110.125, 110.25, 110.375, 110.5]


def test_lamp_blinks_from_its_schedule_without_drift(lamp) -> None:
    """Fired late every time, the lamp still switches on the pattern's own edges."""
    lamp, box, _ = lamp
    box.state = "stopped"
    lamp.update(0.0)
    for _ in range(1000):
        due = lamp.next_due()
        lamp.fire(due + 0.003)  # a late wake-up
    assert lamp.next_due() == pytest.approx(500.5)


def test_lamp_shows_an_audio_fault_over_the_state(lamp) -> None:
    lamp, box, _ = lamp
    box.state, box.faulty = "running", True
    lamp.update(0.0)
    assert lamp.pattern is FAULT
    assert run_timer(lamp, 2.0, 0.0) == [(0.12, False), (0.3, True), (0.42, False), (2.0, True)]
    box.faulty = False
    lamp.update(2.1)
    assert lamp.pattern is STEADY


# ----------------------------------------------------------------------------- relays


def test_horn_follows_its_cues_for_a_set_time(factory) -> None:
    horn = Relay(RelayConfig(24, frozenset({"end", "period_end"}), 2.0), factory)
    pin = factory.pin(24)
    try:
        horn.cue_played(Cue("minute", 10.0), None, 0.0, None)  # type: ignore[arg-type]
        assert pin.state is False and horn.next_due() is None
        horn.cue_played(Cue("period_end", 50.0), None, 0, None)  # type: ignore  # early
        assert pin.state is False and horn.next_due() == 50.0  # closes when it is due
        horn.fire(50.0)
        assert pin.state is True and horn.next_due() == 52.0
        horn.cue_played(Cue("end", 51.0), None, 0, None)  # type: ignore  # overlapping: kept on
        assert horn.next_due() == 53.0
        horn.fire(53.0)
        assert pin.state is False and horn.next_due() is None
    finally:
        horn.close()


def test_relay_active_low(factory) -> None:
    horn = Relay(RelayConfig(24, frozenset({"end"}), 1.0, active_high=False), factory)
    pin = factory.pin(24)
    try:
        assert pin.state is True  # off = high for an active-low relay board
        horn.cue_played(Cue("end", 5.0), None, 0.0, None)  # type: ignore[arg-type]
        horn.fire(5.0)
        assert pin.state is False
    finally:
        horn.close()
