"""`--events FILE`: one JSON line per cue played, for referees' records and for measuring."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TextIO

from timekeeper.rules.engine import Cue


class EventLog:
    """Live runs append (a day of matches in one file); a render replaces the file, so that
    it always describes the WAV beside it. A silent run (no sound card) still records every
    cue, each with `"heard": false`."""

    def __init__(self, path: Path, append: bool = True, profile: str = "",
                 wall_clock: bool = False, heard: bool = True) -> None:
        self.path, self.profile, self.wall_clock = path, profile, wall_clock
        self.heard = heard
        self._file: TextIO = path.open("a" if append else "w", encoding="utf-8", buffering=1)

    def record(self, cue: Cue, played: float) -> None:
        entry: dict[str, object] = {
            "cue": cue.name, "due": round(cue.due, 6), "played": round(played, 6),
            "period": cue.period, "play_time": round(cue.play_time, 3)}
        if cue.name in ("minute", "third"):
            entry["count"] = cue.count
        if self.profile:
            entry["profile"] = self.profile
        if self.wall_clock:  # for people reading the record; never used for timing
            entry["time"] = datetime.now().astimezone().isoformat(timespec="milliseconds")
        if cue.offset:
            entry["offset"] = round(cue.offset, 6)
        if cue.detail:  # whose penalty or time-out ended
            entry["detail"] = cue.detail
        if not self.heard:
            entry["heard"] = False
        self._file.write(json.dumps(entry) + "\n")

    def close(self) -> None:
        self._file.close()
