"""The tournament as it stands: the file's plan plus the ledger's events, folded in order.

Every change is an event; each is checked against the state before it is written (so the
ledger only holds what the tournament can use) and the state is always the fold of the
whole ledger, so reading the file back gives exactly what the desk saw. The ledger itself
is the caller's (ledger.py): `Tournament` folds events, it never reads or writes a file."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from timekeeper.rules import profile
from timekeeper.rules.decision import ANY, Decisions
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import bracket, results, schedule, series, stages
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.draw import Draw, pots_draw, random_draw, snake_draw
from timekeeper.tournament.events import (
    DrawEvent,
    EntryError,
    Event,
    LotEvent,
    ReplayEvent,
    ResultEvent,
    WithdrawEvent,
)
from timekeeper.tournament.results import Result, ResultError
from timekeeper.tournament.schedule import GroupMatch, Slot
from timekeeper.tournament.series import Game, Series, SeriesError
from timekeeper.tournament.spec import Spec, find_profile
from timekeeper.tournament.standings import Row, pending_lots, standings


class TournamentError(ConfigError):
    """A command the tournament cannot take as it stands; says why and what would do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class Fixture:
    """A match of the tournament as the desk sees it now — who (if known yet), where, its
    result — made from the draw (a GroupMatch or a knock-out Node) and the events since."""

    id: str
    stage: str  # "group A", "quarter-final 1" …
    home: str | None
    away: str | None
    home_source: str  # the group place or match a knock-out side comes from ("" in groups)
    away_source: str
    slot: Slot
    result: Result | None
    replay: bool  # a replay was ordered and not yet played
    knockout: bool
    series: Series | None = None  # a play-off series: its games so far (result: once decided)

    @property
    def sides(self) -> str:
        return (
            f"{self.home or stages.seat_text(bracket.source_text(self.home_source))} – "
            f"{self.away or stages.seat_text(bracket.source_text(self.away_source))}"
        )


def make_draw(
    spec: Spec,
    seed: int,
    ranking: Sequence[str] | None = None,
    time: str | None = None,
    entries: Mapping[str, Mapping[str, Any]] | None = None,
) -> DrawEvent:
    """The draw event: groups (or the knock-out's seed order), every group match, the tree,
    and every match's round and table — all fixed now, so that the rounds never change
    under the players even if a later version lays them out differently. `entries`: the
    ranking list's line of each ranked player (kept for the ITHF form)."""
    groups = spec.groups.count(len(spec.players)) if spec.groups else 0
    seeding = spec.groups.seeding if spec.groups else "pots"
    drawn: Draw = (
        random_draw(spec.names, groups, seed)
        if ranking is None
        else snake_draw(spec.names, ranking, groups, seed)
        if seeding == "snake"
        else pots_draw(spec.names, ranking, groups, seed)
    )
    if spec.later and spec.groups:  # a staged day: basic groups 1, 2, 3 …, later A, B …
        named = spec.groups.names(len(spec.players))
        drawn = replace(drawn, groups=dict(zip(named, drawn.groups.values(), strict=True)))
    matches = schedule.group_matches(drawn.groups)
    rounds = schedule.lay_out(matches, len(spec.tables))
    slots = schedule.slots(rounds, spec.tables)
    nodes: list[Node] = []
    if spec.later:
        later = [m for g in spec.later for m in stages.later_matches(g)]
        later_rounds = schedule.lay_out(later, len(spec.tables))
        slots += schedule.slots(later_rounds, spec.tables, len(rounds) + 1)
        matches += later
        nodes = [n for p in spec.playoffs for n in stages.playoff_nodes(p)]
        if nodes:
            slots += _knockout_slots(nodes, spec.tables, len(rounds) + len(later_rounds) + 1)
    if spec.knockout:
        k = spec.knockout
        nodes = bracket.build(
            k.tree,
            {g: len(p) for g, p in drawn.groups.items()},
            spec.groups.advance if spec.groups else 0,
            k.third_place,
            len(spec.players),
            k.pairs,
        )
        nodes = [dataclasses.replace(n, best_of=series.best_of_for(n.id, k.best_of)) for n in nodes]
        slots += _knockout_slots(nodes, spec.tables, len(rounds) + 1)
    return DrawEvent(
        seed,
        drawn.method,
        {g: tuple(p) for g, p in drawn.groups.items()},
        tuple(drawn.order),
        tuple(matches),
        tuple(nodes),
        tuple(slots),
        spec.rules.scoring(),
        time,
        later={
            g.name: {"seats": [stages.seat(*s) for s in g.seats], "carry": g.carry}
            for g in spec.later
        }
        or None,
        ranking={name: dict(e) for name, e in (entries or {}).items()} or None,
    )


