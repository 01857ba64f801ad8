"""Draw docs/img/desk.svg: the desk at work, as a sequence picture (a result from the bus to
the board, a round called, a correction), from the table of lanes and steps below, so that
the picture is redrawn, never edited; tests/project/test_docs_desk.py fails when it is stale.

Each lane names the modules it is made of by what they define (a class, or a file's name),
looked up in the package's source where they are now: a module moved to another folder
changes the picture when it is drawn again, and a name that is gone stops the drawing.

    .venv/bin/python scripts/draw_desk.py           # rewrite docs/img/desk.svg
    .venv/bin/python scripts/draw_desk.py --check   # exit 1 if it differs
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "timekeeper"
PICTURE = ROOT / "docs" / "img" / "desk.svg"
WHERE = (PACKAGE, ROOT / "systemd")  # where a part named by its file is looked for
TOP_LEVEL = re.compile(r"^(?:class|def|async def) (\w+)", re.M)  # (a module's own, unindented)


@dataclass(frozen=True)
class Lane:
    key: str
    title: str
    parts: tuple[str, ...]  # a class or function the package defines, or a file's name
    desk: bool = False  # one of `hall serve`'s own jobs (drawn inside the desk's frame)


@dataclass(frozen=True)
class Step:
    """An arrow from lane `src` to lane `dst` (a note on `src` where they are the same);
    `kind`: "ask" (a message, a call), "answer", or "else" (what happens otherwise)."""

    src: str
    dst: str
    label: str
    kind: str = "ask"


@dataclass(frozen=True)
class Flow:
    title: str
    steps: tuple[Step, ...]


LANES = (
    Lane("box", "a box at table T", ("MatchLink", "HallLink")),
    Lane("broker", "Mosquitto", ("mosquitto-hall.acl",)),
    Lane("director", "the desk's face", ("Director", "Desk"), desk=True),
    Lane("inbox", "results inbox", ("Intake", "Gate", "Records"), desk=True),
    Lane("rounds", "calling rounds", ("Rounds", "CallBook"), desk=True),
    Lane("ledger", "files, ledger", ("DeskFiles", "clerk.py", "Ledger", "Tournament"), desk=True),
    Lane("view", "the board's view", ("BoardView", "Board"), desk=True),
    Lane("socket", "the desk's socket", ("DeskSocket",), desk=True),
    Lane("terminal", "a terminal", ("desk_client.py",)),
    Lane("page", "the board page", ("board.js",)),
)

FLOWS = (
    Flow(
        "A result from the bus to the board",
        (
            Step(
                "box",
                "broker",
                "result, retained: timekeeper/HALL/T/result (kept in hall-match.json)",
            ),
            Step("broker", "broker", "ACL: only table T's user writes …/T/result"),
            Step("broker", "director", "to the desk's subscription (paho's thread)"),
            Step("director", "inbox", "T's rate gate (counted before it is read), then parsed"),
            Step(
                "inbox",
                "inbox",
                "checked: the pairing called at T, as called; its id not in the ledger yet",
            ),
            Step("inbox", "ledger", "clerk.result checks it; written with its id as source"),
            Step("inbox", "rounds", "a series' game: its next game called (the pairing again)"),
            Step("page", "view", "GET /api/board, polled"),
            Step("view", "ledger", "the round, standings, bracket"),
            Step("view", "page", "the result, the standings, the bracket", "answer"),
            Step(
                "inbox",
                "view",
                "or it waits for the director: the board's pending (accept, refuse)",
                "else",
            ),
            Step(
                "inbox",
                "inbox",
                "a file unreadable: held (one record a result), tried again when it changes",
                "else",
            ),
        ),
    ),
    Flow(
        "A round called",
        (
            Step("terminal", "socket", "timekeeper hall round N: one JSON line to cup.desk.sock"),
            Step("socket", "socket", "0600; size, rate and every field checked"),
            Step("socket", "director", "Director.call_round(N)"),
            Step("director", "rounds", "Rounds.call_round(N), under the desk's lock"),
            Step("rounds", "ledger", "the round's matches; the calls written (cup.calls.jsonl)"),
            Step("rounds", "broker", "a pairing per table, retained: timekeeper/HALL/T/pairing"),
            Step("broker", "box", "its pairing (ACL: T's own only)"),
            Step("box", "box", "taken when the table is idle (held during a match)"),
            Step("socket", "terminal", "table T: match, players (printed)", "answer"),
            Step("box", "broker", "its status, past idle (retained)"),
            Step("broker", "director", "the table's status"),
            Step("director", "rounds", "the match begun: kept in the calls file"),
        ),
    ),
    Flow(
        "A correction",
        (
            Step("terminal", "socket", "timekeeper tournament result R T S --reason …"),
            Step("socket", "director", "submit: the entry made by the desk"),
            Step(
                "director", "ledger", "clerk.result, with the matches begun; written (one writer)"
            ),
            Step("ledger", "ledger", "the series, the standings, the knock-out re-seeded"),
            Step("director", "rounds", "Rounds.recall"),
            Step("rounds", "broker", "a match not begun called again with its new players"),
            Step("broker", "box", "the new pairing (retained)"),
            Step("socket", "terminal", "the entry as written, its number (printed)", "answer"),
            Step(
                "terminal",
                "terminal",
                "no desk serving: the ledger written here, under its lock",
                "else",
            ),
            Step(
                "box",
                "inbox",
                "a table's change of a game of a decided series: waits for the director",
                "else",
            ),
        ),
    ),
)

# ---------------------------------------------------------------------- where the parts are


@cache
def definitions() -> dict[str, list[Path]]:
    """Every class and function defined at the top of a module of the package -> where."""
    found: dict[str, list[Path]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in TOP_LEVEL.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(path)
    return found


def where(part: str) -> str:
    """The file `part` is: the module defining it (a name) or the one file of that name,
    shown from inside the package (`hall/desk/intake.py`), or by its name (the broker's ACL)."""
    if "." in part:
        paths = sorted({p for folder in WHERE for p in folder.rglob(part)})
    else:
        paths = definitions().get(part, [])
    if len(paths) != 1:
        found = ", ".join(str(p.relative_to(ROOT)) for p in paths) or "nowhere"
        raise LookupError(f"a lane's part {part!r} is one file, not {found}: mend LANES")
    path = paths[0]
    return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else path.name


def modules(lane: Lane) -> list[str]:
    """The lane's files, each once, in the order its parts name them."""
    return list(dict.fromkeys(where(part) for part in lane.parts))


# ---------------------------------------------------------------------- the drawing

LANE_W, MARGIN, TOP = 142, 16, 34
ROW, FLOW_GAP, NOTE_H = 30, 40, 20
INK, MUTED, ELSE, DESK = "#222", "#888", "#c0392b", "#eef3fb"
FONT = "DejaVu Sans, Verdana, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, monospace"
CHAR = 6.4  # px, a character of the 11-px labels, about (for the notes' boxes)


def x_of(key: str) -> float:
    index = next(i for i, lane in enumerate(LANES) if lane.key == key)
    return MARGIN + LANE_W * index + LANE_W / 2


def t(x: float, y: float, body: str, size: int = 11, halo: bool = False, **attrs: str) -> str:
    """A text; `halo`: a white edge, read over the lanes' lines it crosses."""
    if halo:
        attrs.update(stroke="#fff", stroke_width="3", paint_order="stroke")
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}"{extra}>{escape(body)}</text>'


