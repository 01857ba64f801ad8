"""The docs, the code, the tests and the benches speak of the project as it is, not of the
work that made it: no "issue N" in them (the tracker's numbers mean nothing to a reader of
a release, and go stale as soon as the next change lands)."""

from __future__ import annotations

import re

from helpers import ROOT

# built from parts, so that this file does not name itself
HISTORY = re.compile(r"\b" + "issue" + r"s?\s+#?\d+", re.IGNORECASE)
WHERE = ("README.md", "docs", "timekeeper", "tests", "bench", "scripts", ".ci", "systemd")
TEXT = {".py", ".md", ".sh", ".yaml", ".yml", ".js", ".html", ".css", ".toml", ".txt", ""}


def test_no_issue_numbers_in_the_project() -> None:
    found = []
    for top in WHERE:
        base = ROOT / top
        for path in [base] if base.is_file() else sorted(base.rglob("*")):
            if not path.is_file() or path.suffix not in TEXT or "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                if HISTORY.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, "the project's history in its files:\n" + "\n".join(found)
