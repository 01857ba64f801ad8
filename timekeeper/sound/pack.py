"""Sound packs: a folder with pack.yaml mapping cue names to audio files (WAV, FLAC, OGG, MP3).

Everything is decoded at start-up (`decoding.py`) into mono samples at the output rate
(int16 as a 16-bit mono file at that rate holds them, else float32: sound/mixing.py), so
that a missing, corrupt or unusable file is refused before a match, and nothing is decoded
mid-match.

Every file is bounded before it is decoded: a signal or a mark lasts at most
MAX_SIGNAL_SECONDS, the melody is decoded only as far as its longest window, the rate lies in
RATE_RANGE, and a file must be a regular file inside the pack's folder."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from timekeeper.rules.data import builtin_dir, user_dirs
from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import MAX_BEEPS, did_you_mean
from timekeeper.rules.profiletypes import FEEDBACK_CUES, Profile
from timekeeper.rules.yamldoc import ConfigError, Doc
from timekeeper.sound.decoding import FORMATS, MAX_SIGNAL_SECONDS, Source, decode_source
from timekeeper.sound.loudness import dbfs, lufs, peak
from timekeeper.sound.mixing import RATE, floats

log = logging.getLogger(__name__)


CUE_NAMES = (
    "prestart",
    "start",
    "minute",
    "third",
    "last30",
    "period_end",
    "end",
    "break_warning",
    "shot_start",
    "shot_end",
    "timeout_end",
    "penalty_end",
    "forfeit",
    "pause",
    "resume",
    "time_added",
    "goal",
)
# played only if the pack has them (the default pack has none): the score is no rule signal
OPTIONAL_CUES = ("goal",)
MARK_CUES = frozenset({"minute", "third"})
DEFAULT_REPEAT_EVERY = 0.5

# Bounds, checked before anything is decoded (what a cue may cost in memory and time; the
# file's own, MAX_SIGNAL_SECONDS, RATE_RANGE and MAX_CHANNELS, are decoding.py's)
MAX_REPEAT_EVERY = 5.0  # beeps further apart are no longer heard as one mark
MAX_MELODY_SECONDS = 300.0  # the longest melody window (and what is decoded without a profile)
# Loudness levelling (`normalize: true`)
TARGET_LUFS = -12.0  # match cues
FEEDBACK_BELOW = 10.0  # feedback cues this many dB under the match cues (as in the default pack)
CEILING_DBFS = -1.0  # never louder than this peak: levelling never clips


@dataclass(frozen=True)
class CueSound:
    name: str
    file: Path
    data: np.ndarray  # mono, RATE: float32, or int16 standing for value/32768 (mixing.py)
    repeat_every: float  # onset spacing when a mark sounds N times
    source: Source | None = None

    @property
    def samples(self) -> np.ndarray:
        """The float32 samples (a copy where `data` is int16: for a look, not to keep)."""
        return floats(self.data)


@dataclass
class SoundPack:
    name: str
    folder: Path
    sounds: dict[str, CueSound]
    borrowed: tuple[str, ...] = ()  # cues taken from the default pack
    normalized: bool = False
    _cache: dict[tuple, np.ndarray] = field(default_factory=dict, repr=False)

    def plays(self, cue: Cue) -> bool:
        """False for an optional cue (a goal) this pack has no sound for: nothing to play."""
        return cue.name in self.sounds

    @property
    def own(self) -> list[str]:
        """The cues the pack brings itself, in CUE_NAMES order."""
        return [n for n in self.sounds if n not in self.borrowed]

    def samples(self, cue: Cue) -> np.ndarray:
        """The samples a (non-stop) cue plays: marks repeated `count` times, the melody as
        its whole window from `offset` (the caller cuts it where the melody stops). Stored
        as the pack holds them (int16 or float32): the mix reads either."""
        if cue.name == "last30":
            window = self.melody(cue.length)
            return window[min(len(window), round(cue.offset * RATE)) :]
        return self.repeated(cue.name, cue.count)

    def prepare(self, profile: Profile) -> None:
        """Build every sample array `profile`'s match can need now, never mid-match (the
        stream outputs share it)."""
        for name in profile.cue_names - {"last30"}:
            self.repeated(name, 1)
        for period in profile.periods:
            for mark in period.marks:
                self.repeated(mark.cue, mark.count)
            if period.melody:
                self.melody(period.melody)

    def repeated(self, name: str, count: int) -> np.ndarray:
        key = (name, count)
        if key not in self._cache:
            sound = self.sounds[name]
            if count <= 1:
                self._cache[key] = sound.data
            else:
                step, one = round(sound.repeat_every * RATE), sound.samples
                out = np.zeros(step * (count - 1) + len(one), np.float32)
                for i in range(count):
                    out[i * step : i * step + len(one)] += one
                self._cache[key] = np.clip(out, -1, 1)
        return self._cache[key]

    def scaled(self, gain: float) -> SoundPack:
        """The pack at `gain` (audio.volume): every sample scaled once, at load, so that
        nothing is computed mid-match and the render tests' packs stay as recorded (float32
        samples, then: a gain leaves 16-bit values)."""
        if gain == 1.0:
            return self
        sounds = {
            name: replace(sound, data=(sound.samples * np.float32(gain)))
            for name, sound in self.sounds.items()
        }
        return replace(self, sounds=sounds, _cache={})

    def melody(self, length: float) -> np.ndarray:
        """The tune looped (if shorter) and cut to exactly `length` seconds."""
        key = ("last30-window", length)
        if key not in self._cache:
            tune = self.sounds["last30"].data
            n = round(length * RATE)
            if n == len(tune):  # the usual case: the tune itself, not a second 6-MB copy
                self._cache[key] = tune
            elif n < len(tune):  # a view, no copy
                self._cache[key] = tune[:n]
            else:
                self._cache[key] = np.resize(tune, n) if n else tune[:0]
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
    names = pack_names()
    raise ConfigError(
        f"no sound pack {name_or_path!r}: neither a folder nor a pack name; "
        f"{did_you_mean(name_or_path, names)}packs: {', '.join(names)} "
        f"(in {searched})"
    )


def pack_names() -> list[str]:
    """The packs `--sounds NAME` finds: the user folders', then the built-in ones."""
    names: set[str] = set()
    for folder in [*user_dirs("sounds"), builtin_dir("sounds")]:
        if folder.is_dir():
            names |= {pack.parent.name for pack in folder.glob("*/pack.yaml")}
    return sorted(names)


