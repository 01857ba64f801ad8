"""GPIO buttons (gpiozero): presses become commands on the runner's queue, nothing more.

Short or long is decided on release (gpiozero's `when_held` sets a flag that `when_released`
reads), so a long press never also fires the short action, and RESET can only ever come from
a long press. Presses shorter than `bounce` are contact bounce and are ignored, which works
the same on every pin factory (the mock one included, which does not debounce)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from timekeeper.box.wiring import ButtonConfig, GpioConfig
from timekeeper.rules.commands import Action, Command

log = logging.getLogger(__name__)


class GpioUnavailable(Exception):
    """No GPIO here (not a Pi, or no pin library); the box runs without buttons."""


# a button action word from the config's table → the command it sends (ADD: one step of the
# profile the engine plays, whichever the hall switched it to)
COMMANDS: dict[str | None, Command | None] = {
    None: None,
    "go": Command(Action.GO),
    "toggle": Command(Action.TOGGLE),
    "add": Command(Action.ADD),
    "subtract": Command(Action.ADD, sign=-1),
    "finish": Command(Action.FINISH),
    "reset": Command(Action.RESET),
}


def pin_factory(factory: object | None = None) -> object:
    """The given factory, or gpiozero's default (chosen by $GPIOZERO_PIN_FACTORY, else the
    first that works here); GpioUnavailable when none does."""
    if factory is not None:
        return factory
    try:
        from gpiozero import Device
    except ImportError as exc:
        raise GpioUnavailable(f"gpiozero is not installed ({exc})") from None
    if Device.pin_factory is not None:
        return Device.pin_factory
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gpiozero warns once per factory it falls back from
        try:
            Device.pin_factory = Device._default_pin_factory()
        except Exception as exc:  # BadPinFactory, or a library's own error
            raise GpioUnavailable(
                str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            ) from None
    return Device.pin_factory


@dataclass
class _Press:
    started: float | None = None
    held: bool = False


class ButtonPanel:
    """The box's buttons. `submit` puts a command on the runner's queue (thread-safe);
    `clock` is the runner's clock, read only to tell bounce from a press."""

    def __init__(
        self,
        config: GpioConfig,
        submit: Callable[[Command], object],
        clock: Callable[[], float],
        factory: object | None = None,
    ) -> None:
        from gpiozero import Button

        self.submit, self.clock, self.bounce = submit, clock, config.bounce
        factory = pin_factory(factory)
        self.buttons: dict[str, object] = {}
        self._presses: dict[str, _Press] = {}
        self._commands: dict[str, tuple[Command | None, Command | None]] = {}
        try:
            for spec in config.buttons:
                self._add(Button, spec, config.pull_up, factory)
        except Exception:
            self.close()
            raise

    def _add(self, button_class: type, spec: ButtonConfig, pull_up: bool, factory: object) -> None:
        button = button_class(
            spec.pin, pull_up=pull_up, bounce_time=None, hold_time=spec.hold, pin_factory=factory
        )
        self.buttons[spec.name] = button
        self._presses[spec.name] = _Press()
        self._commands[spec.name] = (COMMANDS[spec.short], COMMANDS[spec.long])
        button.when_pressed = lambda: self._pressed(spec.name)
        button.when_held = lambda: self._held(spec.name)
        button.when_released = lambda: self._released(spec)

    def _pressed(self, name: str) -> None:
        self._presses[name] = _Press(started=self.clock())

    def _held(self, name: str) -> None:
        self._presses[name].held = True  # the long action comes on release
        log.debug("%s held", name)

    def _released(self, spec: ButtonConfig) -> None:
        press = self._presses[spec.name]
        self._presses[spec.name] = _Press()
        if press.started is None:
            return
        if not press.held and self.clock() - press.started < self.bounce:
            return  # contact bounce, not a press
        short, long = self._commands[spec.name]
        command = long if press.held else short
        if command is None:
            log.info("button %s: hold it %g s to %s", spec.name, spec.hold, spec.long)
            return
        self.submit(command)

    def close(self) -> None:
        for button in self.buttons.values():
            button.close()  # type: ignore[attr-defined]
        self.buttons.clear()
