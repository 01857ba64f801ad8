"""The box's configuration (/etc/timekeeper/config.yaml or --config PATH): which profile and
pack to run, where the journal lives, the sound, the web, the hall, and how the buttons, lamp,
horn and buzzer are wired (that section is read in `wiring.py`). Validated once at load like
profiles, with file:line:column: field: message.

The audio settings are checked here only: the file's `audio:` section at load, and `run`'s
--audio options over it in `audio_for_run`: a setting that no sink `audio.sink` (or
`--audio`) lists can use (devices.unused) is refused, at its line or naming its option."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from timekeeper.box import wiring
from timekeeper.box.wiring import GpioConfig
from timekeeper.hall.bus import timesync
from timekeeper.rules.commands import check_name
from timekeeper.rules.yamldoc import ConfigError, Doc, Path_, Reader
from timekeeper.show import language
from timekeeper.sound import devices

DEFAULT_FILE = Path("/etc/timekeeper/config.yaml")

TOP_KEYS = (
    "profile",
    "sounds",
    "state_dir",
    "journal_interval",
    "control",
    "audio",
    "gpio",
    "web",
    "hall",
    "names",
    "language",
)
NAMES_KEYS = ("home", "away")
WEB_KEYS = ("listen",)
HALL_KEYS = ("broker", "hall", "table", "user", "password", "password_file", "sync")
AUDIO_KEYS = (
    "sink",
    "driver",
    "device",
    "chunk",
    "latency_ms",
    "latency",
    "attempts",
    "volume",
)


@dataclass(frozen=True)
class HallConfig:
    """Joining a hall (docs/hall.md): the desk's MQTT broker, the hall's and this table's
    names, the broker account (a box's, or the desk's), and how the clocks agree."""

    broker: str  # mqtt://HOST[:PORT]
    hall: str = "hall"
    table: str = ""  # a box's table ("" on the desk, which has none)
    user: str | None = None
    password: str | None = None
    password_file: Path | None = None  # the password in a file of its own (kept 0600)
    sync: str = "chrony"  # or "local": a practice hall on one machine (a loopback broker)


@dataclass(frozen=True)
class Config:
    source: Path | None
    profile: str | None = None
    sounds: str | None = None
    state_dir: Path | None = None
    journal_interval: float = 1.0
    control: Path | None = None
    # the sinks tried in turn (devices.SINKS; `audio.sink`: a name, a list, auto or silent)
    audio_sinks: tuple[str, ...] = devices.AUTO
    audio_driver: str | None = None
    audio_device: str | None = None
    audio_chunk: int | None = None  # frames; None: the kind's default
    audio_latency: float | None = None  # s SDL's stream compensates (sdl); None: measured default
    # audio.latency, in s: what this box's speaker path adds after its output's own timing
    # (a DAC, HDMI, Bluetooth, JACK), measured by `timekeeper calibrate`; every output kind
    audio_offset: float = 0.0
    audio_attempts: int = 8
    audio_volume: float = 1.0  # gain on the pack's samples (1.0: as recorded), applied at load
    web_listen: tuple[str, int] | None = None  # (host, port); None: no web server
    gpio: GpioConfig = field(default_factory=wiring.default_gpio)
    hall: HallConfig | None = None
    names: tuple[str, str] = ("", "")  # the sides' names at start, unless the journal has some
    language: str = language.DEFAULT  # the pages' and the status line's (lang/XX.json)


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
    r = Reader(doc)
    if not isinstance(doc.data, dict):
        raise ConfigError("must be a mapping of settings", file)
    doc.check_keys((), doc.data, TOP_KEYS)
    _refuse_old_audio_keys(r)
    audio = r.mapping(("audio",), AUDIO_KEYS) or {}
    return Config(
        source=file,
        profile=_profile(r, file),
        sounds=_sounds(r, file),
        state_dir=_optional_path(r, ("state_dir",), file),
        journal_interval=r.seconds(("journal_interval",), 1.0),
        control=_optional_path(r, ("control",), file),
        audio_sinks=_sinks(r),
        audio_driver=_driver(r) if audio else None,
        audio_device=_optional_text(r, ("audio", "device")),
        audio_chunk=_chunk(r),
        audio_latency=_latency(r),
        audio_offset=speaker_latency(r),
        audio_attempts=r.integer(("audio", "attempts"), 8),
        audio_volume=_volume(r),
        web_listen=_web_listen(r),
        gpio=wiring.read(r, doc),
        hall=_hall(r, doc),
        names=_names(r),
        language=_language(r),
    )


def _language(r: Reader) -> str:
    """`language: cs`: the hall's language, one of language.LANGUAGES; its words (and a
    user's correction of them) are checked now, not when a page first asks."""
    code = r.get(("language",), language.DEFAULT)
    try:
        language.words(language.check(code))
    except ValueError as exc:
        raise r.doc.error(("language",), str(exc)) from None
    return code


