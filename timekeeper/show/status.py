"""What a person at the table sees: a status line on a terminal, or one log line per cue and
state change when stdout is a file or the journal."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import shutil
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from typing import TextIO

from timekeeper.rules.engine import Cue, Status
from timekeeper.show import language
from timekeeper.sound.listener import RunnerListener


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


# How hard a status line is abbreviated to fit its width, step by step (0: in full). The
# state and the clock are never dropped; the profile's key, word lengths, player numbers and
# the penalty list give way first; the part's name last (what NEXT starts still shows), where
# a language's longer words leave no room for it (`ZTLUMENO  PŘESTÁVKA`).
LEVELS = 7
NO_PART = 6  # the level that leaves the part's name out
LONG_KEY = 8  # a profile key longer than this goes first (hokejbal-playoff)
# The sides' names stand around the score (`Novák 2:1 Svoboda`) and take the room the rest of
# the line leaves: each keeps at least this many columns (or its whole length) before the rest
# is abbreviated further; at the last step they are shortened to whatever room is left, and
# left out where none is (the state and the clock come first).
NAME_ROOM = 8


def columns(text: str) -> int:
    """The terminal columns `text` takes: a wide (East Asian) character takes two, a
    combining mark none (names come composed, NFC, so `á` is one character anyway).
    ASCII, most lines, is one column a character: counted at once (the line is redrawn
    every tick, and a Pi's CPU is small)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(_extra(c) for c in text if not c.isascii())


@functools.cache
def _extra(c: str) -> int:
    """Columns a non-ASCII character takes beyond one (+1 wide, −1 combining): a name's few
    letters, looked up once each."""
    if unicodedata.combining(c):
        return -1
    return 1 if unicodedata.east_asian_width(c) in "WF" else 0


def cut(text: str, width: int) -> str:
    """The longest start of `text` that fits `width` columns."""
    out, used = [], 0
    for c in text:
        used += columns(c)
        if used > width:
            break
        out.append(c)
    return "".join(out)


def shorten(name: str, width: int) -> str:
    """`name` in at most `width` columns, as a person abbreviates it: the given names to their
    initials first (`J. N. Dvořáček`), then cut with a full stop (`J. N. Dvoř.`)."""
    if columns(name) <= width:
        return name
    words = name.split(" ")
    if len(words) > 1:
        name = " ".join([*(f"{w[0]}." for w in words[:-1]), words[-1]])
        if columns(name) <= width:
            return name
    if width < 2:
        return cut(name, width)
    short = cut(name, width - 1).rstrip(" -")
    return short if short.endswith(".") else short + "."


def status_text(
    s: Status,
    width: int | None = None,
    flags: Sequence[str] = (),
    words: language.Words | None = None,
) -> str:
    """The status in one line. With `width` it is abbreviated until it fits (a terminal of
    80 columns shows every profile in every state); `flags` (e.g. SILENT) lead the line and
    are never dropped, nor is MUTED, which follows them while the box is muted. The sides'
    names, where given, get the room the rest leaves (`NAME_ROOM`). `words`: a language's
    (language.words), English by default; the log lines stay English, for searching."""
    w = _Words(words or language.english())
    if s.muted:
        flags = [*flags, w.line["muted"]]
    if s.audio_fault:  # (the sound lost mid-match: the clock goes on, the line says so)
        flags = [*flags, w.line["noSound"]]
    names = (s.names.get("home", ""), s.names.get("away", ""))
    named = any(names)
    for level in range(LEVELS):
        text = "  ".join(_parts(s, level, flags, w, names if named else None))
        if width is None or columns(text) <= width:
            return text
        if named and (
            short := _with_short_names(s, level, flags, w, names, width, last=level >= NO_PART - 1)
        ):
            return short
    # a terminal narrower than any match needs: cut, state first (no names)
    assert width is not None  # (with no width the first level was returned)
    return cut("  ".join(_parts(s, LEVELS - 1, flags, w)), width)


class _Words:
    """A language's words for the line: `line` and the parts' names."""

    def __init__(self, words: language.Words) -> None:
        self.line, self.parts, self.series = words["line"], words["parts"], words["series"]

    def state(self, s: Status) -> str:
        """The state, one word in capitals (`RUNNING`, `BĚŽÍ`)."""
        return self.line.get(s.state, s.state.upper())

    def team(self, team: str, short: bool = False) -> str:
        return self.line.get(team + "Short" if short else team, team)


def _with_short_names(
    s: Status,
    level: int,
    flags: Sequence[str],
    w: _Words,
    names: tuple[str, str],
    width: int,
    last: bool,
) -> str:
    """The line at `level` with the names shortened into the room the rest leaves, if each
    keeps NAME_ROOM columns (or its length); at the `last` level into any room, or left out.
    "" when they do not fit."""
    bare = "  ".join(_parts(s, level, flags, w, None))
    # what the names add to the bare line: `H 1:0 A` around its score, or `  H - A`
    overhead = 2 if _shows_score(s) else 5
    room = width - columns(bare) - overhead
    shown = [n or w.team(team) for n, team in zip(names, ("home", "away"), strict=True)]
    wanted = [min(NAME_ROOM, columns(n)) for n in shown]
    if room < sum(wanted) and not last:
        return ""
    if room < 2:  # not even an initial each: the names make way
        return bare if columns(bare) <= width else ""
    first = max(room // 2, room - columns(shown[1]))  # a short name leaves its room over
    home = shorten(shown[0], first)
    away = shorten(shown[1], room - columns(home))
    text = "  ".join(_parts(s, level, flags, w, (home, away)))
    if home.strip(".") and away.strip(".") and columns(text) <= width:
        return text
    # (a wide character takes two columns: too little room for one of the names)
    return bare if columns(bare) <= width else ""


def _shows_score(s: Status) -> bool:
    return s.state != "idle" or bool(s.goals)


def _parts(
    s: Status, level: int, flags: Sequence[str], w: _Words, names: tuple[str, str] | None = None
) -> list[str]:
    line = w.line
    keep_key = level == 0 or (level == 1 and len(s.profile) <= LONG_KEY)
    parts = [*flags] + ([s.profile] if keep_key else []) + [w.state(s)]
    if s.part and level < NO_PART:
        parts.append(language.part_name(s.part, w.parts))
    if names is not None:  # `Novák 2:1 Svoboda`; before the match `Novák - Svoboda`
        home, away = (n or w.team(team) for n, team in zip(names, ("home", "away"), strict=True))
        parts.append(f"{home} {score_text(s) if _shows_score(s) else '-'} {away}".strip())
    elif _shows_score(s):
        parts.append(score_text(s))
    if s.state in ("prestart", "break", "shot") and s.countdown is not None:
        counting = line["count" + s.state.capitalize()]
        parts.append(
            f"{counting} {clock_text(s.countdown)}" if level < 3 else clock_text(s.countdown)
        )
    if s.state == "idle" and s.countdown is not None:
        parts.append(f"{line['noShow']} {clock_text(s.countdown)}")
    if s.remaining is not None and s.state not in ("idle", "prestart"):
        parts.append(
            f"{line['left']} {clock_text(s.remaining)}" if level < 5 else clock_text(s.remaining)
        )
    elif s.part and s.state in ("running", "stopped"):
        parts.append(f"{line['played']} {elapsed_text(s.play_time)}")
    if s.match_series and level < 3:  # `QF2 · game 3 · Novák leads 2:0`
        parts.append(series_text(s.match_series, s.names, s.state, w.series, w.team))
    if s.added and level < 5:
        parts.append(f"{line['added']} {s.added:+g}s" if level == 0 else f"{s.added:+g}s")
    if s.series:
        long = line["seriesShot"] if s.shot == 1 else line["seriesShots"]
        chosen = long if level < 2 else line["seriesShort"]
        parts.append(chosen.replace("{n}", str(s.series)).replace("{shots}", str(s.shot)))
    if s.shootout_score and s.teams is None:  # (ball hockey shows it with each team)
        parts.append(s.shootout_score)
    parts += team_texts(s, level, w)
    if s.waiting_for:
        parts.append(f"[{s.waiting_for}]")
    return parts


def series_text(
    series: dict, names: dict, state: str, words: dict[str, str], team: Callable[[str], str]
) -> str:
    """The series on the table (Status.match_series) in `words` (a language's `series`):
    `QF2 · game 3 · Novák leads 2:0`, `game 5 · series 2:2`, between games `next: game 4`,
    once won `Novák wins the series 4:1`; a side's name, else `team(side)` (HOME)."""

    def name(side: str) -> str:
        return str(names.get(side) or "") or team(side)

    def say(key: str, **values: object) -> str:
        text = words[key]
        for key_, value in values.items():
            text = text.replace("{" + key_ + "}", str(value))
        return text

    home, away = int(series["home_wins"]), int(series["away_wins"])
    ahead, behind = max(home, away), min(home, away)
    out = [str(series["match"])] if series.get("match") else []
    if series.get("winner"):
        out.append(say("won", name=name(str(series["winner"])), score=f"{ahead}:{behind}"))
        return " · ".join(out)
    out.append(say("nextGame" if state == "finished" else "game", game=series["game"]))
    if home == away:
        out.append(say("level", score=f"{home}:{away}"))
    else:
        out.append(
            say("leads", name=name("home" if home > away else "away"), score=f"{ahead}:{behind}")
        )
    return " · ".join(out)


DECIDED_WORDS = {
    "regulation": "in regulation",
    "overtime": "in overtime",
    "sudden_death": "in sudden death",
    "shootout": "in the shoot-out",
    "forfeit": "by forfeit",
}


def game_text(game: dict, names: dict) -> str:
    """A series' game on the record (box/series.py `game_record`): `3:2 Novák, in sudden
    death` (the winner's name, else HOME or AWAY)."""
    winner = str(game.get("winner", ""))
    who = str(names.get(winner) or "") or winner.upper()
    how = DECIDED_WORDS.get(str(game.get("decided")), str(game.get("decided")))
    return f"{game['home']}:{game['away']} {who}, {how}"


def score_text(s: Status) -> str:
    """`2:1`, home first."""
    return f"{s.score.get('home', 0)}:{s.score.get('away', 0)}"


def team_texts(s: Status, level: int = 0, w: _Words | None = None) -> list[str]:
    """Stopped-time games: `TIME-OUT away 0:21`, `home 0:42 #17 2:10 +1 waiting`, … and
    shorter at higher `level`s: `H 0:42#17 2:10 +1`, `H 0:42 +2`."""
    if s.teams is None:
        return []
    w = w or _Words(language.english())
    line = w.line
    out = []
    if s.timeout is not None:
        who = w.team(s.timeout, short=level >= 3)
        out.append(
            f"{line['timeout'] if level < 3 else line['timeoutShort']} {who} "
            f"{clock_text(s.timeout_countdown)}"
        )
    if s.penalty_shot is not None:
        who = w.team(s.penalty_shot)
        out.append(
            f"{line['penaltyShot']} {who}" if level < 3 else f"{line['penaltyShotShort']} {who}"
        )
    for team, t in s.teams.items():
        running = [p for p in t.penalties if p.state == "running"]
        waiting = sum(1 for p in t.penalties if p.state == "waiting")
        out_for_good = sum(1 for p in t.penalties if p.state == "game")
        if level >= 1 and t.shootout:  # the shoot-out's score, not the frozen penalties
            words = []
        elif level >= 4:  # the first to end, and how many more
            words = [clock_text(running[0].remaining)] if running else []
            if more := len(running) - len(words) + waiting + out_for_good:
                words.append(f"+{more}")
        else:
            number = (" #" if level < 2 else "#") if level < 3 else None
            words = [
                clock_text(p.remaining) + (f"{number}{p.player}" if p.player and number else "")
                for p in running
            ]
            if waiting:
                words.append(
                    f"+{waiting} {line['penaltiesWaiting']}"
                    if level < 1
                    else f"+{waiting} {line['penaltiesWaitingShort']}"
                    if level < 3
                    else f"+{waiting}"
                )
            if out_for_good:
                words.append(
                    f"{out_for_good} {line['outGame']}"
                    if level < 1
                    else f"{out_for_good} {line['out']}"
                )
        if t.shootout:
            words.append(f"{line['shootoutScore']} {t.shootout}" if level < 2 else t.shootout)
        if t.timeouts_left == 0 and level < 2:
            words.append(line["timeoutUsed"])
        if words:
            out.append(f"{w.team(team, short=level >= 2)} " + " ".join(words))
    return out


def status_block(s: dict) -> str:
    """`ctl status` for a person: the status (`Status.to_dict()`, as the socket sends it) as
    a few labelled lines, the fields that say nothing now left out (`--json` gives them all)."""
    names = s.get("names") or {}
    home, away = names.get("home") or "HOME", names.get("away") or "AWAY"
    score = s.get("score") or {}
    part = s.get("part") or "before the match"
    rows = [
        ("match", f"{s.get('title', '')} ({s.get('profile', '')})"),
        (
            "state",
            f"{s.get('state', '').upper()}, {part}"
            # (the count of regulation's parts: an overtime is past it, not `2 of 1`)
            + (
                f" ({s['period']} of {s['periods']})"
                if s.get("period") and s["period"] <= (s.get("periods") or 0)
                else ""
            ),
        ),
    ]
    if s.get("remaining") is not None or s.get("play_time"):
        clock = f"{clock_text(s['remaining'])} left, " if s.get("remaining") is not None else ""
        clock += f"{elapsed_text(s.get('play_time') or 0.0)} played"
        if s.get("added"):
            clock += f", {s['added']:+g} s added"
        rows.append(("clock", clock))
    if s.get("countdown") is not None:
        rows.append(("countdown", clock_text(s["countdown"])))
    rows.append(
        (
            "score",
            f"{home} {score.get('home', 0)}:{score.get('away', 0)} {away}"
            + (f"  (shoot-out {s['shootout_score']})" if s.get("shootout_score") else ""),
        )
    )
    for goal in s.get("goals") or []:
        player = f" #{goal['player']}" if goal.get("player") else ""
        rows.append(
            (
                "goal",
                f"{goal['team']}{player}, part {goal['period']}, {elapsed_text(goal['play_time'])}",
            )
        )
    for team, t in (s.get("teams") or {}).items():
        for p in t.get("penalties") or []:
            player = f" #{p['player']}" if p.get("player") else ""
            left = "" if p.get("remaining") is None else f", {clock_text(p['remaining'])}"
            rows.append(("penalty", f"{team} {p['id']}: {p['kinds']}{player}, {p['state']}{left}"))
    if s.get("timeout"):
        rows.append(("time-out", f"{s['timeout']}, {clock_text(s.get('timeout_countdown'))}"))
    if s.get("waiting_for"):
        rows.append(("next", s["waiting_for"]))
    for held in s.get("scheduled") or []:
        rows.append(("scheduled", f"{held['command']} in {held['in']:g} s"))
    sound = "muted by the operator" if s.get("muted") else "on"
    if s.get("silent"):
        sound = "off: SILENT (no sound card; every cue is logged, none is heard)"
    elif s.get("audio_fault"):
        sound = f"not heard: {s['audio_fault']}"
    rows.append(("sound", sound))
    if s.get("hall_result"):
        r = s["hall_result"]
        rows.append(
            (
                "result",
                f"{r['match']} {r['score']} ({'confirmed' if r['confirmed'] else 'to confirm'})",
            )
        )
    if s.get("match_series"):
        english = language.english()
        shown = series_text(
            s["match_series"],
            s.get("names") or {},
            s.get("state", ""),
            english["series"],
            lambda side: side.upper(),
        )
        rows.append(("series", shown))
        for game in s["match_series"].get("games") or []:
            rows.append((f"game {game['number']}", game_text(game, names)))
    if s.get("next_pairing"):  # (held for after the match on the table)
        n = s["next_pairing"]
        rows.append(("next match", f"{n['match']} {n['home'] or 'HOME'} – {n['away'] or 'AWAY'}"))
    return "\n".join(f"{label:<10} {text}" for label, text in rows)


def cue_text(cue: Cue) -> str:
    what = cue.name + ("" if cue.count == 1 else f" x{cue.count}")
    if cue.name == "last30":
        what = "last30 stop" if cue.stop else f"last30 from {cue.offset:.1f}s"
    if cue.detail:  # whose penalty or time-out ended
        what += f" {cue.detail}"
    return f"cue {what}  period={cue.period} play={elapsed_text(cue.play_time)}"


def marked(text: str, mark: str, cue: bool = False) -> str:
    """A line with the box's mark (e.g. SILENT): in front of a state, after a cue, which
    then was not heard."""
    if not mark:
        return text
    return f"{text}  [{mark}: not heard]" if cue else f"{mark}  {text}"


class LogLines(RunnerListener):
    """One line per cue and per state change (stdout not a terminal, e.g. under systemd).
    `mark` (e.g. "SILENT") is shown on every line."""

    def __init__(self, out: TextIO = sys.stdout, mark: str = "") -> None:
        self.out, self.mark = out, mark
        self.gone = False  # the reader went away (`run | head`): the match goes on regardless

    def cue_played(self, cue: Cue, status: Status, played: float, not_heard: str | None) -> None:
        self._print(marked(cue_text(cue), self.mark, cue=True))

    def state_changed(self, status: Status) -> None:
        self._print("state " + marked(status_text(status), self.mark))

    def _print(self, text: str) -> None:
        if self.gone:
            return
        stamp = time.strftime("%H:%M:%S")
        try:
            print(f"{stamp} {text}", file=self.out, flush=True)
        except (BrokenPipeError, ValueError):
            self.gone = True


class StatusLine(RunnerListener):
    """A line redrawn in place a few times a second, with cues scrolling above it. It is
    abbreviated to fit the terminal's width (it must never wrap: \r could not undo it), and
    ends in `tail` (`? keys`) where there is room. `mark` (e.g. "SILENT") leads the line, is
    never dropped, and follows every cue."""

    def __init__(
        self,
        status: Callable[[], Status],
        help_text: str | Callable[[], str],
        out: TextIO = sys.stdout,
        period: float = 0.2,
        tail: str = "",
        mark: str = "",
        words: language.Words | None = None,
    ) -> None:
        self.status, self.out, self.period, self.mark = status, out, period, mark
        self.words = words  # the box's language (None: English)
        self.tail = tail  # the key help: a text, or what to say now (the profile played)
        self.help_text = help_text if callable(help_text) else lambda: help_text
        self.flags: list[str] = [mark] if mark else []  # never dropped
        self._lock = threading.Lock()
        self._stop = threading.Event()
        print(self.help_text(), file=out, flush=True)
        self._thread = threading.Thread(target=self._loop, name="status", daemon=True)

    def start(self) -> StatusLine:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self.tail = ""  # the last line stays on screen: no keys to offer any more
        if self._thread.is_alive():
            self._thread.join(1.0)  # (its last redraw is not drawn after ours)
        with contextlib.suppress(Exception):
            self._draw(self.status())
        with self._lock:
            print(file=self.out, flush=True)

    def cue_played(self, cue: Cue, status: Status, played: float, not_heard: str | None) -> None:
        self.above(f"{time.strftime('%H:%M:%S')} {marked(cue_text(cue), self.mark, True)}")
        self._draw(status)

    def state_changed(self, status: Status) -> None:
        self._draw(status)

    def above(self, text: str) -> None:
        """Print a line above the status line (which the next redraw puts back)."""
        with self._lock:
            self.out.write(f"\r\x1b[K{text}\n")

    def show_help(self) -> None:
        """The key help again (`?`), above the status line: it scrolled away long ago."""
        for text in self.help_text().splitlines():
            self.above(text)
        self._draw(self.status())

    def text(self, status: Status, width: int) -> str:
        """What the line shows in `width` columns."""
        text = status_text(status, width, self.flags, self.words)
        if self.tail and columns(text) + 2 + len(self.tail) <= width:
            text += f"  {self.tail}"
        return text

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
        if self._stop.is_set() and status.state == "running":  # (the box is quitting)
            # its clock stops with it, journaled: `timekeeper run` goes on from there
            status = dataclasses.replace(status, state="stopped")
        width = shutil.get_terminal_size().columns - 1  # the last column would wrap
        with self._lock:
            self.out.write(f"\r\x1b[K{self.text(status, width)}")
            self.out.flush()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            try:  # a terminal that cannot be written (gone, full) fails alone: tried again
                self._draw(self.status())
            except (OSError, ValueError):
                continue
