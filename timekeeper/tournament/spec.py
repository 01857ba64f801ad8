"""The tournament file: YAML naming the rule set, the players, the tables and the stages,
validated once at load into a typed Spec; every refusal names file:line and the field.

It says what the evening is to be; what happens (the draw, results, lots) goes to the
ledger beside it, so the file stays a plain thing a person writes and may re-read."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from timekeeper.rules import profile
from timekeeper.rules.yamldoc import ConfigError, Doc, Path_, Reader
from timekeeper.tournament.public import Public, read_public
from timekeeper.tournament.rulesets import BUILT_IN, CRITERIA, TREES, Points, RuleSet, criteria

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
GROUP_KEYS = ("size", "advance", "profile")
KNOCKOUT_KEYS = ("tree", "third_place", "profile", "final_profile", "pairs")
MAX_PLAYERS = 256
MAX_TABLES = 64
MAX_NAME = 80
# The group matches of an evening: the draw keeps every one in its ledger line, which must
# stay under the ledger's line limit (ledger.MAX_LINE) with every name at its longest;
# bench/tournament_sizes.py measures it, a test holds it. 256 players in groups of 8 is 896.
MAX_GROUP_MATCHES = 900


@dataclass(frozen=True)
class Player:
    name: str
    club: str = ""
    country: str = ""


@dataclass(frozen=True)
class GroupStage:
    size: int  # players in a full group; the groups differ by one at most
    advance: int  # how many of each group go on to the knock-out
    profile: str

    def count(self, players: int) -> int:
        return math.ceil(players / self.size)


@dataclass(frozen=True)
class Knockout:
    tree: str  # cross, vht6 or seeded
    third_place: bool
    profile: str
    final_profile: str
    pairs: tuple[tuple[str, str], ...] = ()  # an explicit first round: ("A1", "B2") …


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
    groups: GroupStage | None
    knockout: Knockout | None
    start: int | None = None  # the first round's start, minutes after midnight (17:00: 1020)
    language: str = ""  # the calls' and the desk's pages' (one of LANGUAGES; "": not said)
    public: Public = field(default_factory=Public)  # the player pages' (tournament/public.py)

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
    groups, knockout = _stages(r, rules, len(players))
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
        groups=groups,
        knockout=knockout,
        start=_start(r),
        language=_language(r),
        public=read_public(r),
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
        group_profile=_profile(r, ("rules", "profiles", "groups"), base.group_profile)
        if "groups" in profiles
        else base.group_profile,
        knockout_profile=_profile(r, ("rules", "profiles", "knockout"), base.knockout_profile),
        final_profile=_profile(r, ("rules", "profiles", "final"), base.final_profile),
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


def find_profile(name: str, tournament_file: Path) -> Path:
    """A stage's profile file: a built-in or user profile by name, or a path (one with a
    `/`) beside the tournament file. Raises ConfigError."""
    return profile.find(name, relative_to=tournament_file.parent if "/" in name else None)


def _profile(r: Reader, path: Path_, default: str | None) -> str:
    name = r.get(path, default)
    if not isinstance(name, str):
        raise r.doc.error(path, f"must be a profile name, not {name!r}")
    try:
        find_profile(name, r.doc.file)
    except ConfigError as exc:
        raise r.doc.error(path, exc.message) from None
    return name


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
        if isinstance(item, dict):
            r.doc.check_keys(path, item, ("name", "club", "country"))
            player = Player(
                r.text((*path, "name"), "", most=MAX_NAME).strip(),
                r.text((*path, "club"), "", most=MAX_NAME),
                r.text((*path, "country"), "", most=MAX_NAME),
            )
        elif isinstance(item, str | int) and not isinstance(item, bool):
            player = Player(str(item).strip())
        else:
            raise r.doc.error(path, f"must be a name or a mapping with name:, not {item!r}")
        if not player.name or len(player.name) > MAX_NAME:
            raise r.doc.error(path, f"a name of 1 to {MAX_NAME} characters, please")
        folded = player.name.casefold()
        if folded in seen:
            raise r.doc.error(path, f"{player.name!r} is already player {seen[folded] + 1}")
        seen[folded] = i
        out.append(player)
    return tuple(out)


def _tables(r: Reader) -> tuple[str, ...]:
    value = r.get(("tables",), 4)
    if isinstance(value, list):
        names = [str(v).strip() for v in value]
        if not names or len(names) > MAX_TABLES or len(set(names)) != len(names) or not all(names):
            raise r.doc.error(("tables",), f"a list of 1 to {MAX_TABLES} different names")
        for i, name in enumerate(names):
            if len(name) > MAX_NAME:
                raise r.doc.error(("tables", i), f"a name of 1 to {MAX_NAME} characters, please")
        return tuple(names)
    count = r.integer(("tables",), 4, MAX_TABLES)
    return tuple(str(n) for n in range(1, count + 1))


def _stages(r: Reader, rules: RuleSet, players: int) -> tuple[GroupStage | None, Knockout | None]:
    stages = r.mapping(("stages",), ("groups", "knockout"))
    if stages is None:  # the rule set's evening: groups of four and a knock-out, or KO only
        stages = {"knockout": {}} if rules.key == "pl-ko" else {"groups": {}, "knockout": {}}
    groups = None
    if "groups" in stages:
        r.mapping(("stages", "groups"), GROUP_KEYS)
        size = r.integer(("stages", "groups", "size"), 4, MAX_PLAYERS)
        if size < 2:
            raise r.doc.error(("stages", "groups", "size"), "a group needs two players at least")
        smallest = players // math.ceil(players / size)
        tree = r.get(("stages", "knockout", "tree"), rules.tree)
        default_advance = 3 if tree == "vht6" else min(2, smallest)
        advance = r.integer(("stages", "groups", "advance"), default_advance, MAX_PLAYERS)
        if advance > smallest:
            raise r.doc.error(
                ("stages", "groups", "advance"),
                f"{advance} cannot go through from a group of {smallest}",
            )
        if rules.group_profile is None:
            raise r.doc.error(("stages", "groups"), "this rule set plays no groups")
        matches = group_match_count(players, size)
        if matches > MAX_GROUP_MATCHES:
            fits = max(
                s for s in range(2, size) if group_match_count(players, s) <= MAX_GROUP_MATCHES
            )
            raise r.doc.error(
                ("stages", "groups", "size"),
                f"groups of {size} for {players} players make {matches} group matches, more "
                f"than the {MAX_GROUP_MATCHES} an evening's draw holds: size: {fits} or less",
            )
        groups = GroupStage(
            size, advance, _profile(r, ("stages", "groups", "profile"), rules.group_profile)
        )
    knockout = None
    if "knockout" in stages:
        k: Path_ = ("stages", "knockout")
        r.mapping(k, KNOCKOUT_KEYS)
        tree = r.choice((*k, "tree"), TREES, rules.tree if groups else "seeded")
        knockout = Knockout(
            tree,
            r.flag((*k, "third_place"), rules.third_place),
            _profile(r, (*k, "profile"), rules.knockout_profile),
            _profile(r, (*k, "final_profile"), rules.final_profile),
            _pairs(r, (*k, "pairs")),
        )
        _check_tree(r, knockout, groups, players)
    if groups is None and knockout is None:
        raise r.doc.error(("stages",), "name groups:, knockout: or both")
    return groups, knockout


def group_match_count(players: int, size: int) -> int:
    """The round robins' matches: the players dealt into ceil(players / size) groups whose
    sizes differ by one at most (draw.py deals them so)."""
    groups = math.ceil(players / size)
    small, big = divmod(players, groups)
    return big * (small + 1) * small // 2 + (groups - big) * small * (small - 1) // 2


def _pairs(r: Reader, path: Path_) -> tuple[tuple[str, str], ...]:
    value = r.get(path)
    if value is None:
        return ()
    ok = (
        isinstance(value, list)
        and value
        and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in value
        )
    )
    if not ok:
        raise r.doc.error(path, "a list of pairs of group places, e.g. [[A1, B2], [B1, A2]]")
    return tuple((a.strip().upper(), b.strip().upper()) for a, b in value)


def _check_tree(r: Reader, ko: Knockout, groups: GroupStage | None, players: int) -> None:
    """Refuse, at load, a tree that cannot be built from these groups."""
    at: Path_ = ("stages", "knockout", "tree")
    if groups is None:
        if ko.tree != "seeded" or ko.pairs:
            raise r.doc.error(at, "a knock-out without groups is drawn: tree: seeded")
        return
    count = groups.count(players)
    if ko.pairs:
        size = len(ko.pairs) * 2
        if size & (size - 1):
            raise r.doc.error(
                ("stages", "knockout", "pairs"),
                f"{len(ko.pairs)} pairs do not make a tree (1, 2, 4, 8 … pairs)",
            )
        return
    if ko.tree == "vht6":
        if count != 2 or groups.advance != 3 or players // 2 < 4:
            raise r.doc.error(
                at,
                "VHT 6's tree is for two groups of four or more with "
                f"advance: 3 (here {count} groups, advance "
                f"{groups.advance}); size: {-(-players // 2)} makes two groups, "
                "or tree: seeded",
            )
    elif ko.tree == "cross":
        size = count * groups.advance
        if groups.advance not in (1, 2) or size < 2 or size & (size - 1):
            raise r.doc.error(
                at,
                f"the cross tree (A1–B2, B1–A2 …) needs 1, 2, 4, 8 … groups "
                f"with advance 1 or 2 (here {count} groups, advance "
                f"{groups.advance}); tree: seeded fills byes",
            )
