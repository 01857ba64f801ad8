"""The one series model (rules/series.py): first to ⌈N/2⌉ for an odd N, a single match a
series of one, every state checked whole when made, the desk's call of a game by its wins
before it, and the games a holder knows only by their count kept as `earlier` wins."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timekeeper.rules.series import Game, Series, SeriesError, needed


def won(number: int, side: str, decided: str = "regulation") -> Game:
    return Game(number, 3 if side == "home" else 1, 1 if side == "home" else 3, decided)


@pytest.mark.parametrize("best_of, wins", [(1, 1), (3, 2), (5, 3), (7, 4), (9, 5)])
def test_first_to_the_half_rounded_up(best_of: int, wins: int) -> None:
    assert needed(best_of) == wins


@pytest.mark.parametrize("best_of", [0, 2, 4, 11, -1, 3.0, True])
def test_an_even_or_out_of_range_length_is_no_series(best_of) -> None:
    with pytest.raises(SeriesError, match="best of 1, 3, 5, 7 or 9"):
        Series(best_of)


def test_a_single_match_is_a_series_of_one() -> None:
    s = Series(1)
    assert s.next_game == 1 and s.on_table == 1 and not s.decided
    s = s.add(won(1, "away", "shootout"))
    assert s.winner == "away" and s.next_game is None and s.on_table == 1
    assert s.text() == "0:1 in games (1:3 (SO))"


def test_games_are_counted_and_the_decided_series_takes_no_more() -> None:
    s = Series(3).add(won(1, "home")).add(won(2, "away", "sudden_death"))
    assert (s.home_wins, s.away_wins, s.next_game, s.played) == (1, 1, 3, 2)
    s = s.add(won(3, "away"))
    assert s.winner == "away" and s.on_table == 3 and s.state_text("A", "B") == "B wins 2:1"
    with pytest.raises(SeriesError, match="games 1–3"):
        s.add(won(4, "home"))
    with pytest.raises(SeriesError, match="decided"):
        Series(5, s.games).add(won(4, "away")).add(won(5, "home"))
    assert s.without_last() == Series(3).add(won(1, "home")).add(won(2, "away", "sudden_death"))


def test_the_desks_call_is_the_wins_before_its_game() -> None:
    s = Series.called(7, 3, 2, 0)
    assert (s.played, s.home_wins, s.away_wins, s.on_table) == (2, 2, 0, 3)
    s = s.add(won(3, "home"))
    assert s.games == (won(3, "home"),) and s.state_text("N", "S") == "N leads 3:0"
    with pytest.raises(SeriesError, match="known here by its winner only"):
        s.add(won(1, "away"))  # (a game before the call: the desk's to correct)
    for wrong in [(3, 3, 0, 0), (3, 1, 1, 1), (7, 5, 2, 1)]:
        with pytest.raises(SeriesError, match="cannot be the next"):
            Series.called(*wrong)
    with pytest.raises(SeriesError, match="won"):
        Series.called(3, 3, 2, 0)


@pytest.mark.parametrize(
    "earlier, games, said",
    [
        ((5, 0), (), "cannot stand at"),  # 5:0 in a best of three
        ((2, 2), (), "cannot stand at"),
        ((-1, 0), (), "cannot stand at"),
        ((0, 0), (won(3, "home"),), "game 3 cannot come after game 0"),
        ((0, 0), (won(1, "home"), won(1, "away")), "cannot come after"),
        ((0, 0), (won(1, "home"), won(2, "home"), won(3, "away")), "decided in game 2"),
        ((1, 0), (Game(2, 2, 2, "overtime"),), "has a winner"),
        ((2, 0), (won(3, "away"),), "decided before game 3"),
    ],
)
def test_a_state_that_cannot_be_is_refused_whole(earlier, games, said: str) -> None:
    with pytest.raises(SeriesError, match=said):
        Series(3, games, earlier)


@pytest.mark.parametrize(
    "fields, said",
    [
        ((0, 1, 0), "number"),
        ((1.5, 1, 0), "number"),
        ((1, -1, 0), "whole goals"),
        ((1, 1.0, 0), "whole goals"),
        ((1, 1, 0, "penalties"), "decided is one of"),
        ((1, 1, 0, "regulation", True), "only a forfeit"),
    ],
)
def test_a_game_that_cannot_be_is_refused(fields: tuple, said: str) -> None:
    with pytest.raises(SeriesError, match=said):
        Game(*fields)


@given(st.sampled_from([3, 5, 7, 9]), st.lists(st.booleans(), max_size=12), st.integers(0, 4))
def test_a_called_series_counts_as_the_same_series_played_whole(
    best_of: int, home_won: list[bool], cut: int
) -> None:
    """Games known by their count (a box told the series by the desk) and games known
    whole say the same wins, the same game next and the same winner."""
    whole = Series(best_of)
    for home in home_won:
        if whole.decided:
            break
        whole = whole.add(won(whole.played + 1, "home" if home else "away"))
    cut = min(cut, len(whole.games))
    head = Series(best_of, whole.games[:cut])
    if head.decided:
        return
    told = Series.called(best_of, head.played + 1, head.home_wins, head.away_wins)
    for g in whole.games[cut:]:
        told = told.add(g)
    assert (told.home_wins, told.away_wins, told.next_game, told.winner, told.on_table) == (
        whole.home_wins,
        whole.away_wins,
        whole.next_game,
        whole.winner,
        whole.on_table,
    )
