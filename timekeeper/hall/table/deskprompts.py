"""What the desk can do with a table, said after the reason a table refused a hall command.

A table's own refusal names its operator's controls (START/NEXT, the keys, `ctl`): at the
desk they mean nothing. The desk has its own commands — start, stop, resume, add, next and
reset, the overview page's "… all" buttons and `timekeeper hall KIND` — and a refusal it
receives names those, or says that what is needed is the table's operator's (FINISH, the
shoot-out's attempts)."""

from __future__ import annotations

import math

from timekeeper.rules.match import the


def desk_prompt(status: dict) -> str:
    """`: what the desk can do now` for a table whose status (`Status.to_dict()`) is
    `status`."""
    return f": from the desk, {what_the_desk_can(status)}"


def what_the_desk_can(status: dict) -> str:
    state = status.get("state")
    waiting = str(status.get("waiting_for") or "")
    if state == "idle":
        return "start begins the match"
    if state == "finished":
        return "reset makes the table ready for the next round, then start begins it"
    if state == "prestart":
        left = math.ceil((status.get("countdown") or 0.0) - 1e-9)
        return f"none: the start comes by itself in {left} s (reset calls it off)"
    if state == "running":
        return "stop stops the clock; add corrects it"
    if state == "stopped":
        return "resume goes on; add corrects the clock"
    if state in ("break", "waiting"):
        if waiting == "finish":
            return (
                "finish ends it (the match is decided: the table's operator's f, or hall "
                "finish); reset makes the table ready for the next round"
            )
        what = the(waiting.removeprefix("next: ")) if waiting else "the next part"
        return f"next starts {what}" + (
            "; finish ends the match instead"
            if state == "waiting" and status.get("period", 0) >= status.get("periods", 1)
            else ""
        )
    if state in ("shootout", "shot"):
        return (
            "none: the shoot-out is the table operator's (its shots and attempts); reset "
            "makes the table ready for the next round"
        )
    return "reset makes the table ready for the next round"
