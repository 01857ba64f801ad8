"""The desk holds the tournament (issue 17's file and ledger) and runs the evening over the
hall's bus: calling a round pushes each table its pairing; each table's result comes home by
itself and goes into the tournament's ledger once, however often it arrives.

What the desk called is kept beside the tournament's ledger (`cup.calls.jsonl`, one pairing
a line), and every desk reading that tournament reads it again when it has grown: a round
called at `hall round N` in another terminal, on the board, or before a restart is one and
the same call to each of them (`hall serve` takes its results). The tournament's ledger
holds every result applied, each with the id of the result message it came from (`source`),
so that a result delivered again (the broker's retained copy, a box that sends it twice) is
applied once. A result for a match the desk did not call, or one the tournament cannot take
(another score already in, a draw where a winner is needed), waits for the director to accept
or refuse it.

A result counts only from its own table: the topic it came on (the ACL ties it to that table's
broker user) must be the table the desk called its pairing at, and the pairing it carries the
one called there, as called. Anything else (another table's pairing id, its own id with another
match's names, a confirmation of another table's result) is applied nowhere: it waits for the
director under a key of its own (`ID:TABLE`), so that neither it nor its refusal ever stands in
for the real result, which counts when it comes."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from timekeeper.hall.callbook import CallBook, calls_path
from timekeeper.hall.desk import DeskReader
from timekeeper.hall.inbox import RETRY, Gate, Held, Notes
from timekeeper.hall.messages import BadMessage, topic
from timekeeper.hall.pairing import Pairing, pairing_topic
from timekeeper.hall.result import MatchResult, parse_result, result_topic
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import clerk
from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.state import Fixture, TournamentError

log = logging.getLogger(__name__)

MAX_PENDING = 200  # results waiting for the director: more is a flood, the oldest go
MAX_LOG = 100
SWEEP = 10.0  # s: while a called match has no result, the retained results are read again


class Director(DeskReader):
    """Joined to a Desk (its connection); thread-safe (the bus's thread, the web's)."""

    def __init__(
        self, desk, file: Path, wall: Callable[[], float] = time.time, results: bool = True
    ) -> None:
        """`results`: take the results home (`hall serve`); a command that only calls a
        round (`hall round N`) leaves them to the serving desk, which applies each once."""
        self.desk, self.file, self.wall, self.results = desk, Path(file), wall, results
        self.hall = desk.hall
        self._lock = threading.RLock()
        self.t, self.ledger = open_tournament(self.file, drawn=True)
        self.book = CallBook(self.file)  # (every desk's calls, read as the file grows)
        self.calls = calls_path(self.file)
        self.called: dict[str, Pairing] = {}  # table -> the latest pairing called there
        self._won_said: set[str] = set()  # series calls whose winner the log has told once
        self._calls_seen = 0  # how many calls `called` was worked out from
        self.issued = self.book.issued  # every pairing id called (by any desk)
        # key (`_key`) -> (result, why it waits); refused: the keys the director refused
        self.pending: dict[str, tuple[MatchResult, str]] = {}
        self.refused: set[str] = set()
        self.latest: dict[str, MatchResult] = {}  # table -> its latest result message
        self.events: list[str] = []  # what happened, for the board and the log
        self.confirmed = self.book.confirmed  # results the director has confirmed
        self.notes = Notes()  # (issue 31: the results' way in, hall/inbox.py)
        self.gate = Gate(self.notes)
        self.held = Held()
        self.unreadable = ""  # why the tournament's files cannot be read now ("": they can)
        # the files as last read (read again when they change; None: read at the next look)
        self._stamp: list[tuple[int, int, int] | None] | None = None
        self._read_calls()
        desk.add_reader(self)

    # ---------------------------------------------------------------- state on disk

    def _read_calls(self) -> None:
        """The calls any desk made since the last look (the calls file, if it grew). Each
        table's latest call is worked out from the book's whole list, never from what one
        read returned: whoever reads the book (a box's status, a result), no call is lost."""
        self.book.read()
        if self.book.calls == self._calls_seen:
            return
        where = {s.match: s.table for s in self.t.slots}
        self.called = {}
        for p in self.book.issued.values():  # (in the file's order: the last one stands)
            if p.match in where:
                self.called[where[p.match]] = p
        self._calls_seen = self.book.calls

    def _reload(self) -> None:
        """The ledger again (a result typed meanwhile at `timekeeper tournament result`), and
        the calls another desk made meanwhile; the serving desk calls again a match whose
        players a correction changed before its table began it. The tournament's file and
        ledger are read only when changed since last read; where they cannot be read (a
        journal broken by hand) the state as last read stands, `unreadable` says why, and
        the error is raised (a result is then held, never applied on the old state)."""
        stamp = self._stamps()
        if stamp != self._stamp or self.unreadable:
            try:
                self.t, self.ledger = open_tournament(self.file, drawn=True)
            except (ConfigError, OSError) as exc:
                if str(exc) != self.unreadable:
                    self.notes.say("unreadable", f"the tournament cannot be read: {exc}")
                self.unreadable = str(exc)
                raise
            if self.unreadable:
                self._say("the tournament is readable again")
            self._stamp, self.unreadable = stamp, ""
        self._read_calls()
        if self.results:
            self._recall()

    def _recall(self) -> None:
        for p in list(self.called.values()):  # (a game typed or corrected at the desk)
            if p.best_of > 1:
                self._next_game(p.match)
        stale = []
        for table, p in self.called.items():
            m = self.t.fixture(p.match)
            if m.result is not None or m.home is None or m.away is None:
                continue
            if (m.home, m.away) != (p.home, p.away) and p.id not in self.book.begun:
                stale.append((table, p, m))
        for table, p, m in stale:
            again = dataclasses.replace(
                p,
                id=f"{m.id}.{p.round}.{uuid.uuid4().hex[:8]}",
                home=str(m.home),
                away=str(m.away),
                sent=round(self.wall(), 3),
            )
            self.book.write(again)
            self._read_calls()
            self.desk.client.publish(  # (not waited for: this may be paho's own thread)
                pairing_topic(self.hall, table), again.to_json(), qos=1, retain=True
            )
            self._say(f"table {table}: {m.id} is {m.sides} now (a correction): called again")

    def watch(self, every: float = 1.0) -> threading.Event:
        """Look at the ledger and the calls every `every` s (a thread of its own): what
        another terminal typed — a correction, a round — acts at once, board or no board; a
        result held (it could not be applied) is tried again on a change and every RETRY s;
        and while a called match has no result, the retained results are asked for again
        every SWEEP s (one the broker dropped in a flood is found). Set the event to stop."""
        stop = threading.Event()

        def look() -> None:
            seen, tried, swept = None, time.monotonic(), time.monotonic()
            while not stop.wait(every):
                try:
                    now = self._stamps()
                    if now != seen or self.unreadable:
                        with self._lock:
                            self._reload()
                        seen = now
                except Exception:  # (a ledger being fixed by hand: said, looked at again)
                    pass  # (`_reload` said it, once)
                if self.held and (now != seen or time.monotonic() - tried >= RETRY):
                    tried = time.monotonic()
                    with self._lock:
                        again = self.held.all()
                    for r in again:
                        self._take(r)  # (never raises)
                if self.results and time.monotonic() - swept >= SWEEP:
                    swept = time.monotonic()
                    with contextlib.suppress(Exception):  # (off the bus: the next sweep)
                        self._sweep()

        threading.Thread(target=look, name="desk-watch", daemon=True).start()
        return stop

    def _stamps(self) -> list[tuple[int, int, int] | None]:
        """The tournament's file, its ledger and its calls as they are on the disk now."""
        out: list[tuple[int, int, int] | None] = []
        for f in (self.file, self.ledger.path, self.book.path):
            try:
                st = f.stat()
            except OSError:
                out.append(None)
            else:
                out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return out

    def _sweep(self) -> None:
        """The retained results again (a subscription made anew is handed them), when a
        called match of the latest round has none in the ledger and none held."""
        with self._lock:
            waiting = [
                p
                for p in self.called.values()
                if p.match not in self.t.results and not self.held.holds(p.id)
            ]
        if waiting and self.desk.on_bus:
            self.desk.client.subscribe([(result_topic(self.hall, "+"), 1)])

    def status(self, table: str, body: dict) -> None:
        """A table's box past idle with a pairing this tournament called: that match has
        begun (a correction may no longer change its players); back to idle: not any more.
        Kept in the calls file, so that `timekeeper tournament result` knows it too."""
        pairing, s = body.get("pairing") or {}, body.get("status") or {}
        ident, state = pairing.get("id"), s.get("state")
        if not self.results or not body.get("online") or not isinstance(state, str):
            return
        with self._lock:
            if ident not in self.issued or self._table_of(self.issued[ident]) != table:
                return  # (only the table it was called at begins a match)
            began = state != "idle"
            self._read_calls()
            if began != (ident in self.book.begun):
                self.book.write({"begun" if began else "idle": ident})
                self._read_calls()

    def applied(self) -> set[str]:
        """The ids of the result messages in the ledger."""
        return {e.source for e in self.t.events if isinstance(e, ResultEvent) and e.source}

    def _say(self, text: str) -> None:
        log.info("desk: %s", text)
        self.events = [*self.events[-MAX_LOG + 1 :], f"{time.strftime('%H:%M:%S')} {text}"]

    # ---------------------------------------------------------------- calling a round

    def call_round(self, number: int, wait: float = 5.0) -> list[tuple[str, str]]:
        """Push each table of round `number` its pairing (retained); (table, what was done)
        for each of the round's tables. The calls are written under the lock, the pushes
        are waited for outside it: paho's thread takes the lock for each result that comes
        home, and it is the thread that hears the broker's acknowledgements."""
        with self._lock:
            self._reload()
            slots = [s for s in self.t.slots if s.round == number]
            if not slots:
                rounds = sorted({s.round for s in self.t.slots})
                raise TournamentError(f"no round {number} (rounds {rounds[0]}–{rounds[-1]})")
            out: list[tuple[str, str]] = []
            calls: list[tuple[str, Pairing]] = []
            for slot in slots:
                m = self.t.fixture(slot.match)
                if m.result is not None:
                    out.append((slot.table, f"{m.id} {m.sides}: played already, {m.result.text()}"))
                    continue
                if m.home is None or m.away is None:
                    out.append((slot.table, f"{m.id} {m.sides}: not known yet"))
                    continue
                p = Pairing(
                    f"{m.id}.{number}.{uuid.uuid4().hex[:8]}",
                    number,
                    m.id,
                    m.stage,
                    m.home,
                    m.away,
                    _profile_name(self.t.profile_of(m.id)),
                    round(self.wall(), 3),
                    m.knockout,  # (a winner needed: the box ends it when decided)
                    *_series_fields(m),
                )
                calls.append((slot.table, p))
                what = _series_line(p) if p.best_of > 1 else m.id
                out.append((slot.table, f"{what} {m.stage}: {p.sides} ({p.profile})"))
            if calls:
                self.book.write(*(p for _, p in calls))
                self._read_calls()
        self._push(calls, wait)
        self._say(f"round {number} called: {len(calls)} tables")
        return out

    def _push(self, calls: list[tuple[str, Pairing]], wait: float) -> None:
        """Publish each pairing (retained) and wait at most `wait` s in all for the broker;
        never under the lock."""
        sent = [
            self.desk.client.publish(
                pairing_topic(self.hall, table), p.to_json(), qos=1, retain=True
            )
            for table, p in calls
        ]
        until = time.monotonic() + wait
        for info in sent:
            info.wait_for_publish(max(0.0, until - time.monotonic()))

    # ---------------------------------------------------------------- results home

    def owns(self, name: str) -> bool:
        parts = name.split("/")
        return len(parts) == 4 and parts[1] == self.hall and parts[3] in ("result", "pairing")

    def connected(self, client) -> None:
        """On every (re)connect: the results; and the calls again, whose matches wait for
        their results (a broker restarted without its retained messages). A desk that only
        calls (`results=False`) reads nothing."""
        if not self.results:
            return
        client.subscribe([(topic(self.hall, "+", "result"), 1)])
        with self._lock:
            for table, p in self.called.items():
                if p.match in self.t.results:
                    continue
                client.publish(pairing_topic(self.hall, table), p.to_json(), qos=1, retain=True)

    def handle(self, name: str, payload: bytes) -> None:
        """A result on a table's topic: within the table's rate (else refused unread), then
        checked, then applied or held (`_take`); each kind of refusal logged once a minute."""
        table = name.split("/")[2]
        if not payload or not self.gate.allow(table):
            return
        try:
            r = parse_result(payload)
        except BadMessage as exc:
            self.notes.say(f"bad:{table}", f"a result on {name} refused: {exc}")
            return
        if r.table != table:
            self.notes.say(f"bad:{table}", f"a result on {name} says table {r.table}: refused")
            return
        self._take(r)

    def _take(self, r: MatchResult) -> None:
        """Apply `r`, or hold it where it could not be (tried again by `watch`): a result
        that came home is never dropped for a fault of the desk's."""
        try:
            outcome = self.receive(r)
        except Exception as exc:  # (never kill paho's thread)
            expected = isinstance(exc, ConfigError | OSError)
            why = str(exc) if expected else f"{type(exc).__name__}: {exc}"
            with self._lock:
                if self._refused(r):  # (the director said no: it is not held again)
                    return
                self.held.keep(r, why)
            self.notes.say(
                "held",
                f"table {r.table}: result {r.score_text} for {r.pairing.match} not applied "
                f"yet: {why}; {len(self.held)} held, tried again",
                exc_info=None if expected else exc,
            )
        else:
            with self._lock:
                if self.held.drop(r) and outcome in ("applied", "corrected"):
                    self._say(f"table {r.table}: its held result is in")

    def receive(self, r: MatchResult) -> str:
        """Apply a result once: 'applied', 'known' (applied before, the same), 'corrected'
        (applied before, changed at its table since), or 'pending: why'. `r.table` is the
        table of the topic it came on (`handle` holds them equal)."""
        with self._lock:
            self.latest[r.table] = r
            self._reload()
            if self._key(r) in self.refused:
                return "known"
            misplaced = self._misplaced(r)
            if misplaced:
                return self._wait(r, misplaced)
            if _source(r) in self.applied():
                done = self._changed(r)
                if done == "known" and r.confirmed:
                    self._confirmed_at_table(r)
                return done
            if r.pairing.id not in self.issued:
                return self._wait(r, "a match this desk did not call")
            return self._apply(r)

    def _table_of(self, p: Pairing) -> str | None:
        """The table a pairing was called at: its match's (a match keeps its table)."""
        return next((s.table for s in self.t.slots if s.match == p.match), None)

    def _misplaced(self, r: MatchResult) -> str:
        """Why a result is not its table's answer to a call made there ('': it is): another
        table's pairing id, or its own with other names, match or round than were called."""
        called = self.issued.get(r.id)
        if called is None:  # (not called: it waits as such, unless its match is elsewhere)
            at = self._table_of(r.pairing)
            if at is None or at == r.table:
                return ""
            return (
                f"it came from table {r.table}, for {r.pairing.match} {r.pairing.sides}, a "
                f"match of table {at} this desk did not call: not applied (if it is genuine, "
                "type it: timekeeper tournament result)"
            )
        at = self._table_of(called)
        if at != r.table:
            return (
                f"it came from table {r.table}, but {called.match} {called.sides} was called at "
                f"table {at}: not applied (if it is genuine, type it: timekeeper tournament "
                "result)"
            )
        if _as_called(r.pairing) != _as_called(called):
            return (
                f"it says {r.pairing.match} {r.pairing.sides} (round {r.pairing.round}), but "
                f"table {at} was called for {called.match} {called.sides} (round "
                f"{called.round}): not applied (if it is genuine, type it: timekeeper "
                "tournament result)"
            )
        return ""

    def _refused(self, r: MatchResult) -> bool:
        """Whether the director refused `r` already (as its table's, or as misplaced), told
        without the tournament's files (they may be what failed)."""
        return _source(r) in self.refused or _apart(r) in self.refused

    def _key(self, r: MatchResult) -> str:
        """The key a result waits under: its id (a series' game: with the game); a misplaced
        one's with its table, so that it and its refusal stay apart from the real result."""
        return _apart(r) if self._misplaced(r) else _source(r)

    def _apply(self, r: MatchResult) -> str:
        try:
            m = self.t.fixture(r.pairing.match)
        except StopIteration:
            return self._wait(r, f"no match {r.pairing.match} in this tournament")
        if (m.home, m.away) != (r.pairing.home, r.pairing.away):
            return self._wait(r, f"{m.id} is {m.sides} now, the table played {r.pairing.sides}")
        number = _game(r)
        if m.series is not None and number is not None:
            done = self.t.game_result(m.id, number)
            if done is not None:  # (typed at the desk meanwhile)
                if (done.home, done.away) == r.score:
                    return "known"
                return self._wait(r, f"{m.id} game {number} is {done.text()} already")
            if number != m.series.next_game:
                state = m.series.state_text(str(m.home), str(m.away))
                return self._wait(r, f"{m.id} ({state}) plays no game {number} next")
        elif m.result is not None:
            if (m.result.home, m.result.away) == r.score:
                return "known"
            return self._wait(r, f"{m.id} is {m.result.text()} already")
        try:
            event = clerk.result(
                self.t,
                m.slot.round,
                m.slot.table,
                r.score_text,
                r.decided,
                time=_iso(self.wall()),
                source=_source(r),
                game=number if m.series is not None else None,
            )
        except TournamentError as exc:
            return self._wait(r, str(exc))
        self.ledger.record(self.t, event)
        self.pending.pop(_source(r), None)
        if r.confirmed:
            self._confirmed_at_table(r)
        game = f" game {number}" if number is not None else ""
        self._say(
            f"table {r.table}: {m.id}{game} {m.sides} {r.score_text}"
            f"{'' if r.decided == 'regulation' else ' ' + r.decided}"
        )
        self._next_game(m.id)
        return "applied"

    def _next_game(self, match_id: str) -> None:
        """After a game of a series: the same call again, retained, for its next game with
        the wins so far (its box plays it with the same players), or nothing more once
        the series is decided (the bracket moves on, the next round calls its matches)."""
        m = self.t.fixture(match_id)
        table = m.slot.table
        p = self.called.get(table)
        if m.series is None or p is None or p.match != match_id:
            return
        if m.series.next_game is None:
            if p.id not in self._won_said:  # (once: `_recall` comes here at every refresh)
                self._won_said.add(p.id)
                self._say(f"table {table}: {m.id} {m.series.state_text(str(m.home), str(m.away))}")
            return
        best_of, game, home_wins, away_wins = _series_fields(m)
        if (p.game, p.home_wins, p.away_wins) == (game, home_wins, away_wins):
            return  # (called for this game already)
        again = dataclasses.replace(
            p,
            sent=round(self.wall(), 3),
            best_of=best_of,
            game=game,
            home_wins=home_wins,
            away_wins=away_wins,
        )
        self.book.write(again)
        self._read_calls()
        self.desk.client.publish(  # (not waited for: this may be paho's own thread)
            pairing_topic(self.hall, table), again.to_json(), qos=1, retain=True
        )
        self._say(f"table {table}: {_series_line(again)} next")

    def _changed(self, r: MatchResult) -> str:
        """A result applied before, sent again: 'known' if the same; changed at the table
        before it was confirmed there (a goal entered after the end counts), a correction
        with that reason — or, once the director confirmed the old one, for a game of a
        series decided or with a later game played, or where the tournament cannot take it
        (the next knock-out match begun), it waits for the director."""
        last = [e for e in self.t.events if isinstance(e, ResultEvent) and e.source == _source(r)][
            -1
        ]
        if (last.result.home, last.result.away, last.result.decided) == (*r.score, r.decided):
            return "known"
        if _source(r) in self.confirmed:
            return self._wait(r, f"{last.match} was confirmed as {last.result.text()}")
        settled = _settled(self.t.fixture(last.match), last.game)
        if settled:
            return self._wait(r, settled)
        try:
            event = clerk.result(
                self.t,
                last.round,
                last.table,
                r.score_text,
                r.decided,
                reason="changed at its table before it was confirmed there",
                time=_iso(self.wall()),
                source=_source(r),
                begun=self.book.under_way(),
                game=last.game,
            )
        except TournamentError as exc:
            return self._wait(r, str(exc))
        self.ledger.record(self.t, event)
        self.pending.pop(_source(r), None)
        self._say(
            f"table {r.table}: {last.match} changed at its table: {last.result.text()} -> "
            f"{event.result.text()}"
        )
        self._recall()
        self._next_game(last.match)
        if r.confirmed:
            self._confirmed_at_table(r)
        return "corrected"

    def _wait(self, r: MatchResult, why: str) -> str:
        key = self._key(r)
        if key not in self.pending:
            self._say(
                f"table {r.table}: result {r.score_text} for {r.pairing.match} waits "
                f"for the director: {why}"
            )
        self.pending[key] = (r, why)
        while len(self.pending) > MAX_PENDING:  # (the oldest of the table that sent most:
            most = Counter(x.table for x, _ in self.pending.values()).most_common(1)[0][0]
            self.pending.pop(next(i for i, (x, _) in self.pending.items() if x.table == most))
        return f"pending: {why}"

    def accept(self, result_id: str) -> str:
        """The director takes a waiting result (a match not called: as if it had been); a
        misplaced one is typed instead (`timekeeper tournament result`, the board's form):
        its table and match are the director's to say, not the message's."""
        with self._lock:
            if result_id not in self.pending:
                raise TournamentError(f"no result {result_id} waits")
            r, _ = self.pending[result_id]
            self._reload()
            if self._misplaced(r):
                raise TournamentError(
                    f"result {result_id} is not its table's (table {r.table} sent "
                    f"{r.pairing.match}): if it is genuine, type it with its round and "
                    "table (timekeeper tournament result, or the board's result form), "
                    "then refuse this one"
                )
            self.issued.setdefault(r.pairing.id, r.pairing)
            done = self._apply(r)
            if done == "known":
                self.pending.pop(result_id, None)
            return done

    def correct(
        self, round_: int, table: str, score: str, decided: str = "regulation", reason: str = ""
    ) -> str:
        """A result typed on the board (a correction over one in: with its reason), checked
        as `timekeeper tournament result` checks it, the matches under way included; a
        knock-out re-seeded by it is called again where its table has not begun it."""
        with self._lock:
            self._reload()
            event = clerk.result(
                self.t,
                round_,
                table,
                score,
                decided,
                reason=reason,
                time=_iso(self.wall()),
                begun=self.book.under_way(),
            )
            written = self.ledger.record(self.t, event)
            m = self.t.fixture(written.match)
            what = "corrected" if written.corrects else "result"
            self._say(f"{what} on the board: {m.id} {m.sides} {written.result.text()}")
            self._recall()
            return f"{what}: {m.id} {m.sides} {written.result.text()}"

    def refuse(self, result_id: str) -> None:
        with self._lock:
            if self.pending.pop(result_id, None) is None:
                raise TournamentError(f"no result {result_id} waits")
            self.refused.add(result_id)
            self._say(f"result {result_id} refused by the director")

    def confirm(self, result_id: str) -> None:
        """The director confirms a result that came home (it counts already; this says a
        person has checked it against the table), kept with the calls."""
        with self._lock:
            if result_id not in self.applied():
                raise TournamentError(f"no result {result_id} in the tournament")
            if result_id in self.confirmed:
                return
            self.book.write({"confirmed": result_id})
            self._read_calls()
            self._say(f"result {result_id} confirmed by the director")

    def _confirmed_at_table(self, r: MatchResult) -> None:
        """The table's operator confirmed its result (`confirmed: true` from its own table):
        kept with the director's confirmations, said as the table's."""
        if _source(r) in self.confirmed:
            return
        self.book.write({"confirmed": _source(r)})
        self._read_calls()
        self._say(f"table {r.table}: result {_source(r)} confirmed at its table")

    # ---------------------------------------------------------------- what stands

    def next_round(self) -> int | None:
        """The lowest round with a match still to play whose tables are free (their called
        match has its result) and whose players are known and not busy elsewhere."""
        with self._lock:
            self._read_calls()
            free = {
                table
                for table, p in self.called.items()
                if self.t.fixture(p.match).result is not None
            } | (set(self.t.spec.tables) - set(self.called))
            ready = sorted(
                {
                    m.slot.round
                    for table, m, why in self.t.next_up()
                    if m is not None and why == "ready" and table in free
                }
            )
            return ready[0] if ready else None

    def current_round(self) -> int | None:
        """The round called last (by any desk): the one the hall plays now."""
        with self._lock:
            self._read_calls()
            return max((p.round for p in self.called.values()), default=None)

    def _unconfirmed(self, shown: set[str]) -> list[dict]:
        """The results that came home and wait for the director's look, but for those on the
        current round's tiles: the earlier rounds' (each result once, its latest)."""
        latest: dict[str, ResultEvent] = {}
        for e in self.t.events:
            if isinstance(e, ResultEvent):
                latest[e.match] = e
        return [
            {
                "match": e.match,
                "sides": self.t.fixture(e.match).sides,
                "result": e.result.text(),
                "id": e.source,
            }
            for e in latest.values()
            if e.source and e.source not in self.confirmed and e.match not in shown
        ]

    def troubles(self) -> list[str]:
        """What keeps results from the standings now, for the board and its log."""
        with self._lock:
            said = [self.held.said(), *self.gate.flooding()]
            if self.unreadable:
                said.insert(
                    0,
                    f"the tournament cannot be read: {self.unreadable} — the "
                    "board shows it as last read",
                )
            return [s for s in said if s]

    def snapshot(self) -> dict:
        """The board's JSON: the round's pairings by table with each table's live status,
        the standings, the bracket, the next round, what waits for the director, and
        `trouble`: what keeps results from the standings (a broken journal: the standings
        as last read, the error named)."""
        with self._lock:
            with contextlib.suppress(ConfigError, OSError):  # (said in `trouble`)
                self._reload()
            t, statuses = self.t, self.desk.tables()
            current = self.current_round()
            tables = []
            for table in t.spec.tables:
                p = self.called.get(table)
                if p is not None and p.round != current:  # (the round before: its table is
                    p = None  # free in this one, its result in the standings)
                m = t.fixture(p.match) if p else None
                source = next(
                    (
                        e.source
                        for e in reversed(t.events)
                        if m and isinstance(e, ResultEvent) and e.match == m.id
                    ),
                    None,
                )
                tables.append(
                    {
                        "table": table,
                        "status": statuses.get(table),
                        "pairing": json.loads(p.to_json()) if p else None,
                        "result": m.result.text() if m and m.result else None,
                        "result_id": source,
                        "confirmed": source in self.confirmed if source else None,
                    }
                )
            groups = {
                g: [
                    {
                        "place": r.place,
                        "player": r.player,
                        "played": r.played,
                        "won": r.won,
                        "drawn": r.drawn,
                        "lost": r.lost,
                        "goals": f"{r.goals_for}:{r.goals_against}",
                        "points": r.points,
                    }
                    for r in t.standings(g)
                ]
                for g in t.groups
            }
            bracket = [
                {
                    "id": m.id,
                    "stage": m.stage,
                    "round": m.slot.round,
                    "table": m.slot.table,
                    "sides": m.sides,
                    "result": m.series.text()
                    if m.series and m.series.games
                    else m.result.text()
                    if m.result
                    else None,
                }
                for m in t.fixtures()
                if m.knockout
            ]
            number = self.next_round()
            upcoming = (
                []
                if number is None
                else [
                    {"table": s.table, "match": s.match, "sides": t.fixture(s.match).sides}
                    for s in t.slots
                    if s.round == number
                ]
            )
            return {
                "title": t.spec.title,
                "hall": self.hall,
                "now": self.wall(),
                "round": current,
                "tables": tables,
                "unconfirmed": self._unconfirmed(
                    {x["pairing"]["match"] for x in tables if x["pairing"]}
                ),
                "groups": groups,
                "bracket": bracket,
                "next": {"round": number, "matches": upcoming},
                "pending": [
                    {
                        "id": i,
                        "table": r.table,
                        "match": r.pairing.match,
                        "sides": r.pairing.sides,
                        "score": r.score_text,
                        "why": why,
                    }
                    for i, (r, why) in self.pending.items()
                ],
                "events": self.events[-10:],
                "trouble": self.troubles(),
            }


def _game(r: MatchResult) -> int | None:
    """The series' game a result ends (its `game`, else its pairing's); None: one match."""
    if r.pairing.best_of <= 1:
        return None
    return r.game or r.pairing.game


def _settled(m: Fixture, game: int | None) -> str:
    """Why game `game` of a series may no longer change from its table ('': it may): the
    series is decided, or a later game of it was played. Only the director changes it then."""
    s = m.series
    if s is None or game is None:
        return ""
    if s.decided:
        return (
            f"{m.id} is decided ({s.state_text(str(m.home), str(m.away))}): game {game} "
            "changes only by the director's correction"
        )
    later = max((g.number for g in s.games), default=0)
    if later > game:
        return (
            f"{m.id} game {later} is played already: game {game} changes only by the "
            "director's correction"
        )
    return ""


def _apart(r: MatchResult) -> str:
    """A misplaced result's key: its id and the table that sent it (at most 64 characters)."""
    source = _source(r)
    return f"{source[: 63 - len(r.table)]}:{r.table}"


def _as_called(p: Pairing) -> Pairing:
    """A call without what changes from game to game of a series (the game, the wins, when it
    was sent): a box that began its next game before the desk's call of it arrived answers
    the same call."""
    return dataclasses.replace(p, sent=0.0, game=1, home_wins=0, away_wins=0)


def _source(r: MatchResult) -> str:
    """A result's id in the ledger (`source`), applied once: its pairing's, and for a
    series' game the game's too (`….g3`), since every game shares the series' pairing id."""
    number = _game(r)
    return r.id if number is None else f"{r.id}.g{number}"


def _series_line(p: Pairing) -> str:
    """`QF2 · game 3 · Novák leads 2:0` (the box's words are its own: box/series.py)."""
    h, a = p.home_wins, p.away_wins
    lead = f"{h}:{a}" if h == a else f"{p.home if h > a else p.away} leads {max(h, a)}:{min(h, a)}"
    return f"{p.match} · game {p.game} · {lead}"


def _series_fields(m: Fixture) -> tuple[int, ...]:
    """A series' pairing fields for its next game: (best_of, game, home_wins, away_wins);
    none for a single match (or a series decided)."""
    s = m.series
    if s is None or s.next_game is None:
        return ()
    return (s.best_of, s.next_game, s.home_wins, s.away_wins)


def _profile_name(name: str) -> str:
    """A profile as a box names it: a file's name without its folder and .yaml."""
    return Path(name).stem if "/" in name or name.endswith((".yaml", ".yml")) else name


def _iso(wall: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(wall))
