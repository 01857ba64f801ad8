"""How the box's buttons, lamp, horn and buzzer are wired (the config's `gpio:` section):
the typed wiring the controls and signals are built from, read and checked once at load
with file:line:column: field: message. Two names for one pin are caught: every pin is kept
as its BCM GPIO number."""

from __future__ import annotations

import re
from dataclasses import dataclass

from timekeeper.rules.yamldoc import Doc, Path_, Reader
from timekeeper.sound.pack import CUE_NAMES

GPIO_KEYS = ("enabled", "pull_up", "bounce", "buttons", "lamp", "horn", "buzzer")
BUTTON_KEYS = ("pin", "hold")
LAMP_KEYS = ("pin", "active_high")
RELAY_KEYS = ("pin", "active_high", "cues", "seconds")

# what each button does: (short press, long press, default hold seconds, default pin)
BUTTONS: dict[str, tuple[str | None, str | None, float, int | None]] = {
    "start": ("go", "reset", 3.0, 17),  # START/NEXT; held: reset (never by a short press)
    "toggle": ("toggle", "finish", 2.0, 27),  # STOP/RESUME; held: the match is decided
    "add": ("add", "subtract", 1.0, 22),  # ADD TIME; held: take added time back
    "subtract": ("subtract", "subtract", 1.0, None),
    "reset": (None, "reset", 3.0, None),  # only ever by a long press
}


@dataclass(frozen=True)
class ButtonConfig:
    name: str
    pin: int
    hold: float  # a press at least this long is a long press (decided on release)
    short: str | None  # "go", "toggle", "add", "subtract", "finish", "reset" or None
    long: str | None


@dataclass(frozen=True)
class LampConfig:
    pin: int
    active_high: bool = True


@dataclass(frozen=True)
class RelayConfig:
    """A horn relay or a buzzer: switched on by chosen cues for a set time."""

    pin: int
    cues: frozenset[str]
    seconds: float
    active_high: bool = True


@dataclass(frozen=True)
class GpioConfig:
    enabled: bool = True
    pull_up: bool = True  # buttons wired between the pin and ground
    bounce: float = 0.02  # presses shorter than this are contact bounce, not presses
    buttons: tuple[ButtonConfig, ...] = ()
    lamp: LampConfig | None = None
    horn: RelayConfig | None = None
    buzzer: RelayConfig | None = None


def default_gpio() -> GpioConfig:
    buttons = tuple(
        ButtonConfig(name, pin, hold, short, long)
        for name, (short, long, hold, pin) in BUTTONS.items()
        if pin is not None
    )
    return GpioConfig(buttons=buttons, lamp=LampConfig(23))


def read(r: Reader, doc: Doc) -> GpioConfig:
    """The config's `gpio:` section over the default wiring."""
    spec = r.mapping(("gpio",), GPIO_KEYS)
    if spec is None:
        return default_gpio()
    defaults = default_gpio()
    # buttons not mentioned keep their default pins; `name: null` removes one
    buttons_spec = r.mapping(("gpio", "buttons"), tuple(BUTTONS)) or {}
    by_name = {b.name: b for b in defaults.buttons}
    for name in buttons_spec:
        by_name[name] = _button(r, doc, name)  # type: ignore[assignment]
    buttons = tuple(b for name in BUTTONS if (b := by_name.get(name)) is not None)
    bounce = r.seconds(("gpio", "bounce"), 0.02, zero=True)
    for b in buttons:
        if bounce >= b.hold:
            raise doc.error(
                ("gpio", "bounce"),
                f"must be shorter than every hold time ({b.name} holds {b.hold:g} s)",
            )
    gpio = GpioConfig(
        enabled=r.flag(("gpio", "enabled"), True),
        pull_up=r.flag(("gpio", "pull_up"), True),
        bounce=bounce,
        buttons=buttons,
        lamp=_lamp(r, doc) if "lamp" in spec else defaults.lamp,
        horn=_relay(r, doc, "horn", ("end", "period_end"), 2.0),
        buzzer=_relay(r, doc, "buzzer", ("pause", "resume", "time_added"), 0.15),
    )
    _check_pins_unique(r, doc, gpio)
    return gpio


