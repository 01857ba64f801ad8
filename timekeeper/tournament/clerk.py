"""The clerk at the desk: each of the desk's commands — draw, result, correction, replay,
lot — looked at against the tournament as it stands and written up as the event to append
to the ledger (events.py), or refused with a TournamentError that says why and what to type
instead. The clerk never writes: the caller records the event (`Ledger.record`). A change that would
pull the ground from under a knock-out match already begun (a correction that changes who
went through, once the match it changes is played or under way at its table) is refused:
the later match must be voided (a replay) or its table reset first; before that, the
correction re-seeds the knock-out."""

from __future__ import annotations

import difflib
import random
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from timekeeper.tournament import entrycheck, results
from timekeeper.tournament.events import (
    MAX_REASON,
    DrawEvent,
    EntryError,
    LotEvent,
    ReplayEvent,
    ResultEvent,
    WithdrawEvent,
)
from timekeeper.tournament.results import ResultError
from timekeeper.tournament.series import SeriesError
from timekeeper.tournament.state import Fixture, Tournament, TournamentError, make_draw


class AlreadyIn(TournamentError):
    """The very result is in the ledger already: nothing to write (a result delivered again
    is told apart from one that differs, which needs a correction's reason)."""


def draw(
    t: Tournament,
    seed: int,
    ranking: Sequence[str] | None = None,
    time: str = "",
    entries: Mapping[str, Mapping[str, Any]] | None = None,
    ranking_date: str | None = None,
) -> DrawEvent:
    if t.draw is not None:
        raise TournamentError(
            f"already drawn (seed {t.draw.seed}); a new draw needs a new tournament file"
        )
    return make_draw(t.spec, seed, ranking, time or None, entries, ranking_date)


def result(
    t: Tournament,
    round_: int,
    table: str,
    score: str | tuple[int, int] | None,
    decided: str = "regulation",
    at_fault: str | None = None,
    reason: str = "",
    time: str = "",
    source: str | None = None,
    begun: Mapping[str, str] | None = None,
    game: int | None = None,
    one_game: bool = False,
) -> ResultEvent:
    """A result typed at the desk; over an existing one it is a correction and needs a
    reason, which stays in the ledger with the result it replaced. `source`: the hall's
    result message it came from; `begun`: the knock-out matches under way at their tables
    (match -> how the desk knows), which a correction must not change either. A series
    takes its next game (or `game`, a correction of one played); a forfeit there is a
    walkover of the whole series unless `one_game`."""
    t.require_drawn()
    _reason_fits(reason)
    m = t.at(round_, table)
    if m.series is not None:
        return _game(t, m, score, decided, at_fault, reason, time, source, begun, game, one_game)
    if game is not None:
        raise TournamentError(f"{m.id} is a single match, not a series: no --game")
    where = f"round {round_} table {table} ({m.sides})"
    try:
        new = results.typed(t.spec.rules, score, decided, at_fault)
    except ResultError as exc:
        raise TournamentError(f"{where}: {exc}") from None
    event = ResultEvent(m.id, round_, table, new, reason or None, m.result, source, time or None)
    _keeps_knockout(t, _folded(t, m, event, where), event, begun or {})
    return event


def _game(
    t: Tournament,
    m: Fixture,
    score: str | tuple[int, int] | None,
    decided: str,
    at_fault: str | None,
    reason: str,
    time: str,
    source: str | None,
    begun: Mapping[str, str] | None,
    game: int | None,
    one_game: bool,
) -> ResultEvent:
    """A game of a series: the next one, or one played again (a correction, with its
    reason). Each game has a winner (a draw goes to the profile's overtime, ITHF 4.8)."""
    played = m.series
    assert played is not None
    state = played.state_text(str(m.home), str(m.away))
    number = game if game is not None else played.next_game
    if number is None:
        raise TournamentError(
            f"{m.id} ({m.sides}) is decided: {state}; a correction names its game "
            f"(--game N --reason …)"
        )
    if not 1 <= number <= played.best_of:
        raise TournamentError(f"{m.id} is a best-of-{played.best_of}: games 1–{played.best_of}")
    if number > len(played.games) + 1 or (played.decided and number > len(played.games)):
        raise TournamentError(
            f"{m.id} ({m.sides}, {state}): the next game is "
            f"{'none' if played.next_game is None else played.next_game}, not game {number}"
        )
    if one_game and at_fault is None:
        raise TournamentError("--one-game goes with --forfeit SIDE (a game forfeited)")
    try:
        new = results.make(t.spec.rules, True, score, decided, at_fault, t.decisions(m.id))
    except ResultError as exc:
        raise TournamentError(f"{m.id} game {number} ({m.sides}): {exc}") from None
    walkover = new.decided == "forfeit" and not one_game
    old = played.games[number - 1] if number <= len(played.games) else None
    corrects = None
    if old is not None:
        corrects = t.game_result(m.id, number)
        if corrects == new and old.walkover == walkover:
            raise AlreadyIn(f"{m.id} game {number} is already {old.text()}")
        if not reason.strip():
            raise TournamentError(
                f"{m.id} game {number} ({m.sides}) is already {old.text()}; a correction "
                "needs --reason (it stays in the history)"
            )
    event = ResultEvent(
        m.id,
        m.slot.round,
        m.slot.table,
        new,
        reason or None,
        corrects,
        source,
        time or None,
        game=number,
        walkover=walkover,
    )
    _keeps_knockout(t, _folded(t, m, event, m.id), event, begun or {})
    return event


