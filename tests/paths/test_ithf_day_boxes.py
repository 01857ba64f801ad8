"""An ITHF day of 32 on 4 real boxes through the desk: the day drawn from the ranking as
docs/tournament.md's "An ITHF tournament" does it, with the A play-off in series (best of
seven, bronze best of five, "A play-off in series"); `hall serve --tournament`, `hall round
N` and four `timekeeper run --hall … --table N`, each a process of its own on a real
Mosquitto, every game of every series started, scored and ended on its box by the commands
`timekeeper ctl` sends (asked on its socket in-process: four boxes polled at once start no
process per question), its result home in the ledger; then the standings, the bracket and
the final places checked against the ones computed by hand.

The basic groups' round 1 and group A's first
round (4 matches each; two A draws, 1:1, stand) are played on the boxes too, each confirmed
at its table; the other 136 basic-group and 48 A/B results are typed through the command
line in this process while the desk serves (as test_tournament_ithf.py types them): on the
boxes they would add some 10 minutes and nothing the play-off's series do not cover.
The play-off's 38 games on the boxes take most of the test's time."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from cups import ithf_final_group, ithf_placement_group
from deskhall import Served
from helpers import HALL_WAIT, QUICK, TESTS, in_process, wait_for
from running import ask
from running import tk as timekeeper

from timekeeper.hall.practice import box_command
from timekeeper.tournament.ledger import open_tournament

pytestmark = pytest.mark.slow

GROUP = """\
title: a minute, a group draw stands
prestart: 1
period: {length: 60, marks: none}
"""
STAGES = """\
stages:
  groups: {size: 8, profile: quickgroup}
  final:
    A: {places: [1, 2], profile: quickgroup}
  placement:
    B: {places: [3, 4], profile: quickgroup}
  playoffs:
    A: {top: 8, profile: quick, final_profile: quick, best_of: {default: 7, 3P: 5}}