def heads() -> tuple[list[str], float]:
    """The lanes' heads (a title, its files) and the desk's frame; where the lanes begin."""
    files = [modules(lane) for lane in LANES]
    tall = 22 + 13 * max(len(f) for f in files)
    out: list[str] = []
    inside = [i for i, lane in enumerate(LANES) if lane.desk]
    left = MARGIN + LANE_W * inside[0] + 3
    right = MARGIN + LANE_W * (inside[-1] + 1) - 3
    out.append(
        f'<rect x="{left}" y="{TOP - 26}" width="{right - left}" height="{tall + 30}" '
        f'rx="8" fill="{DESK}" stroke="#9db3d6"/>'
    )
    out.append(
        t(
            left + 8,
            TOP - 11,
            "the desk: timekeeper hall serve --tournament cup.yaml (the ledger's one writer)",
            12,
            font_weight="bold",
            fill="#34507a",
        )
    )
    for lane, names in zip(LANES, files, strict=True):
        x = x_of(lane.key)
        out.append(
            f'<rect x="{x - LANE_W / 2 + 6}" y="{TOP}" width="{LANE_W - 12}" height="{tall}" '
            f'rx="5" fill="#fff" stroke="{INK}"/>'
        )
        out.append(t(x, TOP + 15, lane.title, 12, text_anchor="middle", font_weight="bold"))
        for i, name in enumerate(names):
            out.append(
                t(
                    x,
                    TOP + 30 + 13 * i,
                    name,
                    10,
                    text_anchor="middle",
                    font_family=MONO,
                    fill="#444",
                )
            )
    return out, TOP + tall


