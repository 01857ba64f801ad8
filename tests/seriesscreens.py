"""A play-off night in best-of-5 series as the screens show it, at each moment of a series'
life: game 1 running, a drawn game in sudden death, 2:1 in games, decided. The board and the
players' pages over the real Director (tests/boardhall.py), the box's display page over a
real `timekeeper run --best-of 5` (tests/webbox.py); what each must show then, checked
(`take_night`, `take_box`), and photographed. For tests/web/test_series_screens.py and
scripts/screenshots.py (docs/img/series-*.png: the pictures pass the same checks).
Imported, never collected."""

from __future__ import annotations

import contextlib
import datetime
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from boardhall import BoardDesk, serving_board, status
from helpers import QUICK, wait_for
from webbox import WebBox, browser, drawn

from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.desk.director import calls_path
from timekeeper.tournament import clerk
from timekeeper.tournament.ledger import open_tournament

# SF1 Novák – Svoboda at table 1, SF2 Dvořák – Černý at table 2 (the draw's seed 1), each
# the best of 5; the final and the third place after them
NIGHT = """\
title: Play-off night
rules: {extends: radegast}
tables: 2
players: [Dvořák, Svoboda, Černý, Novák]
stages:
  knockout:
    tree: seeded
    profile: ithf-playoff
    final_profile: ithf-playoff
    best_of: {SF: 5, F: 5}
"""
MOMENTS = ("game1", "sudden", "twoone", "decided")
# each moment: the games typed so far (table -> [(score, decided)]) and each table's box
GAMES: dict[str, dict[str, list[tuple[str, str]]]] = {
    "game1": {"1": [], "2": []},
    "sudden": {"1": [("3:1", "regulation")], "2": [("2:1", "regulation"), ("3:0", "regulation")]},
    "twoone": {
        "1": [("3:1", "regulation"), ("1:2", "sudden_death"), ("2:0", "regulation")],
        "2": [("2:1", "regulation"), ("3:0", "regulation"), ("2:3", "sudden_death")],
    },
    "decided": {
        "1": [("3:1", "regulation"), ("1:2", "sudden_death"), ("2:0", "regulation")],
        "2": [
            ("2:1", "regulation"),
            ("3:0", "regulation"),
            ("2:3", "sudden_death"),
            ("4:1", "regulation"),
        ],
    },
}


class Bus:
    """What the desk publishes (each series' next game, called again), kept: no broker."""

    def __init__(self) -> None:
        self.published: list[tuple[str, bytes]] = []

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> None:
        self.published.append((topic, payload))


class NightDesk(BoardDesk):
    """BoardDesk whose pairings go to `client` (a Bus) rather than a broker."""

    def __init__(self, statuses: dict[str, dict]) -> None:
        super().__init__(statuses)
        self.client = Bus()


def boxes(moment: str) -> dict[str, dict]:
    """Each table's status at `moment`, as the desk holds it."""
    running = ("running", "match")
    tables = {
        "game1": {"1": (running, (1, 0), 192.0), "2": (running, (0, 0), 250.4)},
        "sudden": {"1": (running, (0, 1), 141.0), "2": (("running", "overtime"), (2, 2), None)},
        "twoone": {"1": (running, (0, 0), 288.0), "2": (("prestart", ""), (0, 0), 41.0)},
        "decided": {"1": (running, (1, 1), 97.0), "2": (("finished", "match"), (4, 1), 0.0)},
    }[moment]
    out = {}
    for table, ((state, part), score, left) in tables.items():
        entry = status(state, score, left, part=part, sudden_death=part == "overtime")
        out[table] = {"table": table, **entry}
    return out


def night(folder: Path) -> Path:
    """The night drawn, its semi-finals called (game 1 of each: the board's tiles)."""
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "night.yaml"
    file.write_text(NIGHT, encoding="utf-8")
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 1))
    t, _ = open_tournament(file, drawn=True)
    sent = time.time() - 600
    with open(calls_path(file), "a") as stream:
        for slot in (s for s in t.slots if s.round == 1):
            m = t.fixture(slot.match)
            assert m.home and m.away
            p = Pairing(
                f"{m.id}.1.screens", 1, m.id, m.stage, m.home, m.away, "ithf-playoff", sent,
                True, 5, 1, 0, 0,
            )  # fmt: skip
            stream.write(p.to_json().decode() + "\n")
    return file


