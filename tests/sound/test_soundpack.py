"""Sound packs are decoded and checked at start-up: a bad pack is refused with its file and
field, a missing cue falls back to the default pack (warned once), and the default pack has
everything, including a real 30-second tune."""

from __future__ import annotations

import logging
import struct
import wave
from pathlib import Path

import numpy as np
import pytest

from timekeeper.rules import profile
from timekeeper.rules.engine import Cue
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.decoding import decode
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import CUE_NAMES, OPTIONAL_CUES, default_pack_dir, find_pack, load_pack


def write_wav(path: Path, samples: np.ndarray, rate: int = RATE, channels: int = 1) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((samples * 32767).astype("<i2").tobytes())
    return path


def write_float_wav(path: Path, samples: np.ndarray, rate: int = RATE) -> Path:
    """IEEE-float WAV (format 3): the stdlib cannot read it, SDL can."""
    data = samples.astype("<f4").tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, rate, rate * 4, 4, 32)
    path.write_bytes(
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data))
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )
    return path


def make_pack(folder: Path, cues: dict[str, str], yaml_extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = "\n".join(f"  {k}: {v}" for k, v in cues.items())
    (folder / "pack.yaml").write_text(f"name: test\n{yaml_extra}cues:\n{lines}\n", encoding="utf-8")
    return folder


def beep(seconds: float = 0.1, freq: float = 1000) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_default_pack_has_every_cue_and_a_real_30_second_tune() -> None:
    pack = load_pack(default_pack_dir())
    assert set(pack.sounds) == set(CUE_NAMES) - set(OPTIONAL_CUES)  # no goal sound
    tune = pack.sounds["last30"].samples
    assert len(tune) == 30 * RATE
    # a tune, not a tone: its loudness and pitch content change through the 30 seconds
    seconds = tune.reshape(30, RATE)
    assert (np.abs(seconds).max(axis=1) > 0.05).all()
    assert len({int(np.argmax(np.abs(np.fft.rfft(s)))) for s in seconds}) > 5


def test_the_default_packs_folder_holds_the_pack_and_nothing_else() -> None:
    """No journal, log or render lands in the built-in pack (one merge once put a match
    journal there): it is installed as it is."""
    folder = default_pack_dir()
    pack = load_pack(folder)
    named = {"pack.yaml"} | {sound.file.name for sound in pack.sounds.values()}
    assert {p.name for p in folder.iterdir()} == named


def test_default_pack_sounds_start_at_once_for_sample_accurate_onsets() -> None:
    for name, sound in load_pack(default_pack_dir()).sounds.items():
        peak = np.abs(sound.samples).max()
        assert np.abs(sound.samples[:48]).max() > 0.1 * peak, name


def test_user_pack_lacking_cues_falls_back_to_the_default_in_one_line(tmp_path, caplog) -> None:
    (tmp_path / "pack").mkdir()
    write_wav(tmp_path / "pack" / "s.wav", beep())
    folder = make_pack(tmp_path / "pack", {"start": "s.wav"})
    with caplog.at_level(logging.WARNING):
        pack = load_pack(folder, {"start", "end", "minute"})
    assert pack.sounds["start"].file == (folder / "s.wav").resolve()
    assert pack.sounds["end"].file.parent == default_pack_dir().resolve()
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["sound pack test has no minute, end; using the default pack's (2 cues)"]
    assert pack.borrowed == ("minute", "end") and pack.own == ["start"]


def test_missing_audio_file_is_an_error_naming_file_and_line(tmp_path) -> None:
    folder = make_pack(tmp_path / "pack", {"start": "nope.wav"})
    with pytest.raises(ConfigError) as caught:
        load_pack(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / 'pack.yaml'}:3:10: cues.start: ")
    assert "nope.wav: missing audio file" in message


def test_corrupt_audio_file_is_an_error_at_start_up(tmp_path) -> None:
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "bad.wav").write_bytes(b"RIFF\x00\x00garbage" * 10)
    folder = make_pack(tmp_path / "pack", {"end": "bad.wav"})
    with pytest.raises(ConfigError, match=r"cues\.end: .*bad\.wav: not a WAV, FLAC, OGG or MP3"):
        load_pack(folder)


def test_empty_audio_file_is_an_error(tmp_path) -> None:
    (tmp_path / "pack").mkdir()
    write_wav(tmp_path / "pack" / "empty.wav", np.zeros(0, np.float32))
    with pytest.raises(ConfigError, match="holds no sound"):
        load_pack(make_pack(tmp_path / "pack", {"end": "empty.wav"}))


