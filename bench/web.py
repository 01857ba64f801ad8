"""Web bench: what the screens show against what the box knows, and what 50 screens cost.

    python bench/web.py           # ~3 min: 120 clock samples, 60-s matches with 0 and 50 pages
    python bench/web.py --quick   # CI smoke (about a minute)

1. Shown-time error: a real box (`timekeeper run --web`, hokejbal) and its display page in
   Debian's headless Chromium. Each sample reads `ctl status`, then the page's shown clock,
   then `ctl status` again; the error is the page's value against the box's at the same
   moment (the mean of the two readings). Positive: the page lags (shows time the box has
   already left behind); negative: the page is ahead (shows a second the box has not reached).
   At a stop: how long until the page shows the box's stopped time.
2. Cue timing with 50 pages: bench/timing.py's real match through a private PulseAudio server
   (stream path), once with no web server and once with 50 live WebSocket pages open.
3. The server's CPU and memory for those pages: the box process's CPU and peak RSS in the two
   runs, and the difference. Also what one display page costs in Chromium (a kiosk estimate).
Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["TIMEKEEPER_PROFILES_PATH"] = ""

from timing import PulseServer, proc_ticks, run_match, schedule  # bench/timing.py
from webbox import WebBox, browser, have_browser  # tests/webbox.py

from timekeeper.box.controls.socket_client import send
from timekeeper.sound.pack import default_pack_dir, load_pack

HERE = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")


def box_remaining(box: WebBox) -> float:
    return send(box.control, "status")["status"]["remaining"]


def page_seconds(driver) -> float | None:
    return driver.execute_script("return window.tkDisplay.seconds()")


def clock_text(seconds: float) -> str:
    whole = math.ceil(seconds - 1e-9) if seconds > 0 else 0
    return f"{whole // 60}:{whole % 60:02d}"


def children(pid: int) -> list[int]:
    """pid and all its descendants (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += parents.get(p, [])
    return out


def pss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += proc_ticks(pid)
        except (OSError, IndexError):
            continue
    return total


def shown_time(samples: int, stops: int) -> dict:
    """Samples of the display page's clock against `ctl status` during a running match."""
    errors, spans, ahead_text = [], [], 0
    stop_ms: list[float] = []
    with WebBox("hokejbal") as box, browser(1280, 720) as page:
        page.get(f"{box.url}/")
        deadline = time.monotonic() + 10
        while (
            page.execute_script("return window.tkDisplay && window.tkDisplay.online()") is not True
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        box.command("start")
        time.sleep(1.5)
        for i in range(samples):
            before = box_remaining(box)
            shown = page_seconds(page)
            after = box_remaining(box)
            if shown is not None:
                errors.append((shown - (before + after) / 2) * 1000)
                spans.append((before - after) * 1000)
                # the digits: never a second the box has not reached (below its later reading)
                text = page.execute_script("return window.tkDisplay.text()")
                if text < clock_text(after) and len(text) == len(clock_text(after)):
                    ahead_text += 1
            time.sleep(0.2 + (i % 7) * 0.037)  # not in step with the page's 40-ms redraw
        chromium = [p for p in children(page.service.process.pid) if p != page.service.process.pid]
        c0, t0 = ticks(chromium), time.monotonic()
        time.sleep(5)
        page_cpu = (ticks(chromium) - c0) / TICK / (time.monotonic() - t0) * 100
        page_pss = pss_mb(chromium)
        for _ in range(stops):
            _, answer = box.command("toggle")
            stopped = answer["status"]["remaining"]
            t0 = time.perf_counter()
            while page_seconds(page) != stopped and time.perf_counter() - t0 < 3:
                pass
            stop_ms.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.5)
            box.command("toggle")
            time.sleep(1.2)
    return {
        "errors": errors,
        "spans": spans,
        "ahead_text": ahead_text,
        "stop_ms": stop_ms,
        "page_cpu": page_cpu,
        "page_pss": page_pss,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short smoke run (CI)")
    ap.add_argument("--pages", type=int, default=50, help="live pages for the timing run")
    args = ap.parse_args()
    print(f"timekeeper web bench — python {sys.version.split()[0]}, {os.cpu_count()} cpus\n")

    shown = None
    if have_browser():
        print("  sampling the display page's clock …", file=sys.stderr)
        shown = shown_time(20 if args.quick else 120, 3 if args.quick else 10)
    else:
        print("(no chromium/chromedriver: shown-time figures skipped; ./bootstrap.sh --test)")

    profile_file = HERE / "profiles" / ("quick15.yaml" if args.quick else "match60.yaml")
    actions = schedule(False, args.quick)
    pack = load_pack(default_pack_dir())
    runs = {}
    with PulseServer() as env:
        for pages in (0, args.pages):
            print(f"  {profile_file.stem} on the stream path with {pages} pages …", file=sys.stderr)
            runs[pages] = run_match("stream", env, profile_file, actions, pack, None, pages)

    rows = []
    if shown:
        e = shown["errors"]
        worst = max(e, key=abs)
        rows += [
            ("shown − box, max |error| (ms)", "≤ 100", f"{abs(worst):.1f}"),
            ("shown − box, median (ms; + = page lags)", "", f"{statistics.median(e):+.1f}"),
            ("shown − box, most ahead (ms; − = ahead)", "", f"{min(e):+.1f}"),
            ("samples; digits ever ahead of the box", "0", f"{len(e)}; {shown['ahead_text']}"),
            ("sampling window, max (ms)", "", f"{max(shown['spans']):.1f}"),
            (
                "at a stop: page shows the stopped time, max (ms)",
                "≤ 200",
                f"{max(shown['stop_ms']):.0f}",
            ),
            ("a display page in headless Chromium: CPU (%)", "", f"{shown['page_cpu']:.1f}"),
            ("a display page in headless Chromium: PSS (MB)", "", f"{shown['page_pss']:.0f}"),
        ]
    none, many = runs[0], runs[args.pages]
    absmax = lambda r: max((abs(x) for x in r.errors_ms), default=float("nan"))  # noqa: E731
    rows += [
        ("cue timing, no web: max |onset − due| (ms)", "≤ 2", f"{absmax(none):.2f}"),
        (f"cue timing, {args.pages} pages: max |onset − due| (ms)", "≤ 2", f"{absmax(many):.2f}"),
        ("box CPU, no web (% of a core)", "", f"{none.cpu_percent:.2f}"),
        (f"box CPU, {args.pages} pages (% of a core)", "", f"{many.cpu_percent:.2f}"),
        (
            f"server CPU for {args.pages} pages (difference)",
            "",
            f"{many.cpu_percent - none.cpu_percent:+.2f}",
        ),
        ("box memory peak, no web (MB)", "", f"{none.rss_mb:.1f}"),
        (f"box memory peak, {args.pages} pages (MB)", "", f"{many.rss_mb:.1f}"),
        (
            f"server memory for {args.pages} pages (difference, MB)",
            "",
            f"{many.rss_mb - none.rss_mb:+.1f}",
        ),
        (f"live statuses received by the {args.pages} pages", "", f"{many.web_messages}"),
    ]
    print(f"| {'figure':<52} | {'target':>6} | {'measured':>10} |")
    print(f"|{'-' * 54}|{'-' * 8}|{'-' * 12}|")
    for name, target, value in rows:
        print(f"| {name:<52} | {target:>6} | {value:>10} |")
    for pages, run in runs.items():
        print(
            f"\n{pages} pages: {len(run.errors_ms)} timed cues "
            f"[{', '.join(f'{x:+.2f}' for x in run.errors_ms)}] ms"
            + (f"; NOT FOUND: {', '.join(run.missing)}" if run.missing else "")
        )


if __name__ == "__main__":
    main()