def play_to(file: Path, moment: str, desk: NightDesk) -> None:
    """The games of `moment` in the ledger (those not typed yet), the tables' boxes as then."""
    t, ledger = open_tournament(file, drawn=True)
    when = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    for table, games in GAMES[moment].items():
        m = t.at(1, table)
        assert m.series is not None
        for score, decided in games[len(m.series.games) :]:
            ledger.record(t, clerk.result(t, 1, table, score, decided, time=when))
            t, ledger = open_tournament(file, drawn=True)
            m = t.at(1, table)
            assert m.series is not None
    desk.statuses.clear()
    desk.statuses.update(boxes(moment))


@contextlib.contextmanager
def served_night(folder: Path) -> Iterator[tuple[str, Path, NightDesk]]:
    """The desk's board and players' pages over the night: (url, file, desk)."""
    file = night(folder)
    desk = NightDesk(boxes("game1"))
    with serving_board(desk, file, folder / "desk") as (url, _, _):
        yield url, file, desk


# whose phone is looked at, at each moment: a side of SF1 while it runs, SF2's winner at
# the end (the final's opponent not known yet)
PHONES = {"game1": "Novák", "sudden": "Dvořák", "twoone": "Novák", "decided": "Dvořák"}


def night_pages(folder: Path) -> Iterator[tuple[str, str, object]]:
    """The desk's pages at each moment of the night: (moment, what, page) for the board at
    1920×1080 ("board"), its play-off blocks ("bracket": the page they are on) and a
    player's phone at 390×844 ("phone"), each drawn, for the caller to check or photograph."""
    with served_night(folder) as (url, file, desk):
        for moment in MOMENTS:
            play_to(file, moment, desk)
            with browser(1920, 1080) as page:
                page.get(f"{url}/board?turn=600")  # (turned by the caller alone)
                drawn(page, "window.tkBoard.last() !== null")
                yield moment, "board", page
                count = page.execute_script("return window.tkBoard.count()")
                for _ in range(count):
                    if page.execute_script(
                        "return document.querySelector('.page:not([hidden]) .match.series')"
                    ):
                        break
                    page.execute_script("window.tkBoard.turn()")
                yield moment, "bracket", page
            with browser(390, 844, height_of_page=True) as page:
                page.get(f"{url}/player/{PHONES[moment]}")
                drawn(page, "document.querySelector('.next, .none') !== null")
                page.get(f"{url}/player/{PHONES[moment]}")  # (grown to the page's height)
                drawn(page, "document.querySelector('.next, .none') !== null")
                yield moment, "phone", page


def box_pages(folder: Path) -> Iterator[tuple[str, object]]:
    """The box's display page at 1920×1080 at each moment of a `run --best-of 5` (Novák
    home, Svoboda away): game 1 running, a drawn game 2 in its sudden death, 2:1 in games,
    and the series won 3:1 by Novák; (moment, page)."""
    with (
        WebBox(str(quick_profile(folder)), extra=("--best-of", "5")) as box,
        browser(1920, 1080) as page,
    ):
        box.command("names", "Novák", "Svoboda")
        page.get(f"{box.url}/?table=Table 1")
        drawn(page, "window.tkDisplay.online()")
        assert box.command("start")[0] == 200
        wait_for(lambda: box.status()["state"] == "running", "game 1 running", 10)
        assert box.command("goal", "home")[0] == 200
        wait_for(lambda: "1" in page.find_element("id", "score-home").text, "the goal", 10)
        yield "game1", page
        for command in (("pause",), ("set", "0:00"), ("resume",)):
            assert box.command(*command)[0] == 200, command
        wait_for(lambda: box.status()["state"] == "finished", "game 1 won", 10)
        box_game(box, 1, 1)  # game 2: a draw, and its sudden death
        assert box.status()["state"] == "waiting"
        assert box.command("next")[0] == 200
        wait_for(lambda: box.status()["sudden_death"], "the sudden death", 10)
        wait_for(lambda: "game 2" in page.find_element("id", "series").text, "game 2", 10)
        yield "sudden", page
        assert box.command("goal", "away")[0] == 200  # Svoboda wins game 2 in it
        wait_for(lambda: box.status()["state"] == "finished", "game 2 won", 10)
        box_game(box, 2, 0)
        wait_for(
            lambda: page.find_element("id", "series").text == "next: game 4 · Novák leads 2:1",
            "2:1 in games",
            10,
        )
        yield "twoone", page
        box_game(box, 3, 1)
        wait_for(
            lambda: page.find_element("id", "series").text == "Novák wins the series 3:1",
            "the series won",
            10,
        )
        yield "decided", page


