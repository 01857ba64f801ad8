"""Draw the engine's state diagram from its table (rules/engine.py, `TRANSITIONS`) into the
engine's docstring and docs/how-it-works.md, between their markers, so that neither can
disagree with the table; tests/rules/test_state_diagram.py fails when they do.

    .venv/bin/python scripts/draw_states.py           # rewrite both in place
    .venv/bin/python scripts/draw_states.py --check   # exit 1 if either differs
"""

from __future__ import annotations

import sys
from pathlib import Path

from timekeeper.rules.engine import TRANSITIONS

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- states: drawn by scripts/draw_states.py -->", "<!-- /states -->"
# file → how the diagram is set in it: (its indent, the lines around it)
PLACES = {
    ROOT / "timekeeper/rules/engine.py": ("    ", [], []),
    ROOT / "docs/how-it-works.md": ("  ", ["  ```text"], ["  ```"]),  # (in a list item)
}


def drawn(text: str, indent: str, before: list[str], after: list[str]) -> str:
    """`text` with the diagram between its markers redrawn from the table."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"no {BEGIN} … {END} markers")
    body = before + [indent + line for line in TRANSITIONS.diagram()] + after
    return head + BEGIN + "\n" + "\n".join(body) + "\n" + indent + END + tail


def main(argv: list[str]) -> int:
    check, stale = "--check" in argv, []
    for path, (indent, before, after) in PLACES.items():
        text = path.read_text(encoding="utf-8")
        new = drawn(text, indent, before, after)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print(
            f"the state diagram differs from TRANSITIONS in {', '.join(map(str, stale))}: "
            "run scripts/draw_states.py",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
