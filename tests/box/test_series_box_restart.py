"""A box started again between the games of a local series (`run --best-of`), in one
process: the series' file keeps the profile its games are played under and its players, a
start that names no --profile (the service's, its config naming another) goes on under the
series' own, one that names another is refused naming both commands, an older file without
the profile takes its last game's from the match journal, and the players come back from
the file when the match journal holds none. (The user's path, processes killed and
restarted: tests/paths/test_series_service_restart.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timekeeper.box.journal import Journal
from timekeeper.box.resume import name_sides, series_going_on, series_profile
from timekeeper.box.series import FILE, LOCAL, SeriesPlay, journaled
from timekeeper.rules import profile
from timekeeper.rules.engine import Engine, Snapshot
from timekeeper.rules.series import Game, Series
from timekeeper.rules.yamldoc import ConfigError

NOVAK = {"home": "Jan Novák", "away": "Svoboda"}
AFTER_GAME_1 = Series(3, (Game(1, 0, 1, "regulation"),))


def journal_series(folder: Path, key: str = "ithf-playoff", series=AFTER_GAME_1) -> SeriesPlay:
    """The file `run --best-of 3 --profile KEY` leaves after game 1, its players named."""
    play = SeriesPlay(folder, lambda command: None)
    play.begin(series, LOCAL, profile=key)
    play.names = dict(NOVAK)
    play._save()
    return play


def test_the_series_file_keeps_the_profile_its_games_are_played_under(tmp_path: Path) -> None:
    journal_series(tmp_path)
    assert json.loads((tmp_path / FILE).read_text())["profile"] == "ithf-playoff"
    again = SeriesPlay(tmp_path, lambda command: None)
    assert again.profile == "ithf-playoff" and again.names == NOVAK


def test_a_start_naming_no_profile_goes_on_under_the_series_profile(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal_series(tmp_path)
    kept = series_going_on(tmp_path, None, fresh=False, in_hall=False)
    caplog.set_level("INFO")
    chosen = series_profile(kept, tmp_path, profile.load("ithf"), None)  # (the config's)
    assert chosen.key == "ithf-playoff"
    assert "played under profile ithf-playoff, not ithf: going on with it" in caplog.text
    same = series_going_on(tmp_path, 3, fresh=False, in_hall=False)  # (the same --best-of)
    assert series_profile(same, tmp_path, profile.load("ithf"), None).key == "ithf-playoff"


def test_a_start_naming_another_profile_is_refused_naming_both_commands(tmp_path: Path) -> None:
    journal_series(tmp_path)
    kept = series_going_on(tmp_path, None, fresh=False, in_hall=False)
    with pytest.raises(ConfigError) as refused:
        series_profile(kept, tmp_path, profile.load("ithf"), "ithf")
    said = str(refused.value)
    assert "game 2, 0:1" in said and "--profile" in said
    assert "`timekeeper run --best-of 3 --profile ithf-playoff` goes on with it" in said
    assert "`timekeeper run --best-of 3 --profile ithf --fresh` begins a new one" in said
    # the same profile named, --fresh, a hall, a won series: no refusal
    assert series_profile(kept, tmp_path, profile.load("ithf-playoff"), "ithf-playoff")
    assert series_going_on(tmp_path, None, fresh=True, in_hall=False) is None
    assert series_going_on(tmp_path, None, fresh=False, in_hall=True) is None
    won = Series(3, (Game(1, 0, 1), Game(2, 0, 1)))
    journal_series(tmp_path, series=won)
    assert series_going_on(tmp_path, None, fresh=False, in_hall=False) is None  # single matches
    kept = series_going_on(tmp_path, 3, fresh=False, in_hall=False)  # shown won: RESET, next
    assert series_profile(kept, tmp_path, profile.load("ithf"), "ithf").key == "ithf"


def test_a_desks_series_is_no_local_series_to_go_on_with(tmp_path: Path) -> None:
    play = SeriesPlay(tmp_path, lambda command: None)
    play.begin(Series.called(3, 2, 1, 0), "F-c1", "F")  # (its pairing names profile and players)
    assert series_going_on(tmp_path, None, fresh=False, in_hall=False) is None


def test_an_older_file_without_the_profile_loads_and_takes_its_last_games_profile(
    tmp_path: Path,
) -> None:
    journal_series(tmp_path)
    body = json.loads((tmp_path / FILE).read_text())
    del body["profile"]  # (as a box wrote it before it kept the profile)
    (tmp_path / FILE).write_text(json.dumps(body))
    kept = series_going_on(tmp_path, None, fresh=False, in_hall=False)
    assert kept is not None and kept.profile == "" and kept.series == AFTER_GAME_1
    ithf = profile.load("ithf")
    assert series_profile(kept, tmp_path, ithf, None) is ithf  # (no match journal: the command's)
    engine = Engine(profile.load("ithf-playoff"))
    Journal(tmp_path, engine).save(0.0)  # game 1's match journal
    assert series_profile(kept, tmp_path, ithf, None).key == "ithf-playoff"
    assert series_profile(kept, tmp_path, ithf, "ithf") is ithf  # (named: as the operator says)
    play = SeriesPlay(tmp_path, lambda command: None)
    play.played_under("ithf-playoff")  # (the box going on writes it)
    assert journaled(tmp_path).profile == "ithf-playoff"  # type: ignore[union-attr]


def test_the_players_come_back_from_the_series_file_when_the_match_journal_has_none(
    tmp_path: Path,
) -> None:
    journal_series(tmp_path)
    kept = series_going_on(tmp_path, None, fresh=False, in_hall=False)
    engine = Engine(profile.load("ithf-playoff"))
    name_sides(engine, kept, ("", ""))
    assert engine.names == NOVAK
    engine.restore(Snapshot("ithf-playoff", "idle", names={"home": "Dvořák", "away": "Eliáš"}))
    name_sides(engine, kept, ("", ""))  # the match journal's own players stand
    assert engine.names == {"home": "Dvořák", "away": "Eliáš"}
    other = Engine(profile.load("ithf-playoff"))
    name_sides(other, None, ("Home", "Away"))  # no series: the config's
    assert other.names == {"home": "Home", "away": "Away"}
