"""A ranking list for the seeding: the ITHF world ranking's tab-separated `ranking.txt`
(rank, id, name, club, nation; names as it writes them, "Surname Firstname"), or a plain
list, one name a line, best first.

The tournament's names are matched to the list's with and without diacritics and in either
name order, because a desk types "Jan Novák" where the ranking says "Novak Jan". A name
matched by nothing is unranked (the draw puts it after the ranked, by lot) and listed for
the desk. Every line is checked once here: a bad one is refused with file:line: field."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from timekeeper.rules.yamldoc import ConfigError

MAX_BYTES = 4 * 1024 * 1024  # the world ranking is about 7,800 lines, some 400 kB
MAX_LINES = 50_000
MAX_FIELD = 120
COLUMNS = ("rank", "id", "name", "club", "nation")
_PLAIN_RANK = re.compile(r"^\s*\d+\s*[.):;,-]?\s+")


@dataclass(frozen=True)
class Entry:
    """One ranked player as the list gives them (id, club and nation empty in a plain list)."""

    rank: int
    name: str
    id: str = ""
    club: str = ""
    nation: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "id": self.id,
            "name": self.name,
            "club": self.club,
            "nation": self.nation,
        }


@dataclass(frozen=True)
class Matched:
    ranked: tuple[str, ...]  # the tournament's players on the list, best first
    unranked: tuple[str, ...]  # the tournament's players the list does not name
    entries: dict[str, Entry]  # the tournament's name -> its line of the list
    unknown: tuple[str, ...]  # a plain list's lines that name nobody here


def fold(name: str) -> str:
    """Letters without diacritics, in lower case, single spaces (Ł and Ø have no
    decomposition and are mapped by hand)."""
    name = name.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("Ø", "O")
    name = name.replace("ß", "ss")
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return " ".join(plain.casefold().replace("-", " ").split())


def keys(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(as written, without diacritics), each as the name's words in sorted order: the same
    for "Novák Jan" and "Jan Novák"."""
    exact = tuple(sorted(" ".join(name.casefold().split()).split()))
    return exact, tuple(sorted(fold(name).split()))


def read(file: Path) -> list[Entry]:
    """The list's entries, best first. A tab in the first line that is not a comment makes it
    the ITHF file; otherwise one name a line (a leading `1.` allowed, `#` a comment)."""
    try:
        size = file.stat().st_size
        if size > MAX_BYTES:
            raise ConfigError(f"{size} bytes; a ranking list has at most {MAX_BYTES}", file)
        text = file.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", file) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file) from None
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise ConfigError(f"{len(lines)} lines; a ranking list has at most {MAX_LINES}", file)
    first = next((ln for ln in lines if ln.strip() and not ln.startswith("#")), "")
    return _ithf(file, lines) if "\t" in first else _plain(lines)


def _ithf(file: Path, lines: Sequence[str]) -> list[Entry]:
    out: list[Entry] = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.rstrip("\r\n").split("\t")]
        where = f"{file}:{number}"
        if len(cells) == len(COLUMNS) - 1:
            cells += [""] * (len(COLUMNS) - len(cells))  # a player with no nation given
        if len(cells) != len(COLUMNS):
            raise ConfigError(
                f"{len(cells)} tab-separated fields; the ITHF ranking has "
                f"{len(COLUMNS)}: {', '.join(COLUMNS)}",
                where,
            )
        for field, cell in zip(COLUMNS, cells, strict=True):
            if len(cell) > MAX_FIELD:
                raise ConfigError(f"longer than {MAX_FIELD} characters", where, field)
        rank, ident, name, club, nation = cells
        if not rank.isdigit() or not 1 <= int(rank) <= MAX_LINES:
            if number == 1 and not rank.isdigit() and rank.casefold() in ("rank", "#", "pos"):
                continue  # a heading line
            raise ConfigError(f"a rank 1 to {MAX_LINES}, not {rank!r}", where, "rank")
        if not name:
            raise ConfigError("empty", where, "name")
        out.append(Entry(int(rank), name, ident, club, nation))
    return out


def _plain(lines: Sequence[str]) -> list[Entry]:
    out: list[Entry] = []
    for line in lines:
        name = _PLAIN_RANK.sub("", line.split("#", 1)[0]).strip()
        if name:
            out.append(Entry(len(out) + 1, name[:MAX_FIELD]))
    return out


def match(entries: Sequence[Entry], names: Sequence[str]) -> Matched:
    """The tournament's players in the list's order. A name matches a line as written, else
    without diacritics, in either name order; two players of the list with the same folded
    name: the better ranked is taken."""
    exact: dict[tuple[str, ...], Entry] = {}
    plain: dict[tuple[str, ...], Entry] = {}
    for e in sorted(entries, key=lambda e: e.rank):
        a, b = keys(e.name)
        exact.setdefault(a, e)
        plain.setdefault(b, e)
    found: dict[str, Entry] = {}
    for name in names:
        a, b = keys(name)
        entry = exact.get(a) or plain.get(b)
        if entry is not None:
            found[name] = entry
    ranked = sorted(found, key=lambda n: (found[n].rank, names.index(n)))
    mine = {keys(n)[1] for n in names}
    unknown = tuple(e.name for e in entries if not e.id and keys(e.name)[1] not in mine)
    return Matched(tuple(ranked), tuple(n for n in names if n not in found), found, unknown)
