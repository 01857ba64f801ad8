"""Sound packs of hall quality: what `check --sounds` warns about (late, quiet, running
together, clipped), what a pack may not be (files too long, absurd rates, paths out of the
pack, FIFOs), MP3 and FLAC, the resampler, the memory a load costs, and levelling."""

from __future__ import annotations

import math
import os
import re
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile

from timekeeper import cli
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.decoding import MAX_SIGNAL_SECONDS, decode, decode_source
from timekeeper.sound.inspect import inspect, onset_ms
from timekeeper.sound.loudness import dbfs, lufs
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import FEEDBACK_BELOW, TARGET_LUFS, load_pack


def tone(
    seconds: float,
    rate: int = RATE,
    freq: float = 1000,
    level: float = 0.5,
    lead: float = 0.0,
    channels: int = 1,
) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    x = (level * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    x[: int(lead * rate)] = 0
    return np.repeat(x[:, None], channels, axis=1) if channels > 1 else x


def pack(folder: Path, cues: dict[str, str], extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = "\n".join(f"  {k}: {v}" for k, v in cues.items())
    (folder / "pack.yaml").write_text(f"name: club\n{extra}cues:\n{lines}\n", encoding="utf-8")
    return folder


def audio(path: Path, samples: np.ndarray, rate: int = RATE, **kw) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), samples, rate, **kw)
    return path.name


# ----------------------------------------------------------------------- 9.5: warnings


