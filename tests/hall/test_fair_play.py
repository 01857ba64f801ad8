"""Fair play on every page the desk serves without its token: with `public:` set (points
hidden, a result shown for 15 minutes, the table frozen over the last round), `hall serve
--tournament` — a process on a real broker, as docs/board.md starts it — is asked for every
route its app has that needs no token (taken from the app's router, so that a route added
later is asked too), and no hidden figure is in any answer: not a score of the frozen round,
nor one older than 15 minutes, nor a point or a goal of the group tables, nor the order the
frozen round made (a page listing a group's players as the table stands now, not as it was
frozen, gives the round away as a score would). A route that answers only with the desk's
token (the ITHF form: the final ranking) is the director's. With the token the board, the
sheets and the form show them all."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from boardhall import NAMES, BoardDesk, cup, result, scene, serving_board
from deskhall import Served, tk
from helpers import HALL_WAIT, wait_for
from webbox import browser, have_browser

from timekeeper.hall.bus.broker import Broker, make_client
from timekeeper.hall.bus.messages import topic
from timekeeper.hall.desk import board
from timekeeper.hall.desk.director import Director
from timekeeper.hall.desk.overview import STATIC, desk_app
from timekeeper.show import language
from timekeeper.tournament.ledger import open_tournament
from timekeeper.web.token import TokenStore

PUBLIC = "public:\n  points: hidden\n  results_for_minutes: 15\n  freeze_last_rounds: 1\n"
OLD = ("5:3", "6:4", "5:4", "6:3")  # round 1, 20 minutes ago: no longer shown
RECENT = ("1:0", "2:1", "0:1", "1:2")  # round 2, 5 minutes ago: shown
FROZEN = ("7:6", "9:8", "8:7")  # round 3, the groups' last: frozen, never shown
ROW_FIGURES = ("points", "won", "drawn", "lost", "ot_won", "ot_lost", "goals", "goals_for")


def tokenless_paths(app: Any, t: Any) -> list[str]:
    """Every GET route of the desk's app that answers without the token, each of its
    `{…}` parts filled with every value it takes (a route this does not know fails the test:
    it must be added here, and so it is asked)."""
    values = {
        ("/board/sheets/{name}", "name"): [f"{n}.html" for n in board.SHEETS] + ["ithf-form.txt"],
        ("/player/{name}", "name"): list(t.spec.names),
        ("/api/player/{name}", "name"): list(t.spec.names),
        ("/qr/player/{name}.svg", "name"): list(t.spec.names),
        ("/lang/{code}.js", "code"): list(language.LANGUAGES),
        ("/static/{name}", "name"): [
            p.name for p in STATIC.iterdir() if p.suffix in (".js", ".css")
        ]
        + ["common.js"],
    }
    paths = []
    for route in app.router.routes():
        if route.method != "GET":
            continue
        info = route.resource.get_info()
        if "path" in info:
            paths.append(info["path"])
            continue
        pattern = info["formatter"]
        names = re.findall(r"\{(\w+)\}", pattern)
        assert len(names) == 1 and (pattern, names[0]) in values, f"{pattern}: values?"
        paths += [
            pattern.replace(f"{{{names[0]}}}", urllib.parse.quote(v, safe=""))
            for v in values[pattern, names[0]]
        ]
    return paths


def hidden_in(text: str, figures: set[str]) -> list[str]:
    return [f for f in figures if re.search(rf"(?<![\d:]){re.escape(f)}(?![\d:])", text)]


def row_figures(data: object, hidden: set[str]) -> list[str]:
    """A group table's row (a dict with a player) that carries a figure it may not, and a
    score as {home, away} (a table's live status) that is hidden."""
    found: list[str] = []
    if isinstance(data, dict):
        if "player" in data and "place" in data:
            found += [f"{data['player']}: {k}" for k in ROW_FIGURES if data.get(k) is not None]
        if isinstance(data.get("home"), int) and f"{data['home']}:{data.get('away')}" in hidden:
            found.append(f"{data['home']}:{data['away']} as {{home, away}}")
        for v in data.values():
            found += row_figures(v, hidden)
    elif isinstance(data, list):
        for v in data:
            found += row_figures(v, hidden)
    return found


def both_ways(scores: tuple[str, ...]) -> set[str]:
    return {s for x in scores for s in (x, ":".join(reversed(x.split(":"))))}


def get(base: str, path: str, token: str = "", closed: bool = False) -> str | None:
    """The page's text; None where it needs the token and `closed` allows that."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(base + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.read().decode()
    except urllib.error.HTTPError as exc:
        if closed and exc.code == 401:
            return None
        raise AssertionError(f"{path}: {exc.code}") from None


def page(base: str, path: str, token: str = "") -> str:
    text = get(base, path, token)
    assert text is not None
    return text


def in_order(text: str, names: list[str]) -> bool:
    """Every name is in the text and their first mentions come in this order."""
    at = [text.find(n) for n in names]
    return -1 not in at and at == sorted(at)


@pytest.mark.slow
def test_no_tokenless_page_carries_what_public_hides(broker, tmp_path: Path) -> None:
    now = time.time()
    file = cup(tmp_path, NAMES[:8], tables=4, size=4, public=PUBLIC)
    for table, score in zip("1234", OLD, strict=True):
        result(file, 1, table, score, now - 20 * 60)
    for table, score in zip("1234", RECENT, strict=True):
        result(file, 2, table, score, now - 5 * 60)
    t, _ = open_tournament(file, drawn=True)
    shell = Director(BoardDesk(), file)  # (the app as `hall serve` builds it: its routes)
    _, app = desk_app(BoardDesk(), TokenStore(tmp_path / "routes"), director=shell)
    paths = tokenless_paths(app, t)
    assert {"/api/board", "/board/sheets/groups.html", "/api/hall"} <= set(paths)

    served = Served(broker["url"], file, tmp_path / "desk")
    client = make_client("a-box", Broker.parse(broker["url"]))
    try:
        token = served.token
        called = tk("hall", "round", "3", "--tournament", str(file), "--broker", broker["url"])
        assert called.returncode == 0, called.stderr
        for table, score in zip("123", FROZEN, strict=False):  # (table 4's still to play)
            typed = tk("tournament", "result", "-f", str(file), "3", table, score)
            assert typed.returncode == 0, typed.stderr
        # table 1's box still shows its finished match, as a box does until the next call
        finished = {"state": "finished", "part": "", "score": {"home": 7, "away": 6}}
        status = {"table": "1", "online": True, "sent": time.time(), "status": finished}
        client.connect(Broker.parse(broker["url"]).host, Broker.parse(broker["url"]).port)
        client.loop_start()
        client.publish(topic("hall", "1", "status"), json.dumps(status), qos=1, retain=True)
        wait_for(
            lambda: (served.get("/api/hall")["tables"].get("1") or {}).get("online"),
            "table 1's status at the desk",
            HALL_WAIT,
        )

        full = json.loads(page(served.base, "/api/board", token))
        rows = [r for g in full["groups"].values() for r in g]
        assert all(r["points"] is not None for r in rows)  # the director's board: all of it
        hidden = both_ways(OLD + FROZEN) | {r["goals"] for r in rows if r["goals"] != "0:0"}
        assert hidden_in(page(served.base, "/board/sheets/groups.html", token), both_ways(FROZEN))
        public = json.loads(page(served.base, "/api/board"))
        now_order = {g: [r["player"] for r in full["groups"][g]] for g in full["groups"]}
        frozen_order = {g: [r["player"] for r in public["groups"][g]] for g in public["groups"]}
        moved = [now_order[g] for g in now_order if now_order[g] != frozen_order[g]]
        assert moved, (now_order, frozen_order)  # the frozen round changed a table's order
        form = page(served.base, "/board/sheets/ithf-form.txt", token)
        assert any(in_order(form, order) for order in moved), form  # the director's: as it is

        leaks = {}
        for path in paths:
            text = get(served.base, path, closed=True)
            if text is None:  # the director's alone
                continue
            found = hidden_in(text, hidden)
            found += [f"the order {order}" for order in moved if in_order(text, order)]
            if path.startswith("/api/"):
                found += row_figures(json.loads(text), hidden)
            if "<th>pts</th>" in text:
                found.append("the points' column")
            if found:
                leaks[path] = found
        assert not leaks, leaks
        sheet = page(served.base, "/board/sheets/groups.html")
        assert hidden_in(sheet, both_ways(RECENT))  # what is shown is shown
        assert get(served.base, "/board/sheets/ithf-form.txt", closed=True) is None
        # group A is over, but its table frozen: the play-off does not name its first two
        named = [m["sides"] for m in full["bracket"] if any(p in m["sides"] for p in NAMES)]
        assert named, full["bracket"]
        said = [json.dumps(m, ensure_ascii=False) for m in public["bracket"]]  # (every key)
        assert not [m for m in said if any(p in m for p in NAMES)], said
    finally:
        client.loop_stop()
        client.disconnect()
        served.stop()


@pytest.mark.slow
@pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver")
def test_the_tv_shows_the_public_board_and_the_directors_link_all_of_it(tmp_path: Path) -> None:
    """In Chromium: `/board` asks for the public's board (no points while they are hidden,
    and it says so); `/board#token=…`, the director's link opened on the same TV, for the
    whole of it."""
    desk, file = scene(tmp_path, public="public:\n  points: hidden\n")
    with (
        serving_board(desk, file, tmp_path / "desk") as (url, token, _),
        browser(1920, 1080) as page,
    ):
        points = "return window.tkBoard.last().groups.A.map((r) => r.points)"
        for link, hidden in ((f"{url}/board", True), (f"{url}/board#token={token}", False)):
            page.get("about:blank")
            page.get(link)
            wait_for(
                lambda: page.execute_script("return window.tkBoard.last() !== null"),
                "the board",
                10,
            )
            shown = page.execute_script(points)
            assert (set(shown) == {None}) is hidden, (link, shown)
            cells = page.execute_script(
                "return [...document.querySelectorAll('td.points')].map((n) => n.textContent)"
            )
            assert ("null" not in cells) and (any(cells) is not hidden), cells
            said = page.execute_script("return document.getElementById('pages').textContent")
            assert ("points and goals are not shown during the groups" in said) is hidden, said
