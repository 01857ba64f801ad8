"""Rewrite bench (the next step for the box's CPU): can the sound be written far
ahead in long periods — few wake-ups — and a press still be heard within tens of ms, by
rewriting the stream's buffered future?

    python bench/rewrite.py          # 40/100/200-ms periods, a press 30 ms ahead (~1.5 min)

A private PulseAudio server with a null sink and a recorder (bench/audiolab.py). A
`PulseSink` is fed silence a period at a time, `target` s ahead; every 1.37 s a "press"
writes a 20-ms click at the absolute stream frame that is heard `ahead` s later
(`PulseSink.write_at`: a relative seek back, into what was written already), and writes the
frames behind it again so the stream's end is where it was. Each click is found in the
recording and compared with its due time; the writer's CPU (its thread's, without the
presses) is printed per configuration.

The box's writer does the same (sound/framed.py); this measures the sink alone, with no
box around it. Benchmarks are not tests: it measures and prints."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audiolab import RATE, SINK, PulseServer, Recorder, find_onset

PRESS_EVERY = 1.37  # s (not a multiple of any period)
t = np.arange(int(0.02 * RATE)) / RATE
CLICK = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)


def run(period: int, target: float, ahead: float, seconds: float) -> dict:
    from timekeeper.sound.pulse import PulseSink

    with PulseServer() as env:
        os.environ.update(env)
        recorder = Recorder(env, SINK, realtime=True)
        time.sleep(0.5)
        sink = PulseSink(period, target)
        silence = np.zeros(period, np.float32)
        written, figures, presses, periods = 0, [], [], 0
        origin = None
        every = max(1, round(0.25 * RATE / period))
        start, cpu_start, press_cpu = time.monotonic(), time.thread_time(), 0.0
        next_press = start + 2.0
        while time.monotonic() - start < seconds:
            sink.wait_room(period)
            sink.write(silence)
            written, periods = written + period, periods + 1
            if (periods % every == 0 or origin is None) and (
                report := sink.timing(time.monotonic)
            ) is not None:
                figures = [*figures[-8:], report[1] - report[0] / RATE]
                origin = sorted(figures)[len(figures) // 2]
            now = time.monotonic()
            if origin is not None and now >= next_press:
                before = time.thread_time()
                due = now + ahead
                frame = round((due - origin) * RATE)
                sink.write_at(CLICK, frame)  # into the buffered future
                end = frame + len(CLICK)
                if end < written:  # the rest behind it again
                    sink.write_at(np.zeros(written - end, np.float32), end)
                else:
                    written = end
                presses.append((due, (written - frame) / RATE))
                press_cpu += time.thread_time() - before
                next_press = now + PRESS_EVERY
        cpu = time.thread_time() - cpu_start - press_cpu
        wall = time.monotonic() - start
        time.sleep(0.5)
        sink.close()
        recording = recorder.stop()
    errors = []
    for due, _ in presses:
        origin_near = recorder.origin_near(round((due - recorder.origin) * RATE))
        onset = find_onset(recording, CLICK, round((due - origin_near) * RATE))
        errors.append(None if onset is None else (origin_near + onset / RATE - due) * 1000)
    found = [e for e in errors if e is not None]
    return {
        "period": period,
        "target": target,
        "ahead": ahead,
        "cpu": cpu / wall * 100,
        "per_period": cpu / periods * 1e6,
        "presses": len(presses),
        "lost": len(errors) - len(found),
        "buffered": (min(b for _, b in presses), max(b for _, b in presses)),
        "errors": (min(found), max(found)) if found else (float("nan"),) * 2,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="per configuration")
    ap.add_argument(
        "--ahead",
        type=float,
        default=0.030,
        help="s from a press to its click (default %(default)s)",
    )
    args = ap.parse_args()
    print(
        f"timekeeper rewrite bench — python {sys.version.split()[0]}, {os.cpu_count()} "
        f"cpus, a private PulseAudio null sink\n"
    )
    print(
        "| period | latency asked | writer CPU (% of a core) | µs a period | presses | "
        "buffered at the press | click onset − due (ms) | lost |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for period, target in ((1920, 0.08), (4800, 0.2), (9600, 0.4)):
        r = run(period, target, args.ahead, args.seconds)
        print(
            f"| {period / RATE * 1e3:.0f} ms | {target * 1e3:.0f} ms | {r['cpu']:.2f} | "
            f"{r['per_period']:.0f} | {r['presses']} | {r['buffered'][0] * 1e3:.0f}–"
            f"{r['buffered'][1] * 1e3:.0f} ms | {r['errors'][0]:+.2f} … "
            f"{r['errors'][1]:+.2f} | {r['lost']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
