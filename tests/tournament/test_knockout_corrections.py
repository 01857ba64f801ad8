"""Corrections after the bracket moved: a group result corrected after the
knock-out was drawn re-seeds it while the matches it changes have not begun, and is refused,
naming what was played, after that; a knock-out result corrected moves its winner on while
the next match has not begun (played, or under way at its table as the desk saw it), and is
refused, naming that match, after. The command line's and the board's paths are the hall's
tests (tests/hall/test_hall_desks.py); these are the clerk's rule itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from cups import groups_played

from timekeeper.tournament import clerk
from timekeeper.tournament.state import TournamentError


def at(t, match: str) -> tuple[int, str]:
    m = t.fixture(match)
    return m.slot.round, m.slot.table


def test_a_group_correction_reseeds_the_knockout_until_a_match_it_changes_is_played(
    tmp_path: Path,
) -> None:
    t, ledger = groups_played(tmp_path)
    # Emil – Cyril was 0:1; corrected to 3:0 Emil is first of group A
    ledger.record(t, clerk.result(t, *at(t, "A.2"), "3:0", reason="score sheet"))
    assert t.fixture("SF1").sides == "Emil – Běla" and t.fixture("SF2").sides == "Adam – Cyril"
    ledger.record(t, clerk.result(t, *at(t, "SF1"), "1:0"))
    with pytest.raises(TournamentError) as refused:
        clerk.result(t, *at(t, "A.2"), "0:1", reason="the sheet was right")
    assert "SF1 (Emil – Běla, already 1:0)" in str(refused.value)
    assert "replay 4 1" in str(refused.value)  # what to do
    # a group correction that changes no knock-out side is taken (Emil – Fiona 5:0)
    ledger.record(t, clerk.result(t, *at(t, "A.1"), "5:0", reason="goals"))
    assert t.fixture("SF1").sides == "Emil – Běla"


def test_a_knockout_correction_moves_the_winner_on_until_the_next_match_has_begun(
    tmp_path: Path,
) -> None:
    t, ledger = groups_played(tmp_path)
    ledger.record(t, clerk.result(t, *at(t, "SF1"), "1:0"))
    ledger.record(t, clerk.result(t, *at(t, "SF2"), "1:0"))
    assert t.fixture("F").sides == "Cyril – Adam" and t.fixture("3P").sides == "Běla – Emil"
    ledger.record(t, clerk.result(t, *at(t, "SF1"), "0:2", reason="a goal was Běla's"))
    assert t.fixture("F").sides == "Běla – Adam" and t.fixture("3P").sides == "Cyril – Emil"
    under_way = {"F": "under way at its table (called in round 5)"}
    with pytest.raises(TournamentError) as refused:  # the final begun at its table
        clerk.result(t, *at(t, "SF1"), "1:0", reason="no, Cyril's", begun=under_way)
    said = str(refused.value)
    assert "F (Běla – Adam, under way at its table" in said and "hall reset --table 1" in said
    ledger.record(t, clerk.result(t, *at(t, "F"), "0:1"))
    with pytest.raises(TournamentError) as refused:  # the final played
        clerk.result(t, *at(t, "SF1"), "1:0", reason="no, Cyril's")
    assert "F (Běla – Adam, already 0:1)" in str(refused.value)
    with pytest.raises(TournamentError, match="3P"):  # a replay is held to the same rule
        clerk.replay(t, *at(t, "SF1"), "referee", begun={"3P": "under way at its table"})
