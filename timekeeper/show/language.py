"""The hall's language: every word the pages, the hall overview and the status line show, read
from one JSON file per language (lang/cs.json, …), which a club corrects without touching code.

A file has the sections `pages` (display, operator page, overlay), `parts` (the match's parts:
"period {n}", "overtime", …), `hall` (the desk's overview) and `line` (the terminal status
line), each a flat mapping of key -> text; `{name}` is filled in where the text is shown, so a
translation keeps the English text's placeholders. A file in a user folder
($TIMEKEEPER_LANG_PATH, else ~/.config/timekeeper/lang or /etc/timekeeper/lang) corrects the
built-in one: it may hold only the words it changes, and is checked as strictly."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from timekeeper.rules.data import builtin_dir, user_dirs
from timekeeper.rules.yamldoc import ConfigError

DEFAULT = "en"
# the hall's languages, in the order docs and errors name them
LANGUAGES = ("en", "cs", "sk", "pl", "sl", "de", "sv", "fi")
SECTIONS = ("pages", "parts", "hall", "line", "series")
MAX_FILE = 64 * 1024  # bytes of a language file
MAX_TEXT = 200  # characters of one text

Words = dict[str, dict[str, str]]


def check(code: object) -> str:
    """`code` if it is a known language, else ValueError naming the known ones."""
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}; known: {', '.join(LANGUAGES)}")
    return str(code)


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


def builtin_file(code: str) -> Path:
    return builtin_dir("lang") / f"{check(code)}.json"


@cache
def english() -> Words:
    return _read(builtin_file(DEFAULT), None)


@cache
def words(code: str) -> Words:
    """The words of language `code`: the built-in file, corrected by a user file if there is
    one. Raises ConfigError (file, line, key) for a file that is not right."""
    base = english() if code == DEFAULT else _read(builtin_file(code), english())
    for folder in user_dirs("lang"):
        own = folder / f"{code}.json"
        if own.is_file():
            fixes = _read(own, english(), partial=True)
            return {section: base[section] | fixes.get(section, {}) for section in SECTIONS}
    return base


def _read(file: Path, model: Words | None, partial: bool = False) -> Words:
    """A language file, checked against the English `model` (None: it is the English one):
    the same sections and keys (a user's correction may leave keys out), texts of at most
    MAX_TEXT characters with the same {placeholders}."""
    raw = file.read_bytes()
    if len(raw) > MAX_FILE:
        raise ConfigError(f"a language file is at most {MAX_FILE} bytes", file)
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(exc.msg, f"{file}:{exc.lineno}:{exc.colno}") from None
    if not isinstance(data, dict):
        raise ConfigError("must be a JSON object of sections", file)

    def error(message: str, key: str, field: str) -> ConfigError:
        line = next((i for i, row in enumerate(text.splitlines(), 1) if f'"{key}"' in row), 0)
        return ConfigError(message, f"{file}:{line}" if line else file, field)

    out: Words = {}
    for section, entries in data.items():
        if section == "language":
            continue
        if section not in SECTIONS:
            raise error(f"unknown section; sections: {', '.join(SECTIONS)}", section, section)
        if not isinstance(entries, dict):
            raise error("must be an object of key: text", section, section)
        out[section] = {}
        for key, value in entries.items():
            field = f"{section}.{key}"
            if model is not None and key not in model[section]:
                raise error("unknown key (the English file lang/en.json has them all)", key, field)
            if not isinstance(value, str) or len(value) > MAX_TEXT:
                raise error(f"must be text of at most {MAX_TEXT} characters", key, field)
            if model is not None and placeholders(value) != placeholders(model[section][key]):
                wanted = (
                    ", ".join(f"{{{p}}}" for p in sorted(placeholders(model[section][key])))
                    or "none"
                )
                raise error(f"must keep the English text's placeholders ({wanted})", key, field)
            out[section][key] = value
    for section in SECTIONS:
        out.setdefault(section, {})
        missing = (
            [] if partial or model is None else sorted(set(model[section]) - set(out[section]))
        )
        if missing:
            raise ConfigError(f"missing: {', '.join(missing)}", file, section)
    return out


def script(code: str, *sections: str) -> str:
    """The words a page needs, as the script it loads first: `WORDS` (the first section,
    the others under their own names, e.g. `PARTS`) and `LANG`."""
    found = words(code)
    lines = [
        '"use strict";',
        f"const LANG = {json.dumps(code)};",
        f"const WORDS = {json.dumps(found[sections[0]], ensure_ascii=False)};",
    ]
    lines += [
        f"const {s.upper()} = {json.dumps(found[s], ensure_ascii=False)};" for s in sections[1:]
    ]
    return "\n".join(lines) + "\n"


def chosen(asked: str | None, configured: str) -> str:
    """A page's language: its `?lang=xx` where that is a known language, else the box's."""
    return asked if asked in LANGUAGES else configured


def page(html: str, code: str) -> str:
    """A page in language `code`: its `<html lang>` says it, and the words script it loads
    (`/lang/en.js` in the file) is that language's, `/lang/<code>.js`."""
    html = re.sub(r'<html lang="\w+"', f'<html lang="{code}"', html, count=1)
    return html.replace('src="/lang/en.js"', f'src="/lang/{code}.js"', 1)


def part_name(part: str, parts: dict[str, str]) -> str:
    """A part of the match as the engine names it ("period 2", "half 1", "overtime",
    "shoot-out") in the words of `parts`; a part a profile names otherwise stays as it is.
    (common.js's partName does the same for the pages.)"""
    if part == "shoot-out":
        return parts["shootout"]
    word, _, number = part.partition(" ")
    if number.isdigit():
        key = "overtimeN" if word == "overtime" else word
        return parts[key].replace("{n}", number) if key in parts else part
    return parts.get(part, part)