def _web_listen(r: Reader) -> tuple[str, int] | None:
    from timekeeper.web.listen import parse_listen

    r.mapping(("web",), WEB_KEYS)
    value = r.get(("web", "listen"))
    if value is None:
        return None
    try:
        return parse_listen(str(value))
    except ValueError as exc:
        raise r.doc.error(("web", "listen"), str(exc)) from None


def _hall(r: Reader, doc: Doc) -> HallConfig | None:
    if r.mapping(("hall",), HALL_KEYS) is None:
        return None
    broker = r.text(("hall", "broker"), "")
    if not re.fullmatch(r"(mqtt://)?[\w.-]+(:\d{1,5})?", broker):
        raise doc.error(("hall", "broker"), f"must be mqtt://HOST[:PORT], not {broker!r}")
    names = {}
    for key, default in (("hall", "hall"), ("table", "")):
        value = r.get(("hall", key), default)
        if value == "" and key == "table":
            names[key] = ""
            continue
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", text):
            raise doc.error(("hall", key), f"must be 1-32 letters, digits, - or _, not {value!r}")
        names[key] = text
    sync = r.text(("hall", "sync"), "chrony")
    host = broker.removeprefix("mqtt://").rsplit(":", 1)[0]
    try:
        timesync.checker(sync, host)
    except ValueError as exc:
        raise doc.error(("hall", "sync"), str(exc)) from None
    return HallConfig(
        broker,
        names["hall"],
        names["table"],
        _optional_text(r, ("hall", "user")),
        _optional_text(r, ("hall", "password")),
        _optional_path(r, ("hall", "password_file"), doc.file),
        sync,
    )


def _names(r: Reader) -> tuple[str, str]:
    """`names: {home: Novák, away: Svoboda}`: the sides' names a box starts with (a league's
    table, a club night's pairing), checked as `ctl names` checks them."""
    if r.mapping(("names",), NAMES_KEYS) is None:
        return "", ""
    names = []
    for key in NAMES_KEYS:
        value = r.get(("names", key), "")
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # (a team called 1984)
        if not isinstance(value, str):
            raise r.doc.error(("names", key), f"must be a name (text), not {value!r}")
        try:
            names.append(check_name(value))
        except ValueError as exc:
            raise r.doc.error(("names", key), str(exc)) from None
    return names[0], names[1]


# ---------------------------------------------------------------------- audio (checked here only)

SDL_DRIVERS = ("alsa", "pulseaudio", "pipewire", "jack", "dummy", "disk")


NEW_FORM = (
    "the output is chosen by audio.sink (run --audio): a name or a list tried in turn, e.g. "
    "`sink: [pulse, alsa, sdl]`, `sink: auto` (the default), `sink: mixer`, `sink: silent`"
)


