"""The desk runs the evening over a real Mosquitto with real boxes: a round called pushes
each table its pairing (the names on the box, a profile mismatch said), the results come home
by themselves into the tournament's journal, once, and a desk restarted finds them all."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import HALL_WAIT, hall_serve, wait_for

from timekeeper.hall.bus.broker import Broker
from timekeeper.hall.bus.messages import BadMessage
from timekeeper.hall.bus.pairing import Pairing, parse_pairing
from timekeeper.hall.bus.result import MatchResult, from_status, parse_result
from timekeeper.hall.desk.director import Director
from timekeeper.hall.desk.link import Desk, new_command
from timekeeper.tournament.events import ResultEvent

NAMES = ("Adam", "Běla", "Cyril", "Dana")


def drawn_cup(folder: Path) -> Path:
    from timekeeper.tournament import clerk
    from timekeeper.tournament.ledger import open_tournament

    file = folder / "cup.yaml"
    players = "\n".join(f"  - {n}" for n in NAMES)
    file.write_text(
        f"title: Test cup\nrules: radegast\ntables: 2\nplayers:\n{players}\n", encoding="utf-8"
    )
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))
    return file


PAIRING = Pairing("A.1.1.abc", 1, "A.1", "group A", "Adam", "Běla", "radegast", 1.0)


def test_a_pairing_and_a_result_survive_the_trip_and_bad_ones_are_refused() -> None:
    assert parse_pairing(PAIRING.to_json()) == PAIRING
    status = {
        "score": {"home": 2, "away": 1},
        "period": 1,
        "periods": 1,
        "part": "",
        "goals": [{"team": "home", "period": 1, "play_time": 12.5, "player": "7"}],
    }
    result = from_status(PAIRING, "1", status, 2.0)
    assert parse_result(result.to_json()) == result and result.decided == "regulation"
    shootout = from_status(
        PAIRING,
        "1",
        {
            "score": {"home": 1, "away": 1},
            "shot": 3,
            "decided": "shootout",
            "shootout_attempts": [{"team": "away", "goal": True}],
        },
        2.0,
    )
    assert shootout.score == (1, 2) and shootout.decided == "shootout"
    for bad in (
        b"x" * 5000,
        b"[1]",
        json.dumps({"pairing": {}}).encode(),
        result.to_json().replace(b'"score": [2, 1]', b'"score": [2, [[[1]]]]'),
    ):
        with pytest.raises(BadMessage):
            parse_result(bad)
    with pytest.raises(BadMessage, match="plain values"):
        parse_pairing(PAIRING.to_json().replace(b'"Adam"', b'["Adam"]'))


@pytest.mark.slow
def test_a_round_goes_to_the_tables_and_every_result_comes_home_once(boxes, tmp_path: Path) -> None:
    from timekeeper.box.controls.socket_client import send

    file = drawn_cup(tmp_path)
    boxes["start"]("1", "2")
    url = boxes["broker"]["url"]
    desk = Desk(Broker.parse(url), "hall")
    try:
        wait_for(lambda: len(desk.tables()) == 2, "both boxes joined", HALL_WAIT)
        director = Director(desk, file)
        called = dict(director.call_round(1))
        assert set(called) == {"1", "2"}
        first = {t: director.called[t] for t in ("1", "2")}

        def named(table: str) -> bool:
            s = desk.tables().get(table) or {}
            p = first[table]
            return (s.get("pairing") or {}).get("id") == p.id and s["status"]["names"] == {
                "home": p.home,
                "away": p.away,
            }

        wait_for(lambda: named("1") and named("2"), "the names on both boxes", HALL_WAIT)
        note = desk.tables()["1"]["pairing_note"]
        # the box is told: radegast's 30-s melody is more than its pack decoded at its start
        assert "this table runs profile" in note and "melody is longer" in note
        answers = desk.send(new_command("start", at=time.time() + 2.0))
        assert all(a["ok"] for a in answers.values()), answers
        wait_for(lambda: desk.tables()["1"]["status"]["state"] == "running", "running", 10)
        assert desk.tables()["1"]["in_step"] is True  # one hall start: on the hall's time
        assert send(tmp_path / "box1" / "c.sock", "goal home 7")["ok"]
        wait_for(lambda: len(director.t.results) == 2, "both results at the desk", HALL_WAIT)
        one, two = director.t.fixture(first["1"].match), director.t.fixture(first["2"].match)
        assert one.result.text() == "1:0" and two.result.text() == "0:0"
        rows = {r["player"]: r for r in director.snapshot()["groups"]["A"]}
        assert rows[first["1"].home]["points"] == director.t.spec.rules.points.win
        assert director.next_round() == 2
        card = director.snapshot()["tables"][0]
        assert card["result_id"] == first["1"].id and card["confirmed"] is False
        director.confirm(first["1"].id)  # the director has checked it
        assert director.snapshot()["tables"][0]["confirmed"] is True
        ctl = subprocess.run(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "ctl",
                "result",
                "confirm",
                "--control",
                str(tmp_path / "box2" / "c.sock"),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert ctl.returncode == 0 and json.loads(ctl.stdout)["confirmed"] is True, ctl
        wait_for(
            lambda: first["2"].id in director.confirmed, "table 2's operator confirmed", HALL_WAIT
        )

        # the same result again (a box that sends it twice): applied once
        kept = json.loads((tmp_path / "box1" / "hall-match.json").read_text())["result"]
        again = parse_result(json.dumps(kept).encode())
        assert again.goals[0]["player"] == "7" and again.goals[0]["team"] == "home"
        assert director.receive(again) == "known"
        results = [e for e in director.t.events if isinstance(e, ResultEvent)]
        assert len(results) == 2 and {e.source for e in results} == {first["1"].id, first["2"].id}

        # a result for a match the desk did not call: the director's to accept or refuse
        stray = MatchResult(
            Pairing(
                "A.5.9.zzz",
                3,
                "A.5",
                "group A",
                *director.t.fixture("A.5").sides.split(" – "),
                "radegast",
                1.0,
            ),
            "1",
            (3, 0),
            "regulation",
            (),
            (),
            time.time(),
        )
        assert director.receive(stray).startswith("pending: a match this desk did not call")
        assert director.snapshot()["pending"][0]["id"] == "A.5.9.zzz"
        director.refuse("A.5.9.zzz")
        assert "A.5" not in director.t.results and director.receive(stray) == "known"
    finally:
        desk.close()

    # the desk restarted: the journal and the broker's retained results, applied once
    desk = Desk(Broker.parse(url), "hall")
    try:
        again = Director(desk, file)
        assert set(again.called) == {"1", "2"} and len(again.t.results) == 2
        assert again.confirmed == {first["1"].id, first["2"].id}
        wait_for(lambda: set(again.latest) == {"1", "2"}, "the retained results", HALL_WAIT)
        assert len([e for e in again.t.events if isinstance(e, ResultEvent)]) == 2
    finally:
        desk.close()


@pytest.mark.slow
def test_the_board_shows_the_round_the_standings_and_links_the_sheets(
    boxes,
    tmp_path: Path,
) -> None:
    """`hall serve --tournament`: /board and /api/board (read-only), the sheets; calling a
    round from the board needs the desk's token."""
    import subprocess
    import urllib.error
    import urllib.request

    from helpers import free_port
    from webbox import browser, have_browser

    file = drawn_cup(tmp_path)
    url = boxes["broker"]["url"]
    boxes["start"]("1")
    port, state = free_port(), tmp_path / "desk"
    server = subprocess.Popen(
        hall_serve(url, port, state, "--tournament", str(file)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> str:
        try:
            with urllib.request.urlopen(base + path, timeout=5) as answer:
                return answer.read().decode()
        except OSError:
            return ""

    try:
        board = json.loads(wait_for(lambda: get("/api/board"), "the board served", HALL_WAIT))
        assert board["title"] == "Test cup" and board["next"]["round"] == 1
        assert [r["player"] for r in board["groups"]["A"]] and len(board["tables"]) == 2
        assert "<table" in get("/board/sheets/groups.html")
        from timekeeper.hall.desk.board import SHEET_POLICY
        from timekeeper.web.guard import policy

        for path, csp in (
            ("/board", policy()),
            ("/board/sheets/groups.html", SHEET_POLICY),
            ("/static/board.js", policy()),
            ("/static/common.js", policy()),
        ):
            with urllib.request.urlopen(base + path, timeout=5) as answer:  # the desk's guard
                assert answer.headers["Content-Security-Policy"] == csp, path
        token = (state / "hall" / "web-token").read_text().strip()
        post = urllib.request.Request(
            f"{base}/api/board/round", method="POST", data=json.dumps({"round": 1}).encode()
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post, timeout=10)
        assert refused.value.code == 401
        post.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(post, timeout=20) as answer:
            assert set(json.loads(answer.read())["tables"]) == {"1", "2"}
        wait_for(
            lambda: (json.loads(get("/api/board"))["tables"][0]["status"] or {}).get("pairing"),
            "table 1 has its pairing",
            HALL_WAIT,
        )
        if have_browser():
            with browser(1280, 800) as driver:
                text = lambda: driver.find_element("tag name", "body").text  # noqa: E731
                driver.get(f"{base}/board?turn=60")  # (the pages stand still meanwhile)
                wait_for(
                    lambda: "round 1" in text() and "group A" in text(),
                    "the board shows the round and the group",
                    HALL_WAIT,
                )
                pairing = json.loads(get("/api/board"))["tables"][0]["pairing"]
                assert f"\n{pairing['home']}\n" in text() and f"\n{pairing['away']}\n" in text()
                assert "IDLE" in text() and "OFFLINE" in text()  # table 2 has no box
                assert driver.execute_script("return window.tkMissing") == []
                driver.get(f"{base}/board/sheets/groups.html")  # its style: the CSP's hash
                assert (
                    driver.execute_script(
                        "return getComputedStyle(document.querySelector('th')).backgroundColor"
                    )
                    == "rgb(232, 232, 232)"
                )
                driver.get(f"{base}/board?lang=cs&turn=60")  # the hall's language
                wait_for(
                    lambda: "kolo 1" in text() and "BEZ SPOJENÍ" in text(),
                    "the board in Czech",
                    HALL_WAIT,
                )
                assert "kde hraju příště?" in text()
                driver.execute_script("window.tkBoard.turn()")  # the groups' page
                assert "skupina A" in text()
                assert driver.execute_script("return window.tkMissing") == []
                assert not driver.find_element("id", "director").is_displayed()
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=10)
    assert "Traceback" not in out, out
    assert "/board" in out


@pytest.mark.slow
def test_a_real_box_switches_to_the_pairings_profile_and_refuses_an_unknown_one(
    boxes,
    tmp_path: Path,
) -> None:
    from timekeeper.hall.bus.pairing import pairing_topic

    own = tmp_path / "profiles"  # the box's own profiles (as ~/.config/timekeeper/profiles)
    own.mkdir()
    (own / "quick.yaml").write_text(
        "title: quick\nprestart: 1\nperiod:\n  length: 3\n  marks: 1\n", encoding="utf-8"
    )
    boxes["start"]("1", TIMEKEEPER_PROFILES_PATH=str(own))
    desk = Desk(Broker.parse(boxes["broker"]["url"]), "hall")
    try:
        wait_for(lambda: "1" in desk.tables(), "the box joined", HALL_WAIT)

        def call(ident: str, profile_name: str) -> None:
            p = Pairing(ident, 1, "A.1", "group A", "Adam", "Běla", profile_name, time.time())
            desk.client.publish(pairing_topic("hall", "1"), p.to_json(), qos=1, retain=True)

        def table() -> dict:
            return desk.tables().get("1") or {"status": {}}

        call("q.1", "quick")  # idle: switched for the match, names shown
        wait_for(
            lambda: (
                table()["status"].get("profile") == "quick"
                and table()["status"]["names"]["home"] == "Adam"
            ),
            "the switch",
            HALL_WAIT,
        )
        assert table()["pairing_note"] == ""
        call("q.2", "nosuch")  # unknown: said for the desk, the box keeps its profile
        wait_for(
            lambda: "unknown profile 'nosuch'" in table().get("pairing_note", ""),
            "the refusal said",
            HALL_WAIT,
        )
        assert table()["status"]["profile"] == "quick"
    finally:
        desk.close()
