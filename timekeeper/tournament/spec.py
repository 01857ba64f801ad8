"""The tournament file: YAML naming the rule set, the players, the tables and the stages,
validated once at load into a typed Spec; every refusal names file:line and the field.

It says what the evening is to be; what happens (the draw, results, lots) goes to the
ledger beside it, so the file stays a plain thing a person writes and may re-read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from timekeeper.rules.commands import ALL_TABLES, TABLE_NAME, check_name
from timekeeper.rules.commands import MAX_NAME as MAX_PLAYER_NAME
from timekeeper.rules.yamldoc import ConfigError, Doc, Path_, Reader
from timekeeper.tournament import stagefile
from timekeeper.tournament.plan import Bracket, Groups, RoundRobin
from timekeeper.tournament.public import Public, read_public
from timekeeper.tournament.rulesets import BUILT_IN, CRITERIA, TREES, Points, RuleSet, criteria
from timekeeper.tournament.stagefile import (
    MAX_GROUP_MATCHES,
    MAX_PLAYERS,
    find_profile,
    group_match_count,
    profile_name,
)

TOP_KEYS = (
    "title",
    "date",
    "place",
    "country",
    "language",
    "start",
    "rules",
    "tables",
    "changeover",
    "players",
    "stages",
    "public",
)
# the hall's languages (show/language.py's LANGUAGES: this wing is below it; a test holds
# them equal): the round calls' and the desk's pages' language
LANGUAGES = ("en", "cs", "sk", "pl", "sl", "de", "sv", "fi")
RULE_KEYS = (
    "extends",
    "title",
    "points",
    "tiebreakers",
    "group_draws",
    "forfeit",
    "profiles",
    "third_place",
    "tree",
)
POINT_KEYS = ("win", "draw", "loss", "ot_win", "ot_loss")
MAX_TABLES = 64
MAX_NAME = 80  # a title's, a place's, a club's (the desk's and the sheets' only)
# A player's name goes to every box in the pairing: it is checked as a box checks a side's
# name (rules/commands.check_name: at most MAX_PLAYER_NAME printable characters), once, here.
# A table's name is one level of the hall's bus topics: rules/commands.TABLE_NAME, the same
# pattern hall/messages.py checks the hall's and the tables' names with.


@dataclass(frozen=True)
class Player:
    name: str
    club: str = ""
    country: str = ""


@dataclass(frozen=True)
class Spec:
    file: Path
    title: str
    date: str
    place: str
    country: str
    rules: RuleSet
    players: tuple[Player, ...]
    tables: tuple[str, ...]
    changeover: float  # seconds between two matches at a table (for the evening's length)
    groups: Groups | None
    knockout: Bracket | None
    start: int | None = None  # the first round's start, minutes after midnight (17:00: 1020)
    language: str = ""  # the calls' and the desk's pages' (one of LANGUAGES; "": not said)
    public: Public = field(default_factory=Public)  # the player pages' (tournament/public.py)
    later: tuple[RoundRobin, ...] = ()  # final groups, then placement groups (staged day)
    playoffs: tuple[Bracket, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.players)

    @property
    def ledger(self) -> Path:
        return ledger_path(self.file)


def ledger_path(file: Path) -> Path:
    """cup.yaml → cup.journal.jsonl, beside it (one tournament, one ledger; the file's name
    is the one it has always had, so that a ledger written earlier is found)."""
    return file.with_name(file.stem + ".journal.jsonl")


def load(file: Path) -> Spec:
    doc = Doc.load(Path(file))
    if not isinstance(doc.data, dict):
        raise doc.error((), "a tournament file must be a mapping of settings")
    return build(doc, Path(file))


def build(doc: Doc, file: Path) -> Spec:
    r = Reader(doc)
    doc.check_keys((), doc.data, TOP_KEYS)
    rules = _rules(r)
    players = _players(r)
    tables = _tables(r)
    stages = stagefile.read(r, rules, [p.name for p in players])
    return Spec(
        file=file,
        title=r.text(("title",), file.stem, most=MAX_NAME * 2),
        date=str(r.get(("date",), "")),
        place=r.text(("place",), "", most=MAX_NAME),
        country=r.text(("country",), "", most=MAX_NAME),
        rules=rules,
        players=players,
        tables=tables,
        changeover=r.seconds(("changeover",), 120.0, zero=True, most=3600.0),
        groups=stages.groups,
        knockout=stages.knockout,
        start=_start(r),
        language=_language(r),
        public=read_public(r),
        later=stages.later,
        playoffs=stages.playoffs,
    )


def _language(r: Reader) -> str:
    """`language: cs`: the round calls' and the desk's pages' language (`--language` wins)."""
    if r.get(("language",)) is None:
        return ""
    return r.choice(("language",), LANGUAGES, "")


