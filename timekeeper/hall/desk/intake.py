"""The results inbox at the desk: a table's result comes home by itself and goes into the
tournament's ledger once, however often it arrives; what cannot go in waits for the director.
One record per result (hall/desk/inbox.py's `Records`): held (the desk could not apply it yet),
waiting for the director (and why), refused by the director, or applied.

The ledger holds every result applied with the id of the result message it came from
(`source`), so that a result delivered again (the broker's retained copy, a box that sends it
twice) is applied once. A result for a match the desk did not call, or one the tournament
cannot take (another score already in, a draw where a winner is needed), waits. So does a
change from a table once the director confirmed the old result, or for a game of a series that
is decided or has a later game played: a series is never reopened from its table.

A result counts only from its own table: the topic it came on (the ACL ties it to that table's
broker user) must be the table the desk called its pairing at, and the pairing it carries the
one called there, as called. Anything else (another table's pairing id, its own id with another
match's names, a confirmation of another table's result) is applied nowhere: it waits for the
director under a key of its own (`ID:TABLE`), so that neither it nor its refusal ever stands in
for the real result, which counts when it comes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from timekeeper.hall.bus.messages import BadMessage, topic
from timekeeper.hall.bus.result import MatchResult, parse_result, result_topic
from timekeeper.hall.desk.deskfiles import DeskFiles
from timekeeper.hall.desk.inbox import Gate, Notes, Records, as_called
from timekeeper.hall.desk.rounds import Rounds
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import clerk
from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.ledger import stamp
from timekeeper.tournament.state import Fixture, TournamentError


class Intake:
    """A result from the bus to the ledger, or to the director; thread-safe (the desk's
    lock: paho's thread, the web's, the watch's)."""

    def __init__(
        self,
        files: DeskFiles,
        rounds: Rounds,
        desk: Any,
        lock: threading.RLock,
        wall: Callable[[], float],
        say: Callable[[str], None],
        notes: Notes,
    ) -> None:
        self.files, self.rounds, self.desk, self.lock = files, rounds, desk, lock
        self.wall, self.say, self.notes = wall, say, notes
        self.hall: str = desk.hall
        self.gate = Gate(notes)
        self.records = Records()  # one record per result: held, waiting, refused, applied
        self.latest: dict[str, MatchResult] = {}  # table -> its latest result message

    # ---------------------------------------------------------------- from the bus

    def subscribe(self, client: Any) -> None:
        client.subscribe([(topic(self.hall, "+", "result"), 1)])

    def handle(self, name: str, payload: bytes) -> None:
        """A result on a table's topic: within the table's rate (else refused unread), then
        checked, then applied or held (`take`); each kind of refusal logged once a minute."""
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
        self.take(r)

    def take(self, r: MatchResult) -> None:
        """Apply `r`, or hold it where it could not be (tried again by the watch): a result
        that came home is never dropped for a fault of the desk's."""
        with self.lock:
            was_held = self.records.is_held(r)
        try:
            outcome = self.receive(r)
        except Exception as exc:  # (never kill paho's thread)
            expected = isinstance(exc, ConfigError | OSError)
            why = str(exc) if expected else f"{type(exc).__name__}: {exc}"
            with self.lock:
                if self.records.is_refused(r):  # (the director said no: it is not held again)
                    return
                self.records.hold(r, why)
                n = len(self.records.held())
            self.notes.say(
                "held",
                f"table {r.table}: result {r.score_text} for {r.pairing.match} not applied "
                f"yet: {why}; {n} held, tried again",
                exc_info=None if expected else exc,
            )
        else:
            if was_held and outcome in ("applied", "corrected"):
                self.say(f"table {r.table}: its held result is in")

    def holding(self) -> bool:
        with self.lock:  # (the watch's thread asks while paho's may take a result)
            return bool(self.records.held())

    def retry(self) -> None:
        """The held results tried again (never raises)."""
        with self.lock:
            again = self.records.held()
        for r in again:
            self.take(r)

    def sweep(self) -> None:
        """The retained results again (a subscription made anew is handed them), when a
        called match of the latest round has none in the ledger and none held."""
        f = self.files
        with self.lock:
            waiting = [
                p
                for p in f.called.values()
                if p.match not in f.t.results and not self.records.holds(p.id)
            ]
        if waiting and self.desk.on_bus:
            self.desk.client.subscribe([(result_topic(self.hall, "+"), 1)])

    def receive(self, r: MatchResult) -> str:
        """Apply a result once: 'applied', 'known' (applied before, the same), 'corrected'
        (applied before, changed at its table since), or 'pending: why'. `r.table` is the
        table of the topic it came on (`handle` holds them equal). Each thing is checked
        once: the call (`_call`), whether it is in already (its source in the ledger),
        the rest by the clerk, on the score as the message was checked into (`r.score`)."""
        with self.lock:
            outcome = self._receive(r)
            if outcome in ("applied", "corrected", "known") and not self.records.is_refused(r):
                # (a change waiting for the director is not settled by the old one sent again)
                self.records.applied(r, waiting_too=outcome != "known")
            return outcome

    def _receive(self, r: MatchResult) -> str:
        self.latest[r.table] = r
        self.rounds.refresh()
        if self.records.is_refused(r):
            return "known"
        called, misplaced = self._call(r)
        if misplaced:
            return self._wait(r, misplaced, _apart(r))
        if source(r) in self.files.applied():
            done = self._changed(r)
            if done == "known" and r.confirmed:
                self._confirmed_at_table(r)
            return done
        if not called:
            return self._wait(r, "a match this desk did not call")
        return self.apply(r)

    def _call(self, r: MatchResult) -> tuple[bool, str]:
        """Whether this desk called the pairing a result answers, and why the result is not
        its table's answer to a call made there ('': it is): another table's pairing id, or
        its own with other names, match or round than were called."""
        called = self.files.book.issued.get(r.id)
        if called is None:  # (not called: it waits as such, unless its match is elsewhere)
            at = self.files.table_of(r.pairing)
            if at is None or at == r.table:
                return False, ""
            return False, (
                f"it came from table {r.table}, for {r.pairing.match} {r.pairing.sides}, a "
                f"match of table {at} this desk did not call: not applied (if it is genuine, "
                "type it: timekeeper tournament result)"
            )
        at = self.files.table_of(called)
        if at != r.table:
            return True, (
                f"it came from table {r.table}, but {called.match} {called.sides} was called at "
                f"table {at}: not applied (if it is genuine, type it: timekeeper tournament "
                "result)"
            )
        if as_called(r.pairing) != as_called(called):
            return True, (
                f"it says {r.pairing.match} {r.pairing.sides} (round {r.pairing.round}), but "
                f"table {at} was called for {called.match} {called.sides} (round "
                f"{called.round}): not applied (if it is genuine, type it: timekeeper "
                "tournament result)"
            )
        return True, ""

    def apply(self, r: MatchResult) -> str:
        """A result this desk called, into the ledger (or waiting, where it cannot go): the
        match must still have the players it was called with; the rest (the game due, the
        score and how it was decided, a result in already) is the clerk's to check, once."""
        t = self.files.t
        try:
            m = t.fixture(r.pairing.match)
        except StopIteration:
            return self._wait(r, f"no match {r.pairing.match} in this tournament")
        if (m.home, m.away) != (r.pairing.home, r.pairing.away):
            return self._wait(r, f"{m.id} is {m.sides} now, the table played {r.pairing.sides}")
        number = r.series_game if m.series is not None else None
        try:
            event = clerk.result(
                t,
                m.slot.round,
                m.slot.table,
                r.score,
                r.decided,
                time=stamp(self.wall()),
                source=source(r),
                game=number,
            )
        except clerk.AlreadyIn:  # (typed at the desk meanwhile, the same)
            return "known"
        except TournamentError as exc:
            return self._wait(r, str(exc))
        self.files.record(event)
        if r.confirmed:
            self._confirmed_at_table(r)
        game = f" game {number}" if number is not None else ""
        self.say(
            f"table {r.table}: {m.id}{game} {m.sides} {r.score_text}"
            f"{'' if r.decided == 'regulation' else ' ' + r.decided}"
        )
        self.rounds.next_game(m.id)
        return "applied"

    def _changed(self, r: MatchResult) -> str:
        """A result applied before, sent again: 'known' if the same; changed at the table
        before it was confirmed there (a goal entered after the end counts), a correction
        with that reason — or, once the director confirmed the old one, for a game of a
        series decided or with a later game played, or where the tournament cannot take it
        (the next knock-out match begun), it waits for the director."""
        t = self.files.t
        last = [e for e in t.events if isinstance(e, ResultEvent) and e.source == source(r)][-1]
        if (last.result.home, last.result.away, last.result.decided) == (*r.score, r.decided):
            return "known"
        if source(r) in self.files.book.confirmed:
            return self._wait(r, f"{last.match} was confirmed as {last.result.text()}")
        settled = _settled(t.fixture(last.match), last.game, r.score_text)
        if settled:
            return self._wait(r, settled)
        try:
            event = clerk.result(
                t,
                last.round,
                last.table,
                r.score,
                r.decided,
                reason="changed at its table before it was confirmed there",
                time=stamp(self.wall()),
                source=source(r),
                begun=self.files.book.under_way(),
                game=last.game,
            )
        except TournamentError as exc:
            return self._wait(r, str(exc))
        self.files.record(event)
        self.say(
            f"table {r.table}: {last.match} changed at its table: {last.result.text()} -> "
            f"{event.result.text()}"
        )
        self.rounds.recall()
        self.rounds.next_game(last.match)
        if r.confirmed:
            self._confirmed_at_table(r)
        return "corrected"

    def _wait(self, r: MatchResult, why: str, name: str = "") -> str:
        """`r` waits for the director under `name` (its source; a misplaced one: `_apart`)."""
        if not self.records.wait(r, name or source(r), why):
            self.say(
                f"table {r.table}: result {r.score_text} for {r.pairing.match} waits "
                f"for the director: {why}"
            )
        return f"pending: {why}"

    def _confirmed_at_table(self, r: MatchResult) -> None:
        """The table's operator confirmed its result (`confirmed: true` from its own table):
        kept with the director's confirmations, said as the table's."""
        book = self.files.book
        if source(r) in book.confirmed:
            return
        book.write({"confirmed": source(r)})
        self.files.read_calls()
        self.say(f"table {r.table}: result {source(r)} confirmed at its table")

    # ---------------------------------------------------------------- the director's

    def accept(self, result_id: str) -> str:
        """The director takes a waiting result (a match not called: as if it had been); a
        misplaced one is typed instead (`timekeeper tournament result`, the board's form):
        its table and match are the director's to say, not the message's."""
        with self.lock:
            r = self.records.named(result_id).result
            self.rounds.refresh()
            if self._call(r)[1]:
                raise TournamentError(
                    f"result {result_id} is not its table's (table {r.table} sent "
                    f"{r.pairing.match}): if it is genuine, type it with its round and "
                    "table (timekeeper tournament result, or the board's result form), "
                    "then refuse this one"
                )
            self.files.book.issued.setdefault(r.pairing.id, r.pairing)
            done = self.apply(r)
            if done in ("applied", "known"):
                self.records.applied(r)
            return done

    def correct(
        self, round_: int, table: str, score: str, decided: str = "regulation", reason: str = ""
    ) -> str:
        """A result typed on the board (a correction over one in: with its reason), checked
        as `timekeeper tournament result` checks it, the matches under way included; a
        knock-out re-seeded by it is called again where its table has not begun it."""
        with self.lock:
            self.rounds.refresh()
            t = self.files.t
            event = clerk.result(
                t,
                round_,
                table,
                score,
                decided,
                reason=reason,
                time=stamp(self.wall()),
                begun=self.files.book.under_way(),
            )
            written = self.files.record(event)
            m = t.fixture(written.match)
            what = "corrected" if written.corrects else "result"
            self.say(f"{what} on the board: {m.id} {m.sides} {written.result.text()}")
            self.rounds.recall()
            return f"{what}: {m.id} {m.sides} {written.result.text()}"

    def refuse(self, result_id: str) -> None:
        with self.lock:
            self.records.refuse(result_id)
            self.say(f"result {result_id} refused by the director")

    def confirm(self, result_id: str) -> None:
        """The director confirms a result that came home (it counts already; this says a
        person has checked it against the table), kept with the calls."""
        with self.lock:
            if result_id not in self.files.applied():
                raise TournamentError(f"no result {result_id} in the tournament")
            if result_id in self.files.book.confirmed:
                return
            self.files.book.write({"confirmed": result_id})
            self.files.read_calls()
            self.say(f"result {result_id} confirmed by the director")


def _settled(m: Fixture, game: int | None, score: str) -> str:
    """Why game `game` of a series may no longer change from its table ('': it may): the
    series is decided, or a later game of it was played. Only the director changes it then."""
    s = m.series
    if s is None or game is None:
        return ""
    later = max((g.number for g in s.games), default=0)
    if s.decided:
        why = f"{m.id} is decided ({s.state_text(str(m.home), str(m.away))})"
    elif later > game:
        why = f"{m.id} game {later} is played already"
    else:
        return ""
    return (
        f"{why}: a change of game {game} is the director's to type (timekeeper tournament "
        f"result {m.id} {score} --game {game} --reason …)"
    )


def _apart(r: MatchResult) -> str:
    """A misplaced result's key: its id and the table that sent it (at most 64 characters)."""
    ident = source(r)
    return f"{ident[: 63 - len(r.table)]}:{r.table}"


def source(r: MatchResult) -> str:
    """A result's id in the ledger (`source`), applied once: its pairing's, and for a
    series' game the game's too (`….g3`), since every game shares the series' pairing id."""
    number = r.series_game
    return r.id if number is None else f"{r.id}.g{number}"
