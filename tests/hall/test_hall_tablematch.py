"""A box's side of the evening, without a bus: a pairing taken between matches only, the
result made once when the match ends, kept in the box's journal and sent again after a
restart or a reconnect."""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import Future
from pathlib import Path

from helpers import Clock, HallLinkSide

from timekeeper.box.runner import Runner
from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.bus.timesync import Sync
from timekeeper.hall.table.tablematch import MatchLink
from timekeeper.rules import profile
from timekeeper.rules.commands import Command
from timekeeper.rules.engine import Engine, Status

IDLE = Engine(profile.load("radegast")).status(0.0)


class Box(Runner):
    """The box's real runner, never started: the commands the link submits are kept, and
    its status is the test's to set (`state`)."""

    def __init__(self) -> None:
        super().__init__(Engine(profile.load("radegast")), [], clock=Clock())
        self.commands: list[Command] = []
        self.state = IDLE

    def status(self) -> Status:
        return self.state

    def submit(self, command: Command, at: float | None = None) -> Future:
        self.commands.append(command)
        return super().submit(command, at)


def pairing(ident: str, match: str = "A.1", profile_name: str = "radegast") -> bytes:
    return Pairing(ident, 1, match, "group A", "Novák", "Svoboda", profile_name, 1.0).to_json()


def results(link: HallLinkSide) -> list[dict]:
    return [
        json.loads(p)
        for t, p, retain in link.client.published
        if t == "timekeeper/cup/3/result" and retain
    ]


def test_a_result_is_made_once_kept_and_sent_again_after_a_restart(tmp_path: Path) -> None:
    box = Box()
    link = HallLinkSide(box)
    match = MatchLink(link, tmp_path, wall=lambda: 5.0)
    match.handle(pairing("p1"))
    assert box.commands[-1].names == ("Novák", "Svoboda")  # the names on every screen
    match.match_changed(dataclasses.replace(IDLE, state="finished"), 0)  # (not played yet)
    assert results(link) == []
    match.match_changed(dataclasses.replace(IDLE, state="running"), 0)
    ended = dataclasses.replace(
        IDLE,
        state="finished",
        score={"home": 2, "away": 1},
        goals=[{"team": "home", "period": 1, "play_time": 3.5, "player": "9"}],
    )
    match.match_changed(ended, 0)
    match.match_changed(ended, 0)  # (the status again: the result is made once)
    sent = results(link)
    assert len(sent) == 1 and sent[0]["score"] == [2, 1] and sent[0]["pairing"]["id"] == "p1"
    assert sent[0]["goals"] == [{"team": "home", "period": 1, "play_time": 3.5, "player": "9"}]
    assert sent[0]["confirmed"] is False
    assert match.ctl(["nonsense"])["ok"] is False
    answer = match.ctl(["confirm"])  # `ctl result confirm`: the operator has checked it
    assert answer["ok"] and answer["match_result"]["confirmed"] is True
    assert answer["status"]["state"] == "idle"  # (every ctl answer carries the status)
    assert results(link)[-1]["confirmed"] is True and len(results(link)) == 2
    sent = results(link)[-1:]
    # the box restarts (or was offline at the end): its journal sends the result again
    again = HallLinkSide(Box())
    MatchLink(again, tmp_path).connected(again.client)
    assert results(again) == sent and again.client.subscribed == ["timekeeper/cup/3/pairing"]


def test_a_pairing_waits_for_the_match_under_way_and_a_profile_mismatch_is_said(
    tmp_path: Path,
) -> None:
    box = Box()
    link = HallLinkSide(box)
    match = MatchLink(link, tmp_path)
    match.handle(pairing("p1"))
    box.state = dataclasses.replace(IDLE, state="running")
    match.match_changed(box.state, 0)
    match.handle(pairing("p2", "A.3", "ithf"))
    assert match.pairing.id == "p1" and "after the match under way" in match.note
    box.state = dataclasses.replace(IDLE, state="finished")
    match.match_changed(box.state, 0)
    match.handle(pairing("p2", "A.3", "ithf"))  # (retained: delivered again)
    assert match.pairing.id == "p1"
    box.state = IDLE
    match.match_changed(box.state, 0)  # back to idle: the next match is taken now
    assert match.pairing.id == "p2" and match.result is None
    assert "runs profile radegast; A.3 is for ithf" in match.status_fields()["pairing_note"]
    match.handle(b'{"id": "x"}')  # a bad pairing: refused, said, nothing changes
    assert match.pairing.id == "p2" and "pairing refused" in match.note


def test_a_result_that_changes_before_it_is_confirmed_is_sent_again(tmp_path: Path) -> None:
    box = Box()
    link = HallLinkSide(box)
    match = MatchLink(link, tmp_path, wall=lambda: 5.0)
    match.handle(pairing("p1"))
    match.match_changed(dataclasses.replace(IDLE, state="running"), 0)
    ended = dataclasses.replace(IDLE, state="finished", score={"home": 1, "away": 0})
    match.match_changed(ended, 0)
    late = dataclasses.replace(ended, score={"home": 1, "away": 1})  # a goal after the end
    match.match_changed(late, 0)
    match.match_changed(late, 0)  # (the same again: not sent twice)
    assert [r["score"] for r in results(link)] == [[1, 0], [1, 1]]
    assert match.ctl([])["match_result"]["score"] == [1, 1]
    assert match.ctl(["confirm"])["match_result"]["score"] == [1, 1]
    match.match_changed(dataclasses.replace(late, score={"home": 2, "away": 1}), 0)
    assert results(link)[-1]["score"] == [1, 1] and results(link)[-1]["confirmed"] is True
    assert json.loads((tmp_path / "hall-match.json").read_text())["result"]["score"] == [1, 1]