def _start(r: Reader) -> int | None:
    """`start: "17:00"`; YAML 1.1 reads a bare 17:00 as the number 1020 (base 60), which is
    the same minutes after midnight, so both are taken."""
    value = r.get(("start",))
    if value is None:
        return None
    if isinstance(value, str) and re.fullmatch(r"\d{1,2}:\d{2}", value.strip()):
        hours, minutes = (int(x) for x in value.strip().split(":"))
        value = hours * 60 + minutes if minutes < 60 else -1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 24 * 60:
        shown = (
            f"{value // 60}:{value % 60:02d}"
            if isinstance(value, int) and value >= 0
            else repr(value)
        )
        raise r.doc.error(("start",), f'a time of day, e.g. "17:00", not {shown}')
    return value


def _rules(r: Reader) -> RuleSet:
    value = r.get(("rules",))
    if value is None:
        raise r.doc.error(
            ("rules",),
            f"missing: one of {', '.join(BUILT_IN)}, or a mapping with extends: and what differs",
        )
    if isinstance(value, str):
        if value not in BUILT_IN:
            raise r.doc.error(
                ("rules",), f"unknown rule set {value!r}; built in: {', '.join(BUILT_IN)}"
            )
        return BUILT_IN[value]
    r.mapping(("rules",), RULE_KEYS)
    base = BUILT_IN[r.choice(("rules", "extends"), tuple(BUILT_IN), "radegast")]
    points = base.points
    if r.mapping(("rules", "points"), POINT_KEYS) is not None:
        points = Points(
            *(_count(r, ("rules", "points", k), getattr(base.points, k)) for k in POINT_KEYS)
        )
    tiebreakers = base.tiebreakers
    listed = r.get(("rules", "tiebreakers"))
    if listed is not None:
        if not isinstance(listed, list) or not listed:
            raise r.doc.error(("rules", "tiebreakers"), f"must be a list of {', '.join(CRITERIA)}")
        for i, name in enumerate(listed):
            if name not in CRITERIA:
                raise r.doc.error(
                    ("rules", "tiebreakers", i),
                    f"must be one of {', '.join(CRITERIA)}, not {name!r}",
                )
        tiebreakers = criteria(tuple(listed))
    forfeit = r.mapping(("rules", "forfeit"), ("goals", "plus_score")) or {}
    profiles = r.mapping(("rules", "profiles"), ("groups", "knockout", "final")) or {}
    return replace(
        base,
        key="custom",
        title=r.text(("rules", "title"), f"custom ({base.key})"),
        points=points,
        tiebreakers=tiebreakers,
        group_draws=r.flag(("rules", "group_draws"), base.group_draws),
        forfeit_goals=_count(r, ("rules", "forfeit", "goals"), base.forfeit_goals)
        if "goals" in forfeit
        else base.forfeit_goals,
        forfeit_plus_score=r.flag(("rules", "forfeit", "plus_score"), base.forfeit_plus_score),
        group_profile=profile_name(r, ("rules", "profiles", "groups"), base.group_profile)
        if "groups" in profiles
        else base.group_profile,
        knockout_profile=profile_name(r, ("rules", "profiles", "knockout"), base.knockout_profile),
        final_profile=profile_name(r, ("rules", "profiles", "final"), base.final_profile),
        third_place=r.flag(("rules", "third_place"), base.third_place),
        tree=r.choice(("rules", "tree"), TREES, base.tree),
        source=f"custom rules over {base.key}: {base.source}",
        venue_players=None,
        venue_tables=None,
    )  # a club's own evening: its own venue


