"""`timekeeper series show|export`: the result sheet of the series a box played without a
desk (`run --best-of N`), read from its state folder, so that a club's play-off night ends
with a record of every game: the series the box has left (`series-played.jsonl`, one line
each, box/series.py) and the one in `series.json`. Read from the folder, not asked of the
running box: the sheet is there after the box is stopped, and from a copy of the folder.

Each line is checked whole into the series model as the box's own journal is; one that is
not a series is named (file, line, field) and left as it is, and the others are shown."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timekeeper.box.series import (
    FILE,
    LOCAL,
    MAX_FILE,
    PLAYED,
    SeriesFileError,
    loads,
    names_of,
    parse_series,
    record,
)
from timekeeper.rules.series import Series
from timekeeper.show.status import game_text

MAX_PLAYED = 4 << 20  # bytes of series-played.jsonl read (some thousand series)
CSV_COLUMNS = (
    "series",
    "ended",
    "best_of",
    "home",
    "away",
    "game",
    "home_goals",
    "away_goals",
    "decided",
    "game_winner",
    "home_wins",
    "away_wins",
    "series_winner",
)


@dataclass(frozen=True)
class Played:
    """One series on the sheet: the model, its match (the desk's id; "" for a local one),
    the players and when its last game was counted."""

    series: Series
    names: dict[str, str]
    ended: str = ""
    match: str = ""

    def record(self) -> dict[str, Any]:
        return record(self.series, self.match, self.names, self.ended)

    def name(self, side: str | None) -> str:
        return "" if side is None else self.names.get(side) or side


def read(folder: Path) -> tuple[list[Played], list[str]]:
    """The series in the state folder, in the order played (the left ones, then the one in
    series.json, where it holds a local one with a game played), and what could not be
    read (each naming its file and line)."""
    played, problems = _played(folder / PLAYED)
    current = folder / FILE
    try:
        raw = current.read_bytes()[: MAX_FILE + 1]
    except FileNotFoundError:
        return played, problems
    except OSError as exc:
        return played, [*problems, f"{current}: {exc.strerror or exc}"]
    try:
        kept = loads(raw)
    except SeriesFileError as exc:
        return played, [*problems, f"{current}: {exc}"]
    if kept.id == LOCAL and kept.series is not None and kept.series.games:
        played.append(Played(kept.series, kept.names, kept.ended, kept.match))
    return played, problems


def _played(path: Path) -> tuple[list[Played], list[str]]:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_PLAYED + 1)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{path}: {exc.strerror or exc}"]
    problems = [f"{path}: larger than {MAX_PLAYED} bytes; the rest is not read"] * (
        len(raw) > MAX_PLAYED
    )
    played = []
    for number, line in enumerate(raw[:MAX_PLAYED].splitlines(), 1):
        if not line.strip():
            continue
        try:
            played.append(_line(line))
        except SeriesFileError as exc:
            problems.append(f"{path}:{number}: {exc}")
    return played, problems


def _line(line: bytes) -> Played:
    """One line of series-played.jsonl (`record`), checked into the model: its wins and its
    winner are the model's, computed again from the games, not taken from the line."""
    try:
        data = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SeriesFileError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SeriesFileError("not a series' record")
    games = data.get("games")
    if not isinstance(games, list):
        raise SeriesFileError("field 'games' is a list of games")
    body = {
        "best_of": data.get("best_of"),
        "earlier": data.get("earlier"),
        "games": [
            {k: g.get(k) for k in ("number", "home", "away", "decided")}
            if isinstance(g, dict)
            else g
            for g in games
        ],
    }
    try:
        series = parse_series(body)
    except SeriesFileError as exc:  # (its fields are the line's own, not under `series`)
        raise SeriesFileError(str(exc).replace("field 'series.", "field '")) from None
    ended, match = data.get("ended", ""), data.get("match", "")
    if not isinstance(ended, str) or len(ended) > 40:
        raise SeriesFileError(f"field 'ended' is a time ({ended!r:.40})")
    if not isinstance(match, str) or len(match) > 16:
        raise SeriesFileError(f"field 'match' is a match's id ({match!r:.40})")
    return Played(series, names_of(data.get("names")), ended, match)


def text(played: list[Played]) -> str:
    """The sheet for a person: a heading line per series, a line per game."""
    lines = []
    for number, p in enumerate(played, 1):
        s = p.series
        home, away = p.names["home"] or "HOME", p.names["away"] or "AWAY"
        state = s.state_text(home, away)
        head = [f"series {number}", f"best of {s.best_of}", f"{home} – {away}"]
        head.append(state if s.winner else f"under way: {state}")
        if p.ended:
            head.append(p.ended.replace("T", " ")[:16])
        lines.append(" · ".join(head))
        if sum(s.earlier):
            before = sum(s.earlier)
            lines.append(
                f"  games 1–{before}  {s.earlier[0]}:{s.earlier[1]} (known by their winners only)"
            )
        for g in s.games:
            game = {"home": g.home, "away": g.away, "decided": g.decided, "winner": g.winner}
            lines.append(f"  game {g.number}  {game_text(game, p.names)}")
    return "\n".join(lines)


def csv_text(played: list[Played]) -> str:
    """One row per game (CSV_COLUMNS), for a spreadsheet: the wins as they stood after it,
    the series' winner on its deciding game's row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for number, p in enumerate(played, 1):
        s = p.series
        home_wins, away_wins = s.earlier
        for g in s.games:  # (the wins after each game: the series as it stood)
            home_wins, away_wins = (
                home_wins + (g.winner == "home"),
                away_wins + (g.winner == "away"),
            )
            writer.writerow(
                (
                    number,
                    p.ended,
                    s.best_of,
                    p.names["home"],
                    p.names["away"],
                    g.number,
                    g.home,
                    g.away,
                    g.decided,
                    p.name(g.winner),
                    home_wins,
                    away_wins,
                    p.name(s.winner) if g is s.games[-1] else "",
                )
            )
    return out.getvalue()


def json_text(played: list[Played]) -> str:
    """Every series as its record (box/series.py `record`), in a list."""
    return json.dumps({"series": [p.record() for p in played]}, ensure_ascii=False, indent=2)