def _knockout_slots(nodes: list[Node], tables: tuple[str, ...], first: int) -> list[Slot]:
    """The tree round by round; placement matches (VHT's second-to-last place) fill a free
    table where they delay nothing, the 3rd place comes before the final, which is played
    last and at the first table."""

    def kind(n: Node) -> int:
        last = n.id.rpartition(".")[2]  # B.F: a placement play-off's final
        return 3 if last == "F" else 2 if last == "3P" else 1 if n.places else 0

    order = sorted(nodes, key=lambda n: (kind(n), n.level))
    placed = schedule.place_after([(n.id, n.needs) for n in order], tables, first)
    out: list[Slot] = []
    for r in sorted({s.round for s in placed}):
        here = sorted((s for s in placed if s.round == r), key=lambda s: s.match != "F")
        out += [Slot(r, tables[i], s.match) for i, s in enumerate(here)]
    return out


class Tournament:
    def __init__(self, spec: Spec, events: Sequence[Event] = ()) -> None:
        self.spec = spec
        self.events: list[Event] = []
        self.draw: DrawEvent | None = None
        self.basic: dict[str, tuple[str, ...]] = {}  # the groups drawn
        self.later: dict[str, tuple[tuple[str, ...], bool]] = {}  # seats, carry
        self.order: tuple[str, ...] = ()
        self.group_matches: dict[str, GroupMatch] = {}
        self.nodes: dict[str, Node] = {}
        self.slots: list[Slot] = []
        self._slot_of: dict[str, Slot] = {}
        self._of_group: dict[str, list[GroupMatch]] = {}  # each group's matches
        self.results: dict[str, Result] = {}
        self.series: dict[str, Series] = {}  # a series' games so far, by match id
        self.games: dict[str, list[Result]] = {}  # … and each game's result as typed
        self.replays: set[str] = set()
        self.lots: dict[str, list[list[str]]] = {}
        self._known: dict[str, Any] = {}  # standings and groups of the events so far
        self.sources: dict[str, str] = {}  # a hall result message's id -> its match
        self.recorded: dict[str, Result] = {}  # the ledger's results (the rest: _settle)
        self.withdrawn: dict[str, int] = {}  # a player who withdrew -> in which order
        self.walkovers: set[str] = set()  # matches forfeited by a withdrawal, not typed
        self._decisions: dict[str, Decisions] = {}
        self._walked: dict[str, Series] = {}  # a series walked over by a withdrawal
        for event in events:
            self.apply(event)

    # ------------------------------------------------------------------ folding events

    def apply(self, event: Event) -> None:
        """The one place each kind of event changes the tournament. An event it cannot
        take as it stands (a second draw, a result the rule set refuses, a correction of a
        result that is not the one standing …: a ledger edited by hand) is an EntryError
        naming the field, and changes nothing."""
        self._known.clear()
        match event:
            case DrawEvent():
                if self.draw is not None:
                    raise EntryError(
                        "event",
                        f"a second draw (drawn in entry {self.draw.n}, seed {self.draw.seed}); "
                        "a tournament is drawn once",
                    )
                check_draw(event)
                self._apply_draw(event)
            case _ if self.draw is None:
                raise EntryError("event", f"a {event.kind} before the draw")
            case ResultEvent(match=match_id) | ReplayEvent(match=match_id) if (
                match_id not in self.group_matches and match_id not in self.nodes
            ):
                raise EntryError("match", f"no match {match_id!r} in the draw")
            case ResultEvent() if self.best_of(event.match) > 1 or event.game is not None:
                self._check_match(event)
                self._apply_game(event)
                if event.source is not None:
                    self.sources.setdefault(f"{event.source}", event.match)
            case ResultEvent():
                self._check_result(event)
                self.recorded[event.match] = event.result
                self.replays.discard(event.match)
                if event.source is not None:
                    self.sources.setdefault(event.source, event.match)
            case ReplayEvent() if self.best_of(event.match) > 1:
                played = self.series_of(event.match)
                if not played.games:
                    raise EntryError(
                        "match", f"a replay of {event.match}, a series with no game played"
                    )
                self._set_series(event.match, Series(played.best_of, played.games[:-1]))
                self.games[event.match].pop()
            case ReplayEvent():
                m = self._check_match(event)
                if event.match in self.replays:
                    raise EntryError("match", f"a replay of {event.match} is already ordered")
                if event.voids != m.result:
                    raise EntryError("voids", _not_standing(m, event.voids))
                self.recorded.pop(event.match, None)
                self.replays.add(event.match)
            case LotEvent():
                self._check_lot(event)
                self.lots.setdefault(event.group, []).append(list(event.order))
            case WithdrawEvent():
                if event.player not in self.order:
                    raise EntryError("player", f"{event.player!r} is not in the draw")
                if event.player in self.withdrawn:
                    raise EntryError("player", f"{event.player} has withdrawn already")
                self.withdrawn[event.player] = len(self.withdrawn)
        self.events.append(event)
        self._settle()
        self._known.clear()  # (what the checks above worked out came before this event)

    def _settle(self) -> None:
        """The results that stand: those recorded, and a forfeit for every match still to
        play by a player who withdrew (the knock-out's too, once they reach it: worked out
        again after every event, so a correction that changes who went through moves the
        forfeit with it). Between two who withdrew, the one who withdrew first is at fault."""
        self.results = dict(self.recorded)
        self.walkovers = set()
        self._walked = {}
        if not self.withdrawn:
            return
        later = sorted(self.nodes.values(), key=lambda n: n.level)
        for match_id in [*self.group_matches, *(n.id for n in later)]:
            if match_id in self.results or match_id in self.replays:
                continue
            m = self.fixture(match_id)
            out = [s for s in (m.home, m.away) if s in self.withdrawn]
            if m.home is None or m.away is None or not out:
                continue
            first = min(out, key=lambda p: self.withdrawn[p])
            side = "home" if first == m.home else "away"
            home, away = self.spec.rules.forfeit_score(side, None, None)
            self.walkovers.add(match_id)
            if self.best_of(match_id) > 1:  # (a series still to finish: a walkover gives it)
                played = self.series_of(match_id)
                walked = played.add(
                    Game(len(played.games) + 1, home, away, "forfeit", walkover=True)
                )
                self._walked[match_id] = walked
                self.results[match_id] = Result(walked.home_wins, walked.away_wins, "series", side)
                continue
            self.results[match_id] = Result(home, away, "forfeit", side)

    def _check_match(self, event: ResultEvent | ReplayEvent) -> Fixture:
        """The match an entry names, at the round and table the draw gave it, its players
        known."""
        if event.match not in self.group_matches and event.match not in self.nodes:
            raise EntryError("match", f"no match {event.match!r} in the draw")
        m = self.fixture(event.match)
        if (event.round, event.table) != (m.slot.round, m.slot.table):
            raise EntryError(
                "round",
                f"{m.id} is played in round {m.slot.round} at table {m.slot.table}, not in "
                f"round {event.round} at table {event.table}",
            )
        if m.home is None or m.away is None:
            raise EntryError("match", f"{m.id} ({m.sides}) cannot be played yet")
        return m

    def _check_result(self, event: ResultEvent) -> None:
        m = self._check_match(event)
        if event.corrects != m.result:
            raise EntryError("corrects", _not_standing(m, event.corrects))
        if event.corrects is not None and not (event.reason or "").strip():
            raise EntryError("reason", "a correction needs a reason")
        if event.corrects == event.result:
            raise EntryError("result", f"a correction that changes nothing ({m.id})")
        r = event.result
        typed = (
            (f"{r.at_forfeit[0]}:{r.at_forfeit[1]}" if r.at_forfeit else None)
            if r.decided == "forfeit"
            else f"{r.home}:{r.away}"
        )
        try:
            again = results.make(
                self.spec.rules,
                m.knockout,
                typed,
                r.decided,
                r.at_fault,
                self.decisions(m.id),
                written=True,
            )
        except ResultError as exc:
            raise EntryError("result", f"{r.text()} for {m.id}: {exc}") from None
        if again != r:
            raise EntryError(
                "result", f"{r.text()} is not {self.spec.rules.key}'s forfeit ({again.text()})"
            )
        first = self.sources.get(event.source or "", event.match)
        if first != event.match:
            raise EntryError("source", f"{event.source} came home as {first}'s result already")

    def _check_lot(self, event: LotEvent) -> None:
        if event.group not in self.groups:
            raise EntryError("group", f"no group {event.group!r} in the draw")
        ties = self.pending_lots(event.group)
        if not any(set(tie) == set(event.order) for tie in ties):
            raise EntryError(
                "order",
                f"{', '.join(event.order)}: not a tie only a lot breaks in group {event.group} "
                f"({'; '.join(', '.join(t) for t in ties) or 'none'})",
            )

    def decisions(self, match_id: str) -> Decisions:
        """How the match's profile can be decided past regulation (rules/decision.py): an
        overtime played in full (Radegast's 3 minutes), one a goal ends (ITHF's, hokejbal's),
        a shoot-out. A profile that no longer loads checks nothing (the box refuses it, not
        the desk). Each profile is read once."""
        name = self.profile_of(match_id)
        if not name:
            return ANY
        if name not in self._decisions:
            try:
                self._decisions[name] = Decisions.of(
                    profile.load(str(find_profile(name, self.spec.file)))
                )
            except ConfigError:
                self._decisions[name] = ANY
        return self._decisions[name]

    def best_of(self, match_id: str) -> int:
        """How many games the match is the best of (1: a single match)."""
        node = self.nodes.get(match_id)
        return 1 if node is None else node.best_of

    def series_of(self, match_id: str) -> Series:
        """A series as it stands: its games typed, and a walkover where a player withdrew."""
        if match_id in self._walked:
            return self._walked[match_id]
        return self.series.get(match_id) or Series(self.best_of(match_id))

    def _apply_game(self, event: ResultEvent) -> None:
        """A game of a series (the next one, or a correction of one played): the series'
        result is its score in games once a side has its wins (or a walkover), else none."""
        best_of = self.best_of(event.match)
        if best_of == 1:
            raise EntryError("game", f"game {event.game} of {event.match}, a single match")
        if event.game is None:
            raise EntryError(
                "game", f"a result of {event.match}, a best-of-{best_of} series, names its game"
            )
        r = event.result
        game = Game(event.game, r.home, r.away, r.decided, event.walkover)
        try:
            played = self.series_of(event.match).add(game)
        except SeriesError as exc:
            raise EntryError("game", f"{event.match}: {exc}") from None
        self._set_series(event.match, played)
        typed = self.games.setdefault(event.match, [])
        typed[event.game - 1 : event.game] = [r]

    def game_result(self, match_id: str, game: int) -> Result | None:
        """Game `game` of a series as typed (a forfeit's side at fault with it)."""
        typed = self.games.get(match_id, [])
        return typed[game - 1] if 1 <= game <= len(typed) else None

    def _set_series(self, match_id: str, played: Series) -> None:
        self.series[match_id] = played
        if played.winner is None:
            self.recorded.pop(match_id, None)
            return
        fault = played.walkover
        self.recorded[match_id] = Result(
            played.home_wins,
            played.away_wins,
            "series",
            None if fault is None else ("home" if fault.winner == "away" else "away"),
        )

    def _apply_draw(self, event: DrawEvent) -> None:
        if set(event.order) != set(self.spec.names):
            raise TournamentError(
                "the file's players are not those of the draw in the "
                "ledger; a drawn tournament keeps its players (rename "
                "back, or start a new tournament file)"
            )
        missing = {s.table for s in event.slots} - set(self.spec.tables)
        if missing:
            raise TournamentError(
                f"the draw in the ledger plays at tables "
                f"{', '.join(sorted(missing))}, which the file no longer "
                "names; a drawn tournament keeps its tables"
            )
        drawn_under = event.rules  # (ledgers from before it was kept: not checked)
        changed = (
            []
            if drawn_under is None
            else [
                k
                for k, v in self.spec.rules.scoring().items()
                if k != "key" and drawn_under.get(k) != v
            ]
        )
        if drawn_under is not None and changed:
            raise TournamentError(
                f"{self.spec.file}: rules: {self.spec.rules.key} does not score as the "
                f"{drawn_under.get('key')} rules the draw was made under ({', '.join(changed)} "
                "differ); a drawn tournament keeps its rules, so that no result already "
                "played is counted anew (put the rules back, or start a new tournament file)"
            )
        self.draw = event
        self.basic = dict(event.groups)
        self.later = {
            g: (tuple(map(str, v["seats"])), bool(v["carry"]))
            for g, v in (event.later or {}).items()
        }
        self.order = event.order
        self.group_matches = {m.id: m for m in event.matches}
        self.nodes = {n.id: n for n in event.knockout}
        self.slots = list(event.slots)
        self._slot_of = {s.match: s for s in self.slots}
        self._of_group = {}
        for m in event.matches:
            self._of_group.setdefault(m.group, []).append(m)

    def require_drawn(self) -> None:
        """What every command but the draw needs first."""
        if not self.drawn:
            raise TournamentError(
                f"{self.spec.file}: not drawn yet: `timekeeper tournament draw -f {self.spec.file}`"
            )

    # ------------------------------------------------------------------ what stands

    @property
    def drawn(self) -> bool:
        return self.draw is not None

    @property
    def groups(self) -> dict[str, tuple[str, ...]]:
        """The basic groups, then each final and placement group once its players are known
        (every basic group it takes from complete, no lot pending)."""
        if "groups" not in self._known:
            out = dict(self.basic)
            for name, (seats, _) in self.later.items():
                players = [self._seated(s) for s in seats]
                if all(players):
                    out[name] = tuple(p for p in players if p)
            self._known["groups"] = out
        groups: dict[str, tuple[str, ...]] = self._known["groups"]
        return groups

    def _seated(self, text: str) -> str | None:
        """The player in a later group's seat (`2/1`), once known; a name stays itself."""
        seat = stages.parse_seat(text)
        if seat is None:
            return text
        group, place = seat
        if group not in self.basic or not self.complete(group):
            return None
        rows = self.standings(group)
        row = rows[place - 1] if place <= len(rows) else None
        return None if row is None or row.lot == "pending" else row.player

    def group_played(self, group: str) -> list[tuple[str, str, Result]]:
        """A group's results; a final group's with those carried from the basic groups
        (each match between two of its players who met in the same basic group, once)."""
        out = []
        for p in self._of_group.get(group, ()):
            if p.id in self.results:
                home, away = self._seated(p.home), self._seated(p.away)
                if home and away:
                    out.append((home, away, self.results[p.id]))
        seats, carry = self.later.get(group, ((), False))
        if carry and group in self.groups:
            players = self.groups[group]
            by_basic: dict[str, str] = {}
            for s, name in zip(seats, players, strict=False):
                by_basic[name] = s.split("/")[0]
            for home, away, result in self._played_basic():
                if home in by_basic and by_basic.get(away) == by_basic[home]:
                    out.append((home, away, result))
        return out

    def _played_basic(self) -> list[tuple[str, str, Result]]:
        return [
            (p.home, p.away, self.results[p.id])
            for g in self.basic
            for p in self._of_group.get(g, ())
            if p.id in self.results
        ]

    def carried(self, group: str) -> list[tuple[str, str, Result]]:
        """The results a final group takes from the basic groups (none for a placement group
        or a basic group)."""
        own = {
            (self._seated(p.home), self._seated(p.away))
            for p in self.group_matches.values()
            if p.group == group
        }
        return [x for x in self.group_played(group) if (x[0], x[1]) not in own]

    def complete(self, group: str) -> bool:
        key = f"complete {group}"
        if key not in self._known:
            self._known[key] = all(p.id in self.results for p in self._of_group.get(group, ()))
        done: bool = self._known[key]
        return done

    def standings(self, group: str) -> list[Row]:
        key = f"standings {group}"
        if key not in self._known:
            self._known[key] = standings(
                self.basic[group] if group in self.basic else self.groups[group],
                self.group_played(group),
                self.spec.rules,
                self.lots.get(group, ()),
            )
        rows: list[Row] = self._known[key]
        return rows

    def pending_lots(self, group: str) -> list[tuple[str, ...]]:
        """Ties only a lot can break, once the group has played all its matches."""
        return pending_lots(self.standings(group)) if self.complete(group) else []

    def side(self, source: str) -> str | None:
        """Who a knock-out side is, once it is known (a group finished, its lot drawn)."""
        if source.startswith(("W:", "L:")):
            outcome = self.outcome(source[2:])
            return None if outcome is None else outcome[0 if source[0] == "W" else 1]
        if source.startswith("#"):
            number = int(source[1:])
            return self.order[number - 1] if number <= len(self.order) else None
        group, place = self._split(source)
        if group not in self.groups or not place or not self.complete(group):
            return None
        rows = self.standings(group)
        if int(place) > len(rows):
            return None
        row = rows[int(place) - 1]
        return None if row.lot == "pending" else row.player

    def _split(self, source: str) -> tuple[str, str]:
        """`A1` → ("A", "1"); a later group's name may end in a digit (`A11`: A1's winner),
        so the longest group name it begins with is taken."""
        for name in sorted(self.later, key=len, reverse=True):
            if source.startswith(name) and source[len(name) :].isdigit():
                return name, source[len(name) :]
        group = source.rstrip("0123456789")
        return group, source[len(group) :]

    def outcome(self, match: str) -> tuple[str, str] | None:
        """(winner, loser) of a decided knock-out match."""
        result = self.results.get(match)
        node = self.nodes.get(match)
        if result is None or node is None:
            return None
        home, away = self.side(node.home), self.side(node.away)
        if home is None or away is None or result.winner is None:
            return None
        return (home, away) if result.winner == "home" else (away, home)

    def fixture(self, match_id: str) -> Fixture:
        slot = self._slot_of[match_id]
        result, replay = self.results.get(match_id), match_id in self.replays
        if match_id in self.group_matches:
            p = self.group_matches[match_id]
            later = p.group in self.later
            return Fixture(
                p.id,
                f"group {p.group}",
                self._seated(p.home),
                self._seated(p.away),
                p.home if later else "",
                p.away if later else "",
                slot,
                result,
                replay,
                False,
            )
        n = self.nodes[match_id]
        return Fixture(
            n.id,
            n.name,
            self.side(n.home),
            self.side(n.away),
            n.home,
            n.away,
            slot,
            result,
            replay,
            True,
            self.series_of(n.id) if n.best_of > 1 else None,
        )

    def profile_of(self, match_id: str) -> str:
        """The match profile a box plays this match with: the stage's, the final's for F."""
        if match_id in self.group_matches and self.spec.groups:
            group = self.group_matches[match_id].group
            later = next((g for g in self.spec.later if g.name == group), None)
            return later.profile if later else self.spec.groups.profile
        playoff = stages.playoff_of(match_id, self.spec.playoffs)
        if playoff is not None and match_id in self.nodes:
            return playoff.final_profile if self.nodes[match_id].final else playoff.profile
        k = self.spec.knockout
        if k is None:
            return ""
        return k.final_profile if self.nodes[match_id].final else k.profile

    def fixtures(self) -> list[Fixture]:
        return [
            self.fixture(s.match)
            for s in sorted(self.slots, key=lambda s: (s.round, self.spec.tables.index(s.table)))
        ]

    def named(self, match_id: str) -> Fixture:
        """A match by its id (any letter case): `result QF2 3:2`."""
        for s in self.slots:
            if s.match.casefold() == match_id.strip().casefold():
                return self.fixture(s.match)
        raise TournamentError(f"no match {match_id!r} (matches: {', '.join(self._ids())})")

    def _ids(self) -> list[str]:
        ids = [s.match for s in self.slots]
        return ids if len(ids) <= 12 else [*ids[:5], "…", *ids[-5:]]

    def at(self, round_: int, table: str) -> Fixture:
        for s in self.slots:
            if s.round == round_ and s.table == table:
                return self.fixture(s.match)
        used = sorted({s.round for s in self.slots})
        last = used[-1] if used else 0
        raise TournamentError(
            f"no match in round {round_} at table {table} (rounds 1–{last}, "
            f"tables {', '.join(self.spec.tables)})"
        )

    def next_up(self) -> list[tuple[str, Fixture | None, str]]:
        """Each table's next match and whether it can start: a late result at one table
        never holds up another; only a player still busy elsewhere (or a knock-out side not
        known yet) does, and that is said."""
        out: list[tuple[str, Fixture | None, str]] = []
        for table in self.spec.tables:
            waiting = [m for m in self.fixtures() if m.slot.table == table and m.result is None]
            if not waiting:
                out.append((table, None, "done"))
                continue
            m = waiting[0]
            out.append((table, m, self._holdup(m)))
        return out

    def _holdup(self, m: Fixture) -> str:
        if m.home is None or m.away is None:
            return "waiting for " + " and ".join(
                stages.seat_text(s)
                for s, who in ((m.home_source, m.home), (m.away_source, m.away))
                if who is None
            )
        for other in self.fixtures():
            if (
                other.slot.round < m.slot.round
                and other.result is None
                and {other.home, other.away} & {m.home, m.away}
            ):
                busy = ({other.home, other.away} & {m.home, m.away}).pop()
                return f"{busy} still plays round {other.slot.round} at table {other.slot.table}"
        return "ready"

    def placings(self) -> list[tuple[int, str]]:
        """The final standings for the sheets and the ITHF form (see bracket.placings)."""
        outcomes = {n: o for n in self.nodes if (o := self.outcome(n)) is not None}
        if self.later:
            return self._staged_placings(outcomes)
        return [
            (p, n)
            for p, n in bracket.placings(
                list(self.nodes.values()), outcomes, self._by_group_place()
            )
        ]

    def _by_group_place(self) -> list[str]:
        """Everyone, by basic-group place, then points, goal difference, goals scored, then
        the draw order (the order of those no later stage ranks)."""
        rest: list[str] = []
        if self.basic:
            rows = [r for g in self.basic for r in self.standings(g)]
            rows.sort(
                key=lambda r: (
                    r.place,
                    -r.points,
                    -r.goal_difference,
                    -r.goals_for,
                    self.order.index(r.player),
                )
            )
            rest = [r.player for r in rows]
        else:
            rest = list(self.order)
        return rest

    def _staged_placings(self, outcomes: dict[str, tuple[str, str]]) -> list[tuple[int, str]]:
        """A staged day: the final groups, then the placement groups in the file's order, each
        by its play-off (those out earlier below, by the group's order) and then its own
        standings; those in no later group (or in one not filled yet) after them, by
        basic-group place."""
        placed: list[str] = []
        groups = self.groups
        for name in self.later:
            if name not in groups:
                continue
            order = [r.player for r in self.standings(name)]
            playoff = next((p for p in self.spec.playoffs if p.group == name), None)
            if playoff is not None:
                nodes = [
                    n
                    for n in self.nodes.values()
                    if stages.playoff_of(n.id, self.spec.playoffs) == playoff
                ]
                order = [n for _, n in bracket.placings(nodes, outcomes, order)]
            placed += [n for n in order if n not in placed]
        placed += [n for n in self._by_group_place() if n not in placed]
        return [(i, n) for i, n in enumerate(placed, 1)]

    def history(self, match_id: str | None = None) -> list[Event]:
        """The events so far, or one match's (its results, corrections and replays)."""
        return [
            e
            for e in self.events
            if match_id is None
            or (isinstance(e, ResultEvent | ReplayEvent) and e.match == match_id)
        ]


