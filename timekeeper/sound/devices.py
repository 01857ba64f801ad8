"""Opening the live audio output `timekeeper run` plays through, as gpiozero chooses a pin
factory: `--audio` (`audio.sink` in the config) names one sink or an ordered list, tried in
turn; the first that opens is taken, and the log says of each why it was or was not
("pulse: no server answers (…); alsa: default opened (PLUG), 48 kHz, period 480 frames:
taken").

The names (SINKS): `pipewire`, `pulse`, `alsa`, `sdl` play the sample-exact stream
(sound/framed.py) on a sink; `mixer` is the fallback, pygame's `Sound.play()` at the
deadline (sound/pygame_mixer.py). `auto` stands for the default list (AUTO); `silent` opens
no device at all and stands alone."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from timekeeper.rules.profiletypes import Profile
from timekeeper.sound.output import AudioError, Output, SilentOutput

if TYPE_CHECKING:  # (the command line and the config read the names: no numpy for that)
    from timekeeper.sound.framed import Sink
    from timekeeper.sound.pack import SoundPack

log = logging.getLogger(__name__)

SINKS = ("pipewire", "pulse", "alsa", "sdl", "mixer")  # what `--audio` may list
# `auto`: PipeWire's ALSA plugin where a PipeWire server runs (its pulse layer's timing is
# short by part of a quantum, docs/timing.md), else PulseAudio's own stream where a server
# answers, else ALSA's default device (Pi OS Lite: the card itself), else SDL
AUTO = ("pipewire", "pulse", "alsa", "sdl")
WORDS = ("auto", "silent", *SINKS)
# the settings each name uses (`silent`: none): one that no listed name uses is refused
# (unused); one made that a sink does not use, while a later one in the list does, passes
# it over (an SDL device named: SDL's; `audio.device` names an ALSA PCM only where neither
# sdl nor mixer is listed). `offset` is audio.latency, the speaker path's: every stream
# sink places its cues by it, the mixer cannot
USES: dict[str, tuple[str, ...]] = {
    "pipewire": ("chunk", "offset"),
    "pulse": ("chunk", "offset"),
    "alsa": ("device", "chunk", "offset"),
    "sdl": ("driver", "device", "latency", "chunk", "offset"),
    "mixer": ("driver", "device", "chunk"),
}
PROC = Path("/proc")  # where the holders of a busy device are looked up
SETTING_NAMES = {  # as the config and the command line spell them
    "driver": "audio.driver",
    "device": "audio.device",
    "latency": "audio.latency_ms / --audio-latency",
    "chunk": "audio.chunk / --audio-chunk",
    "offset": "audio.latency",
}
WHY_UNUSED = {  # why the sinks listed cannot use a setting
    "offset": "the mixer cannot place cues",
}


def parse(value: object) -> tuple[str, ...]:
    """`--audio` / `audio.sink` as the names tried in turn: one name, a comma-separated text
    (`pulse,alsa`) or a list; `auto` expanded. Raises ValueError saying what is wrong."""
    items: Iterable[object]
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        raise ValueError(f"must be a name or a list of names, not {value!r}")
    names = [str(item).strip() for item in items]
    if not names or "" in names:
        raise ValueError(f"must be a name or a list of names ({', '.join(WORDS)}), not {value!r}")
    for name in names:
        if name == "stream":
            raise ValueError(
                "stream is what every sink but mixer plays: name the sinks to try, e.g. "
                f"auto (the default: {','.join(AUTO)}) or alsa"
            )
        if name not in WORDS:
            raise ValueError(f"{name!r} is not one of {', '.join(WORDS)}")
    if "silent" in names and len(names) > 1:
        raise ValueError("silent opens no device: it stands alone, not in a list")
    chosen: list[str] = []
    for name in names:
        for one in AUTO if name == "auto" else (name,):
            if one in chosen:
                raise ValueError(f"{one} is named twice (auto is {','.join(AUTO)})")
            chosen.append(one)
    if "mixer" in chosen[:-1]:  # (tried only once the stream sinks before it have failed)
        before = [name for name in names if name != "mixer"]
        raise ValueError(
            f"mixer is the fallback: it comes last in a list, e.g. {','.join([*before, 'mixer'])}"
        )
    return tuple(chosen)


def shown(names: tuple[str, ...]) -> str:
    """The names as `--audio` takes them (`auto` for the default list)."""
    return "auto" if names == AUTO else ",".join(names)


def unused(setting: str, names: tuple[str, ...]) -> str | None:
    """Why none of `names` can use `setting` (a key of USES), or None: the one check of
    the config's audio settings and `run`'s options over them (box/config.py)."""
    if owner(setting, names):
        return None
    users = [name for name in SINKS if setting in USES[name]]
    if names == ("silent",):
        why = "silent opens no device"
    else:
        why = WHY_UNUSED.get(
            setting,
            "PulseAudio's and PipeWire's streams are timed by the server and play on its "
            "default sink, ALSA's by the device's status",
        )
    return f"is for {' or '.join(users)}, and audio.sink (--audio) is {shown(names)}: {why}"


def owner(setting: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The names in `names` that use `setting` (USES; `device` is SDL's where sdl or the
    mixer is listed)."""
    users = tuple(name for name in names if setting in USES.get(name, ()))
    if setting == "device" and any(name in ("sdl", "mixer") for name in names):
        users = tuple(name for name in users if name != "alsa")
    return users


