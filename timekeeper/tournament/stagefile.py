"""The `stages:` of the tournament file read into the plan's types (plan.py): the basic
groups (drawn, or set by hand), a knock-out from them, or final and placement groups from
their places and play-offs from those. Read once, at load, every refusal naming
file:line:column and the field; the rest of the wing trusts what it returns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from timekeeper.rules import profile
from timekeeper.rules.yamldoc import ConfigError, Path_, Reader
from timekeeper.tournament import plan, series
from timekeeper.tournament.plan import Bracket, Groups, Place, RoundRobin, Seat
from timekeeper.tournament.rulesets import TREES, RuleSet
from timekeeper.tournament.stages import interleaved

GROUP_KEYS = ("size", "advance", "profile", "seeding", "set", "unranked")
SEEDINGS = ("snake", "pots")
LATER_KEYS = ("places", "from", "interleaved", "seats", "carry", "profile")
PLAYOFF_KEYS = ("top", "from", "third_place", "profile", "final_profile", "best_of")
LATER_NAME = re.compile(r"[A-Z][A-Z0-9]{0,3}")
KNOCKOUT_KEYS = ("tree", "third_place", "profile", "final_profile", "pairs", "best_of")
# `best_of:` per round: the round keys of series.round_key, and `default`
BEST_OF_ROUNDS = re.compile(r"default|F|3P|SF|QF|R(16|32|64|128)|P")
MAX_PLAYERS = 256
# The group matches of an evening: the draw keeps every one in its ledger line, which must
# stay under the ledger's line limit (ledger.MAX_LINE) with every name at its longest;
# bench/tournament_sizes.py measures it, a test holds it. 256 players in groups of 8 is 896.
MAX_GROUP_MATCHES = 900


@dataclass(frozen=True)
class Stages:
    groups: Groups | None
    knockout: Bracket | None
    later: tuple[RoundRobin, ...]  # final groups, then placement groups (a staged day)
    playoffs: tuple[Bracket, ...]


def find_profile(name: str, tournament_file: Path) -> Path:
    """A stage's profile file: a built-in or user profile by name, or a path (one with a
    `/`) beside the tournament file. Raises ConfigError."""
    return profile.find(name, relative_to=tournament_file.parent if "/" in name else None)


def profile_name(r: Reader, path: Path_, default: str | None) -> str:
    name = r.get(path, default)
    if not isinstance(name, str):
        raise r.doc.error(path, f"must be a profile name, not {name!r}")
    try:
        find_profile(name, r.doc.file)
    except ConfigError as exc:
        raise r.doc.error(path, exc.message) from None
    return name


def group_match_count(players: int, size: int) -> int:
    """The round robins' matches: the players dealt into ceil(players / size) groups whose
    sizes differ by one at most (draw.py deals them so)."""
    groups = -(-players // size)
    small, big = divmod(players, groups)
    return big * (small + 1) * small // 2 + (groups - big) * small * (small - 1) // 2


def read(r: Reader, rules: RuleSet, names: Sequence[str]) -> Stages:
    stages = r.mapping(("stages",), ("groups", "knockout", "final", "placement", "playoffs"))
    if stages is None:  # the rule set's evening: groups of four and a knock-out, or KO only
        stages = {"knockout": {}} if rules.key == "pl-ko" else {"groups": {}, "knockout": {}}
    groups = _groups(r, rules, names) if "groups" in stages else None
    knockout = None
    if "knockout" in stages:
        k: Path_ = ("stages", "knockout")
        r.mapping(k, KNOCKOUT_KEYS)
        tree = r.choice((*k, "tree"), TREES, rules.tree if groups else "seeded")
        knockout = Bracket(
            tree,
            r.flag((*k, "third_place"), rules.third_place),
            profile_name(r, (*k, "profile"), rules.knockout_profile),
            profile_name(r, (*k, "final_profile"), rules.final_profile),
            _pairs(r, (*k, "pairs")),
            _best_of(r, (*k, "best_of")),
        )
        _check_tree(r, knockout, groups, len(names))
    if groups is None and knockout is None and not {"final", "placement"} & set(stages):
        raise r.doc.error(("stages",), "name groups:, knockout: or both")
    later = _later(r, groups, len(names))
    if later and knockout is not None:
        raise r.doc.error(
            ("stages", "knockout"), "a day with final groups has playoffs:, not knockout:"
        )
    return Stages(groups, knockout, later, _playoffs(r, rules, later))


def _groups(r: Reader, rules: RuleSet, names: Sequence[str]) -> Groups:
    at: Path_ = ("stages", "groups")
    r.mapping(at, GROUP_KEYS)
    players = len(names)
    by_hand = _by_hand(r, names)
    size = r.integer((*at, "size"), max(map(len, by_hand)) if by_hand else 4, MAX_PLAYERS)
    if size < 2:
        raise r.doc.error((*at, "size"), "a group needs two players at least")
    smallest = min(map(len, by_hand)) if by_hand else players // -(-players // size)
    tree = r.get(("stages", "knockout", "tree"), rules.tree)
    default_advance = 3 if tree == "vht6" else min(2, smallest)
    advance = r.integer((*at, "advance"), default_advance, MAX_PLAYERS)
    if advance > smallest:
        raise r.doc.error(
            (*at, "advance"), f"{advance} cannot go through from a group of {smallest}"
        )
    if rules.group_profile is None:
        raise r.doc.error(at, "this rule set plays no groups")
    matches = (
        sum(len(g) * (len(g) - 1) // 2 for g in by_hand)
        if by_hand
        else group_match_count(players, size)
    )
    if matches > MAX_GROUP_MATCHES:
        fits = max(s for s in range(2, size) if group_match_count(players, s) <= MAX_GROUP_MATCHES)
        raise r.doc.error(
            (*at, "size"),
            f"groups of {size} for {players} players make {matches} group matches, more "
            f"than the {MAX_GROUP_MATCHES} an evening's draw holds: size: {fits} or less",
        )
    return Groups(
        -(-players // len(by_hand)) if by_hand else size,
        advance,
        profile_name(r, (*at, "profile"), rules.group_profile),
        r.choice(
            (*at, "seeding"),
            SEEDINGS,
            "snake" if rules.tree == "seeded" and rules.key != "pl-ko" else "pots",
        ),
        by_hand,
        _names(r, (*at, "unranked"), names),
    )


def _names(r: Reader, path: Path_, names: Sequence[str]) -> tuple[str, ...]:
    """A list of the file's players, each once (`unranked:`, a group set by hand)."""
    value = r.get(path)
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise r.doc.error(path, "a list of the players' names")
    out: list[str] = []
    for i, name in enumerate(value):
        if str(name) not in names:
            raise r.doc.error((*path, i), f"{name!r} is not one of the players")
        if str(name) in out:
            raise r.doc.error((*path, i), f"{name!r} is named twice")
        out.append(str(name))
    return tuple(out)