def _not_standing(m: Fixture, named: Result | None) -> str:
    """Why an entry's `corrects` (or `voids`) is refused: it is not the result standing."""
    if m.result is None:
        return f"{m.id} has no result to set aside (it names {named.text() if named else '-'})"
    if named is None:
        return (
            f"{m.id} is {m.result.text()} already: a result over it is a correction "
            "(with the result it replaces and a reason)"
        )
    return f"{named.text()} is not the result {m.id} has ({m.result.text()})"


def _seats(event: DrawEvent, group: str) -> tuple[str, ...]:
    """A final or placement group's seats as the draw keeps them ("2/1": 1st of group 2)."""
    seats = (event.later or {}).get(group, {}).get("seats", ())
    return tuple(str(s) for s in seats) if isinstance(seats, list | tuple) else ()


def check_draw(event: DrawEvent) -> None:
    """A draw's parts agree with each other: every player in one group at most, every
    match between two players of its group, every knock-out side a place, seed or match
    there is, every match at one round and table and no two at the same. A draw made here
    always does; one edited by hand is refused, naming the part."""
    order = set(event.order)
    seen: set[str] = set()
    for g, players in event.groups.items():
        for p in players:
            if p not in order or p in seen:
                raise EntryError(f"groups.{g}", f"{p!r} is not in the order, or in two groups")
            seen.add(p)
    if event.groups and seen != order:
        raise EntryError("groups", "every player of the order is in a group")
    ids: set[str] = set()
    for i, m in enumerate(event.matches):
        members = event.groups.get(m.group) or _seats(event, m.group)  # (a later group's seats)
        if m.id in ids or m.home not in members or m.away not in members or m.home == m.away:
            raise EntryError(
                f"matches[{i}]",
                f"{m.id}: a match of its own id between two players of group {m.group}",
            )
        ids.add(m.id)
    nodes = {n.id: n for n in event.knockout}
    for i, n in enumerate(event.knockout):
        if n.id in ids:
            raise EntryError(f"knockout[{i}].id", f"{n.id} is named twice")
        ids.add(n.id)
        for side, source in (("home", n.home), ("away", n.away)):
            if not _source_ok(source, n, nodes, event):
                raise EntryError(f"knockout[{i}].{side}", f"{source!r} names no side there is")
    for i, n in enumerate(event.knockout):  # (each play-off of a staged day: its own places)
        prefix = n.id[: n.id.index(".") + 1] if "." in n.id else ""
        places = [
            p
            for k in event.knockout
            if k.places and (k.id[: k.id.index(".") + 1] if "." in k.id else "") == prefix
            for p in k.places
        ]
        if n.final != (n.places == (1, 2)) or len(set(places)) != len(places):
            raise EntryError(
                f"knockout[{i}].places",
                "each final place decided by one match; the final (and only it) decides 1 and 2",
            )
    where: set[tuple[int, str]] = set()
    placed: set[str] = set()
    for i, s in enumerate(event.slots):
        if (s.round, s.table) in where or s.match not in ids or s.match in placed:
            raise EntryError(
                f"slots[{i}]",
                f"round {s.round} table {s.table} {s.match}: one match of the draw a slot, "
                "one slot a match",
            )
        where.add((s.round, s.table))
        placed.add(s.match)
    if placed != ids:
        raise EntryError("slots", f"{sorted(ids - placed)[0]} has no round and table")


def _source_ok(source: str, node: Node, nodes: dict[str, Node], event: DrawEvent) -> bool:
    if source[:2] in ("W:", "L:"):
        before = nodes.get(source[2:])
        return before is not None and before.level < node.level
    if source.startswith("#"):
        return source[1:].isdigit() and 1 <= int(source[1:]) <= len(event.order)
    for cut in range(1, len(source)):  # (group A1's 1st is "A11": every split is tried)
        group, place = source[:cut], source[cut:]
        size = len(event.groups[group]) if group in event.groups else len(_seats(event, group))
        if place.isdigit() and 1 <= int(place) <= size:
            return True
    return False
