"""Setting up a box's sound: `timekeeper audio devices`, `timekeeper audio test [CUE]` and
`audio.volume` (a gain on the pack's samples, applied once at load)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from timekeeper.box import config
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.pack import default_pack_dir, load_pack


def audio(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`timekeeper audio …` in a process of its own (SDL picks its driver once a process)."""
    return subprocess.run(
        [sys.executable, "-m", "timekeeper", "audio", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def cardless_env(tmp_path: Path) -> dict[str, str]:
    """SDL's ALSA driver with no card (an ALSA that knows of none where there is one)."""
    env = {"SDL_AUDIODRIVER": "alsa"}
    if Path("/dev/snd").exists():
        (tmp_path / "alsa.conf").write_text("")
        env["ALSA_CONFIG_PATH"] = str(tmp_path / "alsa.conf")
    return env


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text))
    return path


# ----------------------------------------------------------------------------- devices


@pytest.mark.slow
def test_devices_lists_what_audio_device_may_name(tmp_path: Path) -> None:
    config_file = write_config(tmp_path, "audio: {driver: dummy}\n")
    done = audio("devices", "--config", str(config_file))
    assert done.returncode == 0, done.stderr
    assert "driver dummy: 1 output device" in done.stdout
    assert "  System audio output device" in done.stdout.splitlines()


@pytest.mark.slow
def test_devices_says_when_there_are_none_and_what_to_do(tmp_path: Path) -> None:
    done = audio("devices", env=cardless_env(tmp_path))
    assert done.returncode == 1
    assert "driver alsa: no output devices" in done.stdout
    assert "aplay -l" in done.stdout and "--audio silent" in done.stdout
    assert "ALSA lib" not in done.stdout + done.stderr


# ----------------------------------------------------------------------------- test


@pytest.mark.slow
def test_test_plays_one_cue_through_the_configured_device_at_the_configured_volume(
    tmp_path: Path,
) -> None:
    """SDL's disk driver writes what the card would get: the `end` cue, at half level."""
    raw = tmp_path / "device.raw"
    config_file = write_config(tmp_path, "audio: {driver: disk, volume: 0.5}\n")
    done = audio(
        "test",
        "end",
        "--config",
        str(config_file),
        env={"SDL_DISKAUDIOFILE": str(raw), "SDL_DISKAUDIODELAY": "5"},
    )
    assert done.returncode == 0, done.stderr
    assert "playing end" in done.stdout and "driver disk" in done.stdout
    assert "volume -6.0 dB" in done.stdout
    device = np.frombuffer(raw.read_bytes(), "<f4")
    signal = load_pack(default_pack_dir(), {"end"}).sounds["end"].samples
    onset = int(np.argmax(device != 0))
    got = device[onset : onset + len(signal)]
    assert len(got) == len(signal)
    assert np.abs(got - np.clip(signal * 0.5, -1, 1)).max() < 1e-6


@pytest.mark.slow
def test_test_without_a_card_says_why_and_what_to_do(tmp_path: Path) -> None:
    done = audio("test", env=cardless_env(tmp_path))
    assert done.returncode == 1
    assert "cannot open an audio stream" in done.stdout and "aplay -l" in done.stdout
    assert "ALSA lib" not in done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "CUE: unknown cue 'nope'; cues: prestart, start"),
        (["--volume", "2"], "--volume: must be a level above 0 up to 1.0"),
    ],
)
def test_test_refuses_what_cannot_be_played(args: list[str], message: str) -> None:
    done = audio("test", *args, env={"SDL_AUDIODRIVER": "dummy"})
    assert done.returncode == 2 and message in done.stderr


# ----------------------------------------------------------------------------- volume


@pytest.mark.parametrize(
    ("value", "gain"),
    [
        ("0.5", 0.5),
        ("1", 1.0),
        ("1.0", 1.0),
        ("-6 dB", 10 ** (-6 / 20)),
        ("'-20dB'", 0.1),
        ("0 dB", 1.0),
    ],
)
def test_volume_is_a_level_or_decibels(tmp_path: Path, value: str, gain: float) -> None:
    cfg = config.load(write_config(tmp_path, f"audio:\n  volume: {value}\n"))
    assert cfg.audio_volume == pytest.approx(gain)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ("0", r":2:11: audio.volume: .*0 would be silence: for no sound use audio.sink: silent"),
        ("1.5", r":2:11: audio.volume: .*not 1.5; to play louder turn up the card's mixer"),
        ("+3 dB", r":2:11: audio.volume: .*to play louder turn up the card's mixer"),
        ("-70 dB", r":2:11: audio.volume: must be a level .* from -60 to 0"),
        ("loud", r":2:11: audio.volume: must be a level above 0 up to 1.0 .*not 'loud'"),
        ("true", r":2:11: audio.volume: must be a level"),
    ],
)
def test_bad_volumes_are_refused_with_file_line_and_field(
    tmp_path: Path, value: str, where: str
) -> None:
    with pytest.raises(ConfigError, match=where):
        config.load(write_config(tmp_path, f"audio:\n  volume: {value}\n"))


def test_the_gain_is_applied_to_every_sample_once_at_load() -> None:
    pack = load_pack(default_pack_dir())
    assert pack.scaled(1.0) is pack  # as recorded: nothing copied
    quiet = pack.scaled(0.25)
    for name, sound in pack.sounds.items():
        assert quiet.sounds[name].samples.dtype == np.float32
        assert np.allclose(quiet.sounds[name].samples, sound.samples * 0.25, atol=1e-7)
    assert np.allclose(
        quiet.repeated("minute", 3), np.clip(pack.repeated("minute", 3) * 0.25, -1, 1), atol=1e-6
    )
    assert np.abs(pack.sounds["start"].samples).max() > 0.3  # the original is untouched


def test_silent_is_a_sink_of_the_config(tmp_path: Path) -> None:
    assert config.load(write_config(tmp_path, "audio: {sink: silent}\n")).audio_sinks == ("silent",)