def replay(
    t: Tournament,
    round_: int,
    table: str,
    reason: str,
    time: str = "",
    begun: Mapping[str, str] | None = None,
) -> ReplayEvent:
    """A replay ordered by a referee: the result, if any, is set aside (kept in the
    ledger) and the match waits for its new result at its round and table."""
    t.require_drawn()
    _reason_fits(reason)
    m = t.at(round_, table)
    _sides_known(m)
    if not reason.strip():
        raise TournamentError("a replay needs --reason (who ordered it and why)")
    if m.replay:
        raise TournamentError(f"a replay of {m.id} is already ordered")
    voids = m.result
    if m.series is not None:  # a series: its last game is played again
        if not m.series.games:
            raise TournamentError(f"{m.id} has no game played yet")
        voids = t.game_result(m.id, len(m.series.games))
    event = ReplayEvent(m.id, round_, table, reason, voids, time or None)
    _keeps_knockout(t, _folded(t, m, event, m.id), event, begun or {})
    return event


def lot(
    t: Tournament,
    group: str,
    order: Sequence[str] | None = None,
    seed: int | None = None,
    time: str = "",
) -> LotEvent:
    """The lot for a tie no criterion breaks: the order the desk drew (`order`), or drawn
    here from a printed seed. Either is recorded with how it was drawn."""
    t.require_drawn()
    group = group.upper()
    if group not in t.groups:
        raise TournamentError(f"no group {group!r} (groups {', '.join(t.groups)})")
    ties = t.pending_lots(group)
    if not ties:
        state = "has not finished" if not t.complete(group) else "has no tie a lot must break"
        raise TournamentError(f"group {group} {state}")
    if order:
        names = [find_player(t, n) for n in order]
        tie = next((tie for tie in ties if set(tie) == set(names)), None)
        if tie is None or len(names) != len(set(names)):
            raise TournamentError(
                "name the tied players in the order drawn: "
                + "; ".join(", ".join(tie) for tie in ties)
            )
        return LotEvent(group, tuple(names), "drawn by the desk", None, time or None)
    if seed is None:
        raise TournamentError("the desk's order (--order) or a seed to draw with (--seed)")
    names = list(ties[0])
    random.Random(seed).shuffle(names)
    return LotEvent(group, tuple(names), f"drawn with seed {seed}", seed, time or None)


def withdraw(t: Tournament, player: str, reason: str, time: str = "") -> WithdrawEvent:
    """A player leaves: remembered in the ledger, so that every match still to play is
    forfeited, the knock-out's they reach included, with no second withdrawal."""
    t.require_drawn()
    _reason_fits(reason)
    name = find_player(t, player)
    if name in t.withdrawn:
        raise TournamentError(f"{name} has withdrawn already")
    if not reason.strip():
        raise TournamentError("a withdrawal needs --reason")
    return WithdrawEvent(name, reason, time or None)


def unplayed(t: Tournament, player: str) -> list[Fixture]:
    """A player's matches still to play whose opponent is known: what a withdrawal (or a
    no-show for a whole series, Radegast) forfeits."""
    return [
        m
        for m in t.fixtures()
        if m.result is None
        and player in (m.home, m.away)
        and m.home is not None
        and m.away is not None
    ]


