"""A play-off match played as a series: best of N games (N odd, 3 to 9), the first side to
⌈N/2⌉ wins takes it (ITHF's A play-off "na čtyři vítězné zápasy", best of seven). The series
itself is the one model of rules/series.py; here, which of the tournament's matches are
series, and how long, by the round a match id names."""

from __future__ import annotations

import re
from collections.abc import Mapping

from timekeeper.rules.series import BEST_OF, MAX_GAMES, Game, Series, SeriesError, needed

__all__ = [
    "BEST_OF",
    "MAX_GAMES",
    "Game",
    "Series",
    "SeriesError",
    "best_of_for",
    "needed",
    "round_key",
]


def round_key(match_id: str) -> str:
    """The round a match id belongs to, as `best_of:` names it: QF2 → QF, R16-3 → R16,
    SF1 → SF, F, 3P, P7 → P; a placement play-off's own prefix (B.SF1) is left off."""
    bare = match_id.rsplit(".", 1)[-1]
    if bare in ("F", "3P"):
        return bare
    if bare.startswith("R") and "-" in bare:
        return bare.split("-", 1)[0]
    return re.sub(r"\d+$", "", bare)


def best_of_for(match_id: str, setting: Mapping[str, int]) -> int:
    """The series' length for a match: its round's (`QF: 7`), else `default`, else 1."""
    return setting.get(round_key(match_id), setting.get("default", 1))