def _by_hand(r: Reader, names: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """`set: [[…], […]]`: the organiser's own basic groups, every player in one."""
    at: Path_ = ("stages", "groups", "set")
    value = r.get(at)
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) < 1 or not all(isinstance(g, list) for g in value):
        raise r.doc.error(at, "a list of groups, each a list of players: [[Ann, Bob], [Cy, Di]]")
    out: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    for i, _ in enumerate(value):
        group = _names(r, (*at, i), names)
        if len(group) < 2:
            raise r.doc.error((*at, i), "a group needs two players at least")
        for j, name in enumerate(group):
            if name in seen:
                raise r.doc.error((*at, i, j), f"{name!r} is in group {seen[name] + 1} already")
            seen[name] = i
        out.append(group)
    missing = [n for n in names if n not in seen]
    if missing:
        raise r.doc.error(at, f"every player in a group: {', '.join(missing)} in none")
    return tuple(out)


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


def _pairs(r: Reader, path: Path_) -> tuple[tuple[Seat, Seat], ...]:
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
    out: list[tuple[Seat, Seat]] = []
    for i, pair in enumerate(value):
        seats = []
        for j, side in enumerate(pair):
            try:
                seats.append(plan.read(side.strip().upper()))
            except ValueError as exc:
                raise r.doc.error((*path, i, j), str(exc)) from None
        out.append((seats[0], seats[1]))
    return tuple(out)


def _check_tree(r: Reader, ko: Bracket, groups: Groups | None, players: int) -> None:
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


def _later(r: Reader, groups: Groups | None, players: int) -> tuple[RoundRobin, ...]:
    """`final:` and `placement:` groups from the basic groups' places: the stages after the
    basic groups (docs/tournament.md, "An ITHF tournament")."""
    later: list[RoundRobin] = []
    taken: dict[Place, str] = {}
    for kind in ("final", "placement"):
        at: Path_ = ("stages", kind)
        value = r.get(at)
        if value is None:
            continue
        if groups is None:
            raise r.doc.error(at, "final and placement groups are filled from groups:")
        if not isinstance(value, dict) or not value:
            raise r.doc.error(at, "a mapping of groups by name, e.g. A: {places: [1, 2]}")
        shares = sum(isinstance(v, dict) and "interleaved" in v for v in value.values())
        for name in value:
            path: Path_ = (*at, name)
            if not isinstance(name, str) or not LATER_NAME.fullmatch(name):
                raise r.doc.error(path, f"a group's name is A, B, A1 … (capitals), not {name!r}")
            if any(name == g.name for g in later):
                raise r.doc.error(path, f"group {name} is named twice")
            r.mapping(path, LATER_KEYS if kind == "final" else LATER_KEYS[:4] + LATER_KEYS[5:])
            seats = _seats(r, path, groups, players, shares)
            for seat in seats:
                if seat in taken:
                    where = "seats" if r.get((*path, "seats")) is not None else "places"
                    raise r.doc.error(
                        (*path, where),
                        f"place {seat.place} of group {seat.group} already goes to {taken[seat]}",
                    )
                taken[seat] = name
            if len(seats) < 2:
                raise r.doc.error((*path, "places"), "a group needs two players at least")
            carry = r.flag((*path, "carry"), kind == "final")
            later.append(
                RoundRobin(name, seats, carry, profile_name(r, (*path, "profile"), groups.profile))
            )
    return tuple(later)


