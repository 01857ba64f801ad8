"""Evening bench: the desk runs a round of 50 tables over a real Mosquitto on localhost.

    python bench/evening.py            # 50 tables (100 players, 25 groups of four)
    python bench/evening.py --quick    # CI: 10 tables
    python bench/evening.py --tables 30

Each table is a lightweight box in this process: a real HallLink and MatchLink (the box's own
message code, each with its own MQTT connection) over a stand-in for the runner that only
holds a status. The desk is a real Desk and Director with the tournament's file and ledger.
Figures: the time to push a round's pairings to every table (call → the last table has taken
it), and the time from a match's end (the box's status turns finished) to its result in the
desk's standings — for one table alone, and for every table ending at the same instant.
Benchmarks are not tests: nothing here passes or fails, it measures and prints."""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["TIMEKEEPER_PROFILES_PATH"] = ""

from hall import Broker

from timekeeper.hall import timesync
from timekeeper.hall.desk import Desk
from timekeeper.hall.director import Director
from timekeeper.hall.link import Broker as Address
from timekeeper.hall.link import HallLink
from timekeeper.hall.tablematch import MatchLink
from timekeeper.rules import profile
from timekeeper.rules.engine import Engine


class StandIn:
    """What the links need of a box's runner: a clock, a status, commands taken at once."""

    def __init__(self, base) -> None:
        self.clock = time.monotonic
        self.state = base

    def status(self):
        return self.state

    def submit(self, command, at=None) -> Future:
        done: Future = Future()
        if command.names is not None:
            self.state = dataclasses.replace(
                self.state, names={"home": command.names[0], "away": command.names[1]}
            )
        done.set_result(self.state)
        return done


def tournament(folder: Path, tables: int) -> Path:
    from timekeeper.tournament import clerk
    from timekeeper.tournament.ledger import open_tournament

    file = folder / "bench.yaml"
    players = "\n".join(f"  - Player {i:03d}" for i in range(1, 2 * tables + 1))
    file.write_text(
        f"title: bench\nrules: radegast\ntables: {tables}\nplayers:\n{players}\n"
        "stages:\n  groups:\n    size: 4\n    advance: 2\n",
        encoding="utf-8",
    )
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))
    return file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 tables (CI)")
    parser.add_argument("--tables", type=int, default=50)
    args = parser.parse_args()
    n = 10 if args.quick else args.tables
    root = Path(tempfile.mkdtemp(prefix="tk-evening-"))
    broker = Broker(root)
    broker.up()
    idle = Engine(profile.load("radegast")).status(0.0)
    boxes, links, matches = [], [], []
    taken: dict[str, float] = {}
    try:
        for i in range(1, n + 1):
            box = StandIn(idle)
            link = HallLink(
                box,
                Address.parse(broker.url),
                "bench",
                str(i),
                "radegast",
                sync_check=timesync.local_check,
                results=root / f"box{i}",
            )
            match = link.match
            (root / f"box{i}").mkdir()
            real = match.handle

            def handle(payload: bytes, real=real, table=str(i)) -> None:
                real(payload)
                taken[table] = time.monotonic()

            match.handle = handle
            boxes.append(box)
            links.append(link.start())
            matches.append(match)
        desk = Desk(Address.parse(broker.url), "bench")
        deadline = time.monotonic() + 60
        while len([s for s in desk.tables().values() if s.get("online")]) < n:
            if time.monotonic() > deadline:
                raise SystemExit("bench: the tables did not all join")
            time.sleep(0.05)
        director = Director(desk, tournament(root, n))
        applied: dict[str, float] = {}
        real_apply = director.intake.apply

        def timed_apply(r):
            done = real_apply(r)
            if done == "applied":
                applied[r.pairing.match] = time.monotonic()
            return done

        director.intake.apply = timed_apply
        # 1. a round pushed to every table
        pushes = []
        for number in (1, 2):
            taken.clear()
            begun = time.monotonic()
            director.call_round(number)
            while len(taken) < n and time.monotonic() < begun + 30:
                time.sleep(0.001)
            pushes.append(max(taken.values()) - begun)
            if number == 1:
                # 2. one table's end → its result in the standings
                singles = []
                for match, box in list(zip(matches, boxes, strict=True))[:5]:
                    singles.append(finish(match, box, applied))
                # 3. every other table at once
                rest = list(zip(matches, boxes, strict=True))[5:]
                ends = {}
                for match, box in rest:
                    match.match_changed(dataclasses.replace(box.state, state="running"), 0)
                begun_all = time.monotonic()
                for match, box in rest:
                    ends[match.pairing.match] = time.monotonic()
                    match.match_changed(
                        dataclasses.replace(
                            box.state, state="finished", score={"home": 1, "away": 0}
                        ),
                        0,
                    )
                while len(applied) < n and time.monotonic() < begun_all + 120:
                    time.sleep(0.001)
                together = [applied[m] - ends[m] for m in ends if m in applied]
                all_in = max(applied.values()) - begun_all
                for box in boxes:  # (ready for the next round's pairing)
                    box.state = idle
        print(
            f"evening bench: {n} tables, {2 * n} players, a real Mosquitto on localhost, "
            "the desk's ledger on this disk"
        )
        rows = [
            (
                "push a round to every table (ms), 1st / 2nd round",
                f"{pushes[0] * 1e3:.1f} / {pushes[1] * 1e3:.1f}",
            ),
            (
                "one table's end → its result in the standings (ms), median of 5",
                f"{statistics.median(singles) * 1e3:.1f}",
            ),
            (
                f"{n - 5} tables ending together: each end → standings (ms), median / max",
                f"{statistics.median(together) * 1e3:.1f} / {max(together) * 1e3:.1f}",
            ),
            (f"… the last of the {n - 5} in the standings after (ms)", f"{all_in * 1e3:.1f}"),
            ("results in the ledger / matches played", f"{len(applied)} / {n}"),
        ]
        width = max(len(r[0]) for r in rows)
        print(f"| {'figure':<{width}} | {'measured':>13} |")
        print(f"|{'-' * (width + 2)}|{'-' * 15}|")
        for name, value in rows:
            print(f"| {name:<{width}} | {value:>13} |")
        desk.close()
    finally:
        for link in links:
            link.close()
        broker.down()


def finish(match: MatchLink, box: StandIn, applied: dict[str, float]) -> float:
    match.match_changed(dataclasses.replace(box.state, state="running"), 0)
    ended = time.monotonic()
    match.match_changed(
        dataclasses.replace(box.state, state="finished", score={"home": 2, "away": 1}), 0
    )
    name = match.pairing.match
    while name not in applied and time.monotonic() < ended + 30:
        time.sleep(0.0005)
    return applied[name] - ended


if __name__ == "__main__":
    threading.excepthook = lambda info: (
        None
        if info.exc_type is SystemExit
        else sys.__excepthook__(info.exc_type, info.exc_value, info.exc_traceback)
    )
    main()
