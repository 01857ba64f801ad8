"""`/player` and `/player/NAME` on the desk (`hall serve --tournament`): a page for every
player, for a phone — the next match (round, table, opponent, about when), the player's
results, the group table and the bracket — and the QR codes that lead there (`/qr/…svg`),
shown on the board and printed on the sheets.

Read-only and open, as the board is, and no token: so what they show is the public's view
(tournament/public.py, the tournament file's `public:`), never more. The board's JSON and the
tables' statuses go through the same view here (`board_state`, `tables_seen`): the public's
without the desk's token, the director's (everything) with it.

"About when" is the plan, not a promise: the round called last began when it was called, and
every round after it takes its profile's match and the changeover (tournament/evening.py's
round lengths)."""

from __future__ import annotations

import asyncio
import datetime
import re
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from timekeeper.hall.desk.seriesview import side_from, side_text, sides_view, standing_for
from timekeeper.show import language
from timekeeper.tournament import evening
from timekeeper.tournament.public import qr_svg
from timekeeper.tournament.publicview import View, seen
from timekeeper.tournament.state import Tournament
from timekeeper.web import guard
from timekeeper.web.guard import error

if TYPE_CHECKING:
    from timekeeper.hall.desk.director import Director

PAGE = Path(__file__).resolve().parent / "static" / "player.html"
_HOST = re.compile(r"[A-Za-z0-9.-]{1,100}(:\d{1,5})?|\[[0-9A-Fa-f:.]{2,64}\](:\d{1,5})?")


def about(
    t: Tournament, called: dict[int, float], round_: int, now: float, lengths: dict[int, float]
) -> float | None:
    """When round `round_` is likely to begin (seconds since the epoch): a round called began
    when it was called; a later one after the rounds between, each as long as `lengths` says
    (and never before the current round could end, i.e. now); with nothing called, the file's
    `start:` plus the plan, or now plus the rounds before it."""
    if round_ in called:
        return called[round_]
    before = [r for r in called if r < round_]
    if before:
        last = max(before)
        planned = called[last] + sum(v for r, v in lengths.items() if last <= r < round_)
        soonest = now + sum(v for r, v in lengths.items() if last < r < round_)
        return max(planned, soonest)
    first = min(lengths, default=round_)
    offset = sum(v for r, v in lengths.items() if first <= r < round_)
    if t.spec.start is not None:
        midnight = datetime.datetime.fromtimestamp(now).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        return max(midnight.timestamp() + t.spec.start * 60 + offset, now)
    return now + offset


def player_data(
    t: Tournament, name: str, calls: list[dict], now: float, lengths: dict[int, float]
) -> dict[str, Any]:
    """A player's page: `calls`, the board's tables' pairings (round, match, sent)."""
    public = seen(t, now, director=False)
    called: dict[int, float] = {}
    for p in calls:
        called[p["round"]] = min(called.get(p["round"], p["sent"]), p["sent"])
    mine = [m for m in t.fixtures() if name in public.named(m)]
    upcoming = [m for m in mine if m.result is None]
    nxt = None
    if upcoming:
        m = upcoming[0]
        home = m.home == name
        nxt = {
            "round": m.slot.round,
            "table": m.slot.table,
            "match": m.id,
            "stage": m.stage,
            # (as the public's view may name it: a frozen group's place as its seat, "A1")
            "opponent": side_text(t, m, "away" if home else "home", public),
            "opponent_from": side_from(t, m, "away" if home else "home", public),
            "called": any(p["match"] == m.id for p in calls),
            "about": about(t, called, m.slot.round, now, lengths),
            "series": standing_for(m, name),
        }
    results = []
    for m in mine:
        if m.result is None:
            continue
        home = m.home == name
        r = m.result
        shown = public.results.get(m.id, False)
        mine_goals, theirs = (r.home, r.away) if home else (r.away, r.home)
        results.append(
            {
                "round": m.slot.round,
                "stage": m.stage,
                "opponent": m.away if home else m.home,
                "score": f"{mine_goals}:{theirs}{r.text()[len(f'{r.home}:{r.away}') :]}"
                if shown
                else None,
                "outcome": None
                if not shown
                else "won"
                if mine_goals > theirs
                else "lost"
                if mine_goals < theirs
                else "drawn",
                "series": standing_for(m, name) if shown else None,
            }
        )
    group = next((g for g, players in t.groups.items() if name in players), None)
    return {
        "title": t.spec.title,
        "player": name,
        "group": group,
        "table": public.groups.get(group, []) if group else [],
        "frozen": public.frozen.get(group) if group else None,
        "points_hidden": public.points_hidden,
        "next": nxt,
        "results": results,
        "bracket": [
            {
                "stage": m.stage,
                "sides": public.sides(m),
                **sides_view(t, m, public),
                "result": m.result.text() if m.result and public.results.get(m.id) else None,
                "round": m.slot.round,
                "table": m.slot.table,
            }
            for m in t.fixtures()
            if m.knockout
        ],
        "done": nxt is None and bool(mine),
        "now": now,
    }


