"""The tournament file's `public:` and the public's view of the evening (tournament/public.py,
publicview.py), told the time: points hidden during the groups, each result shown for N
minutes, a group's table frozen over its last K rounds — and everything once the groups are
over; a player's page's data and its "about when" (hall/desk/players.py); the board's standings
say what decided each place. No process, no clock: every time is given."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from boardhall import cup, play_round, result

from timekeeper.rules.yamldoc import ConfigError
from timekeeper.tournament import spec
from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.public import Public, qr_svg
from timekeeper.tournament.publicview import view

NOW = datetime.datetime(2026, 12, 2, 19, 0).timestamp()
FOUR = ("Ann", "Bob", "Cid", "Dan")
PLAYERS = "players: [Ann, Bob, Cid, Dan]\n"


def load(tmp_path: Path, text: str) -> spec.Spec:
    file = tmp_path / "cup.yaml"
    file.write_text("rules: radegast\n" + PLAYERS + text, encoding="utf-8")
    return spec.load(file)


def test_public_settings_are_read_and_default_to_showing_everything(tmp_path: Path) -> None:
    assert load(tmp_path, "").public == Public()
    got = load(
        tmp_path,
        "public:\n  points: hidden\n  results_for_minutes: 15\n  freeze_last_rounds: 3\n"
        "  url: http://192.168.1.10:8080/\n",
    ).public
    assert got == Public("hidden", 15, 3, "http://192.168.1.10:8080")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "public:\n  points: secret\n",
            r"cup.yaml:4:11: public.points: must be one of shown, hidden",
        ),
        (
            "public:\n  results_for_minutes: 0\n",
            r"cup.yaml:4:24: public.results_for_minutes: must be a whole number from 1 to 1440",
        ),
        (
            "public:\n  freeze_last_rounds: -1\n",
            r"cup.yaml:4:23: public.freeze_last_rounds: must be a whole number from 0 to 100",
        ),
        ("public:\n  url: 192.168.1.10\n", r"cup.yaml:4:8: public.url: an address such as http"),
        ("public:\n  pionts: hidden\n", r"cup.yaml:4:3: public.pionts: unknown key; did you mean"),
        ("public: yes\n", r"cup.yaml:3:9: public: must be a mapping of settings"),
    ],
)
def test_bad_public_settings_name_file_line_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected):
        load(tmp_path, text)


def group_of_four(tmp_path: Path, public: str) -> Path:
    """One group of four (three group rounds of two matches at two tables)."""
    return cup(tmp_path, FOUR, tables=2, size=4, public=public)


def test_points_hidden_during_the_groups_and_shown_after(tmp_path: Path) -> None:
    file = group_of_four(tmp_path, "public:\n  points: hidden\n")
    play_round(file, 1, NOW - 600, lambda i: "2:1")
    t, _ = open_tournament(file, drawn=True)
    v = view(t, t.spec.public, NOW)
    assert v.points_hidden
    rows = v.groups["A"]
    assert [r["played"] for r in rows] == [1, 1, 1, 1]
    assert {r["points"] for r in rows} == {None} and {r["goals"] for r in rows} == {None}
    assert {r["won"] for r in rows} == {None}  # (the points could be counted from them)
    assert all(v.results[m] for m in ("A.1", "A.2"))  # the results themselves stand
    play_round(file, 2, NOW - 300, lambda i: "1:1")
    play_round(file, 3, NOW - 60, lambda i: "0:3")
    t, _ = open_tournament(file, drawn=True)
    after = view(t, t.spec.public, NOW)  # the groups are over: the public sees all
    assert not after.points_hidden and {r["points"] for r in after.groups["A"]} != {None}


def test_a_result_is_shown_for_its_minutes_only(tmp_path: Path) -> None:
    file = group_of_four(tmp_path, "public:\n  results_for_minutes: 15\n")
    t, _ = open_tournament(file, drawn=True)
    first = [s for s in t.slots if s.round == 1]
    result(file, 1, first[0].table, "2:1", NOW - 16 * 60)  # in 16 minutes ago
    result(file, 1, first[1].table, "0:1", NOW - 14 * 60)  # in 14 minutes ago
    t, _ = open_tournament(file, drawn=True)
    v = view(t, t.spec.public, NOW)
    assert v.results[first[0].match] is False and v.results[first[1].match] is True
    assert view(t, t.spec.public, NOW - 10 * 60).results[first[0].match] is True
    # the table counts every result all the same (only the score is not repeated)
    assert sum(r["played"] for r in v.groups["A"]) == 4


def test_the_table_is_frozen_over_the_groups_last_rounds(tmp_path: Path) -> None:
    file = group_of_four(tmp_path, "public:\n  freeze_last_rounds: 1\n")
    play_round(file, 1, NOW - 900, lambda i: "2:1")
    play_round(file, 2, NOW - 600, lambda i: "3:0")
    t, _ = open_tournament(file, drawn=True)
    v = view(t, t.spec.public, NOW)
    assert v.frozen == {} and sum(r["played"] for r in v.groups["A"]) == 8  # not yet
    last = [s for s in t.slots if s.round == 3]
    result(file, 3, last[0].table, "5:0", NOW - 60)
    t, _ = open_tournament(file, drawn=True)
    v = view(t, t.spec.public, NOW)
    circle = t.group_matches[last[0].match].circle
    assert v.frozen == {"A": circle - 1}
    assert sum(r["played"] for r in v.groups["A"]) == 8  # the last round's result not counted
    assert v.results[last[0].match] is False  # nor shown (it would give the table away)
    result(file, 3, last[1].table, "1:0", NOW - 30)  # the group is over: all shown
    t, _ = open_tournament(file, drawn=True)
    v = view(t, t.spec.public, NOW)
    assert v.frozen == {} and sum(r["played"] for r in v.groups["A"]) == 12
    assert all(v.results[m] for m in t.group_matches)


def test_a_players_page_says_the_next_match_and_about_when(tmp_path: Path) -> None:
    from timekeeper.hall.desk.players import about, player_data

    file = group_of_four(tmp_path, "")
    play_round(file, 1, NOW - 600, lambda i: "2:1")
    t, _ = open_tournament(file, drawn=True)
    lengths = {1: 900.0, 2: 900.0, 3: 900.0, 4: 1200.0}
    called = {2: NOW - 300}
    assert about(t, called, 2, NOW, lengths) == NOW - 300  # called: it began then
    assert about(t, called, 3, NOW, lengths) == NOW + 600  # after round 2's 15 minutes
    late = {2: NOW - 1800}  # round 2 runs late: round 3 can begin now at the soonest
    assert about(t, late, 3, NOW, lengths) == NOW
    assert about(t, late, 4, NOW, lengths) == NOW + 900
    start = datetime.datetime(2026, 12, 2, 17, 0).timestamp()  # the file's start: 17:00
    assert about(t, {}, 2, start - 3600, lengths) == start + 900
    calls = [{"round": 2, "match": m.match, "sent": NOW - 300} for m in t.slots if m.round == 2]
    player = next(m for m in t.fixtures() if m.slot.round == 2).home
    data = player_data(t, player, calls, NOW, lengths)
    assert data["next"]["round"] == 2 and data["next"]["called"] is True
    assert data["group"] == "A" and [r["player"] for r in data["table"]]
    mine = data["results"][0]
    assert mine["score"] in ("2:1", "1:2") and mine["outcome"] in ("won", "lost")
    assert (mine["outcome"] == "won") == (mine["score"] == "2:1")  # the player's side first


def test_the_qr_code_is_svg_of_the_address() -> None:
    svg = qr_svg("http://192.168.1.10:8080/player")
    assert svg.startswith("<svg") and "style=" not in svg  # (the CSP: no inline style)
    assert svg != qr_svg("http://192.168.1.10:8080/player/Ann")


def test_the_sheets_print_the_qr_code_of_the_configured_address(tmp_path: Path) -> None:
    from timekeeper.tournament import sheets

    file = group_of_four(tmp_path, "public:\n  url: http://10.0.0.5:8080\n")
    t, _ = open_tournament(file, drawn=True)
    written = sheets.write_all(t, tmp_path)
    for page in written:
        text = page.read_text(encoding="utf-8")
        assert qr_svg("http://10.0.0.5:8080/player") in text and "10.0.0.5:8080/player" in text
    (tmp_path / "plain").mkdir()
    plain = group_of_four(tmp_path / "plain", "")  # no address known when exported: no code
    t, _ = open_tournament(plain, drawn=True)
    assert "<svg" not in sheets.rounds_sheet(t)


def test_the_player_pages_show_the_public_view_and_the_board_everything(tmp_path: Path) -> None:
    """Over HTTP (the desk's app in a thread, told the time): a player's JSON keeps back what
    `public:` says, and so does the board's without the token; the director's board (with
    the desk's token) shows it all."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    from boardhall import BoardDesk, serving_board

    file = group_of_four(tmp_path, "public:\n  points: hidden\n  results_for_minutes: 15\n")
    play_round(file, 1, NOW - 20 * 60, lambda i: "2:1")
    play_round(file, 2, NOW - 5 * 60, lambda i: "0:2")
    t, _ = open_tournament(file, drawn=True)
    name = t.spec.names[0]
    with serving_board(BoardDesk(), file, tmp_path / "desk", wall=lambda: NOW) as (url, token, _):

        def get(path: str, token: str = "") -> dict:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            request = urllib.request.Request(url + path, headers=headers)
            with urllib.request.urlopen(request, timeout=5) as answer:
                return json.loads(answer.read())

        mine = get(f"/api/player/{urllib.parse.quote(name)}")
        assert [r["round"] for r in mine["results"]] == [1, 2]
        assert mine["results"][0]["score"] is None  # 20 minutes ago: no longer shown
        assert mine["results"][1]["score"] in ("0:2", "2:0")  # 5 minutes ago
        assert mine["points_hidden"] and {r["points"] for r in mine["table"]} == {None}
        assert mine["next"]["round"] == 3
        board = get("/api/board", token)
        assert {r["points"] for r in board["groups"]["A"]} != {None}  # the director's: all
        assert {r["points"] for r in get("/api/board")["groups"]["A"]} == {None}  # the TV's
        assert get(f"/api/player/{urllib.parse.quote(name.upper())}")["player"] == name
        with urllib.request.urlopen(f"{url}/qr/player/{urllib.parse.quote(name)}.svg") as qr:
            assert qr.headers["Content-Type"].startswith("image/svg+xml")
            assert qr.read().decode() == qr_svg(f"{url}/player/{urllib.parse.quote(name)}")
        for missing in ("/api/player/Nobody", "/qr/player/Nobody.svg"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url + missing, timeout=5)
            assert refused.value.code == 404


def test_the_public_board_says_what_it_holds_back(tmp_path: Path) -> None:
    """The TV's board (`/api/board` without the token) says which group's table is frozen at
    which round and that points are hidden, so that its blank cells have a reason; board.js
    says both, in every language; the director's board holds nothing back."""
    import json
    import urllib.request

    from boardhall import BoardDesk, serving_board

    from timekeeper.hall.desk.overview import STATIC

    public = "public:\n  points: hidden\n  freeze_last_rounds: 1\n"
    file = group_of_four(tmp_path, public)
    for round_ in (1, 2):
        play_round(file, round_, NOW - 60, lambda i: "2:1")
    result(file, 3, "1", "2:1", NOW - 60)  # the groups' last round, frozen: one match in
    with serving_board(BoardDesk(), file, tmp_path / "desk", wall=lambda: NOW) as (url, token, _):

        def get(path: str, token: str = "") -> dict:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            request = urllib.request.Request(url + path, headers=headers)
            with urllib.request.urlopen(request, timeout=5) as answer:
                return json.loads(answer.read())

        tv = get("/api/board")
        assert tv["frozen"] == {"A": 2} and tv["points_hidden"] is True
        director = get("/api/board", token)
        assert director["frozen"] == {} and director["points_hidden"] is False
    js = (STATIC / "board.js").read_text(encoding="utf-8")
    assert 'word("boardFrozen", { n: frozen })' in js and "board.frozen" in js
    assert 'word("boardPointsHidden")' in js and "board.points_hidden" in js
    for lang in (Path(__file__).parents[2] / "lang").glob("*.json"):
        words = next(v for v in json.loads(lang.read_text("utf-8")).values() if "boardGoals" in v)
        assert "{n}" in words["boardFrozen"] and words["boardPointsHidden"], lang.name