def melody_window(profile: Profile) -> float:
    """The longest stretch of melody the profile plays: all of the tune it can ever use."""
    return max((p.melody for p in profile.periods), default=0.0)


def load_pack(
    folder: Path, needed: set[str] | None = None, melody: float | None = None
) -> SoundPack:
    """Load and decode a pack; cues it lacks come from the default pack (one warning listing
    them). `melody` is the longest melody window in use (see `melody_window`): the tune is
    decoded that far and no further (MAX_MELODY_SECONDS when not given)."""
    limit = MAX_MELODY_SECONDS if melody is None else melody
    if not limit <= MAX_MELODY_SECONDS:  # `run` would hold the whole window as samples
        raise ConfigError(
            f"a melody of {limit:g} s is more than a pack plays (at most "
            f"{MAX_MELODY_SECONDS:g} s, {MAX_MELODY_SECONDS * RATE * 4 / 2**20:.0f}"
            " MB of samples); shorten the profile's melody",
            field="melody",
        )
    if not limit:  # no melody in this profile: the tune's file is checked, 1 s of it decoded
        limit = 1.0
    pack = _load_one(folder, limit)
    default = default_pack_dir()
    wanted = set(CUE_NAMES) - set(OPTIONAL_CUES) if needed is None else needed
    missing = sorted(wanted - set(pack.sounds))
    if missing and folder.resolve() != default.resolve():
        fallback = _load_one(default, limit, only=set(missing))
        borrowed = [name for name in CUE_NAMES if name in missing and name in fallback.sounds]
        if borrowed:
            log.warning(
                "sound pack %s has no %s; using the default pack's (%d cue%s)",
                pack.name,
                ", ".join(borrowed),
                len(borrowed),
                "" if len(borrowed) == 1 else "s",
            )
            pack.sounds.update((name, fallback.sounds[name]) for name in borrowed)
            pack.borrowed = tuple(borrowed)
    missing = sorted((needed or set()) - set(pack.sounds))
    if missing:
        raise ConfigError(f"no sound for cue(s) {', '.join(missing)}", folder / "pack.yaml", "cues")
    if pack.normalized:
        _normalize(pack)
    return pack


def _normalize(pack: SoundPack) -> None:
    """Level every cue to TARGET_LUFS (feedback cues FEEDBACK_BELOW under it), each limited
    so that its peak stays at CEILING_DBFS: a cue that cannot get loud enough without
    clipping stays as loud as it can. Gains apply in place to float32 samples (one float32
    copy of a cue stored as int16: a gain leaves 16-bit values)."""
    for name, sound in pack.sounds.items():
        target = TARGET_LUFS - (FEEDBACK_BELOW if name in FEEDBACK_CUES else 0.0)
        samples = sound.samples
        gain_db = min(target - lufs(samples), CEILING_DBFS - dbfs(peak(samples)))
        np.multiply(samples, np.float32(10 ** (gain_db / 20)), out=samples)
        source = sound.source and replace(sound.source, gain_db=gain_db)
        pack.sounds[name] = replace(sound, data=samples, source=source)
    pack._cache.clear()


