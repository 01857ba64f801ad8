"""A whole evening replayed on a real Mosquitto with four real boxes on this machine (dummy
audio, a short match, `--sync local`): eight players in two groups, the semi-finals, the 3rd
place and the final. Every result comes home by itself; the standings and the bracket are
those computed by hand; and with a box killed mid-match, the desk killed and the broker
restarted on the way, no result is lost and none is counted twice."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import HALL_WAIT, wait_for

from timekeeper.box.controls.socket_client import send
from timekeeper.hall.bus.broker import Broker
from timekeeper.hall.bus.messages import Topics
from timekeeper.hall.desk.director import Director
from timekeeper.hall.desk.link import Desk, new_command
from timekeeper.hall.practice import box_command
from timekeeper.tournament.events import ResultEvent

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

TABLES = ("1", "2", "3", "4")
# each player's strength: the stronger side scores the match's one goal (no draws, and every
# group ends 9, 6, 3, 0 points: the order computed by hand is the strength's)
STRENGTH = {
    "Adam": 8,
    "Běla": 7,
    "Cyril": 6,
    "Dana": 5,
    "Emil": 4,
    "Fiona": 3,
    "Gustav": 2,
    "Hana": 1,
}
PROFILE = "title: evening test\nprestart: 1\nperiod:\n  length: 4\n  marks: 1\n"


def drawn_cup(folder: Path) -> Path:
    from timekeeper.tournament import clerk
    from timekeeper.tournament.ledger import open_tournament

    file = folder / "cup.yaml"
    players = "\n".join(f"  - {n}" for n in STRENGTH)
    file.write_text(
        f"title: Evening cup\nrules: radegast\ntables: 4\nplayers:\n{players}\n"
        "stages:\n  groups:\n    size: 4\n    advance: 2\n  knockout:\n"
        "    tree: cross\n    third_place: true\n",
        encoding="utf-8",
    )
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 2026))
    return file


class Boxes:
    """Four `timekeeper run` boxes; one may be killed (-9) and started again."""

    def __init__(self, root: Path, url: str, profile: Path) -> None:
        self.root, self.url, self.profile = root, url, profile
        self.procs: dict[str, subprocess.Popen] = {}

    def folder(self, table: str) -> Path:
        return self.root / f"box{table}"

    def start(self, table: str, fresh: bool = True) -> None:
        folder = self.folder(table)
        folder.mkdir(exist_ok=True)
        (folder / "c.sock").unlink(missing_ok=True)
        with open(folder / "out.log", "a") as out:
            self.procs[table] = subprocess.Popen(
                box_command(
                    self.url,
                    table,
                    folder,
                    *("--profile", str(self.profile), *(["--fresh"] if fresh else [])),
                    control=folder / "c.sock",
                ),
                env=dict(os.environ, SDL_AUDIODRIVER="dummy"),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_for(
            lambda: (folder / "c.sock").exists() or self.procs[table].poll() is not None,
            f"box {table} up",
            30,
        )
        assert self.procs[table].poll() is None, (folder / "out.log").read_text()

    def kill(self, table: str) -> None:
        self.procs[table].send_signal(signal.SIGKILL)
        self.procs[table].wait(10)

    def ctl(self, table: str, line: str) -> dict:
        return send(self.folder(table) / "c.sock", line)

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def stronger(home: str, away: str) -> str:
    return "home" if STRENGTH[home] > STRENGTH[away] else "away"


def test_a_whole_evening_with_faults_every_result_home_once(broker, tmp_path: Path) -> None:
    profile = tmp_path / "evening.yaml"
    profile.write_text(PROFILE)
    file = drawn_cup(tmp_path)
    boxes = Boxes(tmp_path, broker["url"], profile)
    holder: dict = {}

    def open_desk() -> Director:
        holder["desk"] = Desk(Broker.parse(broker["url"]), "hall")
        holder["director"] = Director(holder["desk"], file)
        return holder["director"]

    def tables() -> dict:
        try:
            return holder["desk"].tables()
        except Exception:
            return {}

    try:
        for table in TABLES:
            boxes.start(table)
        director = open_desk()
        wait_for(
            lambda: sum(1 for s in tables().values() if s.get("online")) == 4,
            "four boxes joined",
            HALL_WAIT,
        )
        number = 1
        while (number := director.next_round()) is not None:
            director = play_round(number, director, boxes, holder, open_desk, broker, tables)
        t = director.t
        results = [e for e in t.events if isinstance(e, ResultEvent)]
        assert len(results) == len(t.slots) == 16  # 12 group matches, SF1, SF2, 3P, F
        assert len({e.match for e in results}) == 16  # none twice
        assert all(e.source for e in results)  # every one came from a box
        for group, players in t.groups.items():
            by_hand = sorted(players, key=lambda p: -STRENGTH[p])
            assert [r.player for r in t.standings(group)] == by_hand
            assert [r.points for r in t.standings(group)] == [9, 6, 3, 0]
        for m in t.fixtures():
            assert m.result.winner == stronger(m.home, m.away), m
        a, b = (
            [p for p in sorted(t.groups[g], key=lambda p: -STRENGTH[p])] for g in sorted(t.groups)
        )
        semis = [(a[0], b[1]), (b[0], a[1])]
        finalists = [max(s, key=STRENGTH.get) for s in semis]
        losers = [min(s, key=STRENGTH.get) for s in semis]
        top = sorted(finalists, key=lambda p: -STRENGTH[p]) + sorted(
            losers, key=lambda p: -STRENGTH[p]
        )
        assert [name for _, name in t.placings()[:4]] == top
    finally:
        boxes.close()
        if "desk" in holder:
            holder["desk"].close()


def play_round(
    number: int,
    director: Director,
    boxes: Boxes,
    holder: dict,
    open_desk,
    broker,
    tables,
) -> Director:
    """Call the round, start its tables, enter each match's goal; the faults on the way."""
    desk = holder["desk"]
    desk.send(new_command("reset"))
    wait_for(
        lambda: all((s.get("status") or {}).get("state") == "idle" for s in tables().values()),
        "every table ready",
        HALL_WAIT,
    )
    director.call_round(number)
    called = {t: p for t, p in director.called.items() if p.round == number}
    wait_for(
        lambda: all(
            (tables().get(t, {}).get("pairing") or {}).get("id") == p.id for t, p in called.items()
        ),
        f"round {number}'s pairings",
        HALL_WAIT,
    )
    start = new_command("start", at=time.time() + 2.0)
    for table in called:  # one instant, each called table's own topic: idle tables stay idle
        desk.client.publish(Topics("hall", table).command, start.to_json(), qos=1)
    victim = "2" if number == 2 and "2" in called else None
    for table, p in sorted(called.items(), key=lambda tp: tp[0] == victim):
        wait_for(
            lambda t=table: tables()[t]["status"]["state"] == "running",
            f"table {table} running",
            HALL_WAIT,
        )
        assert tables()[table]["in_step"] is True  # one start for the round: the hall's time
        if table == victim:  # killed mid-match, started again: back from its journal
            boxes.kill(table)
            boxes.start(table, fresh=False)
            wait_for(
                lambda t=table: (
                    (tables().get(t) or {}).get("online")
                    and tables()[t]["status"]["state"] == "stopped"
                ),
                "the box back, stopped",
                HALL_WAIT,
            )
            assert boxes.ctl(table, "resume")["ok"]
        assert boxes.ctl(table, f"goal {stronger(p.home, p.away)}")["ok"]
    if number == 3:  # the desk dies while the round is played: it comes back from its files
        holder["desk"].close()
        holder.pop("desk")
        wait_for(
            lambda: all(boxes_done(boxes, called)), "round 3 over with the desk away", HALL_WAIT
        )
        director = open_desk()
    if number == 4:  # the broker restarts mid-round (its retained messages gone with it)
        broker["down"]()
        broker["up"]()
    wait_for(
        lambda: all(p.match in director.t.results for p in called.values()),
        f"round {number}'s results at the desk",
        60,
    )
    return director


def boxes_done(boxes: Boxes, called: dict) -> list[bool]:
    return [boxes.ctl(t, "status")["status"]["state"] == "finished" for t in called]
