"""Calling rounds at the desk: each table of a round pushed its pairing (retained), a
series' next game called with the wins so far, a match called again whose players a
correction changed before its table began it, and a table's box past idle marking its match
begun. The calls are kept in the calls file (hall/desk/callbook.py), so that every desk and
`timekeeper tournament result` know them."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timekeeper.hall.bus.pairing import Pairing, pairing_topic
from timekeeper.hall.desk.deskfiles import DeskFiles
from timekeeper.tournament.state import Fixture, TournamentError


class Rounds:
    """The calls: made under the desk's lock, pushed outside it."""

    def __init__(
        self,
        files: DeskFiles,
        desk: Any,
        lock: threading.RLock,
        wall: Callable[[], float],
        results: bool,
        say: Callable[[str], None],
    ) -> None:
        """`desk`: its connection (hall/desk/link.py's Desk); `results`: this desk takes the
        results home (`hall serve`), and so calls each series' next game itself."""
        self.files, self.desk, self.lock, self.wall = files, desk, lock, wall
        self.results, self.say = results, say
        self.hall: str = desk.hall
        self._won_said: set[str] = set()  # series calls whose winner the log has told once

    def refresh(self) -> None:
        """The files again (raises where they cannot be read); the serving desk calls again
        what changed meanwhile (`recall`)."""
        self.files.reload()
        if self.results:
            self.recall()

    def publish(self, table: str, p: Pairing) -> Any:
        """A table's pairing, retained; the broker's answer to wait for, if need be."""
        return self.desk.client.publish(
            pairing_topic(self.hall, table), p.to_json(), qos=1, retain=True
        )

    def recall(self) -> None:
        """A series' next game (a game typed or corrected at the desk), and a match whose
        players a correction changed before its table began it, called again."""
        f = self.files
        for p in list(f.called.values()):
            self.next_game(p.match)  # (a single match: nothing)
        stale = []
        for table, p in f.called.items():
            m = f.t.fixture(p.match)
            if m.result is not None or m.home is None or m.away is None:
                continue
            if (m.home, m.away) != (p.home, p.away) and p.id not in f.book.begun:
                stale.append((table, p, m))
        for table, p, m in stale:
            again = dataclasses.replace(
                p,
                id=f"{m.id}.{p.round}.{uuid.uuid4().hex[:8]}",
                home=str(m.home),
                away=str(m.away),
                sent=round(self.wall(), 3),
            )
            f.book.write(again)
            f.read_calls()
            self.publish(table, again)  # (not waited for: this may be paho's own thread)
            self.say(f"table {table}: {m.id} is {m.sides} now (a correction): called again")

    def next_game(self, match_id: str) -> None:
        """After a game of a series: the same call again, retained, for its next game with
        the wins so far (its box plays it with the same players), or nothing more once
        the series is decided (the bracket moves on, the next round calls its matches)."""
        m = self.files.t.fixture(match_id)
        table = m.slot.table
        p = self.files.called.get(table)
        if m.series is None or p is None or p.match != match_id:
            return
        if m.series.next_game is None:
            if p.id not in self._won_said:  # (once: `recall` comes here at every refresh)
                self._won_said.add(p.id)
                self.say(f"table {table}: {m.id} {m.series.state_text(str(m.home), str(m.away))}")
            return
        best_of, game, home_wins, away_wins = series_fields(m)
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
        self.files.book.write(again)
        self.files.read_calls()
        self.publish(table, again)  # (not waited for: this may be paho's own thread)
        self.say(f"table {table}: {series_line(again)} next")

    def call_round(self, number: int, wait: float = 5.0) -> list[tuple[str, str]]:
        """Push each table of round `number` its pairing (retained); (table, what was done)
        for each of the round's tables. The calls are written under the lock, the pushes
        are waited for outside it: paho's thread takes the lock for each result that comes
        home, and it is the thread that hears the broker's acknowledgements."""
        with self.lock:
            self.refresh()
            t = self.files.t
            slots = [s for s in t.slots if s.round == number]
            if not slots:
                rounds = sorted({s.round for s in t.slots})
                raise TournamentError(f"no round {number} (rounds {rounds[0]}–{rounds[-1]})")
            out: list[tuple[str, str]] = []
            calls: list[tuple[str, Pairing]] = []
            for slot in slots:
                m = t.fixture(slot.match)
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
                    profile_name(t.profile_of(m.id)),
                    round(self.wall(), 3),
                    m.knockout,  # (a winner needed: the box ends it when decided)
                    *series_fields(m),
                )
                calls.append((slot.table, p))
                what = series_line(p) if p.best_of > 1 else m.id
                out.append((slot.table, f"{what} {m.stage}: {p.sides} ({p.profile})"))
            if calls:
                self.files.book.write(*(p for _, p in calls))
                self.files.read_calls()
        self._push(calls, wait)
        self.say(f"round {number} called: {len(calls)} tables")
        return out

    def _push(self, calls: list[tuple[str, Pairing]], wait: float) -> None:
        """Publish each pairing (retained) and wait at most `wait` s in all for the broker;
        never under the lock."""
        sent = [self.publish(table, p) for table, p in calls]
        until = time.monotonic() + wait
        for info in sent:
            info.wait_for_publish(max(0.0, until - time.monotonic()))

    def call_again(self, client: Any) -> None:
        """On a (re)connect: the calls whose matches wait for their results, published again
        (a broker restarted without its retained messages)."""
        with self.lock:
            for table, p in self.files.called.items():
                if p.match in self.files.t.results:
                    continue
                client.publish(pairing_topic(self.hall, table), p.to_json(), qos=1, retain=True)

    def status(self, table: str, body: dict[str, Any]) -> None:
        """A table's box past idle with a pairing this tournament called: that match has
        begun (a correction may no longer change its players); back to idle: not any more.
        Kept in the calls file, so that `timekeeper tournament result` knows it too."""
        pairing, s = body.get("pairing") or {}, body.get("status") or {}
        ident, state = pairing.get("id"), s.get("state")
        if not self.results or not body.get("online") or not isinstance(state, str):
            return
        f = self.files
        with self.lock:
            if ident not in f.book.issued or f.table_of(f.book.issued[ident]) != table:
                return  # (only the table it was called at begins a match)
            began = state != "idle"
            f.read_calls()
            if began != (ident in f.book.begun):
                f.book.write({"begun" if began else "idle": ident})
                f.read_calls()

    def next_round(self) -> int | None:
        """The lowest round with a match still to play whose tables are free (their called
        match has its result) and whose players are known and not busy elsewhere."""
        with self.lock:
            f = self.files
            f.read_calls()
            free = {
                table for table, p in f.called.items() if f.t.fixture(p.match).result is not None
            } | (set(f.t.spec.tables) - set(f.called))
            ready = sorted(
                {
                    m.slot.round
                    for table, m, why in f.t.next_up()
                    if m is not None and why == "ready" and table in free
                }
            )
            return ready[0] if ready else None

    def current_round(self) -> int | None:
        """The round called last (by any desk): the one the hall plays now."""
        with self.lock:
            self.files.read_calls()
            return max((p.round for p in self.files.called.values()), default=None)


def series_line(p: Pairing) -> str:
    """`QF2 · game 3 · Novák leads 2:0` (the box's words are its own: box/series.py)."""
    return f"{p.match} · game {p.game} · {p.called().state_text(p.home, p.away)}"


def series_fields(m: Fixture) -> tuple[int, ...]:
    """A series' pairing fields for its next game: (best_of, game, home_wins, away_wins);
    none for a single match (or a series decided)."""
    s = m.series
    if s is None or s.next_game is None:
        return ()
    return (s.best_of, s.next_game, s.home_wins, s.away_wins)


def profile_name(name: str) -> str:
    """A profile as a box names it: a file's name without its folder and .yaml."""
    return Path(name).stem if "/" in name or name.endswith((".yaml", ".yml")) else name
