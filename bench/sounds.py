"""Sound-pack figures: resampling quality and the memory `run` takes with a 44.1-kHz pack.

    python bench/sounds.py                       # full run
    python bench/sounds.py --quick               # a smoke run (CI)
    python bench/sounds.py --tree /work/main     # `run`'s memory with another checkout's code

1. Aliasing: a 44.1-kHz linear sweep 20 Hz → 20 kHz resampled to 48 kHz, by linear
   interpolation (`np.interp`, what packs used before) and by the pack loader (soxr). A
   Kaiser-windowed STFT follows the sweep; the figure is the loudest component away from the
   sweep's own frequency, in dB below the sweep (lower is better; −80 dB is the bar).
2. Memory: VmHWM (peak resident set) and VmRSS of `timekeeper run --start` (SDL's dummy
   driver) a few seconds after "ready", with the built-in 48-kHz pack, the same pack as
   44.1-kHz stereo WAVs (also levelled by `normalize: true`), and as 44.1-kHz stereo MP3s.

Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile
import soxr

os.environ["TIMEKEEPER_PROFILES_PATH"] = ""  # the built-in profiles only, whoever runs it
os.environ["TIMEKEEPER_SOUNDS_PATH"] = ""

from timekeeper.sound.decoding import decode
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import default_pack_dir

SOURCE_RATE = 44100


def sweep(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * SOURCE_RATE)) / SOURCE_RATE
    f0, f1 = 20.0, 20000.0
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))
    return (0.9 * np.sin(phase)).astype(np.float32)


def linear(x: np.ndarray) -> np.ndarray:
    """What decoding.decode did before: np.interp from the source rate to RATE."""
    n = round(len(x) * RATE / SOURCE_RATE)
    return np.interp(np.arange(n) * (SOURCE_RATE / RATE), np.arange(len(x)), x)


def worst_alias_db(y: np.ndarray, seconds: float, top: float = 20000.0) -> float:
    """The loudest component more than 300 Hz (plus the window's main lobe) away from where
    the sweep is, relative to the sweep, over frames whose sweep lies below `top` Hz."""
    n = 4096
    window = np.kaiser(n, 16.0)
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    rate = (20000.0 - 20.0) / seconds  # Hz per second
    worst = -200.0
    for lo in range(0, len(y) - n, n // 2):
        f_lo = 20.0 + rate * lo / RATE
        f_hi = 20.0 + rate * (lo + n) / RATE
        if f_hi > top or f_lo < 200:
            continue
        spectrum = np.abs(np.fft.rfft(y[lo : lo + n] * window))
        away = (freqs < f_lo - 300) | (freqs > f_hi + 300)
        worst = max(worst, 20 * np.log10(spectrum[away].max() / spectrum.max()))
    return worst


def high_loss_db(resample, freq: float) -> float:
    """Level of a `freq` tone after resampling, relative to the same tone made at 48 kHz."""
    t = np.arange(SOURCE_RATE) / SOURCE_RATE
    y = resample((0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32))
    mid = y[len(y) // 4 : 3 * len(y) // 4]
    return 20 * np.log10(np.sqrt(2 * np.mean(np.square(mid, dtype=np.float64))) / 0.5)


def make_packs(tmp: Path) -> dict[str, Path]:
    """The built-in pack, and the same sounds as 44.1-kHz stereo WAVs and MP3s."""
    packs = {"default pack, 48 kHz mono WAV": default_pack_dir()}
    yaml = (default_pack_dir() / "pack.yaml").read_text(encoding="utf-8")
    for kind, ext, fmt in (
        ("44.1 kHz stereo WAV", "wav", "WAV"),
        ("44.1 kHz stereo MP3", "mp3", "MP3"),
    ):
        folder = tmp / ext
        folder.mkdir()
        for wav in sorted(default_pack_dir().glob("*.wav")):
            x, rate = soundfile.read(str(wav), dtype="float32")
            y = soxr.resample(x, rate, SOURCE_RATE, quality="VHQ")
            stereo = np.repeat(y[:, None], 2, axis=1)
            soundfile.write(
                str(folder / f"{wav.stem}.{ext}"),
                stereo,
                SOURCE_RATE,
                format=fmt,
                **({"subtype": "PCM_16"} if fmt == "WAV" else {}),
            )
        (folder / "pack.yaml").write_text(yaml.replace(".wav", f".{ext}"), encoding="utf-8")
        packs[f"same pack, {kind}"] = folder
    levelled = tmp / "levelled"
    levelled.mkdir()
    for file in (tmp / "wav").iterdir():
        os.link(file, levelled / file.name)  # a symlink out of the pack would be refused
    (levelled / "pack.yaml").unlink()
    (levelled / "pack.yaml").write_text("normalize: true\n" + yaml, encoding="utf-8")
    packs["44.1 kHz WAVs with normalize: true"] = levelled
    return packs


def run_memory(pack: Path, tree: Path | None, settle: float) -> tuple[float, float, float]:
    """(VmHWM MB, VmRSS MB, seconds until ready) of `timekeeper run --start` with `pack`."""
    env = dict(os.environ, SDL_AUDIODRIVER="dummy")
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "run",
                "--audio",
                "sdl",
                "--profile",
                "ithf",
                "--sounds",
                str(pack),
                "--start",
                "--no-gpio",
                "--no-keyboard",
                "--fresh",
                "--control",
                str(Path(tmp) / "c.sock"),
                "--state-dir",
                tmp,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            cwd=tree or Path.cwd(),
        )
        assert proc.stderr is not None
        ready = float("nan")
        for line in proc.stderr:
            if "ready" in line:
                ready = time.perf_counter() - t0
                break
        time.sleep(settle)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        proc.terminate()
        rest = proc.communicate(timeout=10)[1]
    if "VmHWM" not in status:  # it exited (a zombie has no memory): say why
        raise OSError(f"run exited: {rest.strip().splitlines()[-1:]}")
    fields = {k: v for k, v in (line.split(":", 1) for line in status.splitlines())}
    mb = lambda key: int(fields[key].split()[0]) / 1024  # noqa: E731  (kB → MB)
    return mb("VmHWM"), mb("VmRSS"), ready


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a shorter sweep and wait (smoke run)")
    ap.add_argument(
        "--tree",
        type=Path,
        help="run `timekeeper run` from this checkout instead "
        "(e.g. main, for the figures before a change)",
    )
    args = ap.parse_args()
    seconds = 5.0 if args.quick else 20.0
    print(
        f"timekeeper sounds — python {sys.version.split()[0]}, soxr {soxr.__version__}, "
        f"soundfile {soundfile.__version__} (libsndfile {soundfile.__libsndfile_version__})\n"
    )

    x = sweep(seconds)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sweep.wav"
        soundfile.write(str(path), x, SOURCE_RATE, subtype="FLOAT")
        t0 = time.perf_counter()
        loaded = decode(path, max_seconds=seconds + 1)
        loader_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    old = linear(x)
    linear_ms = (time.perf_counter() - t0) * 1000
    print(f"Resampling a {seconds:g}-s 44.1-kHz sweep (20 Hz → 20 kHz) to 48 kHz")
    print(
        f"| {'resampler':<30} | {'worst alias':>12} | {'15 kHz level':>12} | "
        f"{'19 kHz level':>12} | {'time':>8} |"
    )
    print(f"|{'-' * 32}|{'-' * 14}|{'-' * 14}|{'-' * 14}|{'-' * 10}|")
    for name, y, ms, fn in (
        ("linear (np.interp, before)", old, linear_ms, linear),
        (
            "soxr HQ stream (pack loader)",
            loaded,
            loader_ms,
            lambda s: soxr.resample(s, SOURCE_RATE, RATE, quality="HQ"),
        ),
    ):
        print(
            f"| {name:<30} | {worst_alias_db(y, seconds):>9.1f} dB | "
            f"{high_loss_db(fn, 15000):>9.2f} dB | {high_loss_db(fn, 19000):>9.2f} dB | "
            f"{ms:>5.0f} ms |"
        )

    settle = 1.0 if args.quick else 3.0
    where = f" from {args.tree}" if args.tree else ""
    print(
        f"\n`timekeeper run --profile ithf --start`{where}, SDL dummy driver, "
        f"{settle:g} s after ready"
    )
    print(f"| {'pack':<34} | {'VmHWM (peak)':>12} | {'VmRSS':>9} | {'ready':>8} |")
    print(f"|{'-' * 36}|{'-' * 14}|{'-' * 11}|{'-' * 10}|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, folder in make_packs(Path(tmp)).items():
            try:
                hwm, rss, ready = run_memory(folder, args.tree, settle)
            except (OSError, KeyError, subprocess.TimeoutExpired) as exc:
                print(f"| {name:<34} | {'failed':>12} | {'':>9} | {'':>8} | {exc}")
                continue
            print(f"| {name:<34} | {hwm:>9.1f} MB | {rss:>6.1f} MB | {ready:>5.2f} s |")


if __name__ == "__main__":
    main()
