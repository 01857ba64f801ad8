"""What a person at the table sees: a status line on a terminal, or one log line per cue and
state change when stdout is a file or the journal."""

from __future__ import annotations

import logging
import math
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from timekeeper.rules.engine import Cue, Status


def clock_text(seconds: float | None) -> str:
    """Time left, as a scoreboard counts down: 0:00 only once the time is really up."""
    if seconds is None:
        return "--:--"
    whole = math.ceil(seconds - 1e-9) if seconds > 0 else 0
    return f"{whole // 60}:{whole % 60:02d}"


def elapsed_text(seconds: float) -> str:
    """Time played, counting up: whole seconds completed."""
    whole = int(max(0.0, seconds) + 1e-9)
    return f"{whole // 60}:{whole % 60:02d}"


def status_text(s: Status) -> str:
    parts = [s.profile, s.state.upper()]
    if s.part:
        parts.append(s.part)
    if s.state in ("prestart", "break", "shot") and s.countdown is not None:
        parts.append(f"{s.state} {clock_text(s.countdown)}")
    if s.remaining is not None and s.state not in ("idle", "prestart"):
        parts.append(f"left {clock_text(s.remaining)}")
    elif s.part and s.state in ("running", "stopped"):
        parts.append(f"played {elapsed_text(s.play_time)}")
    if s.added:
        parts.append(f"added {s.added:+g}s")
    if s.series:
        parts.append(f"series {s.series}, {s.shot} shot{'' if s.shot == 1 else 's'} taken")
    parts += team_texts(s)
    if s.waiting_for:
        parts.append(f"[{s.waiting_for}]")
    return "  ".join(parts)


def team_texts(s: Status) -> list[str]:
    """Stopped-time games: `TIME-OUT away 0:21`, `home 0:42 #17 2:10 +1 waiting`, …"""
    if s.teams is None:
        return []
    out = []
    if s.timeout is not None:
        out.append(f"TIME-OUT {s.timeout} {clock_text(s.timeout_countdown)}")
    for team, t in s.teams.items():
        running = [p for p in t.penalties if p.state == "running"]
        words = [clock_text(p.remaining) + (f" #{p.player}" if p.player else "")
                 for p in running]
        if waiting := sum(1 for p in t.penalties if p.state == "waiting"):
            words.append(f"+{waiting} waiting")
        if out_for_good := sum(1 for p in t.penalties if p.state == "game"):
            words.append(f"{out_for_good} out (game)")
        if t.shootout:
            words.append(f"shoot-out {t.shootout}")
        if t.timeouts_left == 0:
            words.append("t/o used")
        if words:
            out.append(f"{team} " + " ".join(words))
    return out


def cue_text(cue: Cue) -> str:
    what = cue.name + ("" if cue.count == 1 else f" x{cue.count}")
    if cue.name == "last30":
        what = "last30 stop" if cue.stop else f"last30 from {cue.offset:.1f}s"
    if cue.detail:  # whose penalty or time-out ended
        what += f" {cue.detail}"
    return f"cue {what}  period={cue.period} play={elapsed_text(cue.play_time)}"


class LogLines:
    """One line per cue and per state change (stdout not a terminal, e.g. under systemd)."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out
        self.gone = False  # the reader went away (`run | head`): the match goes on regardless

    def __call__(self, cue: Cue | None, status: Status) -> None:
        if self.gone:
            return
        stamp = time.strftime("%H:%M:%S")
        text = cue_text(cue) if cue is not None else "state " + status_text(status)
        try:
            print(f"{stamp} {text}", file=self.out, flush=True)
        except (BrokenPipeError, ValueError):
            self.gone = True


class StatusLine:
    """A line redrawn in place a few times a second, with cues scrolling above it."""

    def __init__(self, status: Callable[[], Status], help_text: str,
                 out: TextIO = sys.stdout, period: float = 0.2) -> None:
        self.status, self.out, self.period = status, out, period
        self._lock = threading.Lock()
        self._stop = threading.Event()
        print(help_text, file=out, flush=True)
        self._thread = threading.Thread(target=self._loop, name="status", daemon=True)

    def start(self) -> StatusLine:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            print(file=self.out, flush=True)

    def __call__(self, cue: Cue | None, status: Status) -> None:
        if cue is not None:
            self.above(f"{time.strftime('%H:%M:%S')} {cue_text(cue)}")
        self._draw(status)

    def above(self, text: str) -> None:
        """Print a line above the status line (which the next redraw puts back)."""
        with self._lock:
            self.out.write(f"\r\x1b[K{text}\n")

    def log_handler(self) -> logging.Handler:
        """Log messages (refusals, warnings) go above the status line, not through it."""
        line = self

        class Above(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                line.above(self.format(record))
                line._draw(line.status())

        handler = Above()
        handler.setFormatter(logging.Formatter("timekeeper: %(message)s"))
        return handler

    def _draw(self, status: Status) -> None:
        width = shutil.get_terminal_size().columns - 1  # never wrap: \r could not undo it
        with self._lock:
            self.out.write(f"\r\x1b[K{status_text(status)[:width]}")
            self.out.flush()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            try:  # a terminal that cannot be written (gone, full) fails alone: tried again
                self._draw(self.status())
            except (OSError, ValueError):
                continue
