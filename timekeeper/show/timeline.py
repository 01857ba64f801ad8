"""`timekeeper show`: a profile's timeline, drawn from a replay of the real engine so that
what people read is exactly what the box will do."""

from __future__ import annotations

import textwrap

from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Cue
from timekeeper.rules.profiletypes import Period, Profile
from timekeeper.rules.replay import Step, replay
from timekeeper.show.status import clock_text, elapsed_text

BAR = 60
CUE_NOTES = {
    "prestart": "pre-start signal (START pressed)",
    "start": "start signal",
    "last30": "melody over the rest of the period",
    "period_end": "end of period",
    "end": "final signal",
    "break_warning": "the break ends soon",
    "shot_start": "shot starts",
    "shot_end": "shot time is up",
    "penalty_end": "penalty served:",
    "timeout_end": "time-out over:",
    "forfeit": "forfeit point",
    "goal": "goal:",
}


def signed(seconds: float) -> str:
    return ("-" if seconds < 0 else " ") + clock_text(abs(seconds))


def period_bar(p: Period) -> str:
    """`[S····4····3····2····1··~~~E]`: marks as their beep count, ~ the melody."""
    if p.length is None:
        return "[S ··· untimed: ends at the deciding goal (NEXT)]"
    cells = ["·"] * BAR
    for i in range(BAR):
        if p.melody and (BAR - i) * p.length / BAR <= p.melody + 1e-9:
            cells[i] = "~"
    for mark in p.marks:
        i = min(BAR - 1, round((p.length - mark.remaining) / p.length * BAR))
        cells[i] = "F" if mark.cue == "forfeit" else str(mark.count) if mark.count < 10 else "+"
    end = "E" if p.end_cue == "end" else "|"
    return "[S" + "".join(cells) + end + "]"


def describe(profile: Profile, steps: list[Step] | None = None) -> list[str]:
    lines = [f"{profile.key} — {profile.title}", f"  file: {profile.source}"]
    if profile.description:  # its rules, and the aids it adds to them
        lines += textwrap.wrap(profile.description, 88, initial_indent="  ", subsequent_indent="  ")
    facts = [f"ADD gives {profile.add_step:g} s"]
    if profile.follows:
        facts.insert(0, f"follows {profile.follows.upper()} (checked at load)")
    if profile.prestart:
        facts.append(f"pre-start {profile.prestart:g} s before the start")
    brk = profile.intermission
    if brk:
        warn = f", warning {brk.warning:g} s before its end" if brk.warning else ""
        warn = ", a signal at its end" if brk.warning == 0 else warn
        facts.append(f"{brk.length:g} s break between periods{warn}")
    if profile.shootout:
        s = profile.shootout
        shots = f"{s.first} shot{'' if s.first == 1 else 's'} each"
        limit = "untimed attempts" if s.shot is None else f"{s.shot:g} s per shot"
        facts.append(f"shoot-out: {shots}, then {s.then} each, {limit}")
    if profile.penalties:
        pen = profile.penalties
        lengths = ", ".join(f"{k} {clock_text(v)}" for k, v in pen.lengths.items() if k != "match")
        facts.append(
            f"penalties {lengths}, game misconduct, match {clock_text(pen.match)} "
            f"and out; {pen.running} per team at once"
        )
        if pen.power_play_goal_ends_minor:
            facts.append("a power-play goal ends a minor")
    if profile.forfeit_signal:
        facts.append("forfeit signal 30 s after the start (ITHF 4.6)")
    if profile.no_show:
        facts.append(f"no-show countdown {clock_text(profile.no_show)}")
    if profile.timeout:
        facts.append(
            f"{profile.timeout.per_team} time-out of {profile.timeout.length:g} s per team"
        )
    lines.append("  " + " · ".join(facts))
    lines.append("")
    width = max(len(p.name) for p in profile.periods)
    for p in profile.periods:
        length = "untimed" if p.length is None else clock_text(p.length)
        lines.append(f"  {p.name:<{width}} {length:>7}  {period_bar(p)}")
    lines.append("")
    lines.append(f"  {'clock':>8}  {'play':>6}  cue  (clock: since the first start signal)")
    result = replay(profile, steps or [])
    presses = result.presses[1:]
    for i, cue in enumerate([*result.cues, None]):
        while presses and (cue is None or presses[0].first_cue <= i):
            lines.append(
                f"  {signed(presses[0].at - result.start):>8}            "
                f"(operator: {_press_text(presses.pop(0).command)})"
            )
        if cue is None or cue.stop:
            continue
        lines.append(_cue_line(cue, result.start, shootout=cue.period > len(profile.periods)))
    for step in result.unused:
        lines.append(f"  (not applied: {step.at:g}:{step.command} comes after the end)")
    return lines


def _press_text(command: Command) -> str:
    """`PAUSE`, and with their arguments the ball-hockey commands: `PENALTY home minor 17`."""
    what = command.action.value.upper()
    if command.team:
        what += " " + str(command).partition("=")[2].replace(":", " ")
    elif command.action is Action.SET:
        what += " " + str(command).partition("=")[2]
    return what


def _cue_line(cue: Cue, start: float, shootout: bool = False) -> str:
    name = cue.name + (f" ×{cue.count}" if cue.count > 1 else "")
    note = CUE_NOTES.get(cue.name, "")
    if cue.name in ("minute", "third") and cue.remaining is not None:
        note = f"{clock_text(cue.remaining)} left"
    if cue.detail:
        note = f"{note} {cue.detail}"
    play = elapsed_text(cue.play_time) if cue.period and not shootout else ""
    part = "so" if shootout else f"p{cue.period or '-'}"
    return f"  {signed(cue.due - start):>8}  {play:>6}  {part} {name:<14} {note}"
