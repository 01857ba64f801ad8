"""A box's series restarted between games along the path a club's box takes: `timekeeper run
--best-of 3 --profile …` started by its operator, game 1 played through `timekeeper ctl`,
the box killed (kill -9), then started again by the command the service uses (no
--best-of, no --profile; its config names `profile: ithf`, which ends a drawn game). The
series goes on under its own profile with its players, a drawn game goes to its sudden death
(ITHF 4.8), and the series ends won; a start naming another --profile is refused, naming both
commands, and loses nothing. And where the match journal holds no players (set aside), the
series' file brings them back."""

from __future__ import annotations

import json
import signal

import pytest
from helpers import QUICK

pytestmark = pytest.mark.slow

NOVAK = {"home": "Jan Novák", "away": "Svoboda"}


def boxed(table_box):
    """A box's folder with the series' profile (`quick`: a minute, then sudden death) and
    the service's config, naming `profile: ithf`."""
    box = table_box({"quick": QUICK}, "tk-sv-")
    config = box.folder / "config.yaml"
    config.write_text("profile: ithf\n", encoding="utf-8")
    return box, str(config)


def shown(box) -> str:
    """`ctl status` as a person reads it."""
    done = box.tk("ctl", "status", "--control", str(box.sock))
    assert done.returncode == 0, done.stderr
    return done.stdout


def game_1(box, config: str):
    """The operator's series begun and its first game won by the away side; the box then
    killed (kill -9), between games."""
    proc = box.run("--config", config, "--best-of", "3", "--profile", "quick")
    box.ctl("names", *NOVAK.values())
    box.begin()
    assert box.play_out("away", sudden=False)["match_series"]["away_wins"] == 1
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def test_the_services_restart_goes_on_with_the_series_profile_players_and_sudden_death(
    table_box,
) -> None:
    box, config = boxed(table_box)
    game_1(box, config)
    state = box.folder / "state"
    journaled = (state / "series.json").read_bytes()
    where = ("--no-gpio", "--no-keyboard", "--state-dir", str(state), "--control", str(box.sock))
    other = box.tk("run", "--config", config, "--profile", "ithf", *where)
    assert other.returncode == 2, other.stderr
    assert "`timekeeper run --best-of 3 --profile quick` goes on with it" in other.stderr
    assert "`timekeeper run --best-of 3 --profile ithf --fresh` begins a new one" in other.stderr
    assert (state / "series.json").read_bytes() == journaled  # not a byte lost
    box.run("--config", config)  # the service's command
    again = box.status()
    assert again["profile"] == "quick" and again["names"] == NOVAK
    assert "series goes on as journaled: best of 3, game 2, 0:1, profile quick" in box.log()
    assert "game 2 · Svoboda leads 1:0" in shown(box)
    box.begin()
    drawn = box.play_out("home", sudden=True)  # (play_out: a draw waits for NEXT, overtime)
    assert drawn["decided"] == "sudden_death" and drawn["names"] == NOVAK
    assert (drawn["match_series"]["home_wins"], drawn["match_series"]["away_wins"]) == (1, 1)
    box.begin()
    won = box.play_out("away", sudden=False)
    assert won["match_series"]["winner"] == "away" and won["profile"] == "quick"
    assert "Svoboda wins the series 2:1" in shown(box)
    refused = box.tk("ctl", "start", "--control", str(box.sock))
    assert refused.returncode != 0 and "the series is over" in refused.stderr + refused.stdout
    assert json.loads((state / "series.json").read_text())["profile"] == "quick"


def test_the_series_file_brings_its_players_back_when_the_match_journal_has_none(
    table_box,
) -> None:
    box, config = boxed(table_box)
    game_1(box, config)
    (box.folder / "state" / "match.json").write_text("{", encoding="utf-8")  # (cut off)
    box.run("--config", config, "--best-of", "3", "--profile", "quick")  # the same command
    again = box.status()
    assert again["names"] == NOVAK, box.log()
    assert "match.json not resumed" in box.log()  # (the journal set aside, said)
    assert "game 2 · Svoboda leads 1:0" in shown(box)
