"""`--events FILE`: one JSON line per cue played, for referees' records and for measuring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from timekeeper.engine import Cue


class EventLog:
    """Live runs append (a day of matches in one file); a render replaces the file, so that
    it always describes the WAV beside it."""

    def __init__(self, path: Path, append: bool = True) -> None:
        self.path = path
        self._file: TextIO = path.open("a" if append else "w", encoding="utf-8", buffering=1)

    def record(self, cue: Cue, played: float) -> None:
        entry = {"cue": cue.name, "due": round(cue.due, 6), "played": round(played, 6),
                 "period": cue.period, "play_time": round(cue.play_time, 3)}
        if cue.count > 1:
            entry["count"] = cue.count
        if cue.offset:
            entry["offset"] = round(cue.offset, 6)
        self._file.write(json.dumps(entry) + "\n")

    def close(self) -> None:
        self._file.close()
