"""A desk's board and player pages served in-process over a drawn tournament, without a broker:
the real Director, Board and Players over a desk that holds its tables' statuses as the bus
would hand them over (test_hall_overview's FakeDesk). Rounds are "called" as the director
writes them (the calls file the Director reads at start), results typed into the ledger as
`timekeeper tournament result` does. For the board's and the player pages' browser tests and
scripts/screenshots.py. (The same pages against real boxes and a real broker, as separate
processes: test_hall_evening.py and test_board.py's `hall serve` test.)"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from helpers import free_port, write_tournament

from timekeeper.hall.bus.messages import HallCommand
from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.desk.director import Director, calls_path
from timekeeper.hall.desk.link import Desk
from timekeeper.hall.desk.overview import Overview, desk_app
from timekeeper.hall.table.deskprompts import desk_prompt
from timekeeper.tournament import clerk
from timekeeper.tournament.ledger import open_tournament
from timekeeper.web.guard import Site
from timekeeper.web.token import TokenStore

RUNNING = {
    "state": "running",
    "part": "period",
    "remaining": 200.0,
    "countdown": None,
    "score": {"home": 1, "away": 0},
    "period": 1,
    "periods": 1,
    "waiting_for": "",
}
PRESTART = {
    "state": "prestart",
    "part": "",
    "remaining": None,
    "countdown": 58.4,
    "score": {"home": 0, "away": 0},
    "period": 0,
    "periods": 1,
    "waiting_for": "",
}


class FakeDesk(Desk):
    """The real Desk's tables and answers without a broker: `statuses` as the bus would have
    them; `send` records the command and answers as a running table refuses a resume."""

    def __init__(self, statuses: dict[str, dict]) -> None:  # (no broker to connect to)
        self.hall = "hall"
        self.statuses = statuses
        self._lock = threading.Lock()
        self.sent: list[HallCommand] = []

    def send(
        self, command: HallCommand, table: str | None = None, wait: float = 2.0
    ) -> dict[str, dict]:
        self.sent.append(command)
        return {
            "1": {
                "table": "1",
                "ok": False,
                "error": "the match is under way" + desk_prompt(RUNNING),
            }
        }


def two_tables(sent: float) -> dict[str, dict]:
    """Tables 1 (running) and 2 (in its pre-start), online and in step, as the bus hands a
    desk their statuses (sent at `sent`)."""
    return {
        table: {
            "table": table,
            "online": True,
            "synced": True,
            "in_step": True,
            "sent": sent,
            "status": status,
        }
        for table, status in (("1", RUNNING), ("2", PRESTART))
    }


@contextlib.contextmanager
def site_thread(site: Site) -> Iterator[Site]:
    """`site` served from an event loop in a thread of its own; closed at the end."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(site.start(), loop).result(10)
    try:
        yield site
    finally:
        asyncio.run_coroutine_threadsafe(site.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@contextlib.contextmanager
def serving(desk: Desk, folder: Path, lang: str = "en") -> Iterator[tuple[str, str]]:
    """The overview of `desk` served as `hall serve` serves it (behind web/guard.py's
    doors) on a free port, its own thread and loop, in `lang`: (url, the desk's token).
    Also used by scripts/screenshots.py."""
    tokens = TokenStore(folder)
    overview = Overview(desk, tokens, lang)
    site = Site(overview.guard, overview.app(), "127.0.0.1", free_port())
    with site_thread(site):
        yield f"http://127.0.0.1:{site.port}", tokens.token


NAMES = (
    "Petr Svoboda",
    "Jan Novák",
    "Tomáš Veselý",
    "Martin Dvořák",
    "Lukáš Černý",
    "Jakub Procházka",
    "Ondřej Kučera",
    "Pavel Horák",
    "Anna Němcová",
    "Eva Marková",
    "Karel Pokorný",
    "Josef Král",
    "Jiří Růžička",
    "Michal Beneš",
    "David Fiala",
    "Filip Sedláček",
)


class BoardDesk(FakeDesk):
    """FakeDesk with what the Director asks of a desk (its readers, a connection never made)."""

    def __init__(self, statuses: dict[str, dict] | None = None) -> None:
        super().__init__(statuses or {})
        self.readers: list = []
        self._connected = threading.Event()
        self.broker = None


def cup(
    folder: Path,
    players: Sequence[str] = NAMES,
    tables: int = 4,
    size: int = 4,
    public: str = "",
    title: str = "Club cup",
) -> Path:
    """A drawn tournament file (radegast: groups of `size`, a knock-out) in `folder`."""
    head = f"title: {json.dumps(title)}\nrules: radegast\ntables: {tables}\nstart: '17:00'\n"
    stages = f"stages:\n  groups:\n    size: {size}\n    advance: 2\n"
    knockout = "  knockout:\n    tree: seeded\n    third_place: true\n"
    file = write_tournament(folder / "cup.yaml", head, players, stages + knockout + public)
    t, ledger = open_tournament(file)
    ledger.record(t, clerk.draw(t, 7))
    return file


def call(file: Path, round_: int, sent: float) -> list[Pairing]:
    """Round `round_` called as the Director writes it (its calls file), at `sent`."""
    t, _ = open_tournament(file, drawn=True)
    out = []
    with open(calls_path(file), "a") as stream:
        for slot in (s for s in t.slots if s.round == round_):
            m = t.fixture(slot.match)
            if m.home is None or m.away is None:
                continue
            p = Pairing(
                f"{m.id}.{round_}.test", round_, m.id, m.stage, m.home, m.away, "radegast", sent
            )
            stream.write(p.to_json().decode() + "\n")
            out.append(p)
    return out


def result(file: Path, round_: int, table: str, score: str, at: float) -> None:
    """A result typed at the desk at `at` (seconds since the epoch)."""
    t, ledger = open_tournament(file, drawn=True)
    when = datetime.datetime.fromtimestamp(at).astimezone().isoformat(timespec="seconds")
    ledger.record(t, clerk.result(t, round_, table, score, time=when))


def play_round(file: Path, round_: int, at: float, scores: Callable[[int], str]) -> None:
    """Every match of round `round_` played: the i-th table's score `scores(i)`."""
    t, _ = open_tournament(file, drawn=True)
    for i, slot in enumerate(s for s in t.slots if s.round == round_):
        result(file, round_, slot.table, scores(i), at)


def status(state: str, score: tuple[int, int], left: float | None = None, **more) -> dict:
    """A table's entry as the desk holds it (its retained status, online)."""
    counting = state in ("prestart", "break", "shot")
    return {
        "online": True,
        "synced": True,
        "in_step": True,
        "sent": time.time(),
        "status": {
            "state": state,
            "part": "period",
            "remaining": None if counting else left,
            "countdown": left if counting else None,
            "score": {"home": score[0], "away": score[1]},
            "period": 1,
            "periods": 1,
            "waiting_for": "",
        }
        | more,
    }


@contextlib.contextmanager
def serving_board(
    desk: BoardDesk,
    file: Path,
    folder: Path,
    lang: str = "en",
    wall: Callable[[], float] = time.time,
) -> Iterator[tuple[str, str, Director]]:
    """The desk's overview, board and player pages as `hall serve --tournament` serves them
    (web/guard.py's doors), on a free port in a thread of their own: (url, token, director)."""
    tokens = TokenStore(folder)
    director = Director(desk, file, wall)
    desk_guard, app = desk_app(desk, tokens, lang, director=director)
    site = Site(desk_guard, app, "127.0.0.1", free_port())
    with site_thread(site):
        yield f"http://127.0.0.1:{site.port}", tokens.token, director


STATES = (
    ("running", (1, 0), 412.3),
    ("stopped", (2, 2), 188.0),
    ("break", (0, 1), 45.0),
    ("finished", (3, 1), 0.0),
    ("prestart", (0, 0), 38.0),
    ("running", (0, 2), 30.5),
    ("waiting", (1, 1), 0.0),
    ("running", (4, 3), 99.0),
)
SCORES = ("2:1", "0:0", "3:2", "1:4", "2:2", "0:1", "5:0", "1:1")


def names(count: int, long: str = "") -> tuple[str, ...]:
    """`count` players' names: NAMES, then numbered ones; `long`: the first one's instead."""
    out = [*NAMES, *(f"Player {n:02d} Nováková" for n in range(len(NAMES) + 1, count + 1))]
    if long:
        out[0] = long
    return tuple(out[:count])


def scene(
    folder: Path,
    players: Sequence[str] = NAMES,
    tables: int = 4,
    now: float | None = None,
    public: str = "",
) -> tuple[BoardDesk, Path]:
    """An evening under way: every group round but the last two played (an hour ago), the
    next called two minutes ago, its tables in the states a hall sees."""
    now = time.time() if now is None else now
    file = cup(folder, players, tables, public=public)
    t, _ = open_tournament(file, drawn=True)
    rounds = sorted({s.round for s in t.slots if s.match in t.group_matches})
    for r in rounds[:-2]:
        call(file, r, now - 3600)
        play_round(file, r, now - 3000, lambda i, r=r: SCORES[(i + r) % len(SCORES)])
    call(file, rounds[-2], now - 120)
    desk = BoardDesk()
    for i, table in enumerate(t.spec.tables):
        state, score, left = STATES[i % len(STATES)]
        desk.statuses[table] = {"table": table, **status(state, score, left)}
    return desk, file
