"""Sound packs: a folder with pack.yaml mapping cue names to WAV/OGG files.

Everything is decoded at start-up into float32 mono samples at the output rate, so that a
missing or corrupt file is refused before a match, and nothing is decoded mid-match."""

from __future__ import annotations

import logging
import os
import wave
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from timekeeper.rules.data import builtin_dir, user_dirs
from timekeeper.rules.engine import Cue
from timekeeper.rules.yamldoc import ConfigError, Doc
from timekeeper.sound.mixing import RATE

log = logging.getLogger(__name__)


CUE_NAMES = ("prestart", "start", "minute", "third", "last30", "period_end", "end",
             "break_warning", "shot_start", "shot_end", "timeout_end", "penalty_end",
             "forfeit", "pause", "resume", "time_added", "goal")
# played only if the pack has them (the default pack has none): the score is no rule signal
OPTIONAL_CUES = ("goal",)
DEFAULT_REPEAT_EVERY = 0.5


@dataclass(frozen=True)
class CueSound:
    name: str
    file: Path
    samples: np.ndarray  # float32, mono, RATE
    repeat_every: float  # onset spacing when a mark sounds N times


@dataclass
class SoundPack:
    name: str
    folder: Path
    sounds: dict[str, CueSound]
    _cache: dict[tuple, np.ndarray] = field(default_factory=dict, repr=False)

    def plays(self, cue: Cue) -> bool:
        """False for an optional cue (a goal) this pack has no sound for: nothing to play."""
        return cue.name in self.sounds

    def samples(self, cue: Cue) -> np.ndarray:
        """The samples a (non-stop) cue plays: marks repeated `count` times, the melody as
        its whole window from `offset` (the caller cuts it where the melody stops)."""
        if cue.name == "last30":
            window = self.melody(cue.length)
            return window[min(len(window), round(cue.offset * RATE)):]
        return self.repeated(cue.name, cue.count)

    def repeated(self, name: str, count: int) -> np.ndarray:
        key = (name, count)
        if key not in self._cache:
            sound = self.sounds[name]
            if count <= 1:
                self._cache[key] = sound.samples
            else:
                step = round(sound.repeat_every * RATE)
                out = np.zeros(step * (count - 1) + len(sound.samples), np.float32)
                for i in range(count):
                    out[i * step:i * step + len(sound.samples)] += sound.samples
                self._cache[key] = np.clip(out, -1, 1)
        return self._cache[key]

    def scaled(self, gain: float) -> SoundPack:
        """The pack at `gain` (audio.volume): every sample scaled once, at load, so that
        nothing is computed mid-match and the render tests' packs stay as recorded."""
        if gain == 1.0:
            return self
        sounds = {name: replace(sound, samples=(sound.samples * np.float32(gain)))
                  for name, sound in self.sounds.items()}
        return SoundPack(self.name, self.folder, sounds)

    def melody(self, length: float) -> np.ndarray:
        """The tune looped (if shorter) and cut to exactly `length` seconds."""
        key = ("last30-window", length)
        if key not in self._cache:
            tune = self.sounds["last30"].samples
            n = round(length * RATE)
            if n == len(tune):  # the usual case: the tune itself, not a second 6-MB copy
                self._cache[key] = tune
            else:
                self._cache[key] = np.resize(tune, n).astype(np.float32) if n else tune[:0]
        return self._cache[key]


def default_pack_dir() -> Path:
    return builtin_dir("sounds") / "default"


def find_pack(name_or_path: str | None) -> Path:
    """A pack by name (user folders, then built-in) or by folder path."""
    if name_or_path is None:
        return default_pack_dir()
    path = Path(name_or_path).expanduser()
    if "/" not in name_or_path and not name_or_path.startswith("."):
        for folder in [*user_dirs("sounds"), builtin_dir("sounds")]:
            if (folder / name_or_path / "pack.yaml").is_file():
                return folder / name_or_path
    if path.is_dir():
        return path
    searched = ", ".join(str(d) for d in [*user_dirs("sounds"), builtin_dir("sounds")])
    raise ConfigError(f"no sound pack {name_or_path!r}: neither a folder nor a pack name "
                      f"in {searched}")


def load_pack(folder: Path, needed: set[str] | None = None) -> SoundPack:
    """Load and decode a pack; cues it lacks come from the default pack (warned once)."""
    pack = _load_one(folder)
    default = default_pack_dir()
    wanted = set(CUE_NAMES) - set(OPTIONAL_CUES) if needed is None else needed
    missing = sorted(wanted - set(pack.sounds))
    if missing and folder.resolve() != default.resolve():
        fallback = _load_one(default, only=set(missing))
        for name in missing:
            if name in fallback.sounds:
                log.warning("sound pack %s has no %r cue; using the default pack's", folder, name)
                pack.sounds[name] = fallback.sounds[name]
    missing = sorted((needed or set()) - set(pack.sounds))
    if missing:
        raise ConfigError(f"no sound for cue(s) {', '.join(missing)}", folder / "pack.yaml", "cues")
    return pack