def _button(r: Reader, doc: Doc, name: str) -> ButtonConfig | None:
    short, long, hold, _ = BUTTONS[name]
    path: Path_ = ("gpio", "buttons", name)
    value = r.get(path)
    if value is None:
        return None
    if not isinstance(value, dict):  # `start: 17` is short for `start: {pin: 17}`
        return ButtonConfig(name, _pin(r, doc, path), hold, short, long)
    doc.check_keys(path, value, BUTTON_KEYS)
    if value.get("pin") is None:
        return None
    return ButtonConfig(
        name, _pin(r, doc, (*path, "pin")), r.seconds((*path, "hold"), hold), short, long
    )


def _lamp(r: Reader, doc: Doc) -> LampConfig | None:
    path: Path_ = ("gpio", "lamp")
    value = r.get(path)
    if value is None:
        return None
    if not isinstance(value, dict):
        return LampConfig(_pin(r, doc, path))
    doc.check_keys(path, value, LAMP_KEYS)
    if value.get("pin") is None:
        return None
    return LampConfig(_pin(r, doc, (*path, "pin")), r.flag((*path, "active_high"), True))


def _relay(
    r: Reader, doc: Doc, name: str, cues: tuple[str, ...], seconds: float
) -> RelayConfig | None:
    path: Path_ = ("gpio", name)
    value = r.mapping(path, RELAY_KEYS)
    if value is None or value.get("pin") is None:
        return None
    chosen = r.get((*path, "cues"), list(cues))
    if not isinstance(chosen, list) or not chosen:
        raise doc.error((*path, "cues"), "must be a list of cue names, e.g. [end, period_end]")
    for i, cue in enumerate(chosen):
        if cue not in CUE_NAMES:
            raise doc.error(
                (*path, "cues", i), f"unknown cue {cue!r}; cues: {', '.join(CUE_NAMES)}"
            )
    return RelayConfig(
        _pin(r, doc, (*path, "pin")),
        frozenset(chosen),
        r.seconds((*path, "seconds"), seconds),
        r.flag((*path, "active_high"), True),
    )


# the 40-pin header: physical pin -> BCM GPIO number (for BOARD/J8/P1 pin names)
BOARD_TO_BCM = {
    3: 2,
    5: 3,
    7: 4,
    8: 14,
    10: 15,
    11: 17,
    12: 18,
    13: 27,
    15: 22,
    16: 23,
    18: 24,
    19: 10,
    21: 9,
    22: 25,
    23: 11,
    24: 8,
    26: 7,
    27: 0,
    28: 1,
    29: 5,
    31: 6,
    32: 12,
    33: 13,
    35: 19,
    36: 16,
    37: 26,
    38: 20,
    40: 21,
}


def _pin(r: Reader, doc: Doc, path: Path_) -> int:
    """A pin as its BCM GPIO number: 17, "GPIO17", "BCM17", or a header pin "BOARD11"
    (also "J8:11", "P1:11") — one form, so that two names for one pin are caught."""
    value = r.get(path)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 27:
        return value
    text = value.strip().upper() if isinstance(value, str) else ""
    match = re.fullmatch(r"(GPIO|BCM|BOARD|J8:|P1:)?(\d+)", text)
    if match:
        kind, number = match.group(1) or "GPIO", int(match.group(2))
        if kind in ("GPIO", "BCM") and number <= 27:
            return number
        if kind in ("BOARD", "J8:", "P1:") and number in BOARD_TO_BCM:
            return BOARD_TO_BCM[number]
        if kind in ("BOARD", "J8:", "P1:"):
            raise doc.error(path, f"header pin {number} is not a GPIO pin (power or ground)")
    raise doc.error(
        path,
        f"must be a GPIO number (BCM, 0-27, e.g. 17) or a pin name such as "
        f"GPIO17 or BOARD11, not {value!r}",
    )


def _check_pins_unique(r: Reader, doc: Doc, gpio: GpioConfig) -> None:
    used: dict[str, str] = {}
    devices: list[tuple[str, int | str]] = [(f"buttons.{b.name}", b.pin) for b in gpio.buttons]
    devices += [
        (name, dev.pin)
        for name, dev in (("lamp", gpio.lamp), ("horn", gpio.horn), ("buzzer", gpio.buzzer))
        if dev
    ]
    for name, pin in devices:
        key = f"GPIO{pin}"
        if key in used:
            parts = tuple(name.split("."))
            raise doc.error(("gpio", *parts), f"GPIO{pin} is already used by {used[key]}")
        used[key] = name
