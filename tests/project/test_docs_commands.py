"""Every command in the docs runs as written: the `timekeeper` commands of README.md and
docs/*.md — in ```sh blocks, `$ timekeeper …` lines of any fenced block, and inline `timekeeper
…` spans with no placeholder — that are safe to run here (`show`, `check`, `render`,
`profiles`) are run through the CLI in a scratch folder. Each must exit 0; a `$` line whose
documented output is an error (`timekeeper: …`) must exit 2 with that very message, and any
other documented output must be printed as shown (paths aside)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import ROOT

from timekeeper import cli

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SAFE = ("show", "check", "render", "profiles")
# the files the docs' own examples name, as their readers would have them
FILES = {
    "mine.yaml": "title: Mine\nprestart: 20\nperiod:\n  melodie: 30\n",  # a typo at 4:3
    "fast.yaml": "extends: ithf\nprestart: 10\n",  # a pre-start ITHF does not allow (2:11)
}
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z0-9_]*\b|[\[\]|…<>]")  # PROFILE, [--svg FILE], a|b


@dataclass
class DocCommand:
    where: str  # file:line
    line: str
    output: list[str] = field(default_factory=list)  # documented output (`$` lines only)

    @property
    def argv(self) -> list[str]:
        words = shlex.split(self.line)
        return words[1:]  # without `timekeeper` (or `.venv/bin/timekeeper`)


def _commands_in(words: str) -> list[str]:
    """The timekeeper commands of a shell line: `a && b` is two, a comment is none."""
    words = re.sub(r"(^|\s)#\s.*$", "", words)
    return [
        part.strip()
        for part in words.split("&&")
        if re.match(r"(\.venv/bin/)?timekeeper\s", part.strip())
    ]


def doc_commands() -> list[DocCommand]:
    found: list[DocCommand] = []
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        name = doc.relative_to(ROOT)
        fence: str | None = None  # the language of the fenced block we are in
        joined, start = "", 0
        current: DocCommand | None = None
        for number, text in enumerate(lines, 1):
            if text.startswith("```"):
                fence = None if fence is not None else text[3:].strip() or "text"
                current = None
                continue
            if fence is None:
                for span in re.findall(r"`((?:\.venv/bin/)?timekeeper [^`]+)`", text):
                    if not PLACEHOLDER.search(span) and "/etc/" not in span:
                        found.append(DocCommand(f"{name}:{number}", span))
                continue
            if text.startswith("$ "):
                current = DocCommand(f"{name}:{number}", text[2:])
                if _commands_in(current.line):
                    found.append(current)
                continue
            if current is not None:  # what the `$` line prints
                current.output.append(text)
                continue
            if fence in ("sh", "bash", "shell", "console"):
                joined, start = (
                    (joined + " " if joined else "") + text.rstrip("\\"),
                    (start or number),
                )
                if text.endswith("\\"):
                    continue
                found += [DocCommand(f"{name}:{start}", c) for c in _commands_in(joined)]
                joined, start = "", 0
    return found


COMMANDS = doc_commands()
SAFE_COMMANDS = [c for c in COMMANDS if c.argv and c.argv[0] in SAFE]


def test_the_docs_have_commands_to_check() -> None:
    """The extraction finds the commands a newcomer copies (a guard against a parser that
    silently finds nothing)."""
    lines = {c.line for c in SAFE_COMMANDS}
    assert "timekeeper show ithf --svg docs/ithf.svg" in lines
    assert any(line.startswith("timekeeper render --profile hokejbal") for line in lines)
    assert "timekeeper check --profile mine.yaml" in lines
    assert any(c.argv[0] == "run" for c in COMMANDS)  # found, but not run here


def _plain(text: str) -> str:
    """Output with paths reduced to their file names (the docs show /home/pi/…)."""
    return re.sub(r"(?:/[\w.+-]+)+/([\w.+-]+)", r"\1", text).rstrip()


@pytest.mark.parametrize("doc", SAFE_COMMANDS, ids=lambda c: f"{c.where} {c.line}")
def test_a_documented_command_runs_as_written(
    doc: DocCommand, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    argv = doc.argv
    for option in ("-o", "--output", "--svg", "--events"):  # written into the scratch folder
        if option in argv:
            (tmp_path / argv[argv.index(option) + 1]).parent.mkdir(parents=True, exist_ok=True)
    code = cli.main(argv)
    out, err = capsys.readouterr()
    documented_error = [line for line in doc.output if line.startswith("timekeeper: ")]
    if documented_error:
        assert code == 2, f"{doc.where}: documented as an error, exit {code}\n{out}{err}"
        assert _plain(err) == _plain("\n".join(documented_error)), doc.where
        return
    assert code == 0, f"{doc.where}: `{doc.line}` exit {code}:\n{err}"
    if doc.output:
        assert _plain(out).splitlines() == [_plain(line) for line in doc.output], doc.where
