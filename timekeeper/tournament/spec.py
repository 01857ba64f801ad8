"""The tournament file: YAML naming the rule set, the players, the tables and the stages,
validated once at load into a typed Spec; every refusal names file:line and the field.

It says what the evening is to be; what happens (the draw, results, lots) goes to the
ledger beside it, so the file stays a plain thing a person writes and may re-read."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from timekeeper.rules import profile
from timekeeper.rules.commands import ALL_TABLES, TABLE_NAME, check_name
from timekeeper.rules.commands import MAX_NAME as MAX_PLAYER_NAME
from timekeeper.rules.yamldoc import ConfigError, Doc, Path_, Reader
from timekeeper.tournament import series
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
GROUP_KEYS = ("size", "advance", "profile", "seeding")
SEEDINGS = ("snake", "pots")
LATER_KEYS = ("places", "from", "carry", "profile")
PLAYOFF_KEYS = ("top", "third_place", "profile", "final_profile", "best_of")
LATER_NAME = re.compile(r"[A-Z][A-Z0-9]{0,3}")
KNOCKOUT_KEYS = ("tree", "third_place", "profile", "final_profile", "pairs", "best_of")
# `best_of:` per round: the round keys of series.round_key, and `default`
BEST_OF_ROUNDS = re.compile(r"default|F|3P|SF|QF|R(16|32|64|128)|P")
MAX_PLAYERS = 256
MAX_TABLES = 64
MAX_NAME = 80  # a title's, a place's, a club's (the desk's and the sheets' only)
# A player's name goes to every box in the pairing: it is checked as a box checks a side's
# name (rules/commands.check_name: at most MAX_PLAYER_NAME printable characters), once, here.
# A table's name is one level of the hall's bus topics: rules/commands.TABLE_NAME, the same
# pattern hall/messages.py checks the hall's and the tables' names with.
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
    seeding: str = "pots"  # a draw with a ranking: snake (ITHF's meander) or pots

    def names(self, players: int) -> list[str]:
        """The basic groups of a staged day: 1, 2, 3 … (the later groups have letters)."""
        return [str(n) for n in range(1, self.count(players) + 1)]

    def count(self, players: int) -> int:
        return math.ceil(players / self.size)


@dataclass(frozen=True)
class Knockout:
    tree: str  # cross, vht6 or seeded
    third_place: bool
    profile: str
    final_profile: str
    pairs: tuple[tuple[str, str], ...] = ()  # an explicit first round: ("A1", "B2") …
    best_of: Mapping[str, int] = field(default_factory=dict)  # round key -> N (series.py)


@dataclass(frozen=True)
class LaterGroup:
    """A final group (carrying the results between players of the same basic group) or a
    placement group (playing everyone anew), filled from the basic groups' places."""

    name: str
    seats: tuple[tuple[str, int], ...]  # (basic group, place), in seed order
    carry: bool
    profile: str


@dataclass(frozen=True)
class Playoff:
    """The play-off of a final or placement group: its top `top`, a bracket by seed (byes
    for the best), the bronze match if asked. The first play-off's match ids are QF1, SF1,
    F …; a later one's are prefixed with its group: B.SF1, B.F."""

    group: str
    top: int
    third_place: bool
    profile: str
    final_profile: str
    prefix: str  # "" or "B."
    best_of: Mapping[str, int] = field(default_factory=dict)  # per round, as the knock-out's


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
    later: tuple[LaterGroup, ...] = ()  # final groups, then placement groups (staged day)
    playoffs: tuple[Playoff, ...] = ()

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
    later, playoffs = _graph(r, rules, groups, len(players))
    if later and knockout is not None:
        raise r.doc.error(
            ("stages", "knockout"), "a day with final groups has playoffs:, not knockout:"
        )
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
        later=later,
        playoffs=playoffs,
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


def _stages(r: Reader, rules: RuleSet, players: int) -> tuple[GroupStage | None, Knockout | None]:
    stages = r.mapping(("stages",), ("groups", "knockout", "final", "placement", "playoffs"))
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
            size,
            advance,
            _profile(r, ("stages", "groups", "profile"), rules.group_profile),
            r.choice(
                ("stages", "groups", "seeding"),
                SEEDINGS,
                "snake" if rules.tree == "seeded" and rules.key != "pl-ko" else "pots",
            ),
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
            _best_of(r, (*k, "best_of")),
        )
        _check_tree(r, knockout, groups, players)
    if groups is None and knockout is None and not {"final", "placement"} & set(stages):
        raise r.doc.error(("stages",), "name groups:, knockout: or both")
    return groups, knockout


