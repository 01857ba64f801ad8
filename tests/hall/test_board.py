"""The board on the hall's TV and the players' pages on their phones, in Debian's headless
Chromium over the real Director, Board and Players (tests/boardhall.py: the desk's tables as
the bus would hand them over): at 1920×1080 and 1280×720 no text under 3 % of the screen's
height and nothing cut, more tables than fit shown page by page (every one on some page), the
board drawn from the first answer and kept when the desk stops answering; a player's page at
390×844 in the hall's language; and `hall serve --tournament` serving them (a process)."""

from __future__ import annotations

import json
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from boardhall import names, scene, serving_board
from helpers import free_port, hall_serve, wait_for
from webbox import browser, csp_watched, have_browser

from timekeeper.tournament.ledger import open_tournament
from timekeeper.tournament.public import qr_svg

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver"),
]

# what on the page on screen is too small, outside the screen or its page, or cut
PROBLEMS = """
const h = innerHeight, w = innerWidth, out = [];
const root = document.documentElement;
if (root.scrollHeight > h + 1 || root.scrollWidth > w + 1) out.push(`the page scrolls`);
const page = document.querySelector('.page:not([hidden])');
const box = page.getBoundingClientRect();
for (const node of document.body.querySelectorAll('*')) {
  if (!node.getClientRects().length) continue;  // not shown
  const style = getComputedStyle(node);
  const r = node.getBoundingClientRect();
  const text = [...node.childNodes].filter((n) => n.nodeType === 3)
    .map((n) => n.textContent.trim()).join('');
  const name = `${node.tagName}.${node.className} "${node.textContent.slice(0, 40)}"`;
  if (text && parseFloat(style.fontSize) < 0.03 * h) {
    out.push(`${name}: ${style.fontSize} under 3 % of ${h}`);
  }
  if (r.left < -0.5 || r.top < -0.5 || r.right > w + 0.5 || r.bottom > h + 0.5) {
    out.push(`${name} outside the screen`);
  }
  if (page.contains(node) && (r.bottom > box.bottom + 0.5 || r.right > box.right + 0.5)) {
    out.push(`${name} outside its page`);
  }
  if (style.textOverflow === 'ellipsis') out.push(`${name} ellipsis`);
  if (text && style.display !== 'inline' && node.scrollWidth > node.clientWidth + 1) {
    out.push(`${name} cut (${node.scrollWidth} > ${node.clientWidth})`);
  }
}
return out;
"""
ON_PAGE = """return [...document.querySelectorAll('.page:not([hidden]) [data-%s]')]
  .map((n) => n.dataset.%s)"""
LONG = "Maximilián Alexandr Hohenzollern"  # (the longest name a box takes: 32)


def every_page(page, kind: str) -> list[list[str]]:
    """The `kind` (table, group) shown on each page in turn, turned by the page's own turn."""
    count = page.execute_script("return window.tkBoard.count()")
    seen = []
    for _ in range(count):
        seen.append(page.execute_script(ON_PAGE % (kind, kind)))
        page.execute_script("window.tkBoard.turn()")
    return seen


def drawn(page) -> None:
    wait_for(
        lambda: page.execute_script(
            "return document.fonts.status === 'loaded' && window.tkBoard.last() !== null"
        ),
        "the board drawn",
        10,
    )


