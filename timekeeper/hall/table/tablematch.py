"""A box's side of the evening: the desk's pairing in (the names on every screen, the profile
checked), the match's result out when it is finished (and again if it changes before it is
confirmed: a goal entered after the end) — retained, with the pairing's id, and
kept in the box's own small journal (`hall-match.json` in its state folder) until the next
pairing, so that a box that was offline at the end, or restarted, sends it again.

A pairing that comes during a match waits until the table is back to idle (never switched
during one); one that comes after the end waits until the finished match is reset or its
result confirmed, or the hall starts the next match (the finished match keeps its names and
result on every screen meanwhile, the held pairing shown as next:). One for another profile
switches the box to that profile for its match (`switch`: the box's ProfileSwitch,
box/switch.py); a profile the box cannot take (unknown, invalid, its sound pack lacks a cue)
is said in the table's status for the desk (`pairing_note`), and the box keeps its own. A
box restarted before the match takes the switch again. A knock-out pairing (it needs a
winner) decided at the end of regulation is ended by the box itself.

A series' pairing (best_of, game, wins: docs/hall.md) is played game by game under its one id:
the box's series (box/series.py, handed over as `series_taken` and `series_played`) counts each
game, every game's result goes home with its `game`, and the desk's pairing again with the same
id is its word on the series (taken between games, held during one)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timekeeper.hall.bus.messages import BadMessage
from timekeeper.hall.bus.pairing import Pairing, pairing_topic, parse_pairing
from timekeeper.hall.bus.result import MatchResult, from_status, parse_result, result_topic
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Status
from timekeeper.sound.listener import RunnerListener

log = logging.getLogger(__name__)

FILE = "hall-match.json"
BETWEEN = ("idle", "finished")  # no match under way: a new pairing may be taken


class MatchLink(RunnerListener):
    """Made by its HallLink (its client, its table), and told by the runner (as a listener)."""

    def __init__(
        self,
        link: Any,
        folder: Path | None,
        wall: Callable[[], float] = time.time,
        switch: Callable[[str], str] | None = None,
    ) -> None:
        self.link, self.box, self.wall, self.switch = link, link.box, wall, switch
        hall, table = link.topics.hall, link.topics.table
        self.table = table
        self.pairing_topic, self.result_topic = (
            pairing_topic(hall, table),
            result_topic(hall, table),
        )
        self.file = None if folder is None else Path(folder) / FILE
        self.pairing: Pairing | None = None
        self.played = False  # the pairing's match has begun (its end makes the result)
        self.result: MatchResult | None = None
        self.waiting: Pairing | None = None  # came during a match: taken after it
        self.note = ""
        self._finishing = ""  # the knock-out pairing (and game) this box has ended by itself
        # the box's series (box/series.py; a box without one plays the pairing's single match):
        # told every pairing taken and the desk's later word on it (it says whether it took
        # that word), asked the pairing of the game on the table (its game, its wins)
        self.series_taken: Callable[[Pairing], bool] = lambda pairing: False
        self.series_played: Callable[[Pairing], Pairing] = lambda pairing: pairing
        self._series_held: Pairing | None = None  # the desk's word during a game: after it
        self._lock = threading.Lock()
        self._load()

    # ---------------------------------------------------------------- the journal

    def _load(self) -> None:
        if self.file is None or not self.file.exists():
            return
        try:
            data = json.loads(self.file.read_text())
            self.pairing = (
                parse_pairing(json.dumps(data["pairing"]).encode()) if data.get("pairing") else None
            )
            self.played = bool(data.get("played"))
            self.result = (
                parse_result(json.dumps(data["result"]).encode()) if data.get("result") else None
            )
        except (OSError, ValueError, KeyError, BadMessage) as exc:
            log.warning(
                "hall: %s could not be read (%s); waiting for the desk's pairing", self.file, exc
            )

    def _save(self) -> None:
        if self.file is None:
            return
        body = {
            "pairing": json.loads(self.pairing.to_json()) if self.pairing else None,
            "played": self.played,
            "result": json.loads(self.result.to_json()) if self.result else None,
        }
        temporary = self.file.with_suffix(".tmp")
        try:
            with open(temporary, "w") as stream:
                json.dump(body, stream, ensure_ascii=False)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.file)
        except OSError as exc:  # the match goes on; the result still goes out on the bus
            log.warning("hall: the result could not be kept in %s (%s)", self.file, exc)

    # ---------------------------------------------------------------- the bus's side

    def connected(self, client: Any) -> None:
        client.subscribe(self.pairing_topic, 1)
        if self.result is not None:  # (again: it may not have reached the broker)
            self._publish_result()

    def owns(self, topic: str) -> bool:
        return topic == self.pairing_topic

    def handle(self, payload: bytes) -> None:
        if not payload:
            return None  # the desk took its pairing back (an empty retained message)
        try:
            pairing = parse_pairing(payload)
        except BadMessage as exc:
            log.warning("hall: a pairing refused: %s", exc)
            self.note = f"pairing refused: {exc}"
            self.link.publish_status()
            return None
        with self._lock:
            if self.pairing and pairing.id == self.pairing.id and pairing.series:
                self._series_word(pairing)  # (the desk's re-publish after a game, or a correction)
            if pairing.id in {p.id for p in (self.pairing, self.waiting) if p}:
                if (
                    self.pairing
                    and pairing.id == self.pairing.id
                    and not self.played
                    and pairing.profile != self.link.profile
                    and self.box.status().state in BETWEEN
                ):  # (a box restarted before it)
                    self._switch_to(pairing)
                    self.link.publish_status()
                return None  # (retained: delivered again on every reconnect)
            state = self.box.status().state
            if state not in BETWEEN:
                self.waiting = pairing
                self.note = f"next: {pairing.match} {pairing.sides}, after the match under way"
                log.info("hall: %s", self.note)
            elif state == "finished" and not (self.result and self.result.confirmed):
                # the finished match keeps its names and its result on every screen until
                # it is reset or its result confirmed (the next pairing is shown as next:)
                self.waiting = pairing
                self.note = (
                    f"next: {pairing.match} {pairing.sides}, once the finished match is "
                    "reset or its result confirmed"
                )
                log.info("hall: %s", self.note)
            else:
                self._take(pairing)
        self.link.publish_status()
        return None

    def _series_word(self, pairing: Pairing) -> None:
        """The desk's pairing of the series on the table again: taken between games, held
        during one (the box's series takes it from the game on the table on: an older game's
        is a message the box has passed)."""
        if self.box.status().state not in BETWEEN:
            self._series_held = pairing
            return
        self._series_held = None
        if self.series_taken(pairing):
            self.pairing = pairing
            self._save()

    def before_start(self, at: float) -> None:
        """The hall's start for instant `at` (runner's clock) on a finished table: the held
        pairing is the match it begins, its names given at that instant, just before it."""
        with self._lock:
            if self.waiting is not None and self.box.status().state == "finished":
                self._take(self.waiting, at)

    def _take(self, pairing: Pairing, at: float | None = None) -> None:
        self.pairing, self.played, self.result, self.waiting = pairing, False, None, None
        self._series_held = None
        self._save()
        self.series_taken(pairing)
        self._switch_to(pairing)  # (first: the names go to the next match's engine)
        names = Command(Action.NAMES, names=(pairing.home, pairing.away))
        given = self.box.submit(names, at=at)
        if at is not None:  # (held for the instant: called off with the start, given now)
            given.add_done_callback(lambda done: done.exception() and self.box.submit(names))
        log.info(
            "hall: round %d, %s %s (%s)%s",
            pairing.round,
            pairing.match,
            pairing.sides,
            pairing.stage,
            f"; {self.note}" if self.note else "",
        )

    def _switch_to(self, pairing: Pairing) -> None:
        """The pairing's profile for its match (between matches only), or the note why not."""
        self.note = ""
        if pairing.profile == self.link.profile:
            return
        why = (
            f"restart the box with --profile {pairing.profile}"
            if self.switch is None
            else self.switch(pairing.profile)
        )
        if why:
            self.note = (
                f"this table runs profile {self.link.profile}; {pairing.match} is "
                f"for {pairing.profile}: {why}"
            )
        else:
            self.link.profile = pairing.profile

    def _result_of(self, status: Status) -> None:
        """The finished match's result, made at its end and made again while it changes
        before it is confirmed (a goal entered after the end counts: docs/commands.md), each
        time sent home again; a confirmed one stands (the desk corrects it)."""
        assert self.pairing is not None
        played = self.series_played(self.pairing)  # (a series' game: the one just played)
        made = from_status(played, self.table, status.to_dict(), self.wall())
        game = made.game
        old = self.result
        if old is not None and (old.confirmed or _same(old, made)):
            if old.confirmed and not _same(old, made):
                log.warning(
                    "hall: %s is %s now, but %s was confirmed: the desk corrects it",
                    self.pairing.match,
                    made.score_text,
                    old.score_text,
                )
            return
        self.result = made
        self._save()
        log.info(
            "hall: %s%s %s %s (%s); sent to the desk",
            self.pairing.match,
            f" game {game}" if game else "",
            "finished" if old is None else "changed after the end:",
            made.score_text,
            made.decided,
        )
        self._publish_result()

    def _publish_result(self) -> None:
        assert self.result is not None
        self.link.client.publish(self.result_topic, self.result.to_json(), qos=1, retain=True)

    def ctl(self, args: list[str]) -> dict:
        """`ctl result`: this table's last result; `ctl result confirm`: the operator has
        checked it with the players, and the desk is told (the result sent again, confirmed)."""
        with self._lock:
            if args not in ([], ["confirm"]):
                return {
                    "ok": False,
                    "result": "refused",
                    "error": "result takes nothing, or confirm",
                }
            if self.result is None:
                return {
                    "ok": False,
                    "result": "refused",
                    "error": "no result yet: the "
                    "table's match is not finished (or the desk sent it no pairing)",
                }
            if args == ["confirm"] and not self.result.confirmed:
                self.result = dataclasses.replace(self.result, confirmed=True)
                self._save()
                self._publish_result()
                log.info("hall: result %s confirmed by the operator", self.result.id)
                if self.waiting is not None and self.box.status().state == "finished":
                    self.box.submit(Command(Action.RESET))  # (idle: the next pairing taken)
            return {
                "ok": True,
                "match_result": json.loads(self.result.to_json()),
                "status": self.box.status().to_dict(),
            }

    def status_fields(self) -> dict:
        p = self.pairing
        return {
            "pairing": None
            if p is None
            else {
                "id": p.id,
                "round": p.round,
                "match": p.match,
                "stage": p.stage,
                "home": p.home,
                "away": p.away,
                "profile": p.profile,
            },
            "pairing_note": self.note,
            "result": None if self.result is None else self.result.id,
        }

    def next_shown(self) -> dict | None:
        """The status's `next_pairing` (the runner adds it): the pairing held for after the
        match on the table, shown as "next: HOME – AWAY" where the names are."""
        w = self.waiting
        return None if w is None else {"match": w.match, "home": w.home, "away": w.away}

    def result_shown(self) -> dict | None:
        """The status's `hall_result` (the runner adds it): the result the table holds, so
        that its operator confirms it on the operator page as with `ctl result confirm`."""
        r = self.result
        return (
            None
            if r is None
            else {
                "id": r.id,
                "match": r.pairing.match,
                "score": r.score_text,
                "confirmed": r.confirmed,
            }
        )

    # ---------------------------------------------------------------- the runner's side

    def match_changed(self, status: Status, now: float) -> None:
        with self._lock:
            if status.state == "idle" and self.waiting is not None:
                # reset, from whatever state (also on a box with no pairing yet, its match
                # begun by a hall start): the held pairing is taken, its profile with it
                self._take(self.waiting)
                return
            if self.pairing is None:
                return
            if self._series_held is not None and status.state in BETWEEN:
                self._series_word(self._series_held)
            game = self._game()
            if status.state not in BETWEEN and self.result and self.result.game != game:
                # the series' next game begun: the last one's result stands (it went home)
                log.info("hall: %s game %d begins", self.pairing.match, game)
                self.result, self.played = None, True
                self._save()
            elif status.state not in BETWEEN and not self.played and self.result is None:
                self.played = True
                self._save()
            elif status.state not in BETWEEN and self.result and not self.result.confirmed:
                # under way again (a goal entered after the end made it a draw, a sudden
                # death's goal taken back): its result is made again at its end
                log.info(
                    "hall: %s goes on after %s; its result is made at its end",
                    self.pairing.match,
                    self.result.score_text,
                )
                self.result, self._finishing = None, ""
                self._save()
            elif status.state == "finished" and self.played:
                self._result_of(status)
            elif (
                self.played
                and (self.pairing.knockout or self.pairing.series)  # (a series' game too)
                and decided_at_the_end(status)
                and self._finishing != f"{self.pairing.id}/{game}"  # (once: it comes again)
            ):
                self._finishing = f"{self.pairing.id}/{game}"
                log.info(
                    "hall: %s is decided at the end of regulation (%s:%s): a knock-out match, over",
                    self.pairing.match,
                    status.score["home"],
                    status.score["away"],
                )
                self.box.submit(Command(Action.FINISH))

    def _game(self) -> int | None:
        """The series' game on the table (a result's `game`), None: a single match."""
        played = self.series_played(self.pairing) if self.pairing else None
        return played.series_game if played is not None else None


def _same(a: MatchResult, b: MatchResult) -> bool:
    """The same result for the desk (when it was made aside)."""
    return (a.score, a.decided, a.goals, a.penalties) == (b.score, b.decided, b.goals, b.penalties)


def decided_at_the_end(status: Status) -> bool:
    """Regulation (or a part after it) over, the match waiting for NEXT, with goals entered
    and one side ahead: the engine plays no overtime then, FINISH ends it (its operator's `f`
    in a group match; for a knock-out match the box itself: no one need be at the table)."""
    score = status.score
    return (
        status.state == "waiting"
        and status.period >= status.periods
        and bool(status.goals)
        and score["home"] != score["away"]
    )