def box_game(box: WebBox, home: int, away: int) -> None:
    """One game of the box's series from START to its end: the goals, the clock set to its
    end (a game decided in regulation ends by itself; a draw waits for its overtime)."""
    assert box.command("start")[0] == 200
    wait_for(lambda: box.status()["state"] == "running", "the game running", 10)
    assert box.command("pause")[0] == 200
    for side, goals in (("home", home), ("away", away)):
        for _ in range(goals):
            assert box.command("goal", side)[0] == 200
    for command in (("set", "0:00"), ("resume",)):
        assert box.command(*command)[0] == 200, command
    wait_for(
        lambda: box.status()["state"] in ("finished", "waiting"), "the game's regulation over", 10
    )


def quick_profile(folder: Path) -> Path:
    game = folder / "quick.yaml"
    game.write_text(QUICK, encoding="utf-8")
    return game


# every text on screen under 3 % of its height (the board is read from across a hall)
TOO_SMALL = """
const out = [];
for (const node of document.body.querySelectorAll('*')) {
  if (!node.getClientRects().length) continue;
  const text = [...node.childNodes].filter((n) => n.nodeType === 3)
    .map((n) => n.textContent.trim()).join('');
  const size = parseFloat(getComputedStyle(node).fontSize);
  if (text && size < 0.03 * innerHeight) out.push(`${text.slice(0, 30)}: ${size}px`);
}
return out;
"""
# a series tile, measured: its headline's text and font size, the largest font size of any
# other text on the tile but the clock's, the headline's bottom and the score's top, the state
TILE = """
const card = document.querySelector(`.page:not([hidden]) .card[data-table="${arguments[0]}"]`);
const head = card.querySelector('.serieshead');
let others = 0;
for (const node of card.querySelectorAll('*')) {
  if (head.contains(node) || node.classList.contains('clock')) continue;
  const text = [...node.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (text) others = Math.max(others, parseFloat(getComputedStyle(node).fontSize));
}
const goals = [...card.querySelectorAll('.goals')];
return {head: head.innerText.trim(), size: parseFloat(getComputedStyle(head).fontSize),
  others, bottom: head.getBoundingClientRect().bottom,
  scoreTop: goals[0].getBoundingClientRect().top,
  goals: goals.map((g) => g.textContent),
  games: card.querySelector('.games').textContent,
  state: card.querySelector('.state').textContent,
  clock: card.querySelector('.clock').textContent};
"""
# a play-off block: each side's row (its name, the figure beside it, whether it won), each
# game's score under them, and that each name stands left of its figure
BLOCK = """
const box = document.querySelector(`.page:not([hidden]) .match[data-match="${arguments[0]}"]`);
const rows = [...box.querySelectorAll('.pair')].map((r) => {
  const name = r.querySelector('.name'), figure = r.querySelector('.figure');
  return [name.textContent, figure.textContent, r.classList.contains('won'),
    name.getBoundingClientRect().right <= figure.getBoundingClientRect().left];
});
const games = box.querySelector('.games');
return {rows, games: games ? games.textContent : ''};
"""
HEADS = {
    "game1": {
        "1": "SF1 · best of 5 · game 1\nseries 0:0",
        "2": "SF2 · best of 5 · game 1\nseries 0:0",
    },
    "sudden": {
        "1": "SF1 · best of 5 · game 2\nNovák leads 1:0",
        "2": "SF2 · best of 5 · game 3\nDvořák leads 2:0",
    },
    "twoone": {
        "1": "SF1 · best of 5 · game 4\nNovák leads 2:1",
        "2": "SF2 · best of 5 · game 4\nDvořák leads 2:1",
    },
    "decided": {
        "1": "SF1 · best of 5 · game 4\nNovák leads 2:1",
        "2": "SF2 · best of 5\nDvořák wins the series 3:1",
    },
}
SF1_GAMES = "3:1 · 1:2 (SD) · 2:0"
SF2_GAMES = "2:1 · 3:0 · 2:3 (SD) · 4:1"
# what a player's phone says at each moment (Novák plays SF1; Dvořák wins SF2)
PHONE = {
    "game1": ["against Svoboda", "SF1 · best of 5 · game 1", "called: go to table 1"],
    "sudden": ["against Černý", "SF2 · best of 5 · game 3", "Dvořák leads 2:0", "game 2: 3:0"],
    "twoone": [
        "round 1 · table 1",
        "SF1 · best of 5 · game 4",
        "Novák leads 2:1",
        "game 1: 3:1",
        "game 2: 1:2 (SD)",
        "game 3: 2:0",
        "called: go to table 1",
    ],
    "decided": [
        "round 2 · table 1",
        "against winner of SF1 (Novák – Svoboda)",
        "F · best of 5 · game 1",
        "Dvořák wins the series 3:1",
        "game 3: 2:3 (SD)",
        "game 4: 4:1",
        "won the series 3:1",  # (the results' line)
        "winner of SF1 (Novák – Svoboda) – Dvořák",  # (the play-off list)
        "loser of SF1 (Novák – Svoboda) – Černý",
    ],
}
# the docs' pictures: (moment, what) -> docs/img/series-NAME.png
PICTURES = {
    ("game1", "board"): "board-game1",
    ("sudden", "board"): "board-sudden",
    ("twoone", "board"): "board-twoone",
    ("decided", "board"): "board-decided",
    ("decided", "bracket"): "bracket",
    ("twoone", "phone"): "phone-twoone",
    ("decided", "phone"): "phone-decided",
}


