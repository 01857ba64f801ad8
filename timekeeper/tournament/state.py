"""The tournament as it stands: the file's plan plus the ledger's events, folded in order.

Every change is an event; each is checked against the state before it is written (so the
ledger only holds what the tournament can use) and the state is always the fold of the
whole ledger, so reading the file back gives exactly what the desk saw. The ledger itself
is the caller's (ledger.py): `Tournament` folds events, it never reads or writes a file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from timekeeper.rules import profile
from timekeeper.rules.decision import ANY, Decisions
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import drawing, placings, plan, results, stages
from timekeeper.tournament.bracket import Node
from timekeeper.tournament.drawing import make_draw as make_draw
from timekeeper.tournament.events import (
    DrawEvent,
    EntryError,
    Event,
    Later,
    LotEvent,
    ReplayEvent,
    ResultEvent,
    WithdrawEvent,
)
from timekeeper.tournament.plan import Loser, Place, Seat, Seed, Winner
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
    home_source: Seat | None  # the seat a side comes from (None in the basic groups)
    away_source: Seat | None
    slot: Slot
    result: Result | None
    replay: bool  # a replay was ordered and not yet played
    knockout: bool
    series: Series | None = None  # a play-off series: its games so far (result: once decided)

    @property
    def sides(self) -> str:
        return f"{self.home or _seat(self.home_source)} – {self.away or _seat(self.away_source)}"


class Tournament:
    def __init__(self, spec: Spec, events: Sequence[Event] = ()) -> None:
        self.spec = spec
        self.events: list[Event] = []
        self.draw: DrawEvent | None = None
        self.basic: dict[str, tuple[str, ...]] = {}  # the groups drawn
        self.later: dict[str, Later] = {}  # final and placement groups: seats, carry
        self._seat_of: dict[str, dict[str, Place]] = {}  # … a seat by its matches' text
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
                drawing.check_draw(event)
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
        refused = drawing.differs(self.spec, event)
        if refused:
            raise TournamentError(refused)
        self.draw = event
        self.basic = dict(event.groups)
        self.later = dict(event.later or {})
        self._seat_of = {g: {plan.text(s): s for s in v.seats} for g, v in self.later.items()}
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
            for name, lg in self.later.items():
                players = [self._in(s) for s in lg.seats]
                if all(players):
                    out[name] = tuple(p for p in players if p)
            self._known["groups"] = out
        groups: dict[str, tuple[str, ...]] = self._known["groups"]
        return groups

    def _seated(self, group: str, text: str) -> str | None:
        """Who plays a group match's side: a basic group's player by name, a later group's
        seat (named by its text) once its place is known."""
        seat = self._seat_of.get(group, {}).get(text)
        return text if seat is None else self._in(seat)

    def _in(self, seat: Place) -> str | None:
        """The player in a group's place, once the group is complete and no lot pending."""
        filled = seat.group in self.basic or seat.group in self.groups  # (a later one: filled)
        if not filled or not self.complete(seat.group):
            return None
        rows = self.standings(seat.group)
        row = rows[seat.place - 1] if seat.place <= len(rows) else None
        return None if row is None or row.lot == "pending" else row.player

    def group_played(self, group: str) -> list[tuple[str, str, Result]]:
        """A group's results; a final group's with those carried from the basic groups
        (each match between two of its players who met in the same basic group, once)."""
        out = []
        for p in self._of_group.get(group, ()):
            if p.id in self.results:
                home, away = self._seated(group, p.home), self._seated(group, p.away)
                if home and away:
                    out.append((home, away, self.results[p.id]))
        lg = self.later.get(group)
        if lg is not None and lg.carry and group in self.groups:
            players = self.groups[group]
            by_basic: dict[str, str] = {}
            for s, name in zip(lg.seats, players, strict=False):
                by_basic[name] = s.group
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
            (self._seated(group, p.home), self._seated(group, p.away))
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

    def side(self, source: Seat) -> str | None:
        """Who a knock-out side is, once it is known (a group finished, its lot drawn)."""
        match source:
            case Winner(match) | Loser(match):
                outcome = self.outcome(match)
                return None if outcome is None else outcome[isinstance(source, Loser)]
            case Seed(number):
                return self.order[number - 1] if number <= len(self.order) else None
            case Place():
                return self._in(source)
        return None

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
            seats = self._seat_of.get(p.group, {})
            return Fixture(
                p.id,
                f"group {p.group}",
                self._seated(p.group, p.home),
                self._seated(p.group, p.away),
                seats.get(p.home),
                seats.get(p.away),
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
                _seat(s)
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
        """The final standings for the sheets and the ITHF form (placings.py)."""
        return placings.final(self)

    def history(self, match_id: str | None = None) -> list[Event]:
        """The events so far, or one match's (its results, corrections and replays)."""
        return [
            e
            for e in self.events
            if match_id is None
            or (isinstance(e, ResultEvent | ReplayEvent) and e.match == match_id)
        ]


def _seat(seat: Seat | None) -> str:
    return "" if seat is None else plan.describe(seat)


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
