"""A 16-bit mono file at the output rate is kept as int16 (half the memory) and a plain WAV
of those is read without libsndfile: the samples, the mix and the render stay the very ones
the float32 decode gave."""

from __future__ import annotations

import struct
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile

from timekeeper.rules.engine import Cue
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound import decoding
from timekeeper.sound.mixing import RATE, floats
from timekeeper.sound.pack import SoundPack, default_pack_dir, load_pack
from timekeeper.sound.render import voices_for, write_mix

DEFAULT_FILES = sorted(default_pack_dir().glob("*.wav"))


def as_floats(pack: SoundPack) -> SoundPack:
    """The pack as it was held before: every cue's samples float32."""
    sounds = {name: replace(s, data=s.samples) for name, s in pack.sounds.items()}
    return replace(pack, sounds=sounds, _cache={})


@pytest.mark.parametrize("path", DEFAULT_FILES, ids=lambda p: p.stem)
def test_a_16_bit_file_is_kept_as_int16_standing_for_what_libsndfile_decodes(path) -> None:
    data, source = decoding.decode_source(path, 30.0)
    assert data.dtype == np.int16
    assert source.format == "WAV PCM_16"
    by_libsndfile, rate = soundfile.read(path, dtype="float32")
    assert rate == RATE
    assert np.array_equal(floats(data), by_libsndfile)  # to the bit
    assert floats(data).dtype == np.float32


def test_the_default_packs_tune_takes_two_bytes_a_sample() -> None:
    tune = load_pack(default_pack_dir(), {"last30"}, 30.0).sounds["last30"]
    assert tune.data.nbytes == 2 * 30 * RATE
    assert tune.samples.dtype == np.float32 and len(tune.samples) == 30 * RATE


def test_the_mix_of_int16_samples_is_the_mix_of_their_floats(tmp_path: Path) -> None:
    """Overlapping cues, a mark sounded three times, a melody stopped mid-way and a clipped
    sum: the same bytes whether the pack holds int16 or float32."""
    pack = load_pack(default_pack_dir(), None, 30.0)
    assert pack.sounds["start"].data.dtype == np.int16
    loud = replace(pack.sounds["end"], data=pack.sounds["end"].data * np.int16(4) // 3)
    pack.sounds["end"] = loud  # (a louder end: the sum with the tune clips)
    cues = [
        Cue("last30", 0.0, length=30),
        Cue("start", 0.3),
        Cue("minute", 0.5, count=3),
        Cue("end", 1.0),
        Cue("last30", 2.0, stop=True),
        Cue("pause", 2.2),
    ]
    wavs = []
    for held in (pack, as_floats(pack)):
        wav = tmp_path / f"{len(wavs)}.wav"
        write_mix(wav, voices_for(cues, held), 3 * RATE)
        wavs.append(wav.read_bytes())
    assert wavs[0] == wavs[1]
    blocks = []
    for held in (pack, as_floats(pack)):
        voices = voices_for(cues, held)
        out = np.zeros(3 * RATE, np.float32)
        for lo in range(0, len(out), 1000):
            voices.fill(out[lo : lo + 1000])
        blocks.append(out)
    assert np.array_equal(blocks[0], blocks[1])
    assert blocks[0].max() == 1.0  # (the clip was reached)


def test_a_gain_gives_the_float_samples_it_gave_before() -> None:
    pack = load_pack(default_pack_dir(), {"start", "last30"}, 30.0)
    for gain in (0.5, 0.3):
        quiet = pack.scaled(gain)
        for name in ("start", "last30"):
            before = soundfile.read(pack.sounds[name].file, dtype="float32")[0]
            assert quiet.sounds[name].data.dtype == np.float32
            assert np.array_equal(quiet.sounds[name].data, before * np.float32(gain))


def test_a_pack_of_plain_wavs_never_loads_libsndfile(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "soundfile", None)  # any import of it fails
    pack = load_pack(default_pack_dir(), None, 30.0)
    assert len(pack.sounds) == 16


def wav(fmt_tag: int = 1, channels: int = 1, rate: int = RATE, riff: int | None = None) -> bytes:
    data = (np.arange(9600) * 7 % 20000 - 10000).astype("<i2").tobytes()
    align = 2 * channels
    fmt = struct.pack("<HHIIHH", fmt_tag, channels, rate, rate * align, align, 16)
    if fmt_tag == 0xFFFE:  # extensible, PCM inside
        fmt += struct.pack("<HHI", 22, 16, 4) + bytes.fromhex("0100000000001000800000aa00389b71")
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body) if riff is None else riff) + body


@pytest.mark.parametrize(
    ("make", "by_wave"),
    [
        (lambda: wav(), True),
        (lambda: wav() + b"LIST\x04\x00\x00\x00INFO", True),
        (lambda: wav(fmt_tag=0xFFFE), False),
        (lambda: wav(channels=2), False),
        (lambda: wav(rate=44100), False),
        (lambda: wav(riff=100), False),  # the RIFF size leaves the data out: libsndfile's
        (lambda: wav()[:-3001], False),  # cut short
        (lambda: wav()[:40] + b"\0\0\0\0" + wav()[44:], False),  # data size unset
    ],
)
def test_a_file_wave_does_not_take_whole_is_libsndfiles_and_decodes_as_before(
    tmp_path, monkeypatch, make, by_wave
) -> None:
    path = tmp_path / "x.wav"
    path.write_bytes(make())
    with path.open("rb") as handle:
        assert (decoding._PlainWav.open(handle) is not None) == by_wave

    def outcome() -> object:
        try:
            data, source = decoding.decode_source(path, 30.0)
        except ConfigError as exc:
            return str(exc)
        return data.dtype, data.tobytes(), source

    now = outcome()
    monkeypatch.setattr(decoding._PlainWav, "open", classmethod(lambda cls, handle: None))
    assert outcome() == now  # libsndfile alone gives the same samples, source or refusal
