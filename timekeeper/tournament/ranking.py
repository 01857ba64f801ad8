"""A ranking list for the seeding: the ITHF world ranking's `ranking.txt` as the ITHF
publishes it, or a plain list, one name a line, best first.

The published file (the open ranking's "download in txt format") is UTF-8, one player a
line, tab-separated:

    Table hockey ranking up to 12.5.2026
    Rank	ID_Player	Player	Club	Nation	Points	Player_Value
    1	20037	Jan Novak	THC Praha	CZE	2841	...
    1833	41123	Raivis Miglinieks "The Cobra"	???		412	...

A title with the ranking's date (d.m.yyyy, kept with the draw), a header, then 7 fields a
line; ranks are shared on ties; names are written without diacritics, first name first, some
with a nickname in quotes and `ml.`/`st.` (junior, senior: two people); an unknown club is
`???`, an unknown nation empty (a few lines carry a NUL byte there). The tools found that
read the ranking site's files (a Python package gathering players' points and ranks) split
lines with `splitlines()` and fields on tabs, cut a trailing `\\r` by hand, and take a player
by id or by a name found in the line without case, so "Jiri Chylik" finds father and son
alike and a line that is not what it claims passes unseen. Here every line is checked once:
a bad one is refused with file:line: field, and lines end at `\\n` only.

The tournament's names are matched without diacritics, in either order and without the
nickname, because a desk types "Jan Novák" where the ranking says "Novak Jan"; `ml.` and
`st.` are kept apart, and a name that fits two lines is refused, naming both. Files of the
older 5-field layout (rank, id, name, club, nation) and a header found after `#` comments
are read too."""

from __future__ import annotations

import difflib
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from timekeeper.rules.yamldoc import ConfigError

MAX_BYTES = 4 * 1024 * 1024  # the world ranking is about 7,850 lines, some 310 kB
MAX_LINES = 50_000
MAX_FIELD = 120
COLUMNS = ("rank", "id", "name", "club", "nation")  # the fields kept, by the names errors give
PUBLISHED = ("Rank", "ID_Player", "Player", "Club", "Nation", "Points", "Player_Value")
UNKNOWN_CLUB = "???"
SUFFIXES = ("ml.", "st.")  # mladší, starší: the son and the father, two players
_TITLE = re.compile(r"\s*table hockey ranking up to\s+(\S+)\s*", re.IGNORECASE)
_DATE = re.compile(r"([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{4})")
_RANK = re.compile(r"[0-9]{1,6}")  # ASCII digits only: `²` or `٣` is not a rank
_PLAIN_RANK = re.compile(r"^\s*[0-9]+\s*[.):;,-]?\s+")
_NICKNAME = re.compile(r'"[^"]*"|“[^”]*”|„[^“”]*[“”]')


@dataclass(frozen=True)
class Entry:
    """One ranked player as the list gives them (id, club and nation empty in a plain list;
    an unknown club or nation is empty, never `???` or a NUL)."""

    rank: int
    name: str
    id: str = ""
    club: str = ""
    nation: str = ""
    line: int = field(default=0, compare=False)

    def to_json(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "id": self.id,
            "name": self.name,
            "club": self.club,
            "nation": self.nation,
        }


@dataclass(frozen=True)
class Ranking:
    file: Path
    entries: tuple[Entry, ...]  # best first; shared ranks in the file's order
    date: date | None  # the title's "ranking up to" date
    notes: tuple[str, ...]  # what was read other than as written, said once


@dataclass(frozen=True)
class Matched:
    ranked: tuple[str, ...]  # the tournament's players on the list, best first
    unranked: tuple[str, ...]  # the tournament's players the list does not name
    entries: dict[str, Entry]  # the tournament's name -> its line of the list
    unknown: tuple[str, ...]  # a plain list's lines that name nobody here
    shared: tuple[tuple[int, tuple[str, ...]], ...] = ()  # a rank two players here share


def fold(name: str) -> str:
    """Letters without diacritics, in lower case, single spaces (Ł and Ø have no
    decomposition and are mapped by hand)."""
    name = name.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("Ø", "O")
    name = name.replace("ß", "ss")
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return " ".join(plain.casefold().replace("-", " ").split())