def test_check_sounds_warns_of_late_quiet_and_running_together_naming_cue_and_file(
    tmp_path, capsys
) -> None:
    folder = tmp_path / "club"
    audio(folder / "horn.wav", tone(1.0, lead=0.120))
    audio(folder / "end.wav", tone(1.0, level=0.02))
    audio(folder / "beep.wav", tone(0.6))
    audio(folder / "pause.wav", tone(0.2, lead=0.1))  # feedback: not a signal, never late
    pack(
        folder,
        {
            "start": "horn.wav",
            "end": "end.wav",
            "pause": "pause.wav",
            "minute": "{file: beep.wav, repeat_every: 0.4}",
        },
    )
    assert cli.main(["check", "--profile", "ithf", "--sounds", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "warn  start (horn.wav): begins with 120 ms of silence" in out
    assert "warn  end (end.wav): peaks at -34.0 dBFS: too quiet" in out
    assert (
        "warn  minute (beep.wav): lasts 0.60 s, longer than its repeat_every 0.4 s: "
        "the beeps run together"
    ) in out
    assert "pause (pause.wav)" not in out.split("warn", 1)[1]
    assert "3 warnings" in out


def test_borrowed_cues_are_one_line_and_ok_counts_only_the_packs_own(
    tmp_path, capsys, caplog
) -> None:
    folder = tmp_path / "club"
    audio(folder / "horn.wav", tone(1.0))
    pack(folder, {"start": "horn.wav", "end": "horn.wav"})
    assert cli.main(["check", "--profile", "ithf", "--sounds", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"ok  sound pack club ({folder}): 2 cues of its own, 6 from the default pack" in out
    borrowed = [r.getMessage() for r in caplog.records if "default pack" in r.getMessage()]
    assert borrowed == [
        "sound pack club has no prestart, minute, last30, pause, resume, "
        "time_added; using the default pack's (6 cues)"
    ]
    table = out.split("LUFS", 1)[1]
    assert "start" in table and "minute" not in table  # the table shows its own cues only


def test_check_without_a_pack_argument_reports_the_default_pack(capsys) -> None:
    assert cli.main(["check", "--profile", "ithf", "--sounds"]) == 0
    out = capsys.readouterr().out
    assert "ok  sound pack default" in out and "no warnings" in out
    header = next(line for line in out.splitlines() if line.startswith("cue "))
    assert header.split() == [
        "cue",
        "file",
        "format",
        "rate",
        "ch",
        "length",
        "peak",
        "dBFS",
        "LUFS",
        "onset",
    ]
    assert max(len(line) for line in out.splitlines() if not line.startswith("ok")) <= 100


# ------------------------------------------------------------ 10.8: packs that cannot run


def sparse_wav(path: Path, seconds: float, rate: int = RATE) -> None:
    """A real WAV file of `seconds` (sparse: it costs no disk)."""
    data = int(seconds * rate) * 2
    head = (
        b"RIFF"
        + struct.pack("<I", 36 + data)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", data)
    )
    with open(path, "wb") as f:
        f.write(head)
        f.write(tone(0.1, rate).astype("<f4").view("<i2")[:1000].tobytes())
        f.truncate(len(head) + data)


def refused(folder: Path, match: str) -> str:
    with pytest.raises(ConfigError, match=match) as caught:
        load_pack(folder, None, 30.0)
    return str(caught.value)


def test_an_hour_long_signal_is_refused_before_it_is_decoded(tmp_path) -> None:
    folder = tmp_path / "club"
    folder.mkdir()
    sparse_wav(folder / "hour.wav", 3600)
    pack(folder, {"end": "hour.wav"})
    tracemalloc.start()
    try:
        message = refused(folder, "is 3600.0 s long; a signal lasts at most 10 s")
        assert tracemalloc.get_traced_memory()[1] < 5_000_000
    finally:
        tracemalloc.stop()
    assert message.startswith(f"{folder / 'pack.yaml'}:3:8: cues.end: ")


def test_an_hour_long_melody_is_decoded_only_as_far_as_its_window(tmp_path) -> None:
    folder = tmp_path / "club"
    folder.mkdir()
    sparse_wav(folder / "hall.wav", 3600, rate=44100)
    pack(folder, {"last30": "hall.wav"})
    loaded = load_pack(folder, {"last30"}, 30.0)
    tune = loaded.sounds["last30"]
    assert len(tune.samples) == 30 * RATE
    assert tune.source.seconds == 3600 and tune.source.cut_at == pytest.approx(30.0)


def test_a_melody_window_longer_than_five_minutes_is_refused(tmp_path) -> None:
    folder = tmp_path / "club"
    audio(folder / "t.wav", tone(1.0))
    pack(folder, {"last30": "t.wav"})
    with pytest.raises(
        ConfigError,
        match=r"melody: a melody of 3600 s is more than a pack "
        r"plays \(at most 300 s, 55 MB",
    ):
        load_pack(folder, {"last30"}, 3600.0)


def test_repeat_every_that_would_take_gigabytes_is_refused_before_decoding(tmp_path) -> None:
    folder = pack(tmp_path / "club", {"minute": "{file: nope.wav, repeat_every: 100000}"})
    message = refused(folder, r"cues\.minute\.repeat_every: 100000 s between beeps: at most 5 s")
    assert ":3:" in message and "GiB of memory" in message
    folder = pack(tmp_path / "nan", {"minute": "{file: nope.wav, repeat_every: .nan}"})
    refused(folder, "must be seconds > 0")
    folder = pack(tmp_path / "big", {"minute": f"{{file: n.wav, repeat_every: {10**400}}}"})
    refused(folder, "a number of more than 40 characters")  # the YAML loader's own limit
    folder = pack(tmp_path / "huge", {"minute": "{file: n.wav, repeat_every: 1.0e+300}"})
    refused(folder, "between beeps: at most 5 s")


@pytest.mark.parametrize("rate", [1, 4000, 1_000_000])
def test_absurd_sample_rates_are_refused(tmp_path, rate) -> None:
    folder = tmp_path / "club"
    folder.mkdir()
    sparse_wav(folder / "odd.wav", 0.5)
    raw = bytearray((folder / "odd.wav").read_bytes())
    struct.pack_into("<II", raw, 24, rate, rate * 2)
    (folder / "odd.wav").write_bytes(raw)
    pack(folder, {"start": "odd.wav"})
    refused(folder, rf"cues\.start: .*odd\.wav: has a sample rate of {rate} Hz; .*8000–384000")


def test_paths_that_leave_the_pack_are_refused(tmp_path) -> None:
    audio(tmp_path / "outside.wav", tone(0.5))
    folder = tmp_path / "club"
    folder.mkdir()
    (folder / "link.wav").symlink_to(tmp_path / "outside.wav")
    (folder / "dev.wav").symlink_to("/dev/zero")
    audio(folder / "sub" / "in.wav", tone(0.5))
    (folder / "inner.wav").symlink_to(folder / "sub" / "in.wav")
    for spec, match in [
        ("../outside.wav", "leads outside the pack's folder"),
        (str(tmp_path / "outside.wav"), "is an absolute path"),
        ("/dev/zero", "is an absolute path"),
        ("link.wav", f"leads outside the pack's folder \\(to {tmp_path}"),
        ("dev.wav", "leads outside the pack's folder \\(to /dev/zero\\)"),
        ('"a\\0.wav"', "holds a NUL character"),
    ]:
        refused(pack(folder, {"start": spec}), rf"cues\.start: .*{match}")
    # inside the pack, a symlink or a sub-folder is fine
    loaded = load_pack(
        pack(folder, {"start": "inner.wav", "end": "sub/../sub/in.wav"}), {"start", "end"}
    )
    assert loaded.own == ["start", "end"]


def test_a_symlink_loop_is_refused_not_a_traceback(tmp_path) -> None:
    folder = tmp_path / "club"
    folder.mkdir()
    (folder / "a.wav").symlink_to(folder / "b.wav")
    (folder / "b.wav").symlink_to(folder / "a.wav")
    refused(pack(folder, {"start": "a.wav"}), r"cues\.start: .*a\.wav: is a symlink loop")


def test_a_fifo_is_refused_without_being_opened(tmp_path) -> None:
    folder = tmp_path / "club"
    folder.mkdir()
    os.mkfifo(folder / "pipe.wav")  # opening it for reading would hang: no writer
    refused(pack(folder, {"start": "pipe.wav"}), r"cues\.start: .*pipe\.wav: is a FIFO, not an")
    with pytest.raises(ConfigError, match="is a character device"):
        decode(Path("/dev/zero"))


def test_too_many_channels_are_refused(tmp_path) -> None:
    path = tmp_path / "many.wav"
    soundfile.write(str(path), np.zeros((RATE // 10, 16), np.float32) + 0.1, RATE)
    with pytest.raises(ConfigError, match="has 16 channels; at most 8"):
        decode(path)


# -------------------------------------------------------- 11.10–11.11: resampling, memory


def test_resampling_a_44k1_tone_adds_no_aliases_above_minus_80_db(tmp_path) -> None:
    """A 19-kHz tone at 44.1 kHz: linear interpolation mirrors it to 25.1 kHz and below
    (−40 dB and worse); the band-limited resampler keeps everything else under −80 dB."""
    path = tmp_path / "t.wav"
    soundfile.write(str(path), tone(2.0, 44100, 19000, 0.9), 44100, subtype="FLOAT")
    out = decode(path)[RATE // 2 : RATE // 2 + RATE]  # one second from the middle
    spectrum = np.abs(np.fft.rfft(out * np.hanning(len(out))))
    freqs = np.fft.rfftfreq(len(out), 1 / RATE)
    spurious = spectrum[np.abs(freqs - 19000) > 200].max()
    assert 20 * math.log10(spurious / spectrum.max()) < -80


def test_a_44k1_stereo_file_is_decoded_without_full_length_temporaries(tmp_path) -> None:
    path = tmp_path / "tune.wav"
    soundfile.write(str(path), tone(20.0, 44100, 440, channels=2), 44100, subtype="PCM_16")
    tracemalloc.start()
    try:
        samples, source = decode_source(path, 30.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert samples.dtype == np.float32 and len(samples) == 20 * RATE
    assert (source.rate, source.channels) == (44100, 2)
    assert peak < samples.nbytes + 2_000_000  # the result, plus a block's worth


# ------------------------------------------------------------------- 11.12: MP3 and FLAC


@pytest.mark.parametrize(("fmt", "ext"), [("MP3", "mp3"), ("FLAC", "flac")])
def test_mp3_and_flac_files_play_and_start_at_once(tmp_path, capsys, fmt, ext) -> None:
    folder = tmp_path / "club"
    audio(folder / f"horn.{ext}", tone(1.5, 44100, 440, 0.7, channels=2), 44100, format=fmt)
    pack(folder, {"start": f"horn.{ext}"})
    loaded = load_pack(folder, {"start"})
    start = loaded.sounds["start"]
    assert abs(len(start.samples) - 1.5 * RATE) < RATE // 50
    assert start.source.format.startswith(fmt) and start.source.rate == 44100
    assert onset_ms(start.samples) < 20  # gapless: the encoder's priming delay is removed
    assert cli.main(["check", "--profile", "ithf", "--sounds", str(folder)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("start "))
    assert row.split()[1:3] == [f"horn.{ext}", fmt] and re.search(r" 44100 +2 +1.50 s ", row)
    peak = float(re.search(r"(-?[\d.]+) +(-?[\d.]+) +\d+ ms$", row).group(1))
    assert -3.5 < peak < -1.5  # 0.7 is −3.1 dBFS; MP3's coding noise adds a little


def test_clipped_files_are_warned(tmp_path, capsys) -> None:
    folder = tmp_path / "club"
    audio(folder / "loud.flac", np.clip(tone(1.0, level=2.0), -1, 1), format="FLAC")
    pack(folder, {"end": "loud.flac"})
    [report] = inspect(load_pack(folder, {"end"}))
    assert report.warnings and "samples at full scale: clipped" in report.warnings[0]


# ------------------------------------------------------------------------ 11.13: loudness


def test_loudness_of_a_full_scale_1k_tone_is_minus_3_lufs() -> None:
    assert lufs(tone(5.0, freq=997, level=1.0)) == pytest.approx(-3.01, abs=0.02)
    assert lufs(tone(0.1, freq=997, level=0.1)) == pytest.approx(-23.01, abs=0.1)  # a beep
    assert lufs(np.zeros(RATE, np.float32)) == -math.inf


def test_normalize_levels_match_cues_and_keeps_feedback_softer_never_clipping(tmp_path) -> None:
    folder = tmp_path / "club"
    audio(folder / "soft.wav", tone(1.0, level=0.05))
    audio(folder / "loud.wav", tone(1.0, freq=300, level=0.9))
    audio(folder / "click.wav", tone(0.2, level=0.5))
    audio(folder / "spiky.wav", np.where(np.arange(RATE) % 4800 == 0, 0.9, 0.01).astype(np.float32))
    pack(
        folder,
        {"start": "soft.wav", "end": "loud.wav", "pause": "click.wav", "period_end": "spiky.wav"},
        extra="normalize: true\n",
    )
    loaded = load_pack(folder, {"start", "end", "pause", "period_end"})
    levels = {n: lufs(s.samples) for n, s in loaded.sounds.items()}
    assert levels["start"] == pytest.approx(TARGET_LUFS, abs=0.1)
    assert levels["end"] == pytest.approx(TARGET_LUFS, abs=0.1)
    assert levels["pause"] == pytest.approx(TARGET_LUFS - FEEDBACK_BELOW, abs=0.1)
    for sound in loaded.sounds.values():
        assert dbfs(float(np.abs(sound.samples).max())) <= -1.0 + 1e-3
    assert levels["period_end"] < TARGET_LUFS - 1  # held back by its peak, not clipped
    assert loaded.sounds["start"].source.gain_db == pytest.approx(
        TARGET_LUFS - lufs(tone(1.0, level=0.05)), abs=0.1
    )


def test_normalize_must_be_true_or_false(tmp_path) -> None:
    folder = pack(tmp_path / "club", {"start": "x.wav"}, extra="normalize: loud\n")
    refused(folder, r"pack\.yaml:2:\d+: normalize: must be true or false")


def test_a_signal_of_ten_seconds_loads_and_one_a_little_longer_is_refused(tmp_path) -> None:
    """The limit is what a pack meets, not a constant: 10 s of horn loads, 10.1 s does not."""
    assert MAX_SIGNAL_SECONDS == 10  # (the docs and the refusal say "10 s")
    folder = tmp_path / "club"
    audio(folder / "horn.wav", tone(10.0, rate=8000), rate=8000)  # (small: 8 kHz)
    pack(folder, {"start": "horn.wav"})
    assert load_pack(folder, None, 30.0).sounds["start"].samples.size == 10 * RATE
    audio(folder / "horn.wav", tone(10.1, rate=8000), rate=8000)
    assert "is 10.1 s long; a signal lasts at most 10 s (trim it)" in refused(folder, "start")


@pytest.mark.slow
def test_check_reads_packs_without_starting_pygame() -> None:
    """soundfile decodes every format: `check` no longer opens SDL's mixer to read an OGG."""
    import subprocess
    import sys

    code = (
        "import sys; from timekeeper import cli; rc = cli.main(['check', '--sounds']); "
        "print(rc, 'pygame' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "0 False", done.stderr
