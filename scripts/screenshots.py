"""Screenshots of the web pages for the docs, taken from a real box in headless Chromium.

    .venv/bin/python scripts/screenshots.py            # into docs/img/
    .venv/bin/python scripts/screenshots.py --out DIR  # elsewhere (the tests use a temp dir)

It starts `timekeeper run --web` (dummy audio, no GPIO) on a ball-hockey profile, plays a
little of a match through the API (a goal, a penalty, added time), and photographs the display
at TV (1920×1080) and phone (390×844) size and the operator page at phone size. Chromium and
chromedriver come from Debian (`./bootstrap.sh --test`); nothing downloads a browser."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from webbox import WebBox, browser  # tests/webbox.py: the tests' own helper

ROOT = Path(__file__).resolve().parent.parent


def take(out: Path, state_dir: Path | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with WebBox("hokejbal", state_dir=state_dir) as box:
        box.command("start")
        box.command("goal", "home", "17")
        box.command("goal", "away")
        box.command("penalty", "away", "minor", "8")
        box.command("penalty", "home", "minor+minor", "4")
        box.command("add", "10")
        time.sleep(1.2)
        box.command("toggle")  # stopped: the red clock a hall looks for
        shots.append(display(box, 1920, 1080, out / "display-tv.png"))
        box.command("toggle")
        shots.append(display(box, 390, 844, out / "display-phone.png"))
        with browser(390, 844, height_of_page=True) as driver:
            driver.get(box.link())
            time.sleep(1.0)
            shots.append(out / "control-phone.png")
            driver.save_screenshot(str(shots[-1]))
    return shots


def display(box: WebBox, width: int, height: int, shot: Path) -> Path:
    """The display page of table "Table 1" at width × height, photographed into `shot`."""
    with browser(width, height) as driver:
        driver.get(f"{box.url}/?table=Table 1")
        box.wait_text(driver, "Table 1")
        time.sleep(1.0)
        driver.save_screenshot(str(shot))
    return shot


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = ap.parse_args()
    for shot in take(args.out):
        print(f"wrote {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