def keys(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(as written, without diacritics), each as the name's words in sorted order without a
    nickname in quotes: the same for "Novák Jan" and "Jan Novák". A suffix `ml.`/`st.` is
    one of the words, so father and son never share a key."""
    bare = _NICKNAME.sub(" ", name)
    exact = tuple(sorted(" ".join(bare.casefold().split()).split()))
    return exact, tuple(sorted(fold(bare).split()))


def read(file: Path) -> Ranking:
    """The list, best first. A tab in the first line after the title and `#` comments makes
    it the ITHF file; otherwise one name a line (a leading `1.` allowed, `#` a comment).
    Lines end at `\\n` only (a `\\r` before it is dropped), so that a stray separator inside
    a name does not shift every later line's number."""
    text = _text(file)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_LINES:
        raise ConfigError(f"{len(lines)} lines; a ranking list has at most {MAX_LINES}", file)
    lines = [ln.removesuffix("\r") for ln in lines]
    notes = _Notes(file)
    day, start = _title(file, lines)
    first = next((ln for ln in lines[start:] if ln.strip() and not ln.startswith("#")), "")
    if day is not None or "\t" in first:
        entries = _ithf(file, lines, start, notes)
    else:
        entries = _plain(lines, notes)
    return Ranking(file, tuple(entries), day, notes.said())


def _text(file: Path) -> str:
    """The file's text, read from a regular file only and never past the limit: a device
    or a pipe (whose size says nothing) is refused before a byte is read, and opening does
    not wait for a pipe's writer."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", file) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError("not a regular file (a device, a pipe or a folder)", file)
        data = b""
        while len(data) <= MAX_BYTES:
            chunk = os.read(fd, MAX_BYTES + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", file) from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise ConfigError(f"more than {MAX_BYTES} bytes; a ranking list has at most that", file)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file) from None


def _title(file: Path, lines: Sequence[str]) -> tuple[date | None, int]:
    """The title's date and the index of the line after it (0 and None: no title)."""
    at = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#")), 0)
    found = _TITLE.fullmatch(lines[at]) if lines else None
    if found is None:
        return None, 0
    written = _DATE.fullmatch(found[1])
    try:
        if written is None:
            raise ValueError
        return date(int(written[3]), int(written[2]), int(written[1])), at + 1
    except ValueError:
        where = f"{file}:{at + 1}"
        raise ConfigError(f"a date d.m.yyyy, not {found[1]!r}", where, "title") from None


class _Notes:
    """What the file held that is read other than as written: each kind said once, with a
    count and its first line."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.kinds: dict[str, list[int]] = {}

    def add(self, kind: str, line: int) -> None:
        self.kinds.setdefault(kind, []).append(line)

    def said(self) -> tuple[str, ...]:
        return tuple(
            f"{self.file.name}: {len(at)} line{'s' if len(at) > 1 else ''} {kind} "
            f"(first {self.file.name}:{at[0]})"
            for kind, at in self.kinds.items()
        )


def _clean(cell: str, number: int, name: str, notes: _Notes) -> str:
    """The cell without control characters (NUL, bidi overrides, line and record
    separators …): stripped, and said, so that none reaches the ledger or an export."""
    kept = "".join(c for c in cell if unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp"))
    if kept != cell:
        bad = sorted({f"U+{ord(c):04X}" for c in cell if c not in kept})
        notes.add(f"with control characters ({', '.join(bad)}) stripped from the {name}", number)
    return kept.strip()


def _ithf(file: Path, lines: Sequence[str], start: int, notes: _Notes) -> list[Entry]:
    out: list[Entry] = []
    ids: dict[str, Entry] = {}
    width = 0  # the fields a line: the header's, else the first line's
    for number, line in enumerate(lines[start:], start + 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{file}:{number}"
        raw = line.split("\t")
        if not out and raw[0].strip().casefold() in ("rank", "pos"):
            width = _header(raw, where)
            continue
        if len(raw) not in {5: (4, 5), 7: (7,)}.get(width, (4, 5, 7)):
            want = width or 7
            raise ConfigError(
                f"{len(raw)} tab-separated fields; the ITHF ranking has {want}: "
                f"{', '.join(PUBLISHED[:want])}",
                where,
            )
        width = width or max(len(raw), 5)
        for name, cell in zip((*COLUMNS, "points", "value"), raw, strict=False):
            if len(cell) > MAX_FIELD:
                raise ConfigError(f"longer than {MAX_FIELD} characters", where, name)
        raw[4:5] = [raw[4].replace("\0", "")] if len(raw) > 4 else [""]  # NUL: no nation
        rank, ident, name, club, nation = (
            _clean(c, number, n, notes) for n, c in zip(COLUMNS, raw[:5], strict=True)
        )
        if not _RANK.fullmatch(rank) or not 1 <= int(rank) <= MAX_LINES:
            raise ConfigError(f"a rank 1 to {MAX_LINES}, not {rank!r}", where, "rank")
        if out and int(rank) < out[-1].rank:
            raise ConfigError(
                f"rank {rank} after rank {out[-1].rank}: the list goes best first", where, "rank"
            )
        if not name:
            raise ConfigError("empty", where, "name")
        if club == UNKNOWN_CLUB:
            club = ""
            notes.add("with the club ??? (unknown), read as no club", number)
        if not nation:
            notes.add("with no nation (empty or NUL), read as unknown", number)
        entry = Entry(int(rank), name, ident, club, nation, number)
        if ident and ident in ids:
            was = ids[ident]
            raise ConfigError(
                f"{ident} is {name!r} here and {was.name!r} on line {was.line}: one id, one player",
                where,
                "id",
            )
        if ident:
            ids[ident] = entry
        out.append(entry)
    return out


def _header(cells: Sequence[str], where: str) -> int:
    """The header's field count: the published 7 (Rank, ID_Player, Player, Club, Nation,
    Points, Player_Value) or the older 5; its words are not checked further."""
    if len(cells) not in (5, 7):
        raise ConfigError(
            f"a header of {len(cells)} fields; the ITHF ranking's is {' '.join(PUBLISHED)}", where
        )
    return len(cells)


def _plain(lines: Sequence[str], notes: _Notes) -> list[Entry]:
    """One name a line; a name written twice: its first line counts and the later one is
    said and skipped, keeping its place (so no later player moves up)."""
    out: list[Entry] = []
    seen: dict[tuple[str, ...], Entry] = {}
    place = 0
    for number, line in enumerate(lines, 1):
        name = _clean(_PLAIN_RANK.sub("", line.split("#", 1)[0]), number, "name", notes)
        if not name:
            continue
        place += 1
        entry = Entry(place, name[:MAX_FIELD], line=number)
        key = keys(name)[1]
        if key in seen:
            notes.add(
                f"naming a player again (first on line {seen[key].line}): the first counts, "
                "the later line is skipped and keeps its place",
                number,
            )
            continue
        seen[key] = entry
        out.append(entry)
    return out


def match(ranking: Ranking | Sequence[Entry], names: Sequence[str]) -> Matched:
    """The tournament's players in the list's order (a shared rank: the file's order). A
    name matches a line as written, else without diacritics, in either order, without the
    nickname; a name that fits two lines equally (`Jiri Chylik` for `ml.` and `st.`), or
    two of the tournament's names that fit one line, are refused, naming both."""
    entries = ranking.entries if isinstance(ranking, Ranking) else tuple(ranking)
    file = ranking.file if isinstance(ranking, Ranking) else None
    plain: dict[tuple[str, ...], list[Entry]] = {}
    by_words: dict[tuple[str, ...], list[Entry]] = {}
    for e in entries:
        _exact, folded = keys(e.name)
        plain.setdefault(folded, []).append(e)
        by_words.setdefault(tuple(w for w in folded if w not in SUFFIXES), []).append(e)
    found: dict[str, Entry] = {}
    for name in names:
        exact, folded = keys(name)
        if any(w in SUFFIXES for w in folded):
            fits = plain.get(folded, [])
        else:  # without ml./st.: the line without one, else any (two: refused below)
            fits = plain.get(folded) or by_words.get(folded, [])
        if len(fits) > 1:
            fits = [e for e in fits if keys(e.name)[0] == exact] or fits
        if len(fits) > 1:
            both = " and ".join(f"{e.name!r} (line {e.line}, rank {e.rank})" for e in fits[:3])
            raise ConfigError(
                f"the player {name!r} fits {both}; write the name in the tournament file as "
                "the list does (with ml. or st.)",
                file,
            )
        if fits:
            found[name] = fits[0]
    _one_line_each(found, file)
    position = {id(e): i for i, e in enumerate(entries)}
    ranked = sorted(found, key=lambda n: position[id(found[n])])
    at_rank: dict[int, list[str]] = {}
    for n in ranked:
        at_rank.setdefault(found[n].rank, []).append(n)
    shared = tuple((r, tuple(ns)) for r, ns in at_rank.items() if len(ns) > 1)
    mine = {keys(n)[1] for n in names}
    unknown = tuple(e.name for e in entries if not e.id and keys(e.name)[1] not in mine)
    unranked = tuple(n for n in names if n not in found)
    return Matched(tuple(ranked), unranked, found, unknown, shared)


def _one_line_each(found: dict[str, Entry], file: Path | None) -> None:
    """Two of the tournament's names on one line of the list would be two players under
    one id in the ledger and the export: refused, naming both."""
    by_line: dict[int, str] = {}
    for name, e in found.items():
        key = e.line or id(e)
        if key in by_line:
            raise ConfigError(
                f"{by_line[key]!r} and {name!r} are both {e.name!r} (rank {e.rank}"
                f"{', id ' + e.id if e.id else ''}): one line, one player; is one of them "
                "in the tournament file twice?",
                f"{file}:{e.line}" if file and e.line else file,
            )
        by_line[key] = name


def hints(ranking: Ranking, names: Sequence[str], close_only: bool = False) -> list[str]:
    """Each unmatched name with the list's nearest (its words without diacritics, in either
    order): "Jan Novak — did you mean Novák Jan (rank 12)?"; `close_only`: only the names
    that have one (a list that names nobody: the near misses are what tell)."""
    index: dict[str, Entry] = {}
    for e in ranking.entries:
        index.setdefault(" ".join(keys(e.name)[1]), e)
    out = []
    for name in names:
        near = difflib.get_close_matches(" ".join(keys(name)[1]), list(index), 2, 0.6)
        if near:
            out.append(
                f"{name} — did you mean "
                + " or ".join(f"{index[k].name} (rank {index[k].rank})" for k in near)
                + "?"
            )
        elif not close_only:
            out.append(f"{name} — nothing close on {ranking.file.name}")
    return out