def board_state(director: Director, full: bool) -> dict[str, Any]:
    """The board's JSON (the director's snapshot) seen through the view (publicview.seen):
    with the desk's token (`full`) the director's, everything; without it the public's — the
    group tables as `public:` lets them be seen, a result (on a table's tile, in the bracket)
    only where the view shows it, the tables' statuses by `tables_seen`, and none of what
    waits for the director (results to accept or confirm, the desk's log); `frozen` (group
    -> the group round its table stands at) and `points_hidden` say what it holds back."""
    state = director.snapshot()
    t = director.t
    v = seen(t, director.wall(), full)
    state["groups"] = {g: rows for g, rows in v.groups.items() if g in state.get("groups", {})}
    # what the view holds back, so that the board can say why a cell is blank
    state["frozen"] = {g: n for g, n in v.frozen.items() if g in state["groups"]}
    state["points_hidden"] = v.points_hidden
    hidden = _hidden_tables(director, v)
    for tile in state["tables"]:
        if tile["table"] in hidden:
            tile["result"] = None
        tile["status"] = _seen_status(tile["status"], tile["table"] in hidden)
    for m in state["bracket"]:
        fixture = t.fixture(m["id"])
        m["sides"] = v.sides(fixture)
        m.update(sides_view(t, fixture, v))
        if not v.results.get(m["id"], False):
            m["result"] = None
    for m in state["next"]["matches"]:
        m["sides"] = v.sides(t.fixture(m["match"]))
    if not full:
        state.update(pending=[], unconfirmed=[], events=[])
    state["players_url"] = t.spec.public.url  # ("": the board's own address)
    return state


def tables_seen(director: Director, statuses: dict[str, dict], full: bool) -> dict[str, dict]:
    """The tables' statuses (`/api/hall`) seen through the view: a table whose match has a
    result the view hides shows its state and clock, not its score."""
    hidden = _hidden_tables(director, seen(director.t, director.wall(), full))
    return {table: _seen_status(s, table in hidden) for table, s in statuses.items()}


def _hidden_tables(director: Director, v: View) -> set[str]:
    """The tables whose match called last has a result `v` does not show."""
    t = director.t
    return {
        table
        for table, p in director.files.called.items()
        if p.match in t.results and not v.results.get(p.match, False)
    }


KEPT = ("state", "part", "remaining", "countdown", "period", "periods", "waiting_for", "names")


def _seen_status(entry: Any, hidden: bool) -> Any:
    """A table's status as the view lets it be seen: its match's state and clock without the
    score (nor anything else a box sends) where the result is hidden."""
    if not hidden or not entry or not isinstance(entry.get("status"), dict):
        return entry
    kept = {k: v for k, v in entry["status"].items() if k in KEPT}
    return {**entry, "status": {**kept, "score": None}}


def base_url(request: web.Request, configured: str) -> str:
    """The desk's address for a QR code: the tournament's `public: url:`, else the one the
    asking browser used (its Host header, checked: it goes into a picture, nothing else)."""
    if configured:
        return configured
    host = request.host if _HOST.fullmatch(request.host or "") else "localhost"
    return f"{request.scheme}://{host}"


def player_link(base: str, name: str | None = None) -> str:
    return f"{base}/player" + (f"/{urllib.parse.quote(name, safe='')}" if name else "")


class Players:
    def __init__(self, director: Director, lang: str = language.DEFAULT) -> None:
        self.director, self.lang = director, language.check(lang)
        self._lengths: tuple[object, dict[int, float]] | None = None

    def routes(self) -> list[web.RouteDef]:
        page = guard.page(PAGE, self.lang)
        return [
            web.get("/player", page),
            web.get("/player/{name}", page),
            web.get("/api/player", self._list),
            web.get("/api/player/{name}", self._player),
            web.get("/qr/player.svg", self._qr),
            web.get("/qr/player/{name}.svg", self._qr),
        ]

    def _read(self) -> tuple[Tournament, list[dict]]:
        state = self.director.snapshot()  # (the journal read again, the calls as they stand)
        calls = [x["pairing"] for x in state["tables"] if x.get("pairing")]
        return self.director.t, calls

    def lengths(self, t: Tournament) -> dict[int, float]:
        """The rounds' planned lengths, kept while the draw stays the same (they load the
        stages' profiles)."""
        key = (t.spec.file, t.draw.seed if t.draw else None, len(t.slots))
        if self._lengths is None or self._lengths[0] != key:
            try:
                self._lengths = (key, evening.round_lengths(t))
            except Exception:  # (a profile gone since the draw: no estimate, not a 500)
                self._lengths = (key, {})
        return self._lengths[1]

    async def _list(self, request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()
        t, _ = await loop.run_in_executor(None, self._read)
        players = [
            {
                "name": p.name,
                "club": p.club,
                "group": next((g for g, ps in t.groups.items() if p.name in ps), None),
            }
            for p in t.spec.players
        ]
        return web.json_response({"title": t.spec.title, "players": players})

    async def _player(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        loop = asyncio.get_running_loop()
        t, calls = await loop.run_in_executor(None, self._read)
        if name not in t.spec.names:
            folded = {n.casefold(): n for n in t.spec.names}
            if name.casefold() not in folded:
                return error(404, "no such player in this tournament (see /player)")
            name = folded[name.casefold()]
        now = self.director.wall()
        data = player_data(t, name, calls, now, self.lengths(t))
        return web.json_response(data)

    async def _qr(self, request: web.Request) -> web.Response:
        name = request.match_info.get("name")
        if name is not None and name not in self.director.t.spec.names:
            return error(404, "no such player in this tournament")
        link = player_link(base_url(request, self.director.t.spec.public.url), name)
        return web.Response(
            text=qr_svg(link),
            content_type="image/svg+xml",
            headers={"Cache-Control": "no-cache"},
        )


def add_players(app: web.Application, director: Director, lang: str = language.DEFAULT) -> None:
    """The player pages' routes on the desk's app (beside the board's)."""
    app.add_routes(Players(director, lang).routes())