def _refuse_old_audio_keys(r: Reader) -> None:
    audio = r.get(("audio",))
    for key in ("kind", "output"):
        if isinstance(audio, dict) and key in audio:
            raise r.doc.error(("audio", key), f"is no setting: {NEW_FORM}")


# the file's audio keys as the settings devices.USES names
AUDIO_SETTINGS = (
    ("driver", "driver"),
    ("device", "device"),
    ("latency_ms", "latency"),
    ("chunk", "chunk"),
    ("latency", "offset"),
)


def _sinks(r: Reader) -> tuple[str, ...]:
    """audio.sink: the sinks tried in turn; the settings none of them can use are refused
    here, at their line."""
    value = r.get(("audio", "sink"), "auto")
    try:
        names = devices.parse(value)
    except ValueError as exc:
        raise r.doc.error(("audio", "sink"), str(exc)) from None
    for key, setting in AUDIO_SETTINGS:
        if r.get(("audio", key)) is not None and (problem := devices.unused(setting, names)):
            raise r.doc.error(("audio", key), problem)
    return names


def _driver(r: Reader) -> str | None:
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


def _chunk(r: Reader) -> int | None:
    value = r.get(("audio", "chunk"))
    if value is None:
        return None
    if (problem := chunk_problem(value)) is not None:
        raise r.doc.error(("audio", "chunk"), problem)
    return value


SPEAKER_LATENCY_MS = 500  # audio.latency: -500 … 500 ms


def speaker_latency_problem(value: object) -> float | str:
    """`audio.latency` in seconds, or what is wrong with it: milliseconds, a number or
    "12.5 ms", from -500 to 500 (a Bluetooth speaker: ~200)."""
    how = f'must be -{SPEAKER_LATENCY_MS} to {SPEAKER_LATENCY_MS} ms (e.g. 12.5 or "12.5 ms")'
    ms: object = value
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([+-]?\d+(?:\.\d*)?)\s*ms\s*", value)
        ms = float(match.group(1)) if match else None
    if (
        isinstance(ms, bool)
        or not isinstance(ms, int | float)
        or not -SPEAKER_LATENCY_MS <= ms <= SPEAKER_LATENCY_MS  # (NaN: not in range)
    ):
        return f"{how}, not {value!r}"
    return ms / 1000


def speaker_latency(r: Reader) -> float:
    """audio.latency: the delay of this box's speaker path that no driver reports, so that
    boxes with different cards sound together; applied on every output (pulse, alsa, sdl)."""
    value = r.get(("audio", "latency"))
    if value is None:
        return 0.0
    seconds = speaker_latency_problem(value)
    if isinstance(seconds, str):
        raise r.doc.error(("audio", "latency"), seconds)
    return seconds


def _latency(r: Reader) -> float | None:
    if r.get(("audio", "latency_ms")) is None:
        return None
    ms = r.seconds(("audio", "latency_ms"), zero=True)  # (a plain non-negative number)
    if (problem := latency_problem(ms)) is not None:
        raise r.doc.error(("audio", "latency_ms"), problem)
    return ms / 1000


