"""The box's series journal (`series.json`) along the operator's path, each box a process of
its own: a damaged file is refused at start, set aside as `.bad` and named, never written
over; a restart that names no `--best-of` goes on with the series under way and says so, one
that names another refuses, naming the command that begins a new one (`--fresh`). And a box
killed in the deciding game of a desk's series, restarted by the same command, keeps the game
it counted when the desk's retained pairing for that game comes again."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cups import SERIES_NIGHT as CUP
from deskhall import Served
from helpers import HALL_WAIT, wait_for
from test_series_paths import QUICK, begin, box, counted, end  # noqa: F401  (the box's fixture)

from timekeeper.hall.practice import box_command
from timekeeper.tournament.ledger import open_tournament

pytestmark = pytest.mark.slow


def series(best_of: int, game: int, home: int, away: int, winner=None, match="") -> dict:
    return {
        "best_of": best_of,
        "game": game,
        "home_wins": home,
        "away_wins": away,
        "winner": winner,
        "match": match,
    }


GAME = {"number": 1, "home": 2, "away": 1, "decided": "regulation"}


def journal(best_of: int = 3, earlier=(0, 0), games=None, **top) -> bytes:
    """A series file as the box writes it (game 1 won 2:1 by default), with `top` changed."""
    games = (
        [{"number": 1, "home": 2, "away": 1, "decided": "regulation"}] if games is None else games
    )
    body = {
        "format": 1,
        "id": "local",
        "match": "",
        "series": {"best_of": best_of, "earlier": list(earlier), "games": games},
        "open": False,
        **top,
    }
    return json.dumps(body).encode()


DAMAGED = {
    "truncated": journal()[:57],
    "wrong types": journal(best_of="3"),  # type: ignore[arg-type]
    "5:0 in a best of 3": journal(earlier=(5, 0), games=[]),
    "game -1": journal(games=[{**GAME, "number": -1}]),
    "binary": bytes(range(256)),
    "a float game": journal(games=[{**GAME, "number": 1.5}]),
    "game 3 at 0:0": journal(games=[{**GAME, "number": 3}]),
    "a float score": journal(games=[{**GAME, "home": 2.0}]),
}


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_series_file_is_set_aside_named_and_never_written_over(
    box: dict, case: str
) -> None:
    state = box["folder"] / "state"
    state.mkdir()
    (state / "series.json").write_bytes(DAMAGED[case])
    box["run"]("--best-of", "3")
    kept = list(state.glob("series.json.*.bad"))
    assert len(kept) == 1 and kept[0].read_bytes() == DAMAGED[case], box["log"]()
    said = [line for line in box["log"]().splitlines() if "not resumed" in line]
    assert said and str(kept[0]) in said[0], box["log"]()
    assert counted(box["ctl"]("status")["match_series"]) == series(
        3, 1, 0, 0
    )  # (--best-of: a new one)
    assert json.loads((state / "series.json").read_text())["series"]["games"] == []


def test_a_restart_without_best_of_goes_on_with_the_series_and_another_best_of_refuses(
    box: dict,
) -> None:
    proc = box["run"]("--best-of", "3")
    begin(box)
    end(box, "home", sudden=False)
    assert counted(box["ctl"]("status")["match_series"]) == series(3, 2, 1, 0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    state = box["folder"] / "state"
    journaled = (state / "series.json").read_bytes()
    usual = ["--profile", "quick", "--no-gpio", "--no-keyboard", "--state-dir", str(state)]
    other = box["tk"]("run", *usual, "--control", str(box["sock"]), "--best-of", "5")
    assert other.returncode == 2, other.stderr
    assert "--best-of 5 --fresh" in other.stderr and "game 2, 1:0" in other.stderr
    assert (state / "series.json").read_bytes() == journaled  # not a byte lost
    proc = box["run"]()  # no --best-of: the series under way goes on, said so
    assert counted(box["ctl"]("status")["match_series"]) == series(3, 2, 1, 0)
    assert "series goes on as journaled: best of 3, game 2, 1:0" in box["log"]()
    begin(box)
    done = end(box, "home", sudden=False)  # (decided in regulation: the box ends it)
    assert counted(done["match_series"]) == series(3, 2, 2, 0, "home")
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    box["run"]("--best-of", "5", "--fresh")  # the command the refusal named
    assert counted(box["ctl"]("status")["match_series"]) == series(5, 1, 0, 0)


# ------------------------------------------------------------- the desk's series, a box killed


def test_a_box_killed_in_the_deciding_game_keeps_the_game_it_counted_over_the_desks_pairing(
    broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tk-sk-", dir="/tmp"))  # (short: AF_UNIX path)
    (folder / "profiles").mkdir()
    (folder / "profiles" / "quick.yaml").write_text(QUICK, encoding="utf-8")
    env = {
        **os.environ,
        "SDL_AUDIODRIVER": "dummy",
        "TIMEKEEPER_PROFILES_PATH": str(folder / "profiles"),
        "TIMEKEEPER_SOUNDS_PATH": "",
    }
    sock, log = folder / "c.sock", folder / "box.log"
    # the box's command, the practice hall's (as it prints it to restart it)
    command = box_command(broker["url"], "1", folder / "state", "--profile", "quick", control=sock)
    boxes: list[subprocess.Popen] = []

    def run() -> subprocess.Popen:
        with open(log, "a") as out:
            boxes.append(
                subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
            )
        wait_for(lambda: boxes[-1].poll() is None and ctl("status"), "the box to answer", 30)
        return boxes[-1]

    def tk(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "timekeeper", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def ctl(*args: str) -> dict:
        done = tk("ctl", *args, "--json", "--control", str(sock))
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)

    def state(wanted: str) -> dict:
        return wait_for(lambda: (s := ctl("status"))["state"] == wanted and s, wanted, 30)

    def games() -> int:
        return len(open_tournament(file, drawn=True)[0].series_of("F").games)

    def won_in_regulation(winner: str) -> dict:
        ctl("pause")
        ctl("goal", winner)
        ctl("set", "0:00")
        ctl("resume")
        return state("finished")

    file = tmp_path / "cup.yaml"
    file.write_text(CUP, encoding="utf-8")
    monkeypatch.setenv("TIMEKEEPER_PROFILES_PATH", str(folder / "profiles"))  # (this test's loads)
    served = None
    try:
        assert tk("tournament", "draw", "-f", str(file), "--seed", "1").returncode == 0
        proc = run()
        served = Served(broker["url"], file, tmp_path / "desk")
        called = tk("hall", "round", "1", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        wait_for(lambda: ctl("status").get("match_series"), "the series on the box", HALL_WAIT)
        for number, winner in enumerate(("home", "away"), 1):
            assert ctl("start")["state"] == "prestart"
            state("running")
            won_in_regulation(winner)
            wait_for(lambda n=number: games() == n, f"game {number} in the ledger", HALL_WAIT)
        wait_for(
            lambda: counted(ctl("status")["match_series"]) == series(3, 3, 1, 1, match="F"),
            "the desk's call of game 3 on the box",
            HALL_WAIT,
        )
        assert ctl("start")["state"] == "prestart"
        state("running")
        ctl("pause")
        wait_for(
            lambda: json.loads((folder / "state" / "match.json").read_text())["state"] == "stopped",
            "game 3 journaled",
        )
        proc.send_signal(signal.SIGKILL)  # kill -9 in game 3
        proc.wait(10)
        run()  # the same command
        assert counted(ctl("status")["match_series"]) == series(3, 3, 1, 1, match="F")
        ctl("goal", "home")
        ctl("set", "0:00")
        ctl("resume")
        finished = state("finished")
        assert counted(finished["match_series"]) == series(3, 3, 2, 1, "home", "F")
        wait_for(lambda: games() == 3, "game 3 in the ledger", HALL_WAIT)
        # the desk's pairing for game 3 (retained: delivered again on the restart) is older
        # than what the box counted; once it has come, the box still says what it counted
        wait_for(
            lambda: re.search(r"desk says game 3|desk's word for game 3", log.read_text()),
            "the desk's retained pairing for game 3 at the box",
            HALL_WAIT,
        )
        shown = tk("ctl", "status", "--control", str(sock)).stdout
        assert "next: game 3" not in shown and "wins the series 2:1" in shown, shown
        assert counted(ctl("status")["match_series"]) == series(3, 3, 2, 1, "home", "F")
        kept = json.loads((folder / "state" / "series.json").read_text())["series"]
        assert [g["number"] for g in kept["games"]] == [1, 2, 3], kept  # game 3: counted
        refused = tk("ctl", "start", "--control", str(sock))
        assert refused.returncode != 0 and "the series is over" in refused.stderr + refused.stdout
    finally:
        if served is not None:
            served.stop()
        for proc in boxes:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        print(log.read_text()[-3000:] if log.exists() else "")
        shutil.rmtree(folder, ignore_errors=True)
