"""The board's view of the desk (`/api/board`, hall/desk/board.py): the round's pairings by
table with each table's live status, the standings, the bracket, the next round, what waits
for the director, what the desk did (`DeskLog`), and what keeps results from the standings."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from timekeeper.hall.desk.deskfiles import DeskFiles
from timekeeper.hall.desk.intake import Intake
from timekeeper.hall.desk.rounds import Rounds
from timekeeper.hall.desk.seriesview import match_view, series_view
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament.events import ResultEvent

log = logging.getLogger(__name__)

MAX_LOG = 100


class DeskLog:
    """What the desk did, for the log and the board's last lines."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def say(self, text: str) -> None:
        log.info("desk: %s", text)
        self.events = [*self.events[-MAX_LOG + 1 :], f"{time.strftime('%H:%M:%S')} {text}"]


class BoardView:
    """The board's JSON from the desk's parts, read under its lock."""

    def __init__(
        self,
        files: DeskFiles,
        rounds: Rounds,
        intake: Intake,
        desk: Any,
        lock: threading.RLock,
        wall: Callable[[], float],
        said: DeskLog,
    ) -> None:
        self.files, self.rounds, self.intake, self.desk = files, rounds, intake, desk
        self.lock, self.wall, self.said = lock, wall, said

    def troubles(self) -> list[str]:
        """What keeps results from the standings now, for the board and its log."""
        with self.lock:
            said = [self.intake.records.said(), *self.intake.gate.flooding()]
            if self.files.unreadable:
                said.insert(
                    0,
                    f"the tournament cannot be read: {self.files.unreadable} — the "
                    "board shows it as last read",
                )
            return [s for s in said if s]

    def _unconfirmed(self, shown: set[str]) -> list[dict[str, Any]]:
        """The results that came home and wait for the director's look, but for those on the
        current round's tiles: the earlier rounds' (each result once, its latest)."""
        t, confirmed = self.files.t, self.files.book.confirmed
        latest: dict[str, ResultEvent] = {}
        for e in t.events:
            if isinstance(e, ResultEvent):
                latest[e.match] = e
        return [
            {
                "match": e.match,
                "sides": t.fixture(e.match).sides,
                "result": e.result.text(),
                "id": e.source,
            }
            for e in latest.values()
            if e.source and e.source not in confirmed and e.match not in shown
        ]

    def snapshot(self) -> dict[str, Any]:
        """The board's JSON: the round's pairings by table with each table's live status,
        the standings, the bracket, the next round, what waits for the director, and
        `trouble`: what keeps results from the standings (a broken journal: the standings
        as last read, the error named)."""
        with self.lock:
            with contextlib.suppress(ConfigError, OSError):  # (said in `trouble`)
                self.rounds.refresh()
            t, statuses = self.files.t, self.desk.tables()
            confirmed = self.files.book.confirmed
            current = self.rounds.current_round()
            tables = []
            for table in t.spec.tables:
                p = self.files.called.get(table)
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
                        "confirmed": source in confirmed if source else None,
                        "series": series_view(m) if m else None,
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
                    **match_view(t, m),
                }
                for m in t.fixtures()
                if m.knockout
            ]
            number = self.rounds.next_round()
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
                "hall": self.desk.hall,
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
                    for i, (r, why) in self.intake.records.waiting().items()
                ],
                "events": self.said.events[-10:],
                "trouble": self.troubles(),
            }