@pytest.mark.parametrize(("players", "tables"), [(16, 4), (40, 12)])
def test_the_board_fills_the_tv_readably_and_pages_what_does_not_fit(
    tmp_path: Path, players: int, tables: int
) -> None:
    desk, file = scene(tmp_path, names(players, LONG), tables)
    t, _ = open_tournament(file, drawn=True)
    with serving_board(desk, file, tmp_path / "desk") as (url, _, _):
        for width, height in ((1920, 1080), (1280, 720)):
            with browser(width, height) as page, csp_watched(page):
                page.get(f"{url}/board?turn=600")  # (turned by the test alone)
                drawn(page)
                count = page.execute_script("return window.tkBoard.count()")
                for n in range(count):
                    problems = page.execute_script(PROBLEMS)
                    assert problems == [], f"{width}×{height}, page {n + 1}/{count}: {problems}"
                    page.execute_script("window.tkBoard.turn()")
                shown = every_page(page, "table")
                assert sorted(n for names in shown for n in names) == sorted(t.spec.tables), shown
                groups = every_page(page, "group")
                assert sorted(g for names in groups for g in names) == sorted(t.groups), groups
                text = page.find_element("tag name", "body").text
                if count > 1:  # the page indicator, and the pages turn by themselves
                    assert f"page {page.execute_script('return window.tkBoard.shown()') + 1}/"
                    assert "●" in page.find_element("id", "dots").text
                else:
                    assert not page.find_element("id", "turns").is_displayed()
                assert "where do I play next?" in text
                assert page.execute_script("return [window.tkViolations, window.tkMissing]") == [
                    [],
                    [],
                ]
        if tables > 4:  # (the names are whole: wrapped, never cut short)
            assert count > 1


def test_the_board_is_drawn_at_once_says_what_decided_a_place_and_stays_when_offline(
    tmp_path: Path,
) -> None:
    desk, file = scene(tmp_path)
    t, _ = open_tournament(file, drawn=True)
    with (
        serving_board(desk, file, tmp_path / "desk") as (url, _, director),
        browser(1920, 1080) as page,
    ):
        page.get(f"{url}/board?turn=3")
        # before any answer: the title says what it waits for, never a blank screen
        assert page.find_element("id", "title").text
        drawn(page)
        assert page.execute_script("return document.querySelectorAll('.card').length") == 4
        body = lambda: page.find_element("tag name", "body").text  # noqa: E731
        wait_for(
            lambda: page.execute_script("return window.tkBoard.shown()") > 0,
            "the page turned by itself",
            10,
        )
        # the standings say the tie-breaker that put a player above the next one
        state = json.loads(urllib.request.urlopen(f"{url}/api/board", timeout=5).read())
        ahead = {r["ahead_by"] for rows in state["groups"].values() for r in rows}
        assert ahead - {"", "points"}, ahead  # (this evening's ties are broken)
        words = {
            "goal_difference": "goal difference",
            "goals_for": "goals scored",
            "head_to_head": "head-to-head",
            "goals_against": "goals conceded",
            "wins": "more wins",
            "lot": "by lot",
        }
        wait_for(
            lambda: (
                page.execute_script("return window.tkBoard.count()") > 1
                and page.execute_script("return document.querySelectorAll('.by').length")
            ),
            "the groups",
            5,
        )
        said = page.execute_script(
            "return [...document.querySelectorAll('td.by')].map((n) => n.textContent)"
        )
        assert {words[a] for a in ahead if a in words} <= set(said), said
        before = page.execute_script("return document.querySelectorAll('.card').length")

        def broken():
            raise RuntimeError("the journal cannot be read")

        director.snapshot = broken  # the desk stops answering
        wait_for(lambda: "DESK OFFLINE" in body(), "the offline mark", 10)
        assert page.execute_script("return document.querySelectorAll('.card').length") == before
        assert t.spec.title in body()


def test_the_director_corrects_a_result_on_the_board(tmp_path: Path) -> None:
    """With the desk's token, the bar under the pages takes a correction as `tournament result`
    does (round, table, score, how decided, the reason): the ledger keeps it and its reason."""
    desk, file = scene(tmp_path)
    t, _ = open_tournament(file, drawn=True)
    m = next(m for m in t.fixtures() if m.result is not None)
    with (
        serving_board(desk, file, tmp_path / "desk") as (url, token, _),
        browser(1920, 1080) as page,
        csp_watched(page),
    ):
        page.get(f"{url}/board#token={token}")
        drawn(page)
        wait_for(lambda: page.find_element("id", "correct").is_displayed(), "the bar", 10)
        for field, value in (
            ("cRound", str(m.slot.round)),
            ("cTable", m.slot.table),
            ("cScore", "7:0"),
            ("cReason", "the sheet was read wrong"),
        ):
            page.find_element("id", field).send_keys(value)
        page.find_element("css selector", "#correct button").click()

        def corrected():
            fixture = open_tournament(file, drawn=True)[0].fixture(m.id)
            return fixture.result is not None and fixture.result.text().startswith("7:0")

        wait_for(corrected, "the correction in the ledger", 10)
        assert "the sheet was read wrong" in file.with_name("cup.journal.jsonl").read_text()
        assert page.execute_script("return [window.tkViolations, window.tkMissing]") == [[], []]