def _count(r: Reader, path: Path_, default: int) -> int:
    value = r.get(path, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise r.doc.error(path, f"must be a whole number from 0 to 100, not {value!r}")
    return value


def _players(r: Reader) -> tuple[Player, ...]:
    value = r.get(("players",))
    if not isinstance(value, list) or len(value) < 2:
        raise r.doc.error(
            ("players",),
            "must be a list of at least two players or teams "
            "(a name a line, or name:, club:, country:)",
        )
    if len(value) > MAX_PLAYERS:
        raise r.doc.error(("players",), f"at most {MAX_PLAYERS} players (got {len(value)})")
    out: list[Player] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(value):
        path: Path_ = ("players", i)
        at: Path_ = path
        if isinstance(item, dict):
            r.doc.check_keys(path, item, ("name", "club", "country"))
            at = (*path, "name")
            player = Player(
                r.text(at, "", most=MAX_NAME * 2),
                r.text((*path, "club"), "", most=MAX_NAME),
                r.text((*path, "country"), "", most=MAX_NAME),
            )
        elif isinstance(item, str | int) and not isinstance(item, bool):
            player = Player(str(item))
        else:
            raise r.doc.error(path, f"must be a name or a mapping with name:, not {item!r}")
        player = replace(player, name=_player_name(r, at, player.name))
        folded = player.name.casefold()
        if folded in seen:
            raise r.doc.error(path, f"{player.name!r} is already player {seen[folded] + 1}")
        seen[folded] = i
        out.append(player)
    return tuple(out)


def _player_name(r: Reader, path: Path_, name: str) -> str:
    """A player's name as every box shows it (composed, single spaces: check_name), or the
    refusal: what a box would refuse of it (too long, a control character, even one given
    through a YAML escape such as "\\x07"), here rather than at a table mid-round."""
    try:
        shown = check_name(name)
    except ValueError as exc:
        raise r.doc.error(path, f"{exc} (a box takes no other)") from None
    if not shown:
        raise r.doc.error(path, f"a name of 1 to {MAX_PLAYER_NAME} characters, please")
    return shown


def _tables(r: Reader) -> tuple[str, ...]:
    value = r.get(("tables",), 4)
    if isinstance(value, list):
        if not value or len(value) > MAX_TABLES:
            raise r.doc.error(("tables",), f"a list of 1 to {MAX_TABLES} different names")
        names: list[str] = []
        for i, item in enumerate(value):
            plain = isinstance(item, str | int) and not isinstance(item, bool)
            name = str(item).strip() if plain else ""
            if not TABLE_NAME.fullmatch(name) or name == ALL_TABLES:
                raise r.doc.error(
                    ("tables", i),
                    "a table's name is part of the hall's bus topics: 1-32 letters, digits, "
                    f"- or _ (and not {ALL_TABLES!r}: the hall's every table), not {item!r}",
                )
            if name in names:
                raise r.doc.error(("tables", i), f"table {name!r} is named twice")
            names.append(name)
        return tuple(names)
    count = r.integer(("tables",), 4, MAX_TABLES)
    return tuple(str(n) for n in range(1, count + 1))


__all__ = [
    "MAX_GROUP_MATCHES",
    "MAX_PLAYERS",
    "ConfigError",
    "Spec",
    "find_profile",
    "group_match_count",
    "load",
]
