"""`timekeeper calibrate`: on a box without an input it says how to measure by other means
and fails; on the paced-ALSA stack (bench/stacks, JACK's dummy backend) with the stand-in
microphone it finds the latency JACK leaves out of ALSA's report as the bench's own instrument
measures it, click for click, and writes it into the config."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from timekeeper.cli import main

STACK = Path(os.environ.get("TK_STACKS", "/var/cache/timekeeper-bench")) / "alsa-paced-root"


def test_without_an_input_calibrate_says_how_to_measure_otherwise(tmp_path: Path, capsys) -> None:
    file = tmp_path / "config.yaml"
    file.write_text("# table 3\naudio: {sink: alsa}  # the jack\n")
    assert main(["calibrate", "--config", str(file), "--input", "hw:99"]) == 1
    said = capsys.readouterr().err
    assert "no input 'hw:99'" in said
    assert "name it with --input (`arecord -L` lists them)" in said
    assert f"set audio.latency (ms) in {file} by hand" in said
    assert "bench/timing.py" in said and "slow motion" in said
    assert file.read_text() == "# table 3\naudio: {sink: alsa}  # the jack\n"  # untouched


def test_calibrate_refuses_a_config_it_cannot_measure_for(tmp_path: Path, capsys) -> None:
    file = tmp_path / "config.yaml"
    file.write_text("audio:\n  sink: mixer\n")
    assert main(["calibrate", "--config", str(file), "--input", "hw:99"]) == 2
    assert "calibrate measures a stream" in capsys.readouterr().err
    file.write_text("audio:\n  latency: fast\n")
    assert main(["calibrate", "--config", str(file)]) == 2
    assert f"{file}:2:12: audio.latency: must be" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(
    os.geteuid() != 0 or not list(STACK.glob(".built-*")),
    reason="needs root and the paced-ALSA chroot (bench/stacks/build.sh alsa-paced)",
)
@pytest.mark.parametrize("period", [256, 1024])
def test_calibrate_finds_the_paced_stacks_latency_as_the_bench_does(period: int) -> None:
    script = ROOT / "tests" / "cli" / "calibrate_paced.py"
    done = subprocess.run(
        [str(ROOT / "bench" / "stacks" / "run.sh"), "alsa-paced", sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TK_JACK_PERIOD=str(period)),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, result["stderr"]
    ours = [e for e in result["calibrate"] if e is not None]
    bench = [e for e in result["bench"] if e is not None]
    assert len(ours) == len(bench) == 12
    # JACK's own playback latency (2 periods) and more: what ALSA's report leaves out
    assert statistics.median(ours) > 2 * period / 48000
    assert abs(statistics.median(ours) - statistics.median(bench)) <= 0.0005
    written = f"{statistics.median(ours) * 1000:.1f}"
    assert result["config"].startswith(
        f"# the paced box\naudio:\n  latency: {written}  # ms, measured by timekeeper calibrate"
    )
    assert result["config"].endswith("\n  sink: alsa  # ALSA's jack PCM\n")
