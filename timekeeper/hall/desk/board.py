"""`/board` on the desk (`hall serve --tournament FILE`): the hall's big screen — the round's
pairings by table with each table's live clock and score, the group standings, the bracket
and the next round — and the tournament's printable sheets (tournament/sheets.py).

The page, its JSON (`/api/board`) and the sheets are read-only and open, as the overview is,
and what they show without the desk's token is the public's view (tournament/publicview.py,
the file's `public:`); with the token (the director's board, `/board#token=…`, sends it) the
director's, everything. The ITHF form (`ithf-form.txt`) is the director's alone: it is the
final ranking in order, which would give away a frozen round. The director's actions (call
a round, type or correct a result, accept or refuse a result the desk did not call, confirm
a result that came home) need the desk's token, as the overview's commands do."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from timekeeper.hall.desk import players
from timekeeper.rules.decision import DECISIONS
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import language
from timekeeper.tournament import export, sheets
from timekeeper.tournament.publicview import seen
from timekeeper.web import guard
from timekeeper.web.guard import error
from timekeeper.web.token import TokenStore

if TYPE_CHECKING:
    from timekeeper.hall.desk.director import Director

PAGE = Path(__file__).resolve().parent / "static" / "board.html"
# a sheet is one file to print or keep, its style inside: the CSP allows that style alone
SHEET_POLICY = guard.policy(
    f"'sha256-{base64.b64encode(hashlib.sha256(sheets.CSS.encode()).digest()).decode()}'"
)
SHEETS = {
    "groups": sheets.groups_sheet,
    "rounds": sheets.rounds_sheet,
    "bracket": sheets.bracket_sheet,
}
# what a page shows depends on the token it came with: no cache keeps one for another
PRIVATE = {"Cache-Control": "no-store", "Vary": "Authorization"}
_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
ACTIONS_PER_SECOND, ACTION_BURST = 1.0, 5
MAX_BODY = 1024  # (the overview's app takes no more)


class Board:
    def __init__(
        self, director: Director, tokens: TokenStore, lang: str = language.DEFAULT
    ) -> None:
        self.director, self.tokens, self.lang = director, tokens, language.check(lang)

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/board", guard.page(PAGE, self.lang)),
            web.get("/api/board", self._state),
            web.get("/board/sheets/{name}", self._sheet),
            web.post("/api/board/{action}", self._action),
        ]

    async def _state(self, request: web.Request) -> web.Response:
        loop = asyncio.get_running_loop()  # (reads the journal: off the loop)
        full = guard.authorized(request, self.tokens)
        state = await loop.run_in_executor(None, players.board_state, self.director, full)
        return web.json_response(state, headers=PRIVATE)

    async def _sheet(self, request: web.Request) -> web.Response:
        if request.match_info["name"] == "ithf-form.txt":  # the ranking's form, to copy
            # the director's, as the full sheets are: its order is the final ranking, which
            # gives away a frozen round's result (and who leads between groups)
            if not guard.authorized(request, self.tokens):
                return error(401, "the ITHF form is the director's: it needs the desk's token")
            return web.Response(text=export.form(self.director.t).text(), headers=PRIVATE)
        make = SHEETS.get(request.match_info["name"].removesuffix(".html"))
        if make is None:
            return error(404, f"sheets: {', '.join(SHEETS)}, ithf-form.txt")
        base = players.base_url(request, self.director.t.spec.public.url)
        t = self.director.t
        view = seen(t, self.director.wall(), guard.authorized(request, self.tokens))
        return web.Response(
            text=make(t, players.player_link(base), view),
            content_type="text/html",
            headers={"Content-Security-Policy": SHEET_POLICY, **PRIVATE},
        )

    async def _action(self, request: web.Request) -> web.Response:
        if not guard.authorized(request, self.tokens):
            return error(401, "the director's actions need the desk's token")
        body = await guard.json_body(request, MAX_BODY, bad="the body must be a JSON object")
        if not isinstance(body, dict):
            return error(400, "the body must be a JSON object")
        action, loop = request.match_info["action"], asyncio.get_running_loop()
        try:
            if action == "round":
                number = body.get("round")
                if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                    return error(400, "round must be a round's number")
                called = await loop.run_in_executor(None, self.director.call_round, number)
                return web.json_response({"ok": True, "tables": dict(called)})
            if action == "result":
                args = _result_args(body)
                if isinstance(args, str):
                    return error(400, args)
                done = await loop.run_in_executor(None, self.director.correct, *args)
                return web.json_response({"ok": True, "done": done})
            ident = body.get("id")
            if not isinstance(ident, str) or not _ID.fullmatch(ident):
                return error(400, "id must be a result's id")
            if action == "accept":
                done = await loop.run_in_executor(None, self.director.accept, ident)
                return web.json_response({"ok": True, "done": done})
            if action == "refuse":
                await loop.run_in_executor(None, self.director.refuse, ident)
                return web.json_response({"ok": True})
            if action == "confirm":
                await loop.run_in_executor(None, self.director.confirm, ident)
                return web.json_response({"ok": True})
        except ConfigError as exc:  # (TournamentError; or a journal broken by hand: named)
            return error(400, str(exc))
        return error(404, "actions: round, result, accept, refuse, confirm")


def _result_args(body: dict) -> tuple[int, str, str, str, str] | str:
    """A result (or correction) typed on the board: {round, table, score, decided, reason},
    as `timekeeper tournament result ROUND TABLE SCORE [--ot|--sd|--so] --reason R` takes
    it; or what is wrong with it."""
    number, table, score = body.get("round"), body.get("table"), body.get("score")
    decided, reason = body.get("decided", "regulation"), body.get("reason", "")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        return "round must be a round's number"
    if not isinstance(table, str) or not _ID.fullmatch(table):
        return "table must be a table's name"
    if not isinstance(score, str) or not re.fullmatch(r"\d{1,2}:\d{1,2}", score):
        return "score must be HOME:AWAY, e.g. 3:1"
    if decided not in DECISIONS:
        return f"decided is one of {', '.join(DECISIONS)}"
    if not isinstance(reason, str) or len(reason) > 200:
        return "reason must be a line of text"
    return number, table, score, decided, reason


def add_board(
    app: web.Application,
    desk_guard: guard.Guard,
    director: Director,
    tokens: TokenStore,
    lang: str = language.DEFAULT,
) -> None:
    """The board's routes on the overview's app, its actions in a lane of their own."""
    desk_guard.limit(
        "/api/board/", ACTIONS_PER_SECOND, ACTION_BURST, "too many actions; wait a moment"
    )
    app.add_routes(Board(director, tokens, lang).routes())