def test_a_knockout_pairing_decided_at_the_end_of_regulation_is_ended_by_the_box_once() -> None:
    from timekeeper.hall.bus.pairing import parse_pairing
    from timekeeper.rules.commands import Action

    ko = Pairing("SF1.4.x", 4, "SF1", "semi-final 1", "Novák", "Svoboda", "radegast", 1.0, True)
    assert parse_pairing(ko.to_json()) == ko
    group = Pairing("A.1.1.x", 1, "A.1", "group A", "Novák", "Svoboda", "radegast", 1.0)
    assert "knockout" not in json.loads(group.to_json())  # (as a group pairing always was)
    box = Box()
    match = MatchLink(HallLinkSide(box), None)
    match.handle(ko.to_json())
    match.match_changed(dataclasses.replace(IDLE, state="running", period=1, periods=3), 0)
    between = dataclasses.replace(IDLE, state="waiting", period=1, periods=3)
    goal = [{"team": "home", "period": 3, "play_time": 1.0, "player": ""}]
    match.match_changed(dataclasses.replace(between, score={"home": 1, "away": 0}, goals=goal), 0)
    drawn = dataclasses.replace(between, period=3, goals=[])  # 0:0: its overtime follows
    match.match_changed(drawn, 0)
    assert not [c for c in box.commands if c.action is Action.FINISH]
    decided = dataclasses.replace(drawn, score={"home": 1, "away": 0}, goals=goal)
    match.match_changed(decided, 0)
    match.match_changed(decided, 0)  # (the status again: one FINISH)
    assert [c.action for c in box.commands if c.action is Action.FINISH] == [Action.FINISH]


def test_a_finished_match_keeps_its_names_until_reset_or_confirmed_the_next_shown(
    tmp_path: Path,
) -> None:
    """The next round's pairing, arriving while a finished match's result is on
    the table, is held (shown as next:) and taken on reset or on the result's confirmation."""
    from timekeeper.rules.commands import Action

    box = Box()
    match = MatchLink(HallLinkSide(box), tmp_path)
    match.handle(pairing("p1"))  # Novák – Svoboda
    box.state = dataclasses.replace(IDLE, state="running")
    match.match_changed(box.state, 0)
    box.state = dataclasses.replace(
        IDLE, state="finished", score={"home": 2, "away": 0}, names={"home": "Novák", "away": "S"}
    )
    match.match_changed(box.state, 0)
    given = len(box.commands)
    nxt = Pairing("p2", 2, "A.3", "group A", "Petr", "Veselý", "radegast", 2.0).to_json()
    match.handle(nxt)
    assert len(box.commands) == given  # no names given: the finished match keeps its own
    assert match.pairing.id == "p1" and match.result is not None
    assert match.next_shown() == {"match": "A.3", "home": "Petr", "away": "Veselý"}
    answer = match.ctl(["confirm"])  # confirmed: the table is made ready for the next
    assert answer["match_result"]["confirmed"] is True
    assert box.commands[-1].action is Action.RESET
    box.state = IDLE
    match.match_changed(box.state, 0)  # (the reset done: the next pairing taken)
    assert match.pairing.id == "p2" and box.commands[-1].names == ("Petr", "Veselý")
    assert match.next_shown() is None


def test_a_held_pairing_is_taken_by_a_reset_and_by_the_halls_start() -> None:
    from timekeeper.rules.commands import Action

    box = Box()
    link = HallLinkSide(box)
    link.sync_check = lambda: Sync(True, 0.0)
    match = link.match
    match.handle(pairing("p1"))
    match.match_changed(dataclasses.replace(IDLE, state="running"), 0)
    box.state = dataclasses.replace(IDLE, state="finished")
    match.match_changed(box.state, 0)
    match.handle(pairing("p2", "A.3"))
    assert match.pairing.id == "p1" and match.next_shown()["match"] == "A.3"
    # the hall's start for the next round begins the held pairing's match, with its names
    link._apply(new_start())
    names = [c for c in box.commands if c.action is Action.NAMES]
    assert match.pairing.id == "p2" and names[-1].names == ("Novák", "Svoboda")
    assert box.commands[-1].action is Action.START
    assert box.commands.index(names[-1]) < len(box.commands) - 1  # (before the start)


def new_start():
    import time

    from timekeeper.hall.desk.link import new_command

    return new_command("start", time.time() + 3.0)


def test_a_finished_match_under_way_again_makes_its_result_again_at_its_end() -> None:
    box = Box()
    link = HallLinkSide(box)
    match = MatchLink(link, None)
    match.handle(pairing("p1"))

    def told(state: str, home: int, away: int) -> None:
        score = {"home": home, "away": away}
        match.match_changed(dataclasses.replace(IDLE, state=state, score=score), 0)

    told("running", 0, 0)
    told("finished", 1, 0)
    assert match.result_shown()["score"] == "1:0"
    told("waiting", 1, 1)  # an equaliser entered after the end: its overtime follows
    assert match.result is None and match.result_shown() is None  # (nothing to confirm now)
    told("finished", 2, 1)
    assert [r["score"] for r in results(link)] == [[1, 0], [2, 1]]
