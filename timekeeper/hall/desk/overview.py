"""`timekeeper hall serve`: the desk's overview page — every table of the hall in a grid,
read from their retained statuses on the bus — and its buttons for the hall's commands.

The page and `/api/hall` are open (read-only) on the desk's network, as a box's display is;
commands need the desk's token (`Authorization: Bearer TOKEN`), made at first start and kept
0600 in the state folder, as a box's operator token is. No cookies, no CORS. Its hardening (caps,
timeouts, rate limits, bounded JSON, headers) is the box's own: web/guard.py."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from timekeeper.hall.bus.messages import KINDS, MAX_ADD
from timekeeper.hall.desk.console import instant
from timekeeper.hall.desk.link import Desk, DeskError, anonymous_warning, new_command
from timekeeper.show import language
from timekeeper.web import guard
from timekeeper.web.guard import error
from timekeeper.web.token import TokenStore

if TYPE_CHECKING:
    from timekeeper.hall.desk.director import Director

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 1024
COMMANDS_PER_SECOND, COMMAND_BURST = 2.0, 10


class Overview:
    def __init__(
        self,
        desk: Desk,
        tokens: TokenStore,
        lang: str = language.DEFAULT,
        warnings: list[str] | None = None,
    ) -> None:
        self.desk, self.tokens, self.lang = desk, tokens, language.check(lang)
        self.warnings = warnings or []  # shown on the page (an anonymous broker)
        # with a tournament, the tables' statuses seen through its view (players.tables_seen:
        # a result the public may not see yet is not on the table's status either)
        self.seen: Callable[[dict[str, dict], bool], dict[str, dict]] | None = None
        self.guard = guard.Guard("desk")  # (the caps, the timeouts, the rate limits: the box's)
        self.guard.limit(
            "/api/hall/command",
            COMMANDS_PER_SECOND,
            COMMAND_BURST,
            "too many commands; wait a moment",
        )

    def app(self) -> web.Application:
        """The overview's app (`add_board` adds the board's routes); its files are the
        desk's scripts and styles and the script every page shares (guard.COMMON_SCRIPT)."""
        app = self.guard.app(MAX_BODY)
        app.add_routes(
            [
                web.get("/", self._root),
                web.get("/hall", guard.page(STATIC / "hall.html", self.lang)),
                web.get("/api/hall", self._tables),
                web.get("/lang/{code}.js", guard.words("hall", "parts", "series")),
                web.get(
                    "/static/{name}",
                    guard.files(guard.COMMON_SCRIPT, *STATIC.glob("*.js"), *STATIC.glob("*.css")),
                ),
                web.post("/api/hall/command", self._command),
            ]
        )
        return app

    async def _root(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/hall")

    async def _tables(self, request: web.Request) -> web.Response:
        tables = self.desk.tables()
        if self.seen is not None:
            tables = self.seen(tables, guard.authorized(request, self.tokens))
        return web.json_response(
            {
                "hall": self.desk.hall,
                "now": time.time(),
                "tables": tables,
                "warnings": self.warnings,
                "on_bus": getattr(self.desk, "on_bus", True),
            }
        )

    async def _command(self, request: web.Request) -> web.Response:
        if not guard.authorized(request, self.tokens):
            return error(401, "commands need the desk's token (the link `hall serve` printed)")
        body = await guard.json_body(request, MAX_BODY, bad="the body must be a JSON object")
        if not isinstance(body, dict):
            return error(400, "the body must be a JSON object")
        kind = body.get("command")
        if kind not in KINDS:
            return error(400, f"unknown command; commands: {', '.join(KINDS)}")
        try:
            at = instant(None, _text(body.get("in")), kind)
            seconds = _seconds(body.get("seconds")) if kind == "add" else None
            profile = _text(body.get("profile"))
            table = _text(body.get("table"))
        except (DeskError, ValueError) as exc:
            return error(400, str(exc))
        command = new_command(kind, at, profile, seconds)
        loop = asyncio.get_running_loop()
        try:  # (waits for the tables' answers: off the loop)
            answers = await loop.run_in_executor(None, self.desk.send, command, table)
        except ValueError as exc:
            return error(400, str(exc))
        log.info(
            "desk: %s sent from the overview page (%d tables answered)", command.id, len(answers)
        )
        return web.json_response({"ok": True, "id": command.id, "at": at, "answers": answers})


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str | int) or isinstance(value, bool) or len(str(value)) > 32:
        raise ValueError("a field is too long or of the wrong kind")
    return str(value)


def _seconds(value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < abs(value) <= MAX_ADD
    ):
        raise ValueError(f"seconds must be a number, 0 < |seconds| <= {MAX_ADD:g}")
    return float(value)


def serve(
    desk: Desk,
    host: str,
    port: int,
    state: Path,
    out: Callable[[str], object] = print,
    director: Director | None = None,
    lang: str = language.DEFAULT,
    access_log: bool = False,
) -> int:
    """Serve the overview until interrupted, in language `lang` unless a page asks for another
    (`/hall?lang=de`); prints the links (the desk's with its token) and each warning once;
    with a `director` (hall serve --tournament), the board too (hall/desk/board.py). Every request
    is logged only with `access_log` (the board asks each second)."""
    tokens = TokenStore(state)
    warnings = [w for w in (anonymous_warning(desk.broker),) if w]
    for warning in warnings:
        out(warning)
    shown = "localhost" if host in ("127.0.0.1", "::1") else host
    out(f"hall {desk.hall}: overview http://{shown}:{port}/hall (read-only)")
    out(f"the desk's link (commands): http://{shown}:{port}/hall#token={tokens.token}")
    desk_guard, app = desk_app(desk, tokens, lang, warnings, director)
    if director is not None:
        out(f"the board (the hall's big screen): http://{shown}:{port}/board")
        out(f"the players' pages (phones; a QR code on the board): http://{shown}:{port}/player")
    guard.run(guard.Site(desk_guard, app, host, port, access_log))
    return 0


def desk_app(
    desk: Desk,
    tokens: TokenStore,
    lang: str = language.DEFAULT,
    warnings: list[str] | None = None,
    director: Director | None = None,
) -> tuple[guard.Guard, web.Application]:
    """The desk's app as `hall serve` serves it, and its guard: the overview, and with a
    `director` (`--tournament`) the board and the players' pages."""
    overview = Overview(desk, tokens, lang, warnings)
    app = overview.app()
    if director is not None:
        from timekeeper.hall.desk.board import add_board
        from timekeeper.hall.desk.players import add_players, tables_seen

        add_board(app, overview.guard, director, tokens, lang)
        add_players(app, director, lang)
        overview.seen = lambda statuses, full: tables_seen(director, statuses, full)
    return overview.guard, app
