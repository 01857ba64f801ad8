"""The box's configuration (/etc/timekeeper/config.yaml or --config PATH): which profile and
pack to run, where the journal lives, and how the buttons, lamp, horn and buzzer are wired.
Validated once at load like profiles, with file:line:column: field: message."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from timekeeper.rules.yamldoc import ConfigError, Doc, Path_
from timekeeper.rules.yamldoc import Reader as _Reader
from timekeeper.sound.pack import CUE_NAMES

DEFAULT_FILE = Path("/etc/timekeeper/config.yaml")

TOP_KEYS = ("profile", "sounds", "state_dir", "journal_interval", "control", "audio", "gpio",
            "web", "hall")
WEB_KEYS = ("listen",)
HALL_KEYS = ("broker", "hall", "table", "user", "password")
AUDIO_KEYS = ("kind", "driver", "device", "chunk", "latency_ms", "trim_ms", "attempts",
              "volume")
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


@dataclass(frozen=True)
class HallConfig:
    """Joining a hall (docs/hall.md): the desk's MQTT broker, the hall's and this table's
    names, and the box's own broker account."""

    broker: str  # mqtt://HOST[:PORT]
    hall: str = "hall"
    table: str = ""
    user: str | None = None
    password: str | None = None


@dataclass(frozen=True)
class Config:
    source: Path | None
    profile: str | None = None
    sounds: str | None = None
    state_dir: Path | None = None
    journal_interval: float = 1.0
    control: Path | None = None
    audio_kind: str = "stream"
    audio_driver: str | None = None
    audio_device: str | None = None
    audio_chunk: int | None = None  # frames; None: the kind's default
    audio_latency: float | None = None  # seconds to compensate (stream); None: measured default
    audio_trim: float = 0.0  # s: this box's own output delay (USB card, HDMI, Bluetooth), added
    audio_attempts: int = 8
    audio_volume: float = 1.0  # gain on the pack's samples (1.0: as recorded), applied at load
    web_listen: tuple[str, int] | None = None  # (host, port); None: no web server
    gpio: GpioConfig = field(default_factory=lambda: default_gpio())
    hall: HallConfig | None = None


def default_gpio() -> GpioConfig:
    buttons = tuple(ButtonConfig(name, pin, hold, short, long)
                    for name, (short, long, hold, pin) in BUTTONS.items() if pin is not None)
    return GpioConfig(buttons=buttons, lamp=LampConfig(23))


def load(path: Path | None) -> Config:
    """--config PATH (must exist), else /etc/timekeeper/config.yaml if it exists, else the
    defaults (the wiring shown in the README and docs/box.md)."""
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
        profile=_profile(r, file),
        sounds=_sounds(r, file),
        state_dir=_optional_path(r, ("state_dir",), file),
        journal_interval=r.seconds(("journal_interval",), 1.0),
        control=_optional_path(r, ("control",), file),
        audio_kind=r.choice(("audio", "kind"), ("stream", "mixer", "silent"), "stream"),
        audio_driver=_driver(r) if audio else None,
        audio_device=_optional_text(r, ("audio", "device")),
        audio_chunk=_chunk(r),
        audio_latency=_latency(r),
        audio_trim=_trim(r),
        audio_attempts=r.integer(("audio", "attempts"), 8),
        audio_volume=_volume(r),
        web_listen=_web_listen(r),
        gpio=_gpio(r, doc),
        hall=_hall(r, doc),
    )


def _web_listen(r: _Reader) -> tuple[str, int] | None:
    from timekeeper.web.listen import parse_listen

    r.mapping(("web",), WEB_KEYS)
    value = r.get(("web", "listen"))
    if value is None:
        return None
    try:
        return parse_listen(str(value))
    except ValueError as exc:
        raise r.doc.error(("web", "listen"), str(exc)) from None


def _hall(r: _Reader, doc: Doc) -> HallConfig | None:
    if r.mapping(("hall",), HALL_KEYS) is None:
        return None
    broker = r.text(("hall", "broker"), "")
    if not re.fullmatch(r"(mqtt://)?[\w.-]+(:\d{1,5})?", broker):
        raise doc.error(("hall", "broker"), f"must be mqtt://HOST[:PORT], not {broker!r}")
    names = {}
    for key, default in (("hall", "hall"), ("table", None)):
        value = r.get(("hall", key), default)
        if value is None:
            raise doc.error(("hall", key), "missing: this box's table name or number")
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", text):
            raise doc.error(("hall", key), f"must be 1-32 letters, digits, - or _, not "
                                           f"{value!r}")
        names[key] = text
    return HallConfig(broker, names["hall"], names["table"],
                      _optional_text(r, ("hall", "user")),
                      _optional_text(r, ("hall", "password")))


def _gpio(r: _Reader, doc: Doc) -> GpioConfig:
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
            raise doc.error(("gpio", "bounce"), f"must be shorter than every hold time "
                                                f"({b.name} holds {b.hold:g} s)")
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


# the 40-pin header: physical pin -> BCM GPIO number (for BOARD/J8/P1 pin names)
BOARD_TO_BCM = {3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23,
                18: 24, 19: 10, 21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5,
                31: 6, 32: 12, 33: 13, 35: 19, 36: 16, 37: 26, 38: 20, 40: 21}


def _pin(r: _Reader, doc: Doc, path: Path_) -> int:
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
    raise doc.error(path, f"must be a GPIO number (BCM, 0-27, e.g. 17) or a pin name such as "
                          f"GPIO17 or BOARD11, not {value!r}")


