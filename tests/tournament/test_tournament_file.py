"""The tournament file, the rule sets, the draw and the journal: bad input is refused with
file:line and the field; the seeds' numbers are where the rule sets say."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import TESTS
from helpers import cup_error as error_of
from helpers import write_cup as write

from timekeeper.rules import profile
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import bracket, draw, results, spec
from timekeeper.tournament.events import LotEvent
from timekeeper.tournament.ledger import Ledger
from timekeeper.tournament.plan import Seed, Winner
from timekeeper.tournament.results import ResultError
from timekeeper.tournament.rulesets import BUILT_IN

PLAYERS = "players: [Ann, Bob, Cid, Dan, Eve, Fay, Gus, Hal]\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "rules: radegast\ntabels: 4\n" + PLAYERS,
            r"cup.yaml:2:1: tabels: unknown key; did you "
            r"mean 'tables'\?",
        ),
        ("rules: radgast\n" + PLAYERS, r"cup.yaml:1:8: rules: unknown rule set 'radgast'"),
        (
            "rules: radegast\nplayers: [Ann, Bob, ann]\n",
            r"cup.yaml:2:21: players\[2\]: 'ann' is "
            r"already player 1",
        ),
        (
            "rules: radegast\n" + PLAYERS + "stages:\n  groups:\n    size: 4\n    profile: ithff\n",
            r"cup.yaml:6:14: stages.groups.profile: unknown profile 'ithff'; did you mean 'ithf'",
        ),
        (
            "rules: hokejbal\nplayers: [a, b, c, d, e, f, g, h, i, j, k, l]\n",
            r"stages.knockout.tree: VHT 6's tree is for two groups",
        ),
        (
            "rules: radegast\nplayers: [a, b, c, d, e, f, g, h, i, j, k, l]\n",
            r"cup.yaml:\d+:\d+: stages.knockout.tree: the cross tree .* tree: seeded fills byes",
        ),
        (
            "rules:\n  extends: radegast\n  points: {win: 2, drawn: 1}\n" + PLAYERS,
            r"cup.yaml:3:20: rules.points.drawn: unknown key; did you mean 'draw'\?",
        ),
        ("rules: radegast\nplayers: [Ann]\n", r"players: must be a list of at least two"),
        (
            "rules: radegast\nstart: 25:00\n" + PLAYERS,
            r"cup.yaml:2:8: start: a time of day, "
            r"e.g. \"17:00\", not 25:00",
        ),
        (
            "rules: radegast\nlanguage: cz\n" + PLAYERS,
            r"cup.yaml:2:11: language: must be one "
            r"of en, cs, sk, pl, sl, de, sv, fi, not 'cz'",
        ),
    ],
)
def test_a_bad_file_is_refused_with_file_line_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    assert re.search(expected, error_of(write(tmp_path, text)))


def test_the_start_is_a_time_of_day_however_yaml_reads_it(tmp_path: Path) -> None:
    for text in ("17:30", '"17:30"'):  # YAML 1.1 reads a bare 17:30 as 1050 (base 60)
        assert (
            spec.load(write(tmp_path, f"rules: radegast\nstart: {text}\n" + PLAYERS)).start
            == 17 * 60 + 30
        )


def test_the_language_of_the_calls_and_the_desk_pages(tmp_path: Path) -> None:
    from timekeeper.show.language import LANGUAGES  # (the tournament wing's copy of them)

    assert spec.LANGUAGES == LANGUAGES
    assert spec.load(write(tmp_path, "rules: radegast\nlanguage: cs\n" + PLAYERS)).language == "cs"
    assert spec.load(write(tmp_path, "rules: radegast\n" + PLAYERS)).language == ""


def test_a_custom_rule_set_changes_only_what_it_names(tmp_path: Path) -> None:
    s = spec.load(
        write(
            tmp_path,
            "rules:\n  extends: radegast\n  points: {win: 2}\n"
            "  tiebreakers: [points, head_to_head, goal_difference]\n" + PLAYERS,
        )
    )
    assert s.rules.points.win == 2 and s.rules.points.draw == 1
    assert s.rules.tiebreakers == ("points", "head_to_head", "goal_difference", "lot")
    assert s.rules.forfeit_plus_score and s.rules.key == "custom"


def test_the_built_in_rule_sets_play_built_in_profiles() -> None:
    for rules in BUILT_IN.values():
        for name in (rules.group_profile, rules.knockout_profile, rules.final_profile):
            assert name is None or profile.load(name)
    assert profile.load(BUILT_IN["hokejbal"].group_profile).periods[0].length == 8 * 60
    assert profile.load(BUILT_IN["hokejbal"].knockout_profile).periods[0].length == 10 * 60
    assert BUILT_IN["radegast"].tiebreakers == (
        "points",
        "goal_difference",
        "goals_for",
        "head_to_head",
        "lot",
    )
    assert BUILT_IN["hokejbal"].tiebreakers == (
        "points",
        "head_to_head",
        "goal_difference",
        "goals_for",
        "goals_against",
        "lot",
    )


def test_the_forfeit_scores_of_the_seeds() -> None:
    radegast, hokejbal = BUILT_IN["radegast"], BUILT_IN["hokejbal"]
    assert radegast.forfeit_score("home", None, None) == (0, 5)  # did not come
    assert radegast.forfeit_score("away", 2, 1) == (7, 1)  # home led 2:1: 0:5 plus 2:1
    assert radegast.forfeit_score("away", 1, 1) == (6, 1)  # a draw at that moment too
    assert radegast.forfeit_score("home", 2, 1) == (0, 5)  # away trailed: just 0:5
    assert hokejbal.forfeit_score("away", 3, 0) == (5, 0)  # rule 5: 5:0, nothing added
    forfeit = results.make(radegast, False, "2:1", "forfeit", "away")
    assert (forfeit.home, forfeit.away, forfeit.at_forfeit) == (7, 1, (2, 1))


@pytest.mark.parametrize(
    ("rules", "knockout", "score", "decided", "why"),
    [
        ("radegast", True, "2:2", "regulation", "a knock-out match has a winner"),
        ("radegast", False, "3:2", "overtime", "not extended"),
        ("hokejbal-3pt", False, "1:1", "regulation", "no draw in hokejbal-3pt"),
        ("hokejbal-3pt", False, "4:2", "shootout", "exactly one more"),
        ("radegast", False, "3-1-1", "regulation", "HOME:AWAY"),
    ],
)
def test_a_result_the_rule_set_cannot_take_is_refused(rules, knockout, score, decided, why) -> None:
    with pytest.raises(ResultError, match=why):
        results.make(BUILT_IN[rules], knockout, score, decided)


def test_an_overtime_that_is_sudden_death_ends_on_one_goal(tmp_path: Path) -> None:
    from timekeeper.tournament import clerk
    from timekeeper.tournament.state import Tournament, TournamentError

    for rules, knockout_score in (("hokejbal", "5:2"), ("radegast", "5:2")):
        file = write(tmp_path, f"rules: {rules}\n" + PLAYERS)
        s = spec.load(file)
        t = Tournament(s, [clerk.draw(Tournament(s, []), 4)])
        for p in t.group_matches.values():
            slot = t.fixture(p.id).slot
            assert slot is not None
            t.apply(clerk.result(t, slot.round, slot.table, "2:1"))
        first = next(m for m in t.fixtures() if m.knockout and m.home and m.away)
        assert first.slot is not None
        where = (first.slot.round, first.slot.table)
        if rules == "hokejbal":  # rule 1: the play-off's 5 minutes are "decided by a goal"
            with pytest.raises(TournamentError, match=r"sudden death .* type --sd, not --ot"):
                clerk.result(t, *where, "3:2", "overtime")
            with pytest.raises(TournamentError, match="ends on one goal"):
                clerk.result(t, *where, knockout_score, "sudden_death")
            assert clerk.result(t, *where, "3:2", "sudden_death").result.home == 3
        else:  # Radegast's 3 minutes are played in full: any margin
            assert clerk.result(t, *where, knockout_score, "overtime").result.home == 5


def test_points_by_how_the_match_was_decided() -> None:
    three = BUILT_IN["hokejbal-3pt"].points
    assert [three.for_result(2, 1, d) for d in ("regulation", "overtime", "shootout")] == [3, 2, 2]
    assert [three.for_result(1, 2, d) for d in ("regulation", "overtime", "shootout")] == [0, 1, 1]
    assert BUILT_IN["radegast"].points.for_result(1, 1, "regulation") == 1


def test_a_draw_repeats_from_its_seed_and_pots_keep_the_best_apart() -> None:
    names = [f"p{i}" for i in range(16)]
    assert draw.random_draw(names, 4, 7) == draw.random_draw(names, 4, 7)
    assert draw.random_draw(names, 4, 7).groups != draw.random_draw(names, 4, 8).groups
    pots = draw.pots_draw(names, names, 4, 3)
    for pot in range(4):  # one of each pot in every group
        assert {
            g: sum(p in names[pot * 4 : pot * 4 + 4] for p in members)
            for g, members in pots.groups.items()
        } == dict.fromkeys("ABCD", 1)
    assert draw.pots_draw(names, names, 4, 3) == pots


def test_a_ranking_list_one_player_a_line(tmp_path: Path) -> None:
    file = tmp_path / "ranking.txt"
    file.write_text(
        "# national ranking\n1. Bob\n2 Someone Else\n3) ANN\n\nCid  # new\n", encoding="utf-8"
    )
    ranked, unknown = draw.read_ranking(file, ["Ann", "Bob", "Cid", "Dan"])
    assert ranked == ["Bob", "Ann", "Cid"] and unknown == ["Someone Else"]


def test_a_knockout_drawn_alone_gives_the_best_seeds_the_byes() -> None:
    nodes = bracket.seeded([Seed(i) for i in range(1, 7)], third_place=True)
    first = [(n.home, n.away) for n in nodes if n.level == 0]
    assert first == [(Seed(4), Seed(5)), (Seed(3), Seed(6))]
    semis = [(n.home, n.away) for n in nodes if n.id.startswith("SF")]
    assert semis == [(Seed(1), Winner("QF2")), (Seed(2), Winner("QF4"))]
    assert [n.id for n in nodes][-2:] == ["3P", "F"]
    assert bracket.bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


def test_the_ledger_is_append_only_and_a_torn_last_line_is_cut_away(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "cup.journal.jsonl")
    ledger.append(LotEvent("A", ("a", "b")))
    ledger.append(LotEvent("A", ("b", "a")))
    before = ledger.path.read_bytes()
    with open(ledger.path, "ab") as stream:
        stream.write(b'{"event": "lot", "gro')  # a crash in the middle of a write
    assert len(ledger.read()) == 2 and ledger.torn
    ledger.append(LotEvent("B", ("c", "d")))
    after = ledger.path.read_bytes()
    assert after.startswith(before)  # nothing before it ever rewritten
    assert [e.event.n for e in Ledger(ledger.path).read()] == [1, 2, 3]


def test_a_ledger_line_lost_or_edited_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cup.journal.jsonl"
    lines = [json.dumps({"n": n, "event": "lot", "group": "A", "order": []}) for n in (1, 3)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cup.journal.jsonl:2:1: entry number 3 where 2"):
        Ledger(path).read()


def test_an_entry_decided_on_an_old_state_is_not_written(tmp_path: Path) -> None:
    """Two desks: the second's entry was checked against the ledger before the first's
    landed; it is refused, and nothing is written."""
    ledger = Ledger(tmp_path / "cup.journal.jsonl")
    ledger.append(LotEvent("A", ("a", "b")), after=0)
    before = ledger.path.read_bytes()
    with pytest.raises(ConfigError, match="changed while this was typed"):
        ledger.append(LotEvent("A", ("b", "a")), after=0)
    assert ledger.path.read_bytes() == before
    ledger.path.write_bytes(before.rstrip(b"\n"))  # saved by hand without its newline
    ledger.append(LotEvent("B", ()), after=1)
    assert [e.event.n for e in Ledger(ledger.path).read()] == [1, 2]


BEFORE = TESTS / "untyped_ledger"  # written by the code before the typed events


def test_a_ledger_written_before_the_typed_events_reads_unchanged(tmp_path: Path) -> None:
    """Every kind of line the earlier code wrote (a draw, results, a correction, a replay,
    a forfeit, a shoot-out, a result from the hall with its source) is read into its event
    and written back as the very same line, and the evening stands as it stood then."""
    from timekeeper.tournament import events
    from timekeeper.tournament.ledger import open_tournament

    for name in ("cup.yaml", "cup.journal.jsonl"):
        (tmp_path / name).write_bytes((BEFORE / name).read_bytes())
    lines = (BEFORE / "cup.journal.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        again = events.from_dict(json.loads(line)).to_dict()
        assert json.dumps(again, ensure_ascii=False, sort_keys=True) == line
    t, ledger = open_tournament(tmp_path / "cup.yaml", drawn=True)
    assert len(t.events) == len(lines) and not ledger.torn
    assert [e.text() for e in t.history("A.1")] == [
        "result A.1: 2:1 regulation",
        "correction A.1: 1:2 regulation (was 2:1; sheet upside down)",
    ]
    assert [name for _, name in t.placings()] == ["Fiona", "Cyril", "Emil", "Dana", "Adam", "Běla"]
    first = json.loads(lines[0])
    del first["rules"]  # a draw from before the rules were kept with it
    assert events.from_dict(first).rules is None


def test_a_ledger_line_the_tournament_cannot_read_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "cup.journal.jsonl"
    good = json.dumps({"n": 1, "event": "lot", "group": "A", "order": ["a", "b"]})
    path.write_text(
        good + "\n" + json.dumps({"n": 2, "event": "result", "match": 5}) + "\n", encoding="utf-8"
    )
    with pytest.raises(
        ConfigError,
        match=r"cup.journal.jsonl:2:1: match: must be text, not 5 \(an entry the tournament "
        r"cannot read\)",
    ):
        Ledger(path).read()


def test_every_field_of_a_ledger_entry_edited_by_hand_is_refused_or_harmless(
    tmp_path: Path, capsys
) -> None:
    """A fuzz of the ledger's fields: each field of each kind of entry replaced by a value
    of another type or range, removed, or joined by an unknown one; and ids duplicated.
    Every command that reads it either takes it (a value that changes nothing) or refuses
    it with the ledger's file:line (exit 2) — never a traceback."""
    import copy

    from timekeeper import cli

    file = tmp_path / "cup.yaml"
    assert cli.main(["tournament", "new", str(file), "--players", "8"]) == 0
    for argv in (
        ["draw", "--seed", "11"],
        ["result", "1", "1", "3:1"],
        ["result", "1", "1", "1:3", "--reason", "swapped"],
        ["replay", "1", "2", "--reason", "referee"],
        ["result", "1", "2", "2:1", "--forfeit", "home"],
    ):
        assert cli.main(["tournament", argv[0], "-f", str(file), *argv[1:]]) == 0
    journal = file.with_name("cup.journal.jsonl")
    good = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    bad_values = [None, "", -1, 10**12, True, [1, 2], {"a": 1}]

    def fields(value, path=()):
        yield path
        if isinstance(value, dict):
            for key, item in value.items():
                yield from fields(item, (*path, key))
        elif isinstance(value, list):
            for i, item in enumerate(value[:1]):
                yield from fields(item, (*path, i))

    def edits():
        for i, entry in enumerate(good):
            for path in fields(entry):
                if path in ((), ("n",)):
                    continue
                for value in [*bad_values, KeyError]:
                    yield i, path, value
            yield i, ("unknown",), 1
        yield 0, ("matches", 1, "id"), good[0]["matches"][0]["id"]
        yield 0, ("knockout", 1, "id"), good[0]["knockout"][0]["id"]
        yield 0, ("slots", 1), good[0]["slots"][0]
        yield 2, ("source",), "a-message"
        yield 4, ("match",), "A.1"

    for i, path, value in edits():
        lines = copy.deepcopy(good)
        target = lines[i]
        for part in path[:-1]:
            target = target[part]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        journal.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
        code = cli.main(["tournament", "standings", "-f", str(file)])
        err = capsys.readouterr().err
        assert code in (0, 2), (i, path, value)
        assert code == 0 or f"cup.journal.jsonl:{i + 1}:1: " in err, (i, path, value, err)
    duplicated = [*good, {**good[1], "n": len(good) + 1}]  # a result typed twice by hand
    journal.write_text("".join(json.dumps(e) + "\n" for e in duplicated), encoding="utf-8")
    assert cli.main(["tournament", "history", "-f", str(file)]) == 2
    assert f"cup.journal.jsonl:{len(good) + 1}:1: corrects: " in capsys.readouterr().err


