"""`/board` on the desk (`hall serve --tournament FILE`): the hall's big screen — the round's
pairings by table with each table's live clock and score, the group standings, the bracket
and the next round — and the tournament's printable sheets (tournament/sheets.py).

The page and its JSON (`/api/board`) are read-only and open, as the overview is; the
director's actions (call a round, accept or refuse a result the desk did not call, confirm
a result that came home) need the
desk's token, as the overview's commands do."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from aiohttp import web

from timekeeper.show import language
from timekeeper.tournament import sheets
from timekeeper.tournament.state import TournamentError
from timekeeper.web.ratelimit import RateLimits
from timekeeper.web.token import TokenStore

PAGE = Path(__file__).resolve().parent / "static" / "board.html"
SHEETS = {"groups": sheets.groups_sheet, "rounds": sheets.rounds_sheet,
          "bracket": sheets.bracket_sheet}
_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
READS_PER_SECOND, READ_BURST = 20.0, 60
ACTIONS_PER_SECOND, ACTION_BURST = 1.0, 5


class Board:
    def __init__(self, director, tokens: TokenStore, lang: str = language.DEFAULT) -> None:
        self.director, self.tokens, self.lang = director, tokens, language.check(lang)
        self._reads = RateLimits(READS_PER_SECOND, READ_BURST)
        self._actions = RateLimits(ACTIONS_PER_SECOND, ACTION_BURST)

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/board", self._page), web.get("/api/board", self._state),
                web.get("/board/sheets/{name}", self._sheet),
                web.post("/api/board/{action}", self._action)]

    def _read_ok(self, request: web.Request) -> bool:
        return self._reads.allow(request.remote or "?")

    async def _page(self, request: web.Request) -> web.StreamResponse:
        if not self._read_ok(request):
            return _error(429, "too many requests")
        code = language.chosen(request.query.get("lang"), self.lang)
        return web.Response(text=language.page(PAGE.read_text(encoding="utf-8"), code),
                            content_type="text/html", headers={"Cache-Control": "no-cache"})

    async def _state(self, request: web.Request) -> web.Response:
        if not self._read_ok(request):
            return _error(429, "too many requests")
        loop = asyncio.get_running_loop()  # (reads the journal: off the loop)
        return web.json_response(await loop.run_in_executor(None, self.director.snapshot))

    async def _sheet(self, request: web.Request) -> web.Response:
        if not self._read_ok(request):
            return _error(429, "too many requests")
        make = SHEETS.get(request.match_info["name"].removesuffix(".html"))
        if make is None:
            return _error(404, f"sheets: {', '.join(SHEETS)}")
        return web.Response(text=make(self.director.t), content_type="text/html")

    async def _action(self, request: web.Request) -> web.Response:
        if not self._actions.allow(request.remote or "?"):
            return _error(429, "too many actions; wait a moment")
        auth = request.headers.get("Authorization", "")
        if not self.tokens.valid(auth.removeprefix("Bearer ").strip() or None):
            return _error(401, "the director's actions need the desk's token")
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _error(400, "the body must be a JSON object")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        action, loop = request.match_info["action"], asyncio.get_running_loop()
        try:
            if action == "round":
                number = body.get("round")
                if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                    return _error(400, "round must be a round's number")
                done = await loop.run_in_executor(None, self.director.call_round, number)
                return web.json_response({"ok": True, "tables": dict(done)})
            ident = body.get("id")
            if not isinstance(ident, str) or not _ID.fullmatch(ident):
                return _error(400, "id must be a result's id")
            if action == "accept":
                done = await loop.run_in_executor(None, self.director.accept, ident)
                return web.json_response({"ok": True, "done": done})
            if action == "refuse":
                await loop.run_in_executor(None, self.director.refuse, ident)
                return web.json_response({"ok": True})
            if action == "confirm":
                await loop.run_in_executor(None, self.director.confirm, ident)
                return web.json_response({"ok": True})
        except TournamentError as exc:
            return _error(400, str(exc))
        return _error(404, "actions: round, accept, refuse, confirm")


def _error(status: int, reason: str) -> web.Response:
    return web.json_response({"ok": False, "error": reason}, status=status)


def add_board(app: web.Application, director, tokens: TokenStore,
              lang: str = language.DEFAULT) -> None:
    app.add_routes(Board(director, tokens, lang).routes())