def test_unknown_cue_name_suggests_the_right_one(tmp_path) -> None:
    folder = make_pack(tmp_path / "pack", {"minutes": "m.wav"})
    with pytest.raises(ConfigError, match=r"cues\.minutes: unknown key; did you mean 'minute'"):
        load_pack(folder)


def test_repeat_every_must_be_positive(tmp_path) -> None:
    (tmp_path / "pack").mkdir()
    write_wav(tmp_path / "pack" / "m.wav", beep())
    folder = make_pack(tmp_path / "pack", {"minute": "{file: m.wav, repeat_every: 0}"})
    with pytest.raises(ConfigError, match=r"cues\.minute\.repeat_every: must be seconds > 0"):
        load_pack(folder)


def test_no_pack_yaml(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"no pack\.yaml"):
        load_pack(tmp_path)
    with pytest.raises(ConfigError, match="neither a folder nor a pack name"):
        find_pack(str(tmp_path / "missing/"))


def test_any_rate_and_channel_count_becomes_mono_at_the_output_rate(tmp_path) -> None:
    stereo = np.repeat(beep(0.5)[::2, None], 2, axis=1).reshape(-1)
    samples = decode(write_wav(tmp_path / "s.wav", stereo, rate=RATE // 2, channels=2))
    assert samples.dtype == np.float32 and abs(len(samples) - RATE // 2) <= 2


def test_float_wavs_are_decoded(tmp_path) -> None:
    samples = decode(write_float_wav(tmp_path / "f.wav", beep(0.2)))
    assert abs(len(samples) - int(0.2 * RATE)) <= 2
    assert 0.45 < np.abs(samples).max() <= 0.51


def test_ogg_files_are_decoded(tmp_path) -> None:
    soundfile = pytest.importorskip("soundfile")
    path = tmp_path / "s.ogg"
    soundfile.write(str(path), beep(0.5), RATE, format="OGG", subtype="VORBIS")
    samples = decode(path)
    assert abs(len(samples) - RATE // 2) < RATE // 50 and np.abs(samples).max() > 0.3


def test_marks_repeat_at_the_packs_spacing_and_the_melody_loops_to_length(tmp_path) -> None:
    (tmp_path / "pack").mkdir()
    write_wav(tmp_path / "pack" / "m.wav", beep(0.1))
    write_wav(tmp_path / "pack" / "t.wav", beep(7.0, 440))
    folder = make_pack(
        tmp_path / "pack", {"minute": "{file: m.wav, repeat_every: 0.25}", "last30": "t.wav"}
    )
    pack = load_pack(folder, {"minute", "last30"})
    four = pack.samples(Cue("minute", 0, count=4))
    assert len(four) == round(0.75 * RATE) + round(0.1 * RATE)
    window = pack.samples(Cue("last30", 0, offset=0, length=30))
    assert len(window) == 30 * RATE  # a 7-s tune looped and cut to the 30-s window
    assert np.array_equal(window[7 * RATE : 7 * RATE + 100], window[:100])
    later = pack.samples(Cue("last30", 0, offset=12.5, length=30))
    assert np.array_equal(later, window[round(12.5 * RATE) :])


def test_every_built_in_profile_finds_all_its_cues_in_the_default_pack() -> None:
    for name in profile.available():
        load_pack(default_pack_dir(), profile.load(name).cue_names)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: write_wav(p, beep(0.0001)), "no sound to speak of"),
        (lambda p: write_wav(p, np.zeros(RATE, np.float32)), "silent"),
        (lambda p: p.write_bytes(write_wav(p, beep(0.5)).read_bytes()[:-4000]), "cut short"),
    ],
)
def test_files_that_would_sound_wrong_are_refused(tmp_path, make, message) -> None:
    (tmp_path / "pack").mkdir()
    make(tmp_path / "pack" / "x.wav")
    with pytest.raises(ConfigError, match=message):
        load_pack(make_pack(tmp_path / "pack", {"end": "x.wav"}))


def test_a_pack_is_found_by_name_in_the_user_folder_before_a_folder_here(
    tmp_path, monkeypatch
) -> None:
    user = tmp_path / "user"
    (user / "club").mkdir(parents=True)
    (user / "club" / "pack.yaml").write_text("cues: {}\n")
    (tmp_path / "club").mkdir()
    monkeypatch.setenv("TIMEKEEPER_SOUNDS_PATH", str(user))
    monkeypatch.chdir(tmp_path)
    assert find_pack("club") == user / "club"
    assert find_pack("./club").resolve() == (tmp_path / "club").resolve()