def check_board(moment: str, page) -> None:
    assert page.execute_script(TOO_SMALL) == [], moment
    for table, head in HEADS[moment].items():
        tile = page.execute_script(TILE, table)
        assert tile["head"] == head, (moment, table, tile)
        assert tile["size"] > tile["others"], (moment, table, tile)  # the largest, the clock aside
        assert tile["bottom"] <= tile["scoreTop"] + 1, (moment, table, tile)  # the score under it
        sudden = moment == "sudden" and table == "2"
        assert (tile["state"] == "sudden death") is sudden, (moment, table, tile)
    if moment == "decided":
        tile = page.execute_script(TILE, "2")
        assert (tile["goals"], tile["games"], tile["clock"]) == (["4", "1"], SF2_GAMES, "")
    body = page.find_element("tag name", "body").text
    assert "in games" not in body and "null" not in body
    assert page.execute_script("return window.tkMissing") == []


def check_bracket(moment: str, page) -> None:
    assert page.execute_script(TOO_SMALL) == [], moment
    sf1, sf2 = page.execute_script(BLOCK, "SF1"), page.execute_script(BLOCK, "SF2")
    if moment == "twoone":
        assert sf1 == {
            "rows": [["Novák", "2", False, True], ["Svoboda", "1", False, True]],
            "games": SF1_GAMES,
        }
    if moment == "decided":
        assert sf2 == {
            "rows": [["✓ Dvořák", "3", True, True], ["Černý", "1", False, True]],
            "games": SF2_GAMES,
        }
        final = page.execute_script(BLOCK, "F")
        assert [r[0] for r in final["rows"]] == ["winner of SF1 (Novák – Svoboda)", "Dvořák"]
    assert "in games" not in page.find_element("tag name", "body").text