def write_speaker_latency(file: Path, seconds: float, note: str) -> None:
    """Sets `audio.latency` in `file` (made if missing) to `seconds`, every other line and
    comment kept: the value replaced where it stands (its line, with `note` as its comment,
    in a block mapping), else added under `audio:` (block or one-line flow), else an
    `audio:` section appended. The result is checked as a box loads it before it replaces
    the file (ConfigError, and the file left as it was)."""
    value = f"{seconds * 1e3:.1f}"
    if isinstance(problem := speaker_latency_problem(float(value)), str):
        raise ConfigError(f"{problem}: not written", file, "audio.latency")
    text = file.read_text(encoding="utf-8") if file.exists() else ""
    lines = text.splitlines(keepends=True)
    doc = Doc.load(file) if text.strip() else None
    audio = doc.data.get("audio") if doc is not None and isinstance(doc.data, dict) else None
    if doc is not None and ("audio", "latency") in doc.where:
        at = doc.where[("audio", "latency")]
        line = lines[at.line - 1]
        head, tail = line[: at.column - 1], line[at.column - 1 :]
        if head.strip() == "latency:":  # a block mapping's line: value and comment replaced
            end = "\n" if line.endswith("\n") else ""
            lines[at.line - 1] = f"{head}{value}  # {note}{end}"
        else:  # inside a flow mapping: the value only
            match = re.match(r"\"[^\"]*\"|'[^']*'|[^,}#\n]*[^,}#\s]", tail)
            size = len(match.group(0)) if match else 0
            lines[at.line - 1] = head + value + tail[size:]
    elif doc is not None and ("audio",) in doc.keys:
        at = doc.keys[("audio",)]
        line = lines[at.line - 1]
        rest = line[at.column - 1 + len("audio:") :]
        if isinstance(audio, dict) and audio and rest.lstrip().startswith("{"):
            brace = line.index("{", at.column - 1)
            lines[at.line - 1] = (
                f"{line[: brace + 1]}latency: {value}, {line[brace + 1 :].lstrip()}"
            )
        elif isinstance(audio, dict) and audio:  # a block mapping: beside its first key
            first = doc.keys[("audio", next(iter(audio)))]
            indent = " " * (first.column - 1)
            lines.insert(first.line - 1, f"{indent}latency: {value}  # {note}\n")
        elif rest.strip() and not rest.strip().startswith("#"):  # (`audio: {}`, `audio: ~`)
            lines[at.line - 1] = f"{line[: at.column - 1]}audio:\n  latency: {value}  # {note}\n"
        else:
            lines.insert(at.line, f"  latency: {value}  # {note}\n")
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines.append(f"audio:\n  latency: {value}  # {note}\n")
    new = file.with_name(f".{file.name}.new")
    new.write_text("".join(lines), encoding="utf-8")
    try:
        if file.exists():
            shutil.copymode(file, new)
        try:
            build(Doc.load(new), new)
        except ConfigError as exc:  # (the file was valid: a form the writer does not know)
            raise ConfigError(
                f"cannot set audio.latency here ({exc}): write `latency: {value}` under "
                "`audio:` by hand",
                file,
            ) from None
        os.replace(new, file)
    finally:
        new.unlink(missing_ok=True)


def volume_gain(value: object) -> float | str:
    """`audio.volume` (or `audio test --volume`) as a gain on the samples, or what is wrong
    with it: a level 0 < v <= 1 (1.0: the pack as recorded, 0.5: half the amplitude, -6 dB)
    or decibels from -60 to 0 ("-6 dB"). Never louder than the pack: that would clip; the
    ALSA mixer (alsamixer) turns the card itself up."""
    how = (
        "must be a level above 0 up to 1.0 (the pack as recorded), e.g. 0.5, or decibels "
        'from -60 to 0, e.g. "-6 dB"'
    )
    if isinstance(value, bool):
        return f"{how}, not {value!r}"
    if isinstance(value, int | float):
        if value == 0:
            return f"{how}; 0 would be silence: for no sound use audio.sink: silent"
        if not 0 < value <= 1:
            return f"{how}, not {value!r}" + (
                "; to play louder turn up the card's mixer (alsamixer)" if value > 1 else ""
            )
        return float(value)
    match = re.fullmatch(r"\s*([+-]?\d+(?:\.\d*)?)\s*db\s*", str(value), re.IGNORECASE)
    if match is None:
        return f"{how}, not {value!r}"
    db = float(match.group(1))
    if not -60 <= db <= 0:
        return f"{how}, not {value!r}" + (
            "; to play louder turn up the card's mixer (alsamixer)" if db > 0 else ""
        )
    return 10 ** (db / 20)