@dataclass(frozen=True)
class Settings:
    """What the config and `run`'s options say of the device, checked (box/config.py)."""

    driver: str | None = None  # SDL's driver ("pulseaudio" is no SDL setting: pulse's own)
    device: str | None = None
    chunk: int | None = None  # frames a block; None: the sink's own
    latency: float | None = None  # s the stream compensates (SDL): None, the measured default
    offset: float = 0.0  # s the speaker path adds, every sink (audio.latency: `calibrate`)

    def made(self) -> tuple[str, ...]:
        return tuple(
            key
            for key, value in (
                ("driver", None if self.driver == "pulseaudio" else self.driver),
                ("device", self.device),
                ("latency", self.latency),
            )
            if value is not None
        )


def passed_over(name: str, names: tuple[str, ...], settings: Settings) -> str | None:
    """Why `name` is passed over without being tried: a setting is made that it does not use
    and a later name does; None: it is tried."""
    later = names[names.index(name) + 1 :]
    for setting in settings.made():
        users = owner(setting, names)
        if name not in users and set(users) & set(later):
            return f"passed over: {SETTING_NAMES[setting]} is set, which is for {users[0]}"
    return None


def open_output(
    pack: SoundPack,
    profile: Profile | None,
    names: tuple[str, ...] = AUTO,
    settings: Settings = Settings(),
) -> Output:
    """The live audio output for `timekeeper run`: the first of `names` that opens, warm
    and prepared for `profile` (None: not prepared). Raises AudioError when none opens: the
    one's own error, or each one's reason."""
    if names == ("silent",):
        return SilentOutput()
    opened: Output
    if names == ("mixer",):
        opened = _mixer(pack, settings)
    elif "mixer" in names:
        try:
            opened = _framed(pack, choose(names[: names.index("mixer")], settings), settings.offset)
        except AudioError as exc:
            log.info("audio: %s; mixer: tried", exc)
            opened = _mixer(pack, settings)
    else:
        opened = _framed(pack, choose(names, settings), settings.offset)
    if profile is None:  # (`timekeeper audio test`: one cue, built when it is played)
        return opened
    try:
        opened.prepare(profile)
    except BaseException:
        opened.close()
        raise
    return opened


def _framed(pack: SoundPack, sink: Sink, offset: float) -> Output:
    from timekeeper.sound.framed import FramedOutput

    return FramedOutput(pack, sink, offset=offset)


def _mixer(pack: SoundPack, settings: Settings) -> Output:
    from timekeeper.sound.pygame_mixer import PygameAudio

    if settings.device is not None:
        from timekeeper.sound.sdl import init_mixer

        init_mixer(settings.driver, settings.chunk or 512, settings.device)
    return PygameAudio(pack, settings.driver, buffer=settings.chunk or 512)


