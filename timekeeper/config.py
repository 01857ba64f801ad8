"""The box's configuration (/etc/timekeeper/config.yaml or --config PATH): which profile and
pack to run, where the journal lives, and how the buttons, lamp, horn and buzzer are wired.
Validated once at load like profiles, with file:line:column: field: message."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from timekeeper.profile import _Reader
from timekeeper.soundpack import CUE_NAMES
from timekeeper.yamldoc import ConfigError, Doc, Path_

DEFAULT_FILE = Path("/etc/timekeeper/config.yaml")

TOP_KEYS = ("profile", "sounds", "state_dir", "journal_interval", "control", "audio", "gpio")
AUDIO_KEYS = ("driver", "attempts")
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
_PIN_NAME = re.compile(r"(GPIO|BCM|BOARD|WPI|J8:|P1:)?\d+", re.IGNORECASE)


@dataclass(frozen=True)
class ButtonConfig:
    name: str
    pin: int | str
    hold: float  # a press at least this long is a long press (decided on release)
    short: str | None  # "go", "toggle", "add", "subtract", "finish", "reset" or None
    long: str | None


@dataclass(frozen=True)
class LampConfig:
    pin: int | str
    active_high: bool = True


@dataclass(frozen=True)
class RelayConfig:
    """A horn relay or a buzzer: switched on by chosen cues for a set time."""

    pin: int | str
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


@dataclass(frozen=True)
class Config:
    source: Path | None
    profile: str | None = None
    sounds: str | None = None
    state_dir: Path | None = None
    journal_interval: float = 2.0
    control: Path | None = None
    audio_driver: str | None = None
    audio_attempts: int = 8
    gpio: GpioConfig = field(default_factory=lambda: default_gpio())


def default_gpio() -> GpioConfig:
    buttons = tuple(ButtonConfig(name, pin, hold, short, long)
                    for name, (short, long, hold, pin) in BUTTONS.items() if pin is not None)
    return GpioConfig(buttons=buttons, lamp=LampConfig(23))


def load(path: Path | None) -> Config:
    """--config PATH (must exist), else /etc/timekeeper/config.yaml if it exists, else the
    defaults (the wiring shown in the README)."""
    if path is None:
        env = os.environ.get("TIMEKEEPER_CONFIG")
        path = Path(env) if env else (DEFAULT_FILE if DEFAULT_FILE.is_file() else None)
        if path is None:
            return Config(None)
    if not path.is_file():
        raise ConfigError("no such config file", path)
    doc = Doc.load(path)
    return build(doc, path)


def build(doc: Doc, file: Path) -> Config:
    r = _Reader(doc)
    if not isinstance(doc.data, dict):
        raise ConfigError("must be a mapping of settings", file)
    doc.check_keys((), doc.data, TOP_KEYS)
    audio = r.mapping(("audio",), AUDIO_KEYS) or {}
    return Config(
        source=file,
        profile=_optional_text(r, ("profile",)),
        sounds=_optional_text(r, ("sounds",)),
        state_dir=_optional_path(r, ("state_dir",), file),
        journal_interval=r.seconds(("journal_interval",), 2.0),
        control=_optional_path(r, ("control",), file),
        audio_driver=_optional_text(r, ("audio", "driver")) if audio else None,
        audio_attempts=r.integer(("audio", "attempts"), 8),
        gpio=_gpio(r, doc),
    )


def _gpio(r: _Reader, doc: Doc) -> GpioConfig:
    spec = r.mapping(("gpio",), GPIO_KEYS)
    if spec is None:
        return default_gpio()
    defaults = default_gpio()
    buttons_spec = r.mapping(("gpio", "buttons"), tuple(BUTTONS))
    if buttons_spec is None:
        buttons = defaults.buttons
    else:
        buttons = tuple(b for name in BUTTONS if name in buttons_spec
                        and (b := _button(r, doc, name)) is not None)
    gpio = GpioConfig(
        enabled=r.flag(("gpio", "enabled"), True),
        pull_up=r.flag(("gpio", "pull_up"), True),
        bounce=r.seconds(("gpio", "bounce"), 0.02, zero=True),
        buttons=buttons,
        lamp=_lamp(r, doc) if "lamp" in spec else defaults.lamp,
        horn=_relay(r, doc, "horn", ("end", "period_end"), 2.0),
        buzzer=_relay(r, doc, "buzzer", ("pause", "resume", "time_added"), 0.15),
    )
    _check_pins_unique(r, doc, gpio)
    return gpio


def _button(r: _Reader, doc: Doc, name: str) -> ButtonConfig | None:
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
    return ButtonConfig(name, _pin(r, doc, (*path, "pin")), r.seconds((*path, "hold"), hold),
                        short, long)


def _lamp(r: _Reader, doc: Doc) -> LampConfig | None:
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


def _relay(r: _Reader, doc: Doc, name: str, cues: tuple[str, ...],
           seconds: float) -> RelayConfig | None:
    path: Path_ = ("gpio", name)
    value = r.mapping(path, RELAY_KEYS)
    if value is None or value.get("pin") is None:
        return None
    chosen = r.get((*path, "cues"), list(cues))
    if not isinstance(chosen, list) or not chosen:
        raise doc.error((*path, "cues"), "must be a list of cue names, e.g. [end, period_end]")
    for i, cue in enumerate(chosen):
        if cue not in CUE_NAMES:
            raise doc.error((*path, "cues", i),
                            f"unknown cue {cue!r}; cues: {', '.join(CUE_NAMES)}")
    return RelayConfig(_pin(r, doc, (*path, "pin")), frozenset(chosen),
                       r.seconds((*path, "seconds"), seconds),
                       r.flag((*path, "active_high"), True))


def _pin(r: _Reader, doc: Doc, path: Path_) -> int | str:
    value = r.get(path)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 53:
        return value
    if isinstance(value, str) and _PIN_NAME.fullmatch(value.strip()):
        return value.strip().upper()
    raise doc.error(path, f"must be a GPIO number (BCM, e.g. 17) or a pin name such as "
                          f"GPIO17 or BOARD11, not {value!r}")


def _check_pins_unique(r: _Reader, doc: Doc, gpio: GpioConfig) -> None:
    used: dict[str, str] = {}
    devices: list[tuple[str, int | str]] = [(f"buttons.{b.name}", b.pin) for b in gpio.buttons]
    devices += [(name, dev.pin) for name, dev in
                (("lamp", gpio.lamp), ("horn", gpio.horn), ("buzzer", gpio.buzzer)) if dev]
    for name, pin in devices:
        key = f"GPIO{pin}" if isinstance(pin, int) else pin.replace("BCM", "GPIO")
        if key in used:
            parts = tuple(name.split("."))
            raise doc.error(("gpio", *parts), f"pin {pin} is already used by {used[key]}")
        used[key] = name


def _optional_text(r: _Reader, path: Path_) -> str | None:
    return None if r.get(path) is None else r.text(path, "")


def _optional_path(r: _Reader, path: Path_, file: Path) -> Path | None:
    text = _optional_text(r, path)
    if text is None:
        return None
    chosen = Path(text).expanduser()
    return chosen if chosen.is_absolute() else file.parent / chosen

