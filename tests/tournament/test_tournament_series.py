"""Play-off series (best of N, tournament/series.py): a series ends exactly when one side has
⌈N/2⌉ wins and no game is scheduled after that; its games are ledger entries checked at
load; the file's `best_of:` is checked at load with file:line and the field; the desk
re-publishes a series' pairing for its next game and lets the bracket move on once decided."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest
from cups import PLAYOFF, Client, drawn
from hypothesis import given, settings
from hypothesis import strategies as st

from timekeeper.hall.bus.messages import BadMessage
from timekeeper.hall.bus.pairing import Pairing, parse_pairing
from timekeeper.hall.bus.result import MatchResult, from_status, parse_result
from timekeeper.hall.desk.director import Director, _series_line, _source
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import clerk, spec
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.series import Game, Series, SeriesError, needed
from timekeeper.tournament.state import Tournament, TournamentError


def game(t: Tournament, match: str, score: str, decided: str = "regulation", **kw) -> None:
    m = t.named(match)
    event = clerk.result(t, m.slot.round, m.slot.table, score, decided, **kw)
    t.apply(event)


# ------------------------------------------------------------------ the series alone


@given(st.sampled_from([3, 5, 7, 9]), st.lists(st.booleans(), min_size=1, max_size=20))
@settings(max_examples=300)
def test_a_series_ends_exactly_when_one_side_has_its_wins(best_of: int, home_won: list[bool]):
    s = Series(best_of)
    for number, home in enumerate(home_won, 1):
        g = Game(number, 3 if home else 1, 1 if home else 3, "regulation")
        if s.decided:
            assert s.next_game is None
            with pytest.raises(SeriesError):
                s.add(g)
            break
        assert s.next_game == number and number <= best_of
        s = s.add(g)
        reached = max(s.home_wins, s.away_wins) >= needed(best_of)
        assert s.decided == reached
        assert s.home_wins < needed(best_of) + 1 and s.away_wins < needed(best_of) + 1
    assert len(s.games) <= best_of
    if s.decided:
        assert (s.home_wins if s.winner == "home" else s.away_wins) == needed(best_of)


@given(
    st.sampled_from([3, 5, 7]),
    st.lists(st.sampled_from(["home", "away", "ot-home", "ot-away", "wo-home", "wo-away"])),
)
@settings(max_examples=60, deadline=None)
def test_the_tournament_schedules_no_game_after_a_series_is_decided(
    tmp_path_factory, best_of: int, outcomes: list[str]
) -> None:
    """Games typed as the desk types them: each is taken while the series is open, and
    refused once a side has its wins or walked over; the final waits until it is decided."""
    folder = tmp_path_factory.mktemp("s")
    t = open_tournament(drawn(folder, f"{{SF: {best_of}}}"))[0]
    for outcome in outcomes:
        m = t.named("SF1")
        before = m.series
        assert before is not None
        kind, _, side = outcome.rpartition("-") if "-" in outcome else ("", "", outcome)
        score = "3:1" if side == "home" else "1:3"
        args: dict = {}
        decided = "regulation"
        if kind == "ot":
            score, decided = ("4:3" if side == "home" else "3:4"), "sudden_death"
        if kind == "wo":
            score, decided, args = (
                None,
                "forfeit",
                {"at_fault": "away" if side == "home" else "home"},
            )
        if before.decided:
            with pytest.raises(TournamentError, match="is decided"):
                game(t, "SF1", score or "1:0", decided, **args)
            continue
        game(t, "SF1", score, decided, **args)
        after = t.named("SF1").series
        assert after is not None and len(after.games) == len(before.games) + 1
        assert after.decided == (
            max(after.home_wins, after.away_wins) == needed(best_of) or kind == "wo"
        )
        assert (t.named("SF1").result is not None) == after.decided
        final = t.named("F")
        assert (final.home is not None) == after.decided  # the bracket moves on once decided
    s = t.named("SF1").series
    assert s is not None and len(s.games) <= best_of


# ------------------------------------------------------------------ file and ledger


@pytest.mark.parametrize(
    ("best_of", "expected"),
    [
        ("4", r"po.yaml:10:14: stages.knockout.best_of: best of 1 \(one match\) or of 3, 5, 7"),
        ("{F: 11}", r"po.yaml:10:18: stages.knockout.best_of.F: best of 1"),
        ("{QF: 3, XY: 5}", r"po.yaml:10:26: stages.knockout.best_of.XY: a round is default"),
        ("seven", r"po.yaml:10:14: stages.knockout.best_of: best of 1"),
    ],
)
def test_a_bad_best_of_is_refused_with_its_line_and_field(
    tmp_path: Path, best_of: str, expected: str
) -> None:
    file = tmp_path / "po.yaml"
    file.write_text(PLAYOFF + f"    best_of: {best_of}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=expected):
        spec.load(file)


def test_a_game_entry_the_series_cannot_take_is_refused_at_load_with_its_line(
    tmp_path: Path,
) -> None:
    file = drawn(tmp_path)
    t, ledger = open_tournament(file)
    for _ in range(2):
        m = t.named("SF1")
        ledger.record(t, clerk.result(t, m.slot.round, m.slot.table, "2:0"))
    lines = ledger.path.read_text(encoding="utf-8").splitlines()
    third = json.loads(lines[-1]) | {"n": 4, "game": 3}  # a game after the series was won
    with ledger.path.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(third) + "\n")
    with pytest.raises(
        ConfigError, match=r"po.journal.jsonl:4:1: game: SF1: the series is decided"
    ):
        open_tournament(file)
    lines[-1] = json.dumps(json.loads(lines[-1]) | {"game": "2"})
    ledger.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"po.journal.jsonl:3:1: game: must be a whole number .*\"2\""
    ):
        open_tournament(file)
    lines[-1] = json.dumps({k: v for k, v in json.loads(lines[-1]).items() if k != "game"})
    ledger.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"po.journal.jsonl:3:1: game: .*names its game"):
        open_tournament(file)


def test_a_correction_of_a_game_needs_a_reason_and_may_reopen_the_series(tmp_path: Path) -> None:
    t = open_tournament(drawn(tmp_path))[0]
    game(t, "SF1", "2:0")
    game(t, "SF1", "2:1")
    assert t.named("F").home == "Černý"
    with pytest.raises(TournamentError, match="a correction needs --reason"):
        game(t, "SF1", "0:1", game=2)
    game(t, "SF1", "0:1", game=2, reason="goals swapped on the sheet")
    m = t.named("SF1")
    assert m.series is not None and m.result is None and m.series.next_game == 3
    assert m.series.games_text() == "2:0, 0:1"
    assert t.named("F").home is None
    with pytest.raises(TournamentError, match="games 1–3"):
        game(t, "SF1", "1:0", game=5)


def test_a_forfeit_is_a_walkover_of_the_series_unless_one_game(tmp_path: Path) -> None:
    t = open_tournament(drawn(tmp_path))[0]
    game(t, "SF2", None, "forfeit", at_fault="home", one_game=True)  # type: ignore[arg-type]
    s = t.named("SF2").series
    assert s is not None and (s.home_wins, s.away_wins, s.decided) == (0, 1, False)
    game(t, "SF2", None, "forfeit", at_fault="away")  # type: ignore[arg-type]
    m = t.named("SF2")
    assert (
        m.series is not None
        and m.series.winner == "home"
        and m.series.score_text() == ("W.O. after 0:1")
    )
    assert m.result is not None and m.result.winner == "home"
    assert t.named("F").away == "Novák"


def test_a_correction_that_changes_who_plays_a_series_begun_is_refused(tmp_path: Path) -> None:
    t = open_tournament(drawn(tmp_path, "{F: 7}"))[0]
    game(t, "SF1", "2:1")
    game(t, "SF2", "1:0")
    game(t, "F", "3:1")  # (the series has begun: Černý – Novák, 1:0 in games)
    with pytest.raises(TournamentError, match=r"already 1:0 in games \(3:1\)\): order a replay"):
        game(t, "SF1", "1:2", reason="swapped")
    t.apply(clerk.replay(t, 2, "1", "the referee: F again"))  # (its only game set aside)
    assert t.named("F").series == Series(7)
    game(t, "SF1", "1:2", reason="swapped")
    assert t.named("F").home == "Dvořák"


# ------------------------------------------------------------------ the desk


def test_a_series_pairing_carries_its_game_and_wins_and_each_game_is_its_own_source() -> None:
    p = Pairing("F.2.x", 2, "F", "final", "Novák", "Černý", "ithf-playoff", 1.0, True, 7, 3, 2, 0)
    assert parse_pairing(p.to_json()) == p
    assert _series_line(p) == "F · game 3 · Novák leads 2:0"
    body = json.loads(p.to_json())
    for bad in ({"best_of": 4}, {"game": 8}, {"home_wins": 4}, {"away_wins": -1}, {"game": True}):
        with pytest.raises(BadMessage):
            parse_pairing(json.dumps(body | bad).encode())
    with pytest.raises(BadMessage, match="all of best_of"):
        parse_pairing(json.dumps({k: v for k, v in body.items() if k != "game"}).encode())
    made = from_status(p, "1", {"score": {"home": 2, "away": 1}}, 5.0)
    assert made.game == 3  # (the game its pairing plays)
    assert parse_result(made.to_json()) == made
    assert _source(made) == "F.2.x.g3"  # (the ledger's source: each game applied once)
    assert _source(dataclasses.replace(made, game=None)) == "F.2.x.g3"  # (its pairing's)
    single = Pairing("A.1.x", 1, "A.1", "group A", "a", "b", "ithf", 1.0)
    assert _source(from_status(single, "1", {}, 5.0)) == "A.1.x"


def test_the_desk_calls_the_next_game_of_a_series_until_it_is_decided(tmp_path: Path) -> None:
    from boardhall import BoardDesk

    file = drawn(tmp_path, "{SF: 3}")
    desk = BoardDesk()
    desk.client = Client()
    director = Director(desk, file)
    director.call_round(1, wait=0.0)
    first = parse_pairing(desk.client.sent[0][1])
    assert (first.match, first.best_of, first.game, first.home_wins, first.away_wins) == (
        "SF1",
        3,
        1,
        0,
        0,
    )

    def home(p: Pairing, score: tuple[int, int], decided: str = "regulation") -> MatchResult:
        return MatchResult(p, "1", score, decided, (), (), time.time(), game=p.game)

    assert director.receive(home(first, (1, 2))) == "applied"
    assert director.receive(home(first, (1, 2))) == "known"  # (delivered again)
    topic, payload, retain = desk.client.sent[-1]
    second = parse_pairing(payload)
    assert topic == "timekeeper/hall/1/pairing" and retain
    assert (second.id, second.game, second.home_wins, second.away_wins) == (first.id, 2, 0, 1)
    assert _series_line(second) == "SF1 · game 2 · Dvořák leads 1:0"
    assert director.receive(home(second, (3, 4), "sudden_death")) == "applied"
    assert len(desk.client.sent) == 3  # decided: no pairing for a game 3
    m = director.t.named("SF1")
    assert m.result is not None and m.series is not None and m.series.winner == "away"
    assert director.t.named("F").home == "Dvořák"  # the bracket moved on
    late = home(dataclasses.replace(second, game=3), (1, 0))
    assert director.receive(late).startswith("pending: ")
    again = Director(BoardDesk(), file)  # (a desk restarted reads the calls: game 2's call)
    assert again.called["1"].game == 2


def test_a_game_typed_at_the_desk_calls_the_next_game_too(tmp_path: Path) -> None:
    """The serving desk re-reads the ledger: a game typed at `timekeeper tournament result`
    (or corrected there) is the series' state its table is told, as a game come home is."""
    from boardhall import BoardDesk

    file = drawn(tmp_path, "{SF: 5}")
    desk = BoardDesk()
    desk.client = Client()
    director = Director(desk, file)
    director.call_round(1, wait=0.0)
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.result(t, 1, "1", "0:2"))  # (typed in another terminal)
    director.snapshot()  # (the board's look reads the ledger again)
    told = [
        parse_pairing(body) for topic, body, _ in desk.client.sent if topic.endswith("/1/pairing")
    ]
    assert [(p.game, p.home_wins, p.away_wins) for p in told] == [(1, 0, 0), (2, 0, 1)]
    ledger.record(t, clerk.result(t, 1, "1", "2:0", game=1, reason="swapped on the sheet"))
    director.snapshot()
    told = [
        parse_pairing(body) for topic, body, _ in desk.client.sent if topic.endswith("/1/pairing")
    ]
    assert (told[-1].game, told[-1].home_wins, told[-1].away_wins) == (2, 1, 0)