def _load_one(folder: Path, only: set[str] | None = None) -> SoundPack:
    file = folder / "pack.yaml"
    if not file.is_file():
        raise ConfigError("not a sound pack: no pack.yaml here", folder)
    doc = Doc.load(file)
    if not isinstance(doc.data, dict):
        raise doc.error((), "a pack must be a mapping with a cues: section")
    doc.check_keys((), doc.data, ("name", "description", "cues"))
    cues = doc.data.get("cues")
    if not isinstance(cues, dict) or not cues:
        raise doc.error(("cues",), "must map cue names to audio files")
    doc.check_keys(("cues",), cues, CUE_NAMES)
    sounds: dict[str, CueSound] = {}
    for name, spec in cues.items():
        if only is not None and name not in only:
            continue
        path = ("cues", name)
        repeat = DEFAULT_REPEAT_EVERY
        if isinstance(spec, dict):
            doc.check_keys(path, spec, ("file", "repeat_every"))
            repeat = spec.get("repeat_every", repeat)
            if isinstance(repeat, bool) or not isinstance(repeat, int | float) or repeat <= 0:
                raise doc.error((*path, "repeat_every"), f"must be seconds > 0, not {repeat!r}")
            spec = spec.get("file")
            path = (*path, "file")
        if not isinstance(spec, str) or not spec:
            raise doc.error(path, "must be a file name (WAV or OGG) relative to the pack")
        audio = (folder / spec).resolve()
        try:
            samples = decode(audio)
        except ConfigError as exc:
            raise doc.error(path, f"{audio}: {exc.message}") from None
        sounds[name] = CueSound(name, audio, samples, float(repeat))
    return SoundPack(str(doc.data.get("name", folder.resolve().name)), folder, sounds)


def decode(path: Path) -> np.ndarray:
    """Any WAV or OGG file → float32 mono samples at RATE."""
    if path.is_dir():
        raise ConfigError("is a folder, not an audio file")
    if not path.is_file():
        raise ConfigError("missing audio file")
    if not os.access(path, os.R_OK):
        raise ConfigError("audio file is not readable")
    try:
        samples, rate = _decode_wav(path)
    except (wave.Error, EOFError, ValueError):
        samples, rate = _decode_pygame(path)
    if len(samples) < rate // 100:
        raise ConfigError(f"audio file holds no sound to speak of ({len(samples)} samples)")
    if np.abs(samples).max() < 1e-3:
        raise ConfigError("audio file is silent")
    if rate != RATE:
        n = round(len(samples) * RATE / rate)
        samples = np.interp(np.arange(n) * (rate / RATE), np.arange(len(samples)), samples)
    return np.ascontiguousarray(samples, dtype=np.float32)


def _decode_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        width, channels, rate = w.getsampwidth(), w.getnchannels(), w.getframerate()
        frames = w.getnframes()
        raw = w.readframes(frames)
    if len(raw) < frames * width * channels:
        raise ConfigError(f"audio file is cut short ({len(raw) // (width * channels)} of "
                          f"{frames} frames)")
    if width == 1:
        data = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128
    elif width == 2:
        data = np.frombuffer(raw, "<i2").astype(np.float32) / 32768
    elif width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        data = ((b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8 >> 8).astype(np.float32) / 2**23
    elif width == 4:
        data = np.frombuffer(raw, "<i4").astype(np.float32) / 2**31
    else:
        raise ValueError(width)
    usable = len(data) // channels * channels
    return data[:usable].reshape(-1, channels).mean(axis=1), rate


def _decode_pygame(path: Path) -> tuple[np.ndarray, int]:
    """OGG (and WAV flavours `wave` cannot read) through SDL_mixer."""
    import pygame  # imported late: start-up of check/render stays light without OGG

    if not pygame.mixer.get_init():
        from timekeeper.sound.sdl import init_mixer

        init_mixer(driver="dummy")
    rate, fmt, _channels = pygame.mixer.get_init()
    try:
        sound = pygame.mixer.Sound(str(path))
    except pygame.error as exc:
        raise ConfigError(f"not a WAV or OGG file this program can decode ({exc})") from None
    data = pygame.sndarray.array(sound).astype(np.float32)
    scale = float(2 ** (abs(fmt) - 1)) if fmt < 0 else None
    if scale is None:  # unsigned
        data = data - 2 ** (fmt - 1)
        scale = float(2 ** (fmt - 1))
    data /= scale
    if data.ndim == 2:
        data = data.mean(axis=1)
    return data, rate