def _check_pins_unique(r: _Reader, doc: Doc, gpio: GpioConfig) -> None:
    used: dict[str, str] = {}
    devices: list[tuple[str, int | str]] = [(f"buttons.{b.name}", b.pin) for b in gpio.buttons]
    devices += [(name, dev.pin) for name, dev in
                (("lamp", gpio.lamp), ("horn", gpio.horn), ("buzzer", gpio.buzzer)) if dev]
    for name, pin in devices:
        key = f"GPIO{pin}"
        if key in used:
            parts = tuple(name.split("."))
            raise doc.error(("gpio", *parts), f"GPIO{pin} is already used by {used[key]}")
        used[key] = name


SDL_DRIVERS = ("alsa", "pulseaudio", "pipewire", "jack", "dummy", "disk")


def _driver(r: _Reader) -> str | None:
    if r.get(("audio", "driver")) is None:
        return None
    return r.choice(("audio", "driver"), SDL_DRIVERS, "alsa")


def chunk_problem(value: object) -> str | None:
    """What is wrong with an audio chunk size (config or --audio-chunk), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 64 <= value <= 16384:
        return f"must be 64 to 16384 frames, not {value!r}"
    return None


def latency_problem(ms: float) -> str | None:
    """What is wrong with a latency in ms (config or --audio-latency), or None."""
    return None if 0 <= ms <= 1000 else f"must be 0 to 1000 ms, not {ms:g}"


def _chunk(r: _Reader) -> int | None:
    value = r.get(("audio", "chunk"))
    if value is None:
        return None
    if (problem := chunk_problem(value)) is not None:
        raise r.doc.error(("audio", "chunk"), problem)
    return value


def _trim(r: _Reader) -> float:
    """audio.trim_ms: the extra delay of this box's speaker path, measured (docs/hall.md), so
    that boxes with different cards sound together; -500 … 500 ms."""
    value = r.get(("audio", "trim_ms"), 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not -500 <= value <= 500:
        raise r.doc.error(("audio", "trim_ms"), f"must be -500 to 500 ms, not {value!r}")
    return value / 1000


def _latency(r: _Reader) -> float | None:
    if r.get(("audio", "latency_ms")) is None:
        return None
    ms = r.seconds(("audio", "latency_ms"), zero=True)  # (a plain non-negative number)
    if (problem := latency_problem(ms)) is not None:
        raise r.doc.error(("audio", "latency_ms"), problem)
    return ms / 1000


def volume_gain(value: object) -> float | str:
    """`audio.volume` (or `audio test --volume`) as a gain on the samples, or what is wrong
    with it: a level 0 < v <= 1 (1.0: the pack as recorded, 0.5: half the amplitude, -6 dB)
    or decibels from -60 to 0 ("-6 dB"). Never louder than the pack: that would clip; the
    ALSA mixer (alsamixer) turns the card itself up."""
    how = ("must be a level above 0 up to 1.0 (the pack as recorded), e.g. 0.5, or decibels "
           "from -60 to 0, e.g. \"-6 dB\"")
    if isinstance(value, bool):
        return f"{how}, not {value!r}"
    if isinstance(value, int | float):
        if value == 0:
            return f"{how}; 0 would be silence: for no sound use audio.kind: silent"
        if not 0 < value <= 1:
            return (f"{how}, not {value!r}" + ("; to play louder turn up the card's mixer "
                                                "(alsamixer)" if value > 1 else ""))
        return float(value)
    match = re.fullmatch(r"\s*([+-]?\d+(?:\.\d*)?)\s*db\s*", str(value), re.IGNORECASE)
    if match is None:
        return f"{how}, not {value!r}"
    db = float(match.group(1))
    if not -60 <= db <= 0:
        return (f"{how}, not {value!r}" + ("; to play louder turn up the card's mixer "
                                            "(alsamixer)" if db > 0 else ""))
    return 10 ** (db / 20)


def _volume(r: _Reader) -> float:
    value = r.get(("audio", "volume"))
    if value is None:
        return 1.0
    gain = volume_gain(value)
    if isinstance(gain, str):
        raise r.doc.error(("audio", "volume"), gain)
    return gain


def _looks_like_path(text: str) -> bool:
    return "/" in text or text.startswith(".") or text.endswith((".yaml", ".yml"))


def _profile(r: _Reader, file: Path) -> str | None:
    from timekeeper.rules import profile as profiles

    return _found(r, file, "profile", profiles.find)


def _sounds(r: _Reader, file: Path) -> str | None:
    from timekeeper.sound.pack import find_pack

    return _found(r, file, "sounds", find_pack)


def _found(r: _Reader, file: Path, key: str, find: Callable[[str], object]) -> str | None:
    """A profile or pack name or path, checked now; a relative path is relative to the
    config file (under systemd the working directory is the state folder)."""
    text = _optional_text(r, (key,))
    if text is None:
        return None
    if _looks_like_path(text) and not Path(text).expanduser().is_absolute():
        text = str(file.parent / text)
    try:
        find(text)
    except ConfigError as exc:
        raise r.doc.error((key,), exc.message) from None
    return text


def _optional_text(r: _Reader, path: Path_) -> str | None:
    return None if r.get(path) is None else r.text(path, "")


def _optional_path(r: _Reader, path: Path_, file: Path) -> Path | None:
    text = _optional_text(r, path)
    if text is None:
        return None
    chosen = Path(text).expanduser()
    return chosen if chosen.is_absolute() else file.parent / chosen

