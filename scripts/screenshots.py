"""Screenshots of the web pages for the docs, taken from a real box in headless Chromium.

    .venv/bin/python scripts/screenshots.py            # into docs/img/
    .venv/bin/python scripts/screenshots.py --out DIR  # elsewhere (the tests use a temp dir)

It starts `timekeeper run --web` (dummy audio, no GPIO) on a ball-hockey profile, plays a
little of a match through the API (a goal, a penalty, added time), and photographs the display
at TV (1920×1080) and phone (390×844) size, the operator page at phone size, the stream
overlay (a transparent PNG) and the display's FINAL; and the desk's hall overview (`hall
serve`) over eight tables in every state a hall sees, into docs/hall-overview.png (--hall);
and the board on the hall's TV at 1080p and 720p with a player's page on a phone (board():
docs/img/board-*.png, player-phone.png; --board-only for these alone); and a best-of-5
play-off at each moment of a series' life — the board, its play-off blocks, a player's phone
and the box's display page — checked as tests/web/test_series_screens.py checks them
(docs/img/series-*.png; --series-only for these alone).
Chromium and chromedriver come from Debian (`./bootstrap.sh --test`); nothing downloads a
browser."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from boardhall import FakeDesk, scene, serving, serving_board
from helpers import wait_for  # tests/helpers.py: the tests' one wait
from seriesscreens import take_box, take_night
from webbox import WebBox, browser, drawn  # tests/webbox.py: the tests' own helper

ROOT = Path(__file__).resolve().parent.parent


def take(out: Path, state_dir: Path | None = None, hall_shot: Path | None = None) -> list[Path]:
    """Every picture, into `out` (the hall overview into `hall_shot`, else `out`)."""
    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with WebBox("hokejbal", state_dir=state_dir) as box:
        box.command("start")
        box.command("goal", "home", "17")
        box.command("goal", "away")
        box.command("penalty", "away", "minor", "8")
        box.command("penalty", "home", "minor+minor", "4")
        box.command("add", "10")
        wait_for(lambda: box.status()["play_time"] >= 1.2, "a second of play", 10)
        box.command("toggle")  # stopped: the red clock a hall looks for
        shots.append(display(box, 1920, 1080, out / "display-tv.png"))
        box.command("toggle")
        shots.append(display(box, 390, 844, out / "display-phone.png"))
        with browser(390, 844, height_of_page=True) as driver:
            driver.get(box.link())
            drawn(driver, "/\\d:\\d\\d/.test(document.getElementById('clock').textContent)")
            shots.append(out / "control-phone.png")
            driver.save_screenshot(str(shots[-1]))
        with browser(900, 80) as driver:
            driver.execute_cdp_cmd(
                "Emulation.setDefaultBackgroundColorOverride",
                {"color": {"r": 0, "g": 0, "b": 0, "a": 0}},
            )
            driver.get(f"{box.url}/overlay")
            drawn(driver, "/\\d:\\d\\d/.test(window.tkOverlay.clock())")
            shots.append(out / "overlay.png")
            driver.save_screenshot(str(shots[-1]))
    shots.append(final(out / "display-final.png"))
    shots.append(hall(hall_shot or out / "hall-overview.png"))
    return shots


def _table(
    state: str, part: str, left: float | None, score: tuple[int, int], **table: object
) -> dict:
    """A table's entry as the desk holds it (its retained status and what the desk knows)."""
    counting = state in ("prestart", "break", "shot")
    status = {
        "state": state,
        "part": part,
        "remaining": None if counting else left,
        "countdown": left if counting else None,
        "score": {"home": score[0], "away": score[1]},
    }
    return (
        {"online": True, "synced": True, "in_step": True, "sent": time.time()}
        | table
        | {"status": status}
    )


def board(out: Path) -> list[Path]:
    """The board on the hall's TV at 1080p and 720p (an evening in its fifth round, four
    tables in the states a hall sees), each of its pages at 1080p, and a player's page on a
    phone: into `out` (docs/img/board-1080p.png, board-1080p-2.png …, board-720p.png,
    player-phone.png)."""
    out.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="tk-shots-") as folder:
        desk, file = scene(Path(folder), public="public:\n  url: http://192.168.1.10:8080\n")
        with serving_board(desk, file, Path(folder) / "desk") as (url, _, director):
            for width, height, name in ((1920, 1080, "1080p"), (1280, 720, "720p")):
                with browser(width, height) as driver:
                    driver.get(f"{url}/board?turn=600")
                    drawn(driver, "window.tkBoard.last() !== null")
                    pages = driver.execute_script("return window.tkBoard.count()")
                    for n in range(pages if height == 1080 else 1):
                        shots.append(out / f"board-{name}{f'-{n + 1}' if n else ''}.png")
                        driver.save_screenshot(str(shots[-1]))
                        driver.execute_script("window.tkBoard.turn()")
            player = director.t.spec.names[0]
            with browser(390, 844, height_of_page=True) as driver:
                driver.get(f"{url}/player/{player}")
                drawn(driver, "document.querySelector('.next, .none') !== null")
                driver.get(f"{url}/player/{player}")  # (grown to the page's height)
                drawn(driver, "document.querySelector('.next') !== null")
                shots.append(out / "player-phone.png")
                driver.save_screenshot(str(shots[-1]))
    return shots