def choose(names: tuple[str, ...], settings: Settings = Settings()) -> Sink:
    """The first of `names` (stream sinks) that opens, each one's outcome logged on one
    line; AudioError when none does (a name alone: its own error, advice and all)."""
    told: list[str] = []
    errors: list[AudioError] = []
    for name in names:
        if (why := passed_over(name, names, settings)) is not None:
            told.append(f"{name}: {why}")
            continue
        given = settings
        if name == "alsa" and "alsa" not in owner("device", names):
            given = dataclasses.replace(settings, device=None)  # (an SDL device's name)
        try:
            sink = open_sink(name, given)
        except AudioError as exc:
            errors.append(exc)
            told.append(f"{name}: {_short(exc)}")
            continue
        told.append(f"{name}: {_opened(sink, given.device)}: taken")
        log.info("audio: %s", "; ".join(told))
        return sink
    if len(errors) == 1 and len(told) == 1:
        raise errors[0]
    raise AudioError(f"no sound device opened: {'; '.join(told)}")


def open_sink(name: str, settings: Settings = Settings()) -> Sink:
    """The stream's sink `name` opened, or AudioError saying why not.

    `pipewire`: PipeWire's ALSA plugin (ALSA's default device) where a PipeWire server's
    socket is there, timed by PipeWire's own stream time (libpulse not even loaded: 1.6 MB
    of the box's memory). `pulse`: PulseAudio's own stream, timed by the server (one that is
    not running is not started). `alsa`: an ALSA PCM (`device`, else "default": never a
    `plughw`, which an HDMI output taking only IEC958 frames refuses), timed by the
    device's status. `sdl`: an SDL device on `driver`/`device`, timed by its callbacks
    plus `latency`. Never read from SDL_AUDIODRIVER: SDL itself still reads it."""
    if name == "pipewire":
        return _pipewire(settings.chunk)
    if name == "pulse":
        from timekeeper.sound.pulse import REWRITE_PERIOD, PulseSink

        # (a press is rewritten into what is written already: long periods)
        return PulseSink(settings.chunk or REWRITE_PERIOD, spawn=False)
    if name == "alsa":
        from timekeeper.sound.alsasink import PERIOD, AlsaSink

        try:
            return AlsaSink(settings.device, settings.chunk or PERIOD)
        except AudioError as exc:
            raise _with_holder(exc) from None
    if name == "sdl":
        from timekeeper.sound.sdlsink import DEFAULT_CHUNK, SdlSink

        mixer = sys.modules.get("pygame.mixer")
        if mixer is not None and mixer.get_init():
            mixer.quit()  # an OGG decode opened SDL's audio (on the dummy driver): let it go
        return SdlSink(
            settings.driver, settings.device, settings.chunk or DEFAULT_CHUNK, settings.latency
        )
    raise ValueError(f"{name!r} is not a stream sink ({', '.join(SINKS[:-1])})")


def _pipewire(chunk: int | None) -> Sink:
    from timekeeper.sound.alsasink import PERIOD, AlsaSink

    where = _pipewire_socket()
    if where is None:
        raise AudioError("no PipeWire server (XDG_RUNTIME_DIR is not set)")
    if not _is_socket(where):
        raise AudioError(f"no PipeWire server (no socket at {where})")
    alsa = AlsaSink(None, chunk or PERIOD)
    if alsa.kind != "IOPLUG":
        alsa.close()
        raise AudioError(
            f"ALSA's default device is a card ({alsa.kind}), not PipeWire's plugin: "
            "PipeWire holds the card"
        )
    return alsa


def _pipewire_socket() -> Path | None:
    """Where libpipewire finds its server's socket; None: nowhere, no runtime folder is set
    (a root shell, the service: PipeWire runs in a user's session, its socket in that
    user's XDG_RUNTIME_DIR, which is not looked for)."""
    folder = os.environ.get("PIPEWIRE_RUNTIME_DIR") or os.environ.get("XDG_RUNTIME_DIR")
    name = os.environ.get("PIPEWIRE_REMOTE") or "pipewire-0"
    if name.startswith("/"):
        return Path(name)
    return None if not folder else Path(folder) / name


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.stat().st_mode)
    except OSError:
        return False


def _short(exc: AudioError) -> str:
    """An error without the advice meant for a name tried alone."""
    return str(exc).split("; check the", 1)[0]


