"""`audio.latency` in the box's config: read on every output, refused at its line when bad,
and written by `timekeeper calibrate` with every other line and comment of the file kept."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from timekeeper.box import config
from timekeeper.rules.yamldoc import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize("output", ["pulse", "alsa", "sdl", "auto"])
def test_the_speakers_latency_is_taken_on_every_output(tmp_path: Path, output: str) -> None:
    for value, seconds in (("12.5", 0.0125), ('"12.5 ms"', 0.0125), ("-3", -0.003), ("0", 0.0)):
        file = write(tmp_path, f"audio:\n  sink: {output}\n  latency: {value}\n")
        assert config.load(file).audio_offset == pytest.approx(seconds)
    assert config.Config(None).audio_offset == 0.0


@pytest.mark.parametrize(
    "value", ["900", "-501", "twelve", '"12.5 s"', "true", ".nan", "[1]", "1e3"]
)
def test_a_bad_latency_is_refused_naming_file_line_and_field(tmp_path: Path, value: str) -> None:
    file = write(tmp_path, f"# my box\naudio:\n  sink: alsa\n  latency: {value}\n")
    with pytest.raises(ConfigError) as refused:
        config.load(file)
    assert str(refused.value).startswith(f"{file}:4:12: audio.latency: must be -500 to 500 ms")


BLOCK = """\
# the box at table 3
profile: ithf   # the league's
audio:
  # the USB card
  sink: alsa
  latency: 4.0  # measured by hand
  volume: 0.8
web: {listen: 8080}
"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (  # the value replaced on its line, with the note as its comment
            BLOCK,
            BLOCK.replace("latency: 4.0  # measured by hand", "latency: 13.5  # calibrated"),
        ),
        (  # added beside the section's first key, at its indent
            "# box\naudio:\n    sink: alsa  # USB\n",
            "# box\naudio:\n    latency: 13.5  # calibrated\n    sink: alsa  # USB\n",
        ),
        (  # inside a one-line flow mapping
            "audio: {sink: alsa, volume: 0.5}  # kept\n",
            "audio: {latency: 13.5, sink: alsa, volume: 0.5}  # kept\n",
        ),
        (  # a flow mapping's value replaced
            "audio: {latency: 4, sink: alsa}\n",
            "audio: {latency: 13.5, sink: alsa}\n",
        ),
        (  # an empty section
            "audio:   # to do\nprofile: ithf\n",
            "audio:   # to do\n  latency: 13.5  # calibrated\nprofile: ithf\n",
        ),
        (  # no section: appended
            "profile: ithf  # no newline at the end",
            "profile: ithf  # no newline at the end\naudio:\n  latency: 13.5  # calibrated\n",
        ),
    ],
)
def test_calibrate_writes_the_latency_keeping_every_other_line(
    tmp_path: Path, before: str, after: str
) -> None:
    file = tmp_path / "config.yaml"
    file.write_text(before)
    file.chmod(0o640)
    config.write_speaker_latency(file, 0.0135, "calibrated")
    assert file.read_text() == after
    assert config.load(file).audio_offset == pytest.approx(0.0135)
    assert file.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]  # (no temporary file left)


def test_calibrate_makes_a_missing_config(tmp_path: Path) -> None:
    file = tmp_path / "config.yaml"
    config.write_speaker_latency(file, -0.002, "calibrated")
    assert file.read_text() == "audio:\n  latency: -2.0  # calibrated\n"


def test_a_measured_latency_out_of_range_is_not_written(tmp_path: Path) -> None:
    file = write(tmp_path, "audio: {sink: alsa}\n")
    with pytest.raises(ConfigError, match=r"audio\.latency: must be -500 to 500 ms"):
        config.write_speaker_latency(file, 0.9, "calibrated")
    assert file.read_text() == "audio: {sink: alsa}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]