def _load_one(folder: Path, melody: float, only: set[str] | None = None) -> SoundPack:
    file = folder / "pack.yaml"
    if not file.is_file():
        raise ConfigError("not a sound pack: no pack.yaml here", folder)
    doc = Doc.load(file)
    if not isinstance(doc.data, dict):
        raise doc.error((), "a pack must be a mapping with a cues: section")
    doc.check_keys((), doc.data, ("name", "description", "normalize", "cues"))
    normalize = doc.data.get("normalize", False)
    if not isinstance(normalize, bool):
        raise doc.error(("normalize",), f"must be true or false, not {normalize!r}")
    cues = doc.data.get("cues")
    if not isinstance(cues, dict) or not cues:
        raise doc.error(("cues",), "must map cue names to audio files")
    doc.check_keys(("cues",), cues, CUE_NAMES)
    home = folder.resolve()
    specs: dict[str, tuple[tuple, str, float]] = {}
    for name, spec in cues.items():  # every field checked before anything is decoded
        if only is not None and name not in only:
            continue
        path: tuple[str, ...] = ("cues", name)
        repeat = DEFAULT_REPEAT_EVERY
        if isinstance(spec, dict):
            doc.check_keys(path, spec, ("file", "repeat_every"))
            repeat = spec.get("repeat_every", repeat)
            _check_repeat(doc, (*path, "repeat_every"), repeat)
            spec = spec.get("file")
            path = (*path, "file")
        if not isinstance(spec, str) or not spec:
            raise doc.error(path, f"must be a file name ({FORMATS}) relative to the pack")
        specs[name] = (path, spec, float(repeat))
    sounds: dict[str, CueSound] = {}
    for name, (path, spec, repeat) in specs.items():
        try:
            audio = inside(home, spec)
            samples, source = decode_source(
                audio, melody if name == "last30" else MAX_SIGNAL_SECONDS, cut=name == "last30"
            )
        except ConfigError as exc:
            raise doc.error(path, f"{folder / spec}: {exc.message}") from None
        sounds[name] = CueSound(name, audio, samples, repeat, source)
    name = str(doc.data.get("name", home.name))
    return SoundPack(name, folder, sounds, normalized=normalize)


def _check_repeat(doc: Doc, path: tuple, repeat: object) -> None:
    """`run` builds each mark's series (up to MAX_BEEPS beeps, `repeat_every` apart) as one
    array: bound the spacing so that this costs at most a few MB."""
    if isinstance(repeat, bool) or not isinstance(repeat, int | float) or not repeat > 0:
        raise doc.error(path, f"must be seconds > 0, not {repeat!r}")
    if not repeat <= MAX_REPEAT_EVERY:
        spacing = float(repeat) if repeat < 1e300 else math.inf  # a 400-digit int: no overflow
        series = (MAX_BEEPS - 1) * spacing + MAX_SIGNAL_SECONDS
        size = f"{series * RATE * 4 / 2**30:.3g} GiB" if math.isfinite(series) else "endless"
        raise doc.error(
            path,
            f"{spacing:g} s between beeps: at most {MAX_REPEAT_EVERY:g} s "
            f"(a {MAX_BEEPS}-beep mark would last {series:g} s and take "
            f"{size} of memory)",
        )


def inside(home: Path, spec: str) -> Path:
    """The file `spec` names, which must lie inside the pack's (resolved) folder `home`:
    a pack is a folder you can copy to another box, and it reads nothing else."""
    if "\0" in spec:
        raise ConfigError("holds a NUL character; name a file inside the pack's folder")
    if Path(spec).is_absolute():
        raise ConfigError(
            "is an absolute path; name a file inside the pack's folder (copy it there)"
        )
    try:
        audio = (home / spec).resolve(strict=True)
    except FileNotFoundError:
        raise ConfigError("missing audio file") from None
    except RuntimeError:  # Python < 3.13 reports a symlink loop so
        raise ConfigError("is a symlink loop, not an audio file") from None
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise ConfigError("is a symlink loop, not an audio file") from None
        raise ConfigError(f"cannot be opened: {exc.strerror or exc}") from None
    if not audio.is_relative_to(home):
        raise ConfigError(
            f"leads outside the pack's folder (to {audio}); copy the file into the pack"
        )
    return audio