def arrow(y: float, a: float, b: float, kind: str) -> str:
    colour = ELSE if kind == "else" else INK
    dash = ' stroke-dasharray="5 4"' if kind != "ask" else ""
    head = "else" if kind == "else" else "ink"
    return (
        f'<line x1="{a:.1f}" y1="{y:.1f}" x2="{b:.1f}" y2="{y:.1f}" stroke="{colour}" '
        f'stroke-width="1.4"{dash} marker-end="url(#{head})"/>'
    )


def number(x: float, y: float, n: int, kind: str) -> str:
    colour = ELSE if kind == "else" else INK
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="{colour}"/>' + t(
        x, y + 3.5, str(n), 10, text_anchor="middle", fill="#fff", font_weight="bold"
    )


def step(s: Step, n: int, y: float) -> list[str]:
    """One numbered step: an arrow with its label above it, or a note on its lane."""
    colour = ELSE if s.kind == "else" else INK
    a, b = x_of(s.src), x_of(s.dst)
    if a == b:
        width = CHAR * len(s.label) + 16
        left = min(max(a - width / 2 + 8, MARGIN + 12), MARGIN + LANE_W * len(LANES) - width)
        return [
            f'<rect x="{left:.1f}" y="{y - NOTE_H / 2:.1f}" width="{width:.1f}" '
            f'height="{NOTE_H}" rx="4" fill="#fffbe6" stroke="{colour}"/>',
            number(left - 2, y, n, s.kind),
            t(left + 11, y + 4, s.label, fill=colour),
        ]
    towards = 1 if b > a else -1
    out = [arrow(y + 5, a + towards * 10, b - towards * 2, s.kind), number(a, y + 5, n, s.kind)]
    # the label above the arrow, from its start, in the arrow's direction (it may run past)
    if towards > 0:
        out.append(t(a + 12, y - 1, s.label, fill=colour, halo=True))
    else:  # (kept inside the picture: a long label runs left only as far as its edge)
        end = max(a - 12, MARGIN + 4 + CHAR * len(s.label))
        out.append(t(end, y - 1, s.label, fill=colour, text_anchor="end", halo=True))
    return out


def svg() -> str:
    width = 2 * MARGIN + LANE_W * len(LANES)
    out, y = heads()
    body: list[str] = []
    y += 28
    for f, flow in enumerate(FLOWS):
        body.append(
            f'<rect x="{MARGIN}" y="{y - 18}" width="{width - 2 * MARGIN}" height="24" '
            f'fill="#f2f2f2"/>'
        )
        body.append(t(MARGIN + 8, y, f"{f + 1}. {flow.title}", 14, font_weight="bold"))
        y += 30
        for n, s in enumerate(flow.steps, 1):
            body += step(s, n, y)
            y += ROW
        y += FLOW_GAP - ROW + 14
    lifelines = [
        f'<line x1="{x_of(lane.key):.1f}" y1="{TOP}" x2="{x_of(lane.key):.1f}" '
        f'y2="{y - FLOW_GAP + 10:.1f}" stroke="{MUTED}" stroke-dasharray="2 3"/>'
        for lane in LANES
    ]
    legend = [
        arrow(y, MARGIN + 8, MARGIN + 48, "ask"),
        t(MARGIN + 56, y + 4, "a message or a call"),
        arrow(y, MARGIN + 200, MARGIN + 240, "answer"),
        t(MARGIN + 248, y + 4, "its answer"),
        arrow(y, MARGIN + 360, MARGIN + 400, "else"),
        t(
            MARGIN + 408,
            y + 4,
            "otherwise: what waits for the director, or is done without the desk",
            fill=ELSE,
        ),
        t(
            width - MARGIN,
            y + 4,
            "drawn by scripts/draw_desk.py",
            10,
            text_anchor="end",
            fill=MUTED,
        ),
    ]
    height = y + 20
    markers = "".join(
        f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
        f'markerHeight="8" orient="auto-start-reverse"><path d="M0,1 L10,5 L0,9 z" '
        f'fill="{colour}"/></marker>'
        for name, colour in (("ink", INK), ("else", ELSE))
    )
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0f}" '
            f'viewBox="0 0 {width} {height:.0f}" font-family="{FONT}">',
            f"<defs>{markers}</defs>",
            f'<rect width="{width}" height="{height:.0f}" fill="#fff"/>',
            *lifelines,
            *out,
            *body,
            *legend,
            "</svg>",
            "",
        ]
    )


def main(argv: list[str]) -> int:
    drawn = svg()
    if "--check" in argv:
        if not PICTURE.exists() or PICTURE.read_text(encoding="utf-8") != drawn:
            print(
                f"{PICTURE.relative_to(ROOT)} differs from scripts/draw_desk.py's table: "
                "run scripts/draw_desk.py",
                file=sys.stderr,
            )
            return 1
        return 0
    PICTURE.write_text(drawn, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
