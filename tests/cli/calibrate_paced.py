"""(run inside the paced-ALSA stack by tests/cli/test_calibrate.py, through
bench/stacks/run.sh) `timekeeper calibrate` hearing the box through the stand-in microphone
(bench/standin_mic.py) while the bench's own instrument (bench/stacklab.py's JackRecorder:
JACK's cycles plus its playback latency) records the same clicks: prints one line of JSON,
the config written and each click's error by both."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # (this checkout, whatever the venv has)

import stacklab  # noqa: E402

from timekeeper.sound.calibration import click, find_click  # noqa: E402
from timekeeper.sound.mixing import RATE  # noqa: E402


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="tk-cal-"))
    config = folder / "config.yaml"
    config.write_text("# the paced box\naudio:\n  sink: alsa  # ALSA's jack PCM\n")
    mic = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "standin_mic.py")], stdout=subprocess.PIPE, text=True
    )
    assert mic.stdout is not None
    mic.stdout.readline()  # "standin: ready …"
    recorder = stacklab.JackRecorder("feeds:system:playback_1")
    try:
        calibrate = ["calibrate", "--config", str(config), "--input", "standin"]
        done = subprocess.run(
            [sys.executable, "-m", "timekeeper", "-v", *calibrate],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
    finally:
        audio = recorder.stop()
        mic.terminate()
        mic.wait(10)
    dues = [float(t) for t in re.findall(r"click due at ([\d.]+) s", done.stderr)]
    bench = []
    for due in dues:
        origin = recorder.origin_near(round((due - recorder.origin) * RATE))
        onset = find_click(audio, round((due - origin) * RATE), click())
        bench.append(None if onset is None else origin + onset / RATE - due)
    print(
        json.dumps(
            {
                "code": done.returncode,
                "stdout": done.stdout,
                "stderr": done.stderr,
                "config": config.read_text(),
                "calibrate": [
                    None if e == "None" else float(e)
                    for e in re.findall(r"click due at [\d.]+ s \(monotonic\): (\S+)", done.stderr)
                ],
                "bench": bench,
            }
        )
    )


if __name__ == "__main__":
    main()