def _best_of(r: Reader, path: Path_) -> dict[str, int]:
    """`best_of: 7` (every play-off match a series of seven) or per round, `best_of:
    {default: 7, 3P: 5}`; each 1 (a single match) or odd, 3 to 9."""
    value = r.get(path)
    if value is None:
        return {}
    if not isinstance(value, dict):
        value = {"default": value}
        at = {"default": path}
    else:
        at = {key: (*path, key) for key in value}
    out: dict[str, int] = {}
    for key, n in value.items():
        if not isinstance(key, str) or not BEST_OF_ROUNDS.fullmatch(key):
            raise r.doc.error(
                at[key],
                f"a round is default, F, 3P, SF, QF, R16, R32, R64, R128 or P, not {key!r}",
            )
        if isinstance(n, bool) or not isinstance(n, int) or n not in (1, *series.BEST_OF):
            raise r.doc.error(at[key], f"best of 1 (one match) or of 3, 5, 7 or 9 games, not {n!r}")
        out[key] = n
    return out


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


def _graph(
    r: Reader, rules: RuleSet, groups: GroupStage | None, players: int
) -> tuple[tuple[LaterGroup, ...], tuple[Playoff, ...]]:
    """`final:` and `placement:` groups from the basic groups' places, and `playoffs:` from
    them: the stages after the basic groups (docs/tournament.md, "An ITHF tournament")."""
    later: list[LaterGroup] = []
    taken: dict[tuple[str, int], str] = {}
    for kind in ("final", "placement"):
        at: Path_ = ("stages", kind)
        value = r.get(at)
        if value is None:
            continue
        if groups is None:
            raise r.doc.error(at, "final and placement groups are filled from groups:")
        if not isinstance(value, dict) or not value:
            raise r.doc.error(at, "a mapping of groups by name, e.g. A: {places: [1, 2]}")
        basic = groups.names(players)
        smallest = players // len(basic)
        for name, _ in value.items():
            path: Path_ = (*at, name)
            if not isinstance(name, str) or not LATER_NAME.fullmatch(name):
                raise r.doc.error(path, f"a group's name is A, B, A1 … (capitals), not {name!r}")
            if any(name == g.name for g in later):
                raise r.doc.error(path, f"group {name} is named twice")
            r.mapping(path, LATER_KEYS if kind == "final" else LATER_KEYS[:2] + LATER_KEYS[3:])
            places = r.get((*path, "places"))
            if (
                not isinstance(places, list)
                or not places
                or not all(isinstance(p, int) and not isinstance(p, bool) for p in places)
            ):
                raise r.doc.error((*path, "places"), "a list of places, e.g. [1, 2]")
            for i, place in enumerate(places):
                if not 1 <= place <= smallest:
                    raise r.doc.error(
                        (*path, "places", i),
                        f"place {place}: the smallest basic group has {smallest}",
                    )
            wanted = r.get((*path, "from"), basic)
            if not isinstance(wanted, list) or not wanted:
                raise r.doc.error((*path, "from"), f"a list of basic groups: {', '.join(basic)}")
            source: list[str] = []
            for i, g in enumerate(wanted):
                if str(g) not in basic or str(g) in source:
                    raise r.doc.error(
                        (*path, "from", i), f"one of the basic groups {', '.join(basic)}, once"
                    )
                source.append(str(g))
            seats = tuple((g, p) for p in places for g in source)
            for seat in seats:
                if seat in taken:
                    raise r.doc.error(
                        (*path, "places"),
                        f"place {seat[1]} of group {seat[0]} already goes to {taken[seat]}",
                    )
                taken[seat] = name
            if len(seats) < 2:
                raise r.doc.error((*path, "places"), "a group needs two players at least")
            later.append(
                LaterGroup(
                    name,
                    seats,
                    r.flag((*path, "carry"), kind == "final"),
                    _profile(r, (*path, "profile"), groups.profile),
                )
            )
    return tuple(later), _playoffs(r, rules, later)


def _playoffs(r: Reader, rules: RuleSet, later: list[LaterGroup]) -> tuple[Playoff, ...]:
    at: Path_ = ("stages", "playoffs")
    value = r.get(at)
    if value is None:
        return ()
    if not later:
        raise r.doc.error(at, "play-offs come from final: or placement: groups")
    if not isinstance(value, dict) or not value:
        raise r.doc.error(at, "a mapping by group, e.g. A: {top: 8}")
    sizes = {g.name: len(g.seats) for g in later}
    out: list[Playoff] = []
    for name in value:
        path: Path_ = (*at, name)
        if name not in sizes:
            raise r.doc.error(path, f"no final or placement group {name!r} ({', '.join(sizes)})")
        r.mapping(path, PLAYOFF_KEYS)
        top = r.integer((*path, "top"), min(8, sizes[name]), MAX_PLAYERS)
        if not 2 <= top <= sizes[name]:
            raise r.doc.error((*path, "top"), f"2 to {sizes[name]} (the players of group {name})")
        out.append(
            Playoff(
                name,
                top,
                r.flag((*path, "third_place"), rules.third_place),
                _profile(r, (*path, "profile"), rules.knockout_profile),
                _profile(r, (*path, "final_profile"), rules.final_profile),
                "" if not out else f"{name}.",
                _best_of(r, (*path, "best_of")),
            )
        )
    return tuple(out)