"""
# each game's winner: h/a in regulation (1:0 / 0:1), H/A by sudden death after 0:0
SERIES = {
    "QF1": "hhhh",
    "QF2": "aAhaa",
    "QF3": "hahhh",
    "QF4": "hhahh",
    "SF1": "hhhh",
    "SF2": "aaaa",
    "F": "hahahaH",
    "3P": "aaha",
}


def typed(file: Path, round_: int, table: str, score: str) -> None:
    """A result typed while the desk serves (handed to it, in this process); typed again
    while the desk says it has more than its commands a second (not taken: try again)."""
    argv = ("tournament", "result", str(round_), table, score, "-f", str(file))

    def taken() -> bool:
        done = in_process(*argv)
        assert done.returncode == 0 or "; try again" in done.stderr, (argv, done.stderr)
        return done.returncode == 0

    wait_for(taken, f"{argv} taken by the desk", HALL_WAIT)


def play_group(file: Path, group: str, score) -> None:
    t = open_tournament(file)[0]
    for m in [f for f in t.fixtures() if f.stage == f"group {group}" and f.result is None]:
        assert m.home and m.away, m.id
        typed(file, m.slot.round, m.slot.table, score(m.home, m.away))


def test_an_ithf_day_on_four_boxes_with_the_play_off_in_series(
    broker,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tk-id-", dir="/tmp"))  # (short: AF_UNIX paths)
    (folder / "profiles").mkdir()
    (folder / "profiles" / "quick.yaml").write_text(QUICK, encoding="utf-8")
    (folder / "profiles" / "quickgroup.yaml").write_text(GROUP, encoding="utf-8")
    monkeypatch.setenv("TIMEKEEPER_PROFILES_PATH", str(folder / "profiles"))
    env = {**os.environ, "SDL_AUDIODRIVER": "dummy", "TIMEKEEPER_SOUNDS_PATH": ""}
    for name in ("players.txt", "ranking.txt"):
        shutil.copy(TESTS / "ithf" / name, tmp_path / name)
    file = tmp_path / "day.yaml"

    def tk(*args: str) -> subprocess.CompletedProcess:
        return timekeeper(env, *args, cwd=tmp_path, timeout=60)

    def ok(*args: str) -> str:
        done = tk(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    # docs/tournament.md, "An ITHF tournament": new, the stages edited, the draw
    ok(
        "tournament",
        "new",
        "day.yaml",
        "--rules",
        "ithf",
        "--names",
        "players.txt",
        "--tables",
        "4",
    )
    text = file.read_text(encoding="utf-8")
    file.write_text(text.split("stages:", 1)[0] + STAGES, encoding="utf-8")
    ok("tournament", "draw", "--ranking", "ranking.txt", "--seed", "33", "-f", "day.yaml")
    t = open_tournament(file)[0]
    assert len(t.spec.tables) == 4, t.spec.tables

    socks = {n: folder / f"c{n}.sock" for n in "1234"}
    logs = {n: open(folder / f"box{n}.log", "a") for n in "1234"}  # noqa: SIM115
    boxes = {
        n: subprocess.Popen(
            box_command(
                broker["url"], n, folder / f"state{n}", "--profile", "quick", control=socks[n]
            ),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=logs[n],
            stderr=subprocess.STDOUT,
        )
        for n in "1234"
    }

    def ctl(table: str, *args: str) -> dict:
        """`timekeeper ctl ARGS --json` at `table`, asked in-process (four boxes polled at
        once: no interpreter started per question)."""
        return ask(socks[table], *args)

    def state(table: str, wanted: str) -> dict:
        return wait_for(
            lambda: (s := ctl(table, "status"))["state"] == wanted and s, wanted, HALL_WAIT
        )

    def games(match: str) -> list[tuple[int, int, str]]:
        t = open_tournament(file)[0]
        return [(g.home, g.away, g.decided) for g in t.series_of(match).games]

    def play_series(match: str, table: str, failures: list) -> None:
        """Game after game on the box: the desk's next pairing awaited, START, the goal,
        the clock run out, and the result awaited in the ledger."""
        try:
            m = open_tournament(file)[0].fixture(match)
            for k, winner in enumerate(SERIES[match], 1):
                s = wait_for(
                    lambda k=k: (
                        (s := ctl(table, "status")).get("match_series", {}).get("game") == k and s
                    ),
                    f"{match} game {k} on table {table}",
                    HALL_WAIT,
                )
                assert (s["names"]["home"], s["names"]["away"]) == (m.home, m.away)
                assert ctl(table, "start")["state"] == "prestart"
                state(table, "running")
                ctl(table, "pause")
                if winner in "ha":
                    ctl(table, "goal", "home" if winner == "h" else "away")
                ctl(table, "set", "0:00")
                ctl(table, "resume")
                if winner in "HA":
                    state(table, "waiting")
                    ctl(table, "next")
                    ctl(table, "goal", "home" if winner == "H" else "away")
                state(table, "finished")
                wait_for(lambda k=k: len(games(match)) == k, f"{match} game {k} home", HALL_WAIT)
            wait_for(
                lambda: open_tournament(file)[0].fixture(match).result is not None,
                f"{match} decided",
                HALL_WAIT,
            )
            ctl(table, "result", "confirm")  # the operator: ready for the next pairing
        except BaseException as exc:  # (reported by the main thread)
            failures.append((match, exc))

    def better(home: str, away: str, stage: str) -> bool:
        players = open_tournament(file)[0].basic[stage.split()[-1]]
        return players.index(home) < players.index(away)

    def play_one(match: str, table: str, failures: list, score: str = "") -> None:
        """A basic-group match on its box: its pairing awaited, START, the better seed's
        goal, the clock run out, the result home and confirmed at the table."""
        try:
            m = open_tournament(file)[0].fixture(match)
            wait_for(
                lambda: ctl(table, "status")["names"] == {"home": m.home, "away": m.away},
                f"{match} on table {table}",
                HALL_WAIT,
            )
            assert ctl(table, "start")["state"] == "prestart"
            state(table, "running")
            ctl(table, "pause")
            x, y = map(int, score.split(":")) if score else (1, 0)
            if not score and not better(str(m.home), str(m.away), m.stage):
                x, y = 0, 1
            for side, goals in (("home", x), ("away", y)):
                for _ in range(goals):
                    ctl(table, "goal", side)
            ctl(table, "set", "0:00")
            ctl(table, "resume")
            s = wait_for(
                lambda: (s := ctl(table, "status"))["state"] in ("waiting", "finished") and s,
                "the end",
                HALL_WAIT,
            )
            if s["state"] == "waiting":
                ctl(table, "finish")
            state(table, "finished")
            wait_for(
                lambda: open_tournament(file)[0].fixture(match).result is not None,
                f"{match} home",
                HALL_WAIT,
            )
            ctl(table, "result", "confirm")
        except BaseException as exc:  # (reported by the main thread)
            failures.append((match, exc))

    def at_once(play, tables: list[tuple]) -> None:
        """Each table's part (`play(match, table, failures, *more)`) in a thread of its own,
        all at once, as the tables play; none may fail."""
        failures: list = []
        threads = [
            threading.Thread(target=play, args=(m, t, failures, *more)) for m, t, *more in tables
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures

    served, desk_log = None, ""
    try:
        for n in "1234":
            wait_for(lambda n=n: boxes[n].poll() is None and ctl(n, "status"), "a box", 30)
        served = Served(broker["url"], file, tmp_path / "desk")
        # basic-group round 1 on the boxes: the better seed wins 1:0, confirmed at the table
        t = open_tournament(file)[0]
        first = [f for f in t.fixtures() if f.slot.round == 1]
        called = tk("hall", "round", "1", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0 and len(first) == 4, called.stderr
        at_once(play_one, [(f.id, f.slot.table) for f in first])
        done = open_tournament(file)[0]
        assert [(r.home, r.away) for r in (done.results[f.id] for f in first)] == [
            (1, 0) if better(str(f.home), str(f.away), f.stage) else (0, 1) for f in first
        ]
        # the basic groups: the better seed wins 1:0; A and B as test_tournament_ithf.py has them
        for g, players in t.basic.items():
            play_group(file, g, lambda h, a, p=players: "1:0" if p.index(h) < p.index(a) else "0:1")
        t = open_tournament(file)[0]
        a = [t.basic[g][0] for g in "1234"]
        b = [t.basic[g][1] for g in "1234"]
        c = [t.basic[g][2] for g in "1234"]
        d = [t.basic[g][3] for g in "1234"]
        assert t.groups["A"] == (*a, *b) and len(t.carried("A")) == 4 and t.carried("B") == []
        in_a, in_b = ithf_final_group(a, b), ithf_placement_group(c, d)  # (tests/cups.py)

        # the first round with a match of A on the boxes (its draws stand: a group's)
        t = open_tournament(file)[0]
        later = min(f.slot.round for f in t.fixtures() if f.stage == "group A")
        fours = [f for f in t.fixtures() if f.slot.round == later]
        called = tk(
            "hall", "round", str(later), "--tournament", str(file), "--broker", broker["url"]
        )
        assert called.returncode == 0 and len(fours) == 4, called.stderr
        want = [(in_a if f.stage == "group A" else in_b)(str(f.home), str(f.away)) for f in fours]
        at_once(play_one, [(f.id, f.slot.table, w) for f, w in zip(fours, want, strict=True)])
        done = open_tournament(file)[0]
        assert [f"{r.home}:{r.away}" for r in (done.results[f.id] for f in fours)] == want
        play_group(file, "A", in_a)
        play_group(file, "B", in_b)
        t = open_tournament(file)[0]
        # by hand: a1 9 points (3 carried from basic group 1: 1:0 over b1, counted once);
        # a2, a3, a4 8 each: among the three a2 has 4, a3 and a4 1 each; between those two
        # (2:2) level, so the overall goal difference (+1 each), then goals scored (9 to 7)
        rows = t.standings("A")
        seeds = [r.player for r in rows]
        assert seeds == [a[0], a[1], a[3], a[2], b[2], b[0], b[3], b[1]]
        assert [r.points for r in rows] == [9, 8, 8, 8, 7, 6, 5, 5]
        assert [r.played for r in rows] == [7] * 8  # 6 played in A, 1 carried
        assert [r.ahead_by for r in rows[1:3]] == ["head_to_head", "goals_for"]
        assert [r.played for r in t.standings("B")] == [7] * 8  # nothing carried into B
        assert [r.player for r in t.standings("B")] == [
            c[0],
            c[1],
            c[2],
            d[0],
            c[3],
            d[1],
            d[2],
            d[3],
        ]
        for rnd in (("QF1", "QF2", "QF3", "QF4"), ("SF1", "SF2"), ("F", "3P")):
            t = open_tournament(file)[0]
            fixtures = [t.fixture(m) for m in rnd]
            assert len({f.slot.round for f in fixtures}) == 1, rnd
            number = str(fixtures[0].slot.round)
            called = tk(
                "hall", "round", number, "--tournament", str(file), "--broker", broker["url"]
            )
            assert called.returncode == 0, called.stderr
            at_once(play_series, [(f.id, f.slot.table) for f in fixtures])
        for match, plays in SERIES.items():
            want = [
                (1, 0, "regulation")
                if w == "h"
                else (0, 1, "regulation")
                if w == "a"
                else (1 if w == "H" else 0, 0 if w == "H" else 1, "sudden_death")
                for w in plays
            ]
            assert games(match) == want, match
        # the bracket by hand: QF1 a1–b2 a1; QF2 a3–b3 b3; QF3 a2–b4 a2; QF4 a4–b1 a4;
        # SF1 a1–b3 a1; SF2 a2–a4 a4; F a1–a4 a1 (4:3, game 7 by sudden death); 3P b3–a2 a2
        t = open_tournament(file)[0]
        assert (t.fixture("F").home, t.fixture("F").away) == (a[0], a[3])
        assert (t.fixture("3P").home, t.fixture("3P").away) == (b[2], a[1])
        places = [n for _, n in t.placings()]
        assert places[:8] == [a[0], a[3], a[1], b[2], a[2], b[0], b[3], b[1]]
        assert places[8:16] == [c[0], c[1], c[2], d[0], c[3], d[1], d[2], d[3]]
        assert sorted(places) == sorted(t.spec.names)
        assert served.board()["pending"] == []
        # the commands as typed
        shown = ok("tournament", "standings", "A", "-f", "day.yaml")
        assert "group A (final group, 4 results carried from the basic groups)" in shown
        bracket = ok("tournament", "bracket", "-f", "day.yaml")
        assert "best of 7: 4:3 in games (1:0, 0:1, 1:0, 0:1, 1:0, 0:1, 1:0 (SD))" in bracket, (
            bracket
        )
        assert "best of 5: 1:3 in games (0:1, 0:1, 1:0, 0:1)" in bracket, bracket
        assert f"    1. {a[0]}" in bracket and f"    4. {b[2]}" in bracket
        ok("tournament", "export", "-f", "day.yaml")
        body = (tmp_path / "day-export" / "final.csv").read_text(encoding="utf-8")
        assert len([line for line in body.splitlines() if line[:1].isdigit()]) == 32
    finally:
        if served is not None:
            desk_log = served.stop()[1]
            print("desk:", desk_log[-3000:])
        for n, box in boxes.items():
            box.kill()
            box.wait(10)
            logs[n].close()
            print(n, (folder / f"box{n}.log").read_text()[-1500:])
        shutil.rmtree(folder, ignore_errors=True)
    # the desk's log tells each series' winner once (not again at every later result)
    for match, who in (("QF1", a[0]), ("F", a[0]), ("3P", a[1])):
        assert len(re.findall(rf"desk: table \d+: {match} {who} wins", desk_log)) == 1, match
    assert "Traceback" not in desk_log