def check_phone(moment: str, page) -> None:
    body = page.find_element("tag name", "body").text
    for words in PHONE[moment]:
        assert words in body, (moment, words, body)
    assert "null" not in body and "undefined" not in body
    assert page.execute_script("return document.documentElement.scrollWidth <= innerWidth")
    assert page.execute_script("return window.tkMissing") == []
    if moment != "decided":
        return
    assert "in games won" not in body  # (a series' result in words, from the player's side)
    loser = page.current_url.replace(urllib.parse.quote("Dvořák"), urllib.parse.quote("Černý"))
    said = {  # (the loser's page; the opponent to come, in the hall's language too)
        loser: ["lost the series 1:3", "winner of SF1 (Novák – Svoboda) – Dvořák"],
        page.current_url + "?lang=cs": [
            "proti: vítěz SF1 (Novák – Svoboda)",
            "výhra v sérii 3:1",
            "vítěz SF1 (Novák – Svoboda) – Dvořák",
        ],
    }
    for url, words in said.items():
        page.get(url)
        wait_for(
            lambda words=words: all(w in page.find_element("tag name", "body").text for w in words),
            f"{words} on {url}",
            10,
        )
        assert "in games won" not in page.find_element("tag name", "body").text, url
        assert page.execute_script("return window.tkMissing") == []


CHECKS = {"board": check_board, "bracket": check_bracket, "phone": check_phone}


def take_night(folder: Path, out: Path) -> list[Path]:
    """The night's pages checked at each moment, and photographed into `out` (PICTURES)."""
    shots = []
    for moment, what, page in night_pages(folder):
        if (moment, what) in PICTURES:  # (taken first: a check may load the page again)
            shots.append(out / f"series-{PICTURES[moment, what]}.png")
            page.save_screenshot(str(shots[-1]))
        CHECKS[what](moment, page)
    assert len(shots) == len(PICTURES)
    return shots


# the box's display page: the series line at each moment (the won series: the headline)
DISPLAY = {
    "game1": "game 1 · series 0:0",
    "sudden": "game 2 · Novák leads 1:0",
    "twoone": "next: game 4 · Novák leads 2:1",
    "decided": "Novák wins the series 3:1",
}
MEASURE = """
const box = (id) => document.getElementById(id).getBoundingClientRect();
const size = (id) => parseFloat(getComputedStyle(document.getElementById(id)).fontSize);
const svg = document.getElementById('clock'), view = svg.viewBox.baseVal, shown = box('clock');
const scale = Math.min(shown.width / view.width, shown.height / view.height);
return {digitsSize: 100 * scale, series: box('series'), clock: box('clock'), digits: box('digits'),
  seriesSize: size('series'), subSize: size('sub'), nameSize: size('name-home'),
  sub: document.getElementById('sub').textContent,
  text: window.tkDisplay.text(), state: document.getElementById('state').textContent};
"""


def take_box(folder: Path, out: Path) -> list[Path]:
    """The box's display page checked at each moment, photographed into `out`."""
    shots = []
    for moment, page in box_pages(folder):
        if moment in ("sudden", "decided"):
            shots.append(out / f"series-display-{moment}.png")
            page.save_screenshot(str(shots[-1]))
        seen = page.execute_script(MEASURE)
        assert page.find_element("id", "series").text == DISPLAY[moment], (moment, seen)
        if moment == "decided":  # the series the headline, the last game's score under it
            assert seen["series"]["bottom"] <= seen["clock"]["top"] + 1, seen
            assert seen["seriesSize"] > max(seen["subSize"], seen["nameSize"]), seen
            assert seen["seriesSize"] >= seen["digitsSize"], seen  # the digits under it smaller
            assert seen["text"] == "3:1" and seen["sub"].startswith("game 4 · NOVÁK WINS"), seen
        else:
            assert seen["series"]["top"] >= seen["clock"]["bottom"] - 1, seen
    assert len(shots) == 2
    return shots