def _seats(r: Reader, path: Path_, groups: Groups, players: int, shares: int) -> tuple[Place, ...]:
    """A later group's seats: `seats: [[1, 1], [3, 2] …]` (basic group, place) as listed, or
    `places:` of the basic groups `from:` (all), by place then basic group; `interleaved:
    k` deals them alternately among the groups that say it (stages.interleaved)."""
    basic = groups.names(players)
    smallest = min(map(len, groups.by_hand)) if groups.by_hand else players // len(basic)
    listed = r.get((*path, "seats"))
    if listed is not None:
        for key in ("places", "from", "interleaved"):
            if r.get((*path, key)) is not None:
                raise r.doc.error(
                    (*path, key), "seats: lists them all; no places:, from:, interleaved:"
                )
        if not isinstance(listed, list) or not listed:
            raise r.doc.error(
                (*path, "seats"), "a list of [basic group, place], e.g. [[1, 1], [3, 2]]"
            )
        out: list[Place] = []
        for i, item in enumerate(listed):
            ok = isinstance(item, list) and len(item) == 2
            ok = ok and all(isinstance(x, int) and not isinstance(x, bool) for x in item)
            if not ok or str(item[0]) not in basic or not 1 <= item[1] <= smallest:
                raise r.doc.error(
                    (*path, "seats", i),
                    f"[basic group, place]: a group of {', '.join(basic)} and a place 1 to "
                    f"{smallest}, not {item!r}",
                )
            seat = Place(str(item[0]), item[1])
            if seat in out:
                raise r.doc.error((*path, "seats", i), f"{item!r} is listed twice")
            out.append(seat)
        return tuple(out)
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
                (*path, "places", i), f"place {place}: the smallest basic group has {smallest}"
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
    if r.get((*path, "interleaved")) is None:
        return tuple(Place(g, p) for p in places for g in source)
    k = r.integer((*path, "interleaved"), 1, shares)
    if k < 1:
        raise r.doc.error((*path, "interleaved"), f"1 to {shares}: this group's share")
    return tuple(interleaved(source, places, k, shares))


def _playoffs(r: Reader, rules: RuleSet, later: Sequence[RoundRobin]) -> tuple[Bracket, ...]:
    at: Path_ = ("stages", "playoffs")
    value = r.get(at)
    if value is None:
        return ()
    if not later:
        raise r.doc.error(at, "play-offs come from final: or placement: groups")
    if not isinstance(value, dict) or not value:
        raise r.doc.error(at, "a mapping by group, e.g. A: {top: 8}")
    sizes = {g.name: len(g.seats) for g in later}
    out: list[Bracket] = []
    drawn: dict[str, str] = {}
    for name in value:
        path: Path_ = (*at, name)
        r.mapping(path, PLAYOFF_KEYS)
        source = r.get((*path, "from"), [name])
        if not isinstance(name, str) or not LATER_NAME.fullmatch(name):
            raise r.doc.error(path, f"a play-off's name is A, B, A1 … (capitals), not {name!r}")
        if (
            not isinstance(source, list)
            or not 1 <= len(source) <= 2
            or len(set(map(str, source))) != len(source)
        ):
            raise r.doc.error((*path, "from"), "one group, or two for a crossed play-off")
        for i, g in enumerate(source):
            where = (*path, "from", i) if r.get((*path, "from")) is not None else path
            if str(g) not in sizes:
                raise r.doc.error(where, f"no final or placement group {g!r} ({', '.join(sizes)})")
            if str(g) in drawn:
                raise r.doc.error(where, f"group {g}'s play-off is {drawn[str(g)]} already")
            drawn[str(g)] = name
        source = [str(g) for g in source]
        most = min(sizes[g] for g in source)
        crossed = len(source) == 2
        top = r.integer((*path, "top"), min(4 if crossed else 8, most), MAX_PLAYERS)
        low = 1 if crossed else 2
        if not low <= top <= most or (crossed and top & (top - 1)):
            each = "1, 2, 4 … of each, at most" if crossed else f"{low} to"
            raise r.doc.error(
                (*path, "top"), f"{each} {most} (the players of group {' and '.join(source)})"
            )
        out.append(
            Bracket(
                "crossed" if crossed else "seeded",
                r.flag((*path, "third_place"), rules.third_place),
                profile_name(r, (*path, "profile"), rules.knockout_profile),
                profile_name(r, (*path, "final_profile"), rules.final_profile),
                (),
                _best_of(r, (*path, "best_of")),
                name,
                tuple(source),
                top,
                "" if not out else f"{name}.",
            )
        )
    return tuple(out)