def _opened(sink: Sink, device: str | None) -> str:
    """What was opened, for the choice's log line."""
    from timekeeper.sound.mixing import RATE

    parts = []
    if (server := getattr(sink, "server", "")) != "":
        parts.append(f"server {server!r} answered")
    if (kind := getattr(sink, "kind", None)) is not None:  # (an ALSA PCM: HW, PLUG, IOPLUG)
        parts.append(f"{device or 'default'} opened ({kind})")
    parts.append(f"{RATE / 1000:g} kHz")
    period = getattr(sink, "device_period", None) or sink.period
    parts.append(f"period {period} frames")
    parts.append(f"latency {sink.latency * 1e3:.0f} ms")
    return ", ".join(parts)


def _with_holder(exc: AudioError) -> AudioError:
    """`exc` with who holds the device where it is busy and ALSA can tell (a card without
    dmix, HDMI on Pi OS Lite: one program at a time)."""
    text = str(exc)
    if "busy" not in text.lower():
        return exc
    found = holders()
    who = (
        "held by " + ", ".join(found)
        if found
        else "held by another program (`fuser -v /dev/snd/*` names it)"
    )
    return AudioError(text.replace(")", f"; {who})", 1) if ")" in text else f"{text}: {who}")


def holders(proc: Path | None = None) -> list[str]:
    """Who holds an ALSA playback device open, as `fuser /dev/snd/*` would say: each
    substream's owner from /proc/asound (readable by anyone), else the processes with
    /dev/snd/pcm…p open among those we may look at. Never this process."""
    proc = proc or PROC
    found: dict[int, str] = {}
    for status in sorted(proc.glob("asound/card*/pcm*p/sub*/status")):
        with contextlib.suppress(OSError, ValueError):
            for line in status.read_text().splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "owner_pid":
                    card = status.parents[2].name.removeprefix("card")
                    found.setdefault(int(value), f"card {card}")
    if not found:
        for fd in proc.glob("[0-9]*/fd/*"):
            with contextlib.suppress(OSError, ValueError):
                target = os.readlink(fd)
                if target.startswith("/dev/snd/pcmC") and target.endswith("p"):
                    card = target.removeprefix("/dev/snd/pcmC").split("D")[0]
                    found.setdefault(int(fd.parts[-3]), f"card {card}")
    found.pop(os.getpid(), None)
    return [f"pid {pid} ({_command(proc, pid)}, {where})" for pid, where in sorted(found.items())]


def _command(proc: Path, pid: int) -> str:
    try:
        return (proc / str(pid) / "comm").read_text().strip() or "?"
    except OSError:
        return "?"


def described(output: Output | None) -> str:
    """What a live output is, for the log: `stream on pulse`, `mixer`, `silent` (None: no
    device open, the guard is reopening it)."""
    from timekeeper.sound.framed import FramedOutput

    if output is None:
        return "none open (being reopened)"
    if isinstance(output, FramedOutput):
        return f"stream on {output.sink.name}"
    return "silent" if isinstance(output, SilentOutput) else "mixer"


def output_devices(driver: str | None = None) -> tuple[str, list[str]]:
    """The driver SDL uses (`driver`, else its own choice) and the names of its output
    devices: what `audio.device` may name. Raises AudioError when the driver cannot start
    (e.g. pulseaudio with no server running)."""
    from pygame._sdl2 import audio as sdl_audio
    from pygame._sdl2.sdl2 import INIT_AUDIO, init_subsystem

    from timekeeper.sound.sdl import _sdl_driver
    from timekeeper.sound.sdlsink import _quit_sdl_audio

    with _sdl_driver(driver):
        try:
            init_subsystem(INIT_AUDIO)
        except Exception as exc:  # pygame's own error types
            raise AudioError(
                f"SDL's audio driver {driver or '(default)'} cannot start ({exc})"
            ) from None
    try:
        return current_driver() or driver or "?", list(sdl_audio.get_audio_device_names(False))
    finally:
        _quit_sdl_audio()


def current_driver() -> str | None:
    import ctypes

    from timekeeper.sound.sdlsink import _sdl_library

    sdl = _sdl_library()
    if sdl is None:
        return None
    sdl.SDL_GetCurrentAudioDriver.restype = ctypes.c_char_p
    name = sdl.SDL_GetCurrentAudioDriver()
    return name.decode() if name else None
