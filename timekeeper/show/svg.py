"""`timekeeper show PROFILE --svg FILE`: the timeline as a picture for the README and for
people writing their own profiles. One row per part of the match on a shared time scale."""

from __future__ import annotations

from html import escape

from timekeeper.rules.profiletypes import Period, Profile
from timekeeper.show.status import clock_text

WIDTH = 900
LEFT = 150  # room for row labels (and the pre-start lead)
RIGHT = 40
ROW = 78
TOP = 58
COLOURS = {
    "bar": "#2f6fb3",
    "overtime": "#8a4fb3",
    "melody": "#f2b233",
    "mark": "#c0392b",
    "prestart": "#7f8c8d",
    "text": "#222",
    "grid": "#d5d8dc",
}


def svg(profile: Profile) -> str:
    timed = [p.length for p in profile.periods if p.length is not None]
    span = max(timed) if timed else 60.0
    lead = profile.prestart
    scale = (WIDTH - LEFT - RIGHT) / (span + lead)
    x0 = LEFT + lead * scale  # x of a period's start

    def x(seconds: float) -> float:
        return x0 + seconds * scale

    rows = len(profile.periods)
    footer = _footer(profile)
    height = TOP + rows * ROW + 20 + 18 * len(footer)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        f'font-size="13">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        _text(16, 26, f"{profile.key} — {profile.title}", size=16, weight="bold"),
        _text(
            16,
            45,
            "N = beeps of a mark (N minutes / thirds left) · "
            "yellow = last-30 melody · S start · | end of period · E final signal",
            size=12,
        ),
    ]
    step = 60 if span >= 120 else max(1.0, round(span / 6))
    for i, period in enumerate(profile.periods):
        y = TOP + i * ROW + 30
        out.append(_text(16, y + 5, period.name, weight="bold"))
        length = "untimed" if period.length is None else clock_text(period.length)
        out.append(_text(16, y + 22, length, size=12))
        if i == 0 and lead:
            out.append(
                f'<line x1="{x(-lead):.1f}" y1="{y}" x2="{x0:.1f}" y2="{y}" '
                f'stroke="{COLOURS["prestart"]}" stroke-width="4" stroke-dasharray="6 4"/>'
            )
            out.append(
                _text(x(-lead), y - 12, f"pre-start −{clock_text(lead)}", size=11, anchor="start")
            )
        out += _period_row(period, y, x, step)
    for k, line in enumerate(footer):
        out.append(_text(16, TOP + rows * ROW + 14 + 18 * k, line, size=12))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _period_row(p: Period, y: float, x, step: float) -> list[str]:
    colour = COLOURS["overtime"] if p.overtime else COLOURS["bar"]
    if p.length is None:
        return [
            f'<line x1="{x(0):.1f}" y1="{y}" x2="{x(60):.1f}" y2="{y}" stroke="{colour}" '
            f'stroke-width="10" stroke-dasharray="10 6"/>',
            _flag(x(0), y, "S"),
            _text(
                x(60) + 10,
                y + 5,
                "sudden death: ends at the deciding goal (NEXT)",
                size=12,
                anchor="start",
            ),
        ]
    out = []
    t = 0.0
    while t <= p.length + 1e-9:
        out.append(
            f'<line x1="{x(t):.1f}" y1="{y + 8}" x2="{x(t):.1f}" y2="{y + 14}" stroke="#888"/>'
        )
        out.append(_text(x(t), y + 27, clock_text(t), size=10))
        t += step
    if p.melody:
        out.append(
            f'<rect x="{x(p.length - p.melody):.1f}" y="{y - 9}" '
            f'width="{p.melody * (x(1) - x(0)):.1f}" height="18" rx="3" '
            f'fill="{COLOURS["melody"]}"/>'
        )
    out.append(
        f'<line x1="{x(0):.1f}" y1="{y}" x2="{x(p.length):.1f}" y2="{y}" '
        f'stroke="{colour}" stroke-width="6" stroke-linecap="round"/>'
    )
    for mark in p.marks:
        mx = x(p.length - mark.remaining)
        out.append(
            f'<line x1="{mx:.1f}" y1="{y - 12}" x2="{mx:.1f}" y2="{y + 8}" '
            f'stroke="{COLOURS["mark"]}" stroke-width="2"/>'
        )
        label = "F" if mark.cue == "forfeit" else str(mark.count)  # ITHF 4.6's forfeit point
        out.append(_text(mx, y - 16, label, size=12, weight="bold", fill=COLOURS["mark"]))
    out.append(_flag(x(0), y, "S"))
    out.append(_flag(x(p.length), y, "E" if p.end_cue == "end" else "|"))
    return out


def _footer(profile: Profile) -> list[str]:
    lines = []
    if profile.intermission:
        b = profile.intermission
        warn = f", warning {b.warning:g} s before it ends" if b.warning else ""
        warn = ", a signal when it ends" if b.warning == 0 else warn
        starts = profile.periods[1].starts if len(profile.periods) > 1 else "operator"
        then = "the next period starts by itself" if starts == "auto" else "NEXT starts it"
        lines.append(f"Between periods: a {b.length:g}-s break{warn}; {then}.")
    elif profile.regulation > 1:
        lines.append("Between periods: the referee starts each period (NEXT).")
    if any(p.overtime for p in profile.periods):
        lines.append(
            "Overtime is played on a draw: NEXT starts it; in sudden death NEXT at the "
            "goal ends the match (FINISH ends it otherwise)."
        )
    if profile.shootout:
        s = profile.shootout
        shots = f"{s.first} shot{'' if s.first == 1 else 's'} each"
        if s.shot is None:
            lines.append(
                f"Shoot-out: {shots}, then {s.then} each until decided; NEXT starts an "
                "attempt, its result is entered; the match ends once it is decided."
            )
        else:
            lines.append(
                f"Shoot-out: {shots}, then {s.then} each until decided; "
                f"{s.shot:g} s per shot (NEXT starts a shot; entered results end "
                "it once decided, or FINISH)."
            )
    if profile.penalties:
        pen = profile.penalties
        lengths = ", ".join(f"{k} {clock_text(v)}" for k, v in pen.lengths.items())
        lines.append(
            f"Net time: the clock stops on every whistle; penalties run with it, "
            f"{pen.running} per team at once: {lengths}, game misconduct."
        )
        if pen.power_play_goal_ends_minor:
            lines.append("A power-play goal ends the short-handed team's first running minor.")
    if profile.timeout:
        lines.append(
            f"Time-out: {profile.timeout.per_team} of {profile.timeout.length:g} s per "
            "team, while the clock is stopped, ended by timeout_end."
        )
    if profile.follows:
        lines.append(f"Follows {profile.follows.upper()}: checked against its rules at load.")
    return lines


def _flag(x: float, y: float, label: str) -> str:
    return (
        f'<circle cx="{x:.1f}" cy="{y}" r="9" fill="white" stroke="#222" stroke-width="1.5"/>'
        + _text(x, y + 4.5, label, size=11, weight="bold")
    )


def _text(
    x: float,
    y: float,
    text: str,
    size: int = 13,
    weight: str = "normal",
    anchor: str | None = None,
    fill: str = COLOURS["text"],
) -> str:
    anchor = anchor or ("middle" if x > 100 else "start")
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" font-weight="{weight}" '
        f'text-anchor="{anchor}" fill="{fill}">{escape(text)}</text>'
    )