def series(out: Path) -> list[Path]:
    """The series' pictures (docs/img/series-*.png), each page checked before it is taken."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tk-shots-") as folder:
        return take_night(Path(folder) / "night", out) + take_box(Path(folder), out)


def hall(shot: Path) -> Path:
    """The desk's overview with its buttons (the desk's link), eight tables in the states a
    hall sees: running, stopped on its own, a break, the pre-start, a shoot-out, the end,
    NOT SYNCED and OFFLINE."""
    tables = {
        "1": _table("running", "half 1", 463.4, (0, 0)),
        "2": _table("running", "half 1", 463.4, (1, 0)),
        "3": _table("stopped", "half 1", 476.0, (0, 0), in_step=False),
        "4": _table("break", "half 1", 142.0, (2, 2)),
        "5": _table("prestart", "", 58.4, (0, 0)),
        "6": _table("shootout", "shoot-out", None, (3, 3)),
        "7": _table(
            "running",
            "half 1",
            463.4,
            (0, 1),
            synced=False,
            sync="NOT SYNCED: clock +4.0 ms off the hall's time (limit 2 ms)",
        ),
        "8": _table("idle", "", None, (0, 0), online=False),
    }
    shot.parent.mkdir(parents=True, exist_ok=True)
    desk = FakeDesk({n: {"table": n} | t for n, t in tables.items()})
    desk.hall = "bigcup"
    with (
        tempfile.TemporaryDirectory(prefix="tk-shots-") as folder,
        serving(desk, Path(folder)) as (url, token),
        browser(1280, 560) as driver,
    ):
        for table in desk.statuses.values():  # (their clocks as sent now, not at the setup)
            table["sent"] = time.time()
        driver.get(f"{url}/hall#token={token}")
        wait_for(
            lambda: (
                driver.execute_script("return document.querySelectorAll('.table').length")
                == len(tables)
            ),
            "every table on the overview",
            10,
        )
        driver.save_screenshot(str(shot))
    return shot


# an ITHF play-off whose one-second pre-start and `set` make a FINAL in a few seconds
QUICK_ITHF = """\
title: ITHF play-off, 5 minutes + sudden death
extends: ithf-playoff
follows: none
prestart: 1
"""


def final(shot: Path) -> Path:
    """The display's FINAL of an ITHF match won in regulation, photographed into `shot`."""
    with tempfile.TemporaryDirectory(prefix="tk-shots-") as folder:
        profile = Path(folder) / "ithf-playoff.yaml"
        profile.write_text(QUICK_ITHF, encoding="utf-8")
        with WebBox(str(profile)) as box:
            box.command("start")
            wait_for(lambda: box.status()["state"] == "running", "the match running", 10)
            box.command("goal", "home", "7")
            box.command("goal", "away", "3")
            box.command("goal", "home", "7")
            box.command("pause")
            box.command("set", "0:01")
            box.command("resume")
            wait_for(lambda: box.status()["state"] == "waiting", "the match's end", 10)
            box.command("finish")
            return display(box, 1280, 720, shot)


def display(box: WebBox, width: int, height: int, shot: Path) -> Path:
    """The display page of table "Table 1" at width × height, photographed into `shot`."""
    with browser(width, height) as driver:
        driver.get(f"{box.url}/?table=Table 1")
        box.wait_text(driver, "Table 1")
        drawn(driver, "window.tkDisplay.online()")
        driver.save_screenshot(str(shot))
    return shot


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument(
        "--hall",
        type=Path,
        default=ROOT / "docs" / "hall-overview.png",
        help="the hall overview's picture (docs/hall.md shows it)",
    )
    ap.add_argument(
        "--board-only", action="store_true", help="only the board's and a player page's pictures"
    )
    ap.add_argument("--series-only", action="store_true", help="only a series' pictures")
    args = ap.parse_args()
    if args.board_only:
        shots = board(args.out)
    elif args.series_only:
        shots = series(args.out)
    else:
        shots = [*take(args.out, hall_shot=args.hall), *board(args.out), *series(args.out)]
    for shot in shots:
        print(f"wrote {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