def test_a_players_page_on_a_phone_in_the_halls_language(tmp_path: Path) -> None:
    desk, file = scene(tmp_path, public="public:\n  points: hidden\n")
    t, _ = open_tournament(file, drawn=True)
    player = t.spec.names[0]
    with (
        serving_board(desk, file, tmp_path / "desk", lang="cs") as (url, _, _),
        browser(390, 844) as page,
        csp_watched(page),
    ):
        page.get(f"{url}/player")
        link = wait_for(
            lambda: page.find_element("link text", player), "the player in the list", 10
        )
        link.click()
        body = lambda: page.find_element("tag name", "body").text  # noqa: E731
        wait_for(lambda: "příští zápas" in body(), "the next match, in Czech", 10)
        m = next(m for m in t.fixtures() if player in (m.home, m.away) and m.result is None)
        opponent = m.away if m.home == player else m.home
        assert f"kolo {m.slot.round} · stůl {m.slot.table}" in body()
        assert f"proti: {opponent}" in body()
        assert "výsledky" in body() and "skupina" in body()
        assert "body se během skupin nezobrazují" in body()  # public: points: hidden
        assert page.execute_script("return document.documentElement.scrollWidth <= innerWidth"), (
            "the phone's page scrolls sideways"
        )
        assert page.execute_script("return [window.tkViolations, window.tkMissing]") == [[], []]
        page.get(f"{url}/player/nobody")
        wait_for(lambda: "takový hráč tu není" in body(), "an unknown player said", 10)


def test_hall_serve_serves_the_player_pages_and_their_qr_codes(tmp_path: Path, broker) -> None:
    """`hall serve --tournament` as a director types it (a process, over a real broker):
    /player, /api/player/NAME, the QR codes with the address they were reached at, the
    printed sheets with theirs."""
    _, file = scene(tmp_path)
    t, _ = open_tournament(file, drawn=True)
    port = free_port()
    server = subprocess.Popen(
        hall_serve(broker["url"], port, tmp_path / "state", "--tournament", str(file)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"

    def get(path: str, token: str = "") -> bytes:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        request = urllib.request.Request(base + path, headers=headers)
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.read()

    try:
        wait_for(lambda: get("/player"), "the players' page", 30)
        listed = json.loads(get("/api/player"))
        assert [p["name"] for p in listed["players"]] == list(t.spec.names)
        name = urllib.parse.quote(t.spec.names[1])
        data = json.loads(get(f"/api/player/{name}"))
        assert data["player"] == t.spec.names[1] and data["next"]["round"] >= 1
        assert get("/qr/player.svg").decode() == qr_svg(f"{base}/player")
        assert get(f"/qr/player/{name}.svg").decode() == qr_svg(f"{base}/player/{name}")
        assert b"<svg" in get("/board/sheets/rounds.html")
        token = (tmp_path / "state" / "hall" / "web-token").read_text().strip()
        form = get("/board/sheets/ithf-form.txt", token).decode()  # the director's, to copy
        assert form.startswith(f"Tournament: {t.spec.title}\n")
        assert f"\nNumber of participants: {len(t.spec.names)}\n" in form
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=10)
    assert "Traceback" not in out, out
    assert f"{'localhost'}:{port}/player" in out