def test_the_largest_draw_the_file_allows_fits_the_ledgers_line(tmp_path: Path) -> None:
    """The file's limits and the ledger's agree: the most group matches (256 players in
    groups of 8), every name and table name as long as allowed, in four-byte characters,
    make a draw line the ledger takes; one more group size is refused at load."""
    from timekeeper.tournament import events, ledger
    from timekeeper.tournament.state import Tournament, make_draw

    names = "\n".join(
        f'  - "{"𝄞" * (spec.MAX_PLAYER_NAME - 4)}{i:04d}"' for i in range(spec.MAX_PLAYERS)
    )
    tables = ", ".join(f"T{t:031d}" for t in range(spec.MAX_TABLES))
    text = (
        f"rules: radegast\ntables: [{tables}]\nplayers:\n{names}\n"
        "stages:\n  groups: {size: 8, advance: 1}\n  knockout: {tree: seeded}\n"
    )
    file = tmp_path / "cup.yaml"
    file.write_text(text, encoding="utf-8")
    s = spec.load(file)
    assert spec.group_match_count(len(s.players), 8) <= spec.MAX_GROUP_MATCHES
    draw = make_draw(s, 1)
    line = json.dumps(draw.to_dict(), ensure_ascii=False, sort_keys=True).encode()
    assert len(line) < ledger.MAX_LINE
    Tournament(s, [events.from_dict(json.loads(line))])  # and it reads back
    file.write_text(text.replace("size: 8", "size: 9"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"stages.groups.size: groups of 9 for 256 players"):
        spec.load(file)


def test_one_group_whose_winner_is_the_whole_knock_out_draws(tmp_path: Path) -> None:
    """One group, its winner alone in the knock-out (the sizes bench's group of 42 met an
    IndexError in the bracket's keep-apart step): drawn, no match after the group."""
    from timekeeper.tournament.state import make_draw

    file = tmp_path / "cup.yaml"
    names = "\n".join(f"  - P{i}" for i in range(5))
    file.write_text(
        f"rules: radegast\ntables: 2\nplayers:\n{names}\n"
        "stages:\n  groups: {size: 5, advance: 1}\n  knockout: {tree: seeded}\n",
        encoding="utf-8",
    )
    assert len(make_draw(spec.load(file), 1).matches) == 10