def _volume(r: Reader) -> float:
    value = r.get(("audio", "volume"))
    if value is None:
        return 1.0
    gain = volume_gain(value)
    if isinstance(gain, str):
        raise r.doc.error(("audio", "volume"), gain)
    return gain


def audio_for_run(
    cfg: Config,
    sinks: str | None,
    chunk: int | None,
    latency_ms: float | None,
) -> tuple[tuple[str, ...], devices.Settings]:
    """(the sinks to try, the settings) for `run`: its --audio, --audio-chunk and
    --audio-latency (None: not given) over the config, checked together, so that settings
    that cannot work are refused (exit 2) before anything is opened or read. The config's
    audio.latency (the speaker path's offset, `calibrate`) goes with them to every sink."""
    names = cfg.audio_sinks
    if sinks is not None:
        try:
            names = devices.parse(sinks)
        except ValueError as exc:
            raise ConfigError(str(exc), field="--audio") from None
    for setting, given, where in (
        ("latency", latency_ms is not None, "--audio-latency"),
        ("chunk", chunk is not None, "--audio-chunk"),
        ("driver", cfg.audio_driver is not None, "audio.driver"),  # (--audio over the file)
        ("device", cfg.audio_device is not None, "audio.device"),
        ("latency", cfg.audio_latency is not None, "audio.latency_ms"),
        ("chunk", cfg.audio_chunk is not None, "audio.chunk"),
        ("offset", cfg.audio_offset != 0.0, "audio.latency"),
    ):
        if where.startswith("audio.") and sinks is not None and names == ("silent",):
            continue  # (run --audio silent on a box set up for a card: no device, nothing used)
        if given and (problem := devices.unused(setting, names)):
            raise ConfigError(problem, field=where)
    if chunk is not None and (problem := chunk_problem(chunk)):
        raise ConfigError(problem, field="--audio-chunk")
    if latency_ms is not None and (problem := latency_problem(latency_ms)):
        raise ConfigError(problem, field="--audio-latency")
    latency = cfg.audio_latency if latency_ms is None else latency_ms / 1000
    chunk = chunk or cfg.audio_chunk
    return names, devices.Settings(
        cfg.audio_driver, cfg.audio_device, chunk, latency, cfg.audio_offset
    )


def audio_text(cfg: Config) -> str:
    """The audio settings in a line, as `check --config` shows them: the sinks tried in
    turn, and those passed over for the settings made (devices.choose decides the same
    way)."""
    names = cfg.audio_sinks
    if names == ("silent",):
        return "audio.sink silent (no device: every cue only logged)"
    settings = devices.Settings(
        cfg.audio_driver, cfg.audio_device, cfg.audio_chunk, cfg.audio_latency
    )
    tried = []
    for name in names:
        why = devices.passed_over(name, names, settings)
        tried.append(name if why is None else f"({name}: {why})")
    latency = f", audio.latency {cfg.audio_offset * 1e3:g} ms" if cfg.audio_offset else ""
    return f"audio.sink {devices.shown(names)}: tried in turn {', '.join(tried)}{latency}"


def _looks_like_path(text: str) -> bool:
    return "/" in text or text.startswith(".") or text.endswith((".yaml", ".yml"))


def _profile(r: Reader, file: Path) -> str | None:
    from timekeeper.rules import profile as profiles

    return _found(r, file, "profile", profiles.find)


def _sounds(r: Reader, file: Path) -> str | None:
    from timekeeper.sound.pack import find_pack

    return _found(r, file, "sounds", find_pack)


def _found(r: Reader, file: Path, key: str, find: Callable[[str], object]) -> str | None:
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


def _optional_text(r: Reader, path: Path_) -> str | None:
    return None if r.get(path) is None else r.text(path, "")


def _optional_path(r: Reader, path: Path_, file: Path) -> Path | None:
    text = _optional_text(r, path)
    if text is None:
        return None
    chosen = Path(text).expanduser()
    return chosen if chosen.is_absolute() else file.parent / chosen