def find_player(t: Tournament, text: str) -> str:
    """A player by name, any letter case, or by a beginning only one name has; a text that
    names nobody is refused with the closest names (a typo, a letter left out)."""
    typed = text.strip()
    text = typed.casefold()
    exact = [n for n in t.spec.names if n.casefold() == text]
    near = exact or [n for n in t.spec.names if n.casefold().startswith(text)]
    if not near:
        closest = closest_names(typed, t.spec.names)
        hint = f"; the closest: {', '.join(closest)}" if closest else ""
        raise TournamentError(f"{typed!r} names nobody here{hint}")
    if len(near) != 1:
        raise TournamentError(f"{text!r} names {', '.join(near)}")
    return near[0]


def closest_names(text: str, names: Sequence[str], most: int = 3) -> list[str]:
    """The names nearest `text` (difflib's ratio on the whole name or one of its words, any
    letter case, accents aside: `Adm` finds Adam, `novak` Jan Novák), the nearest first."""

    def key(s: str) -> str:
        plain = unicodedata.normalize("NFKD", s.casefold())
        return "".join(c for c in plain if not unicodedata.combining(c))

    typed = key(text)
    scores: dict[str, float] = {}
    for name in names:
        for part in (name, *name.split()):
            ratio = difflib.SequenceMatcher(None, typed, key(part)).ratio()
            scores[name] = max(scores.get(name, 0.0), ratio)
    ranked = sorted((n for n in names if scores[n] >= 0.6), key=lambda n: -scores[n])
    return ranked[:most]


def _reason_fits(reason: str) -> None:
    if len(reason) > MAX_REASON:
        raise TournamentError(
            f"a reason of at most {MAX_REASON} characters, please (got {len(reason)})"
        )


def _sides_known(m: Fixture) -> None:
    if m.home is None or m.away is None:
        raise TournamentError(f"{m.id} ({m.sides}) {entrycheck.UNKNOWN_SIDES}")


def _folded(t: Tournament, m: Fixture, event: ResultEvent | ReplayEvent, where: str) -> Tournament:
    """The tournament with `event` (its one check, `Tournament.folded`), or the refusal as
    the desk says it: the rule of the score or the series that refused it after `where`; the
    very result again (AlreadyIn); a correction without its reason."""
    try:
        return t.folded(event)
    except EntryError as exc:
        if isinstance(exc.__cause__, ResultError | SeriesError):
            raise TournamentError(f"{where}: {exc.__cause__}") from None
        if m.result is not None and exc.field in ("result", "reason"):
            if exc.field == "result":
                raise AlreadyIn(f"{m.id} is already {m.result.text()}") from None
            raise TournamentError(
                f"{m.id} ({m.sides}) is already {m.result.text()}; a "
                "correction needs --reason (it stays in the history)"
            ) from None
        raise TournamentError(exc.message) from None


def _keeps_knockout(
    t: Tournament, after: Tournament, event: ResultEvent | ReplayEvent, begun: Mapping[str, str]
) -> None:
    """A change may re-seed the knock-out (a group result: who qualifies; a knock-out
    result: who moves on) only where the match it changes has not begun: neither played
    nor under way at its table. Refused otherwise, naming that match and what to do.
    `after`: the tournament with `event`."""
    for m in t.group_matches.values():
        if m.group not in t.later or m.id == event.match:
            continue
        if m.id not in t.results and m.id not in begun:
            continue
        before, now = t.fixture(m.id), after.fixture(m.id)
        if (before.home, before.away) != (now.home, now.away):
            raise TournamentError(
                f"this changes who plays {m.id} in group {m.group} ({before.sides}, "
                f"{before.result.text() if before.result else begun[m.id]}): its players come "
                "from the basic groups' places; order a replay of it first (replay "
                f"{before.slot.round} {before.slot.table} --reason …)"
            )
    for node in t.nodes:
        played = node in t.results or bool(t.series_of(node).games)  # (a series: a game)
        if node == event.match or node in t.walkovers or (not played and node not in begun):
            continue
        before, now = t.fixture(node), after.fixture(node)
        if (before.home, before.away) == (now.home, now.away):
            continue
        where = f"{before.slot.round} {before.slot.table}"
        if played:
            done = (
                before.series.text()
                if before.series
                else str(before.result and before.result.text())
            )
            each = " (a series: once a game, the last first)" if before.series else ""
            raise TournamentError(
                f"this changes who plays {node} ({before.sides}, already {done}): order a "
                f"replay of {node} first (replay {where} --reason …){each}"
            )
        raise TournamentError(
            f"this changes who plays {node} ({before.sides}, {begun[node]}, round "
            f"{before.slot.round} table {before.slot.table}): reset that table first "
            f"(hall reset --table {before.slot.table}), then correct; the desk calls {node} "
            "again with its new players"
        )
