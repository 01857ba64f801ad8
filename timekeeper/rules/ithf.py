"""The ITHF rule set's timing (ITHF 4.1, 4.4, 4.8): a profile that says `follows: ithf`
is held to it at load, so that a box never runs a match under ITHF's name that ITHF's rules
do not allow."""

from __future__ import annotations

from typing import Any

from timekeeper.rules.profiletypes import Profile
from timekeeper.rules.yamldoc import ConfigError, Doc, Path_

LEAVE_ITHF = "; a club profile with other times says `follows: none` (see docs/profiles.md)"


def check(p: Profile, doc: Doc, marks_spec: Any, beeps: str) -> None:
    """A profile that says it follows ITHF must keep ITHF's timing rules. Each refusal says
    the way out: a club profile with its own times leaves ITHF with `follows: none`."""

    def breaks(path: Path_, message: str) -> ConfigError:
        return doc.error(path, f"breaks ITHF rule {message}{LEAVE_ITHF}")

    if not 15 <= p.prestart <= 30:
        raise breaks(
            ("prestart",),
            f"4.4: {p.prestart:g} s, but the pre-start signal must "
            "sound between 30 and 15 s before the start",
        )
    first = p.periods[0]
    if p.regulation != 1 or first.length != 300:
        raise breaks(("period",), "4.1: a match is one period of 5 minutes (length: 300, count: 1)")
    if marks_spec not in ("minutes", "thirds"):
        raise breaks(
            ("period", "marks"),
            "4.4: the timer must mark every minute or every third (minutes or thirds)",
        )
    if marks_spec == "minutes" and beeps != "count":
        raise breaks(
            ("period", "mark_beeps"),
            "4.4: with minute marks the number of beeps "
            "equals the minutes still to play (001 4.4; "
            "mark_beeps: count)",
        )
    if first.melody != 30:
        raise breaks(
            ("period", "melody"),
            "4.4: the last 30 seconds must be filled with a melody (melody: 30)",
        )
    for i, part in enumerate(p.periods[1:]):
        if part.length is not None or not part.sudden_death:
            raise breaks(
                ("overtime", i),
                "4.8: a drawn play-off match goes to a sudden-death "
                "overtime with no time limit (untimed: true), the "
                "first valid goal wins; nothing follows it",
            )
    if p.shootout is not None:
        raise breaks(
            ("shootout",),
            "4.8: a drawn play-off match is decided by a sudden-death overtime, not a shoot-out",
        )
