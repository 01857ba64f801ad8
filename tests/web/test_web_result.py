"""The table's operator confirms the match's result on the operator page, as with `ctl result
confirm`: the button shows while the box holds a result not yet confirmed, sends `result
confirm` through the page's command path, and goes once it is confirmed. A real runner and
web server in this process, the hall's side (MatchLink) on a recording client, and Debian's
headless Chromium (skipped where it is missing)."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest
from helpers import HallLinkSide, RecordingOutput, free_port, wait_for
from webbox import browser, have_browser

from timekeeper.box.runner import Runner
from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.table.tablematch import MatchLink
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.web.server import WebServer
from timekeeper.web.token import TokenStore

pytestmark = [
    pytest.mark.slow,  # a browser and a box (tests/conftest.py: the fast tier)
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]


def test_the_operator_confirms_the_result_on_the_operator_page(tmp_path: Path) -> None:
    runner = Runner(Engine(profile.load("radegast")), [RecordingOutput()])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    link = HallLinkSide(runner)
    match = MatchLink(link, tmp_path)
    runner.hall_result = match.result_shown  # (as the box wires it)
    server = WebServer(
        runner,
        "127.0.0.1",
        free_port(),
        TokenStore(tmp_path / "state"),
        commands={"result": match.ctl},
    )
    server.start()
    try:
        match.handle(
            Pairing("p1", 1, "A.1", "group A", "Novák", "Svoboda", "radegast", 1.0).to_json()
        )
        idle = runner.status()
        match.match_changed(dataclasses.replace(idle, state="running"), 0)
        match.match_changed(
            dataclasses.replace(idle, state="finished", score={"home": 2, "away": 1}), 0
        )
        assert match.result is not None and not match.result.confirmed
        with browser(390, 844) as phone:
            phone.get(server.link()["url"])
            button = phone.find_element("id", "confirm-result")
            wait_for(lambda: button.is_displayed(), "the confirm button", 10)
            assert button.text == "Confirm the result A.1 2:1 for the desk"
            phone.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
            button.click()
            wait_for(lambda: match.result.confirmed, "the result confirmed", 10)
            wait_for(lambda: not button.is_displayed(), "the button gone", 10)
            assert "result confirm" in phone.find_element("id", "note").text
        sent = [json.loads(p) for t, p, _ in link.client.published if t.endswith("/result")]
        assert [r["confirmed"] for r in sent] == [False, True]  # told to the desk once more
    finally:
        server.close()
        runner.submit(Command(Action.QUIT)).result(timeout=5)
        thread.join(5)


def test_the_display_keeps_the_finished_match_and_shows_the_next_pairing(
    tmp_path: Path, write_profile
) -> None:
    quick = write_profile("quick", "title: q\nprestart: 0\nperiod: {length: 1, marks: none}\n")
    runner = Runner(Engine(profile.load(str(quick))), [RecordingOutput()])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    link = HallLinkSide(runner)
    link.profile = runner.engine.profile.key
    match = MatchLink(link, tmp_path)
    runner.listeners.append(match)
    runner.hall_result, runner.hall_next = match.result_shown, match.next_shown
    server = WebServer(runner, "127.0.0.1", free_port(), TokenStore(tmp_path / "state"))
    server.start()
    try:
        key = runner.engine.profile.key
        match.handle(Pairing("p1", 1, "A.1", "group A", "Novák", "Veselý", key, 1.0).to_json())
        wait_for(lambda: runner.status().names["home"] == "Novák", "the names", 10)
        for command in (Command(Action.START), Command(Action.GOAL, team="home")):
            runner.submit(command).result(timeout=5)
        wait_for(lambda: runner.status().state == "finished", "the end", 10)
        match.handle(Pairing("p2", 2, "A.3", "group A", "Petr", "Svoboda", key, 2.0).to_json())
        with browser(1280, 720) as screen:
            screen.get(f"{server.url}/")
            sub = screen.find_element("id", "sub")
            wait_for(lambda: "next: Petr – Svoboda" in sub.text, "next: on the display", 10)
            assert "NOVÁK WINS" in sub.text.upper(), sub.text
            assert screen.find_element("id", "name-home").text == "Novák"
    finally:
        server.close()
        runner.submit(Command(Action.QUIT)).result(timeout=5)
        thread.join(5)
