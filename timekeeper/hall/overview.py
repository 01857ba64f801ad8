"""`timekeeper hall serve`: the desk's overview page — every table of the hall in a grid,
read from their retained statuses on the bus — and its buttons for the hall's commands.

The page and `/api/hall` are open (read-only) on the desk's network, as a box's display is;
commands need the desk's token (`Authorization: Bearer TOKEN`), made at first start and kept
0600 in the state folder, as a box's operator token is. No cookies, no CORS."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from aiohttp import web

from timekeeper.hall.console import instant
from timekeeper.hall.desk import ANONYMOUS_WARNING, Desk, DeskError, anonymous_allowed, new_command
from timekeeper.hall.messages import KINDS, MAX_ADD
from timekeeper.show import language
from timekeeper.web import safejson
from timekeeper.web.ratelimit import RateLimits
from timekeeper.web.token import TokenStore

log = logging.getLogger(__name__)

PAGE = Path(__file__).resolve().parent / "static" / "hall.html"
MAX_BODY = 1024
COMMANDS_PER_SECOND, COMMAND_BURST = 2.0, 10
READS_PER_SECOND, READ_BURST = 20.0, 60


class Overview:
    def __init__(self, desk: Desk, tokens: TokenStore, lang: str = language.DEFAULT,
                 warnings: list[str] | None = None) -> None:
        self.desk, self.tokens, self.lang = desk, tokens, language.check(lang)
        self.warnings = warnings or []  # shown on the page (an anonymous broker)
        self._commands = RateLimits(COMMANDS_PER_SECOND, COMMAND_BURST)
        self._reads = RateLimits(READS_PER_SECOND, READ_BURST)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.add_routes([web.get("/", self._root), web.get("/hall", self._page),
                        web.get("/api/hall", self._tables),
                        web.get("/lang/{code}.js", self._words),
                        web.post("/api/hall/command", self._command)])
        return app

    async def _root(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/hall")

    async def _page(self, request: web.Request) -> web.StreamResponse:
        if not self._reads.allow(request.remote or "?"):
            return _error(429, "too many requests")
        code = language.chosen(request.query.get("lang"), self.lang)
        html = language.page(PAGE.read_text(encoding="utf-8"), code)
        return web.Response(text=html, content_type="text/html",
                            headers={"Cache-Control": "no-cache"})

    async def _words(self, request: web.Request) -> web.StreamResponse:
        """The page's words (the `hall` and `parts` sections of lang/XX.json)."""
        if not self._reads.allow(request.remote or "?"):
            return _error(429, "too many requests")
        code = request.match_info["code"]
        if code not in language.LANGUAGES:
            return _error(404, f"no such language; known: {', '.join(language.LANGUAGES)}")
        return web.Response(text=language.script(code, "hall", "parts"),
                            content_type="text/javascript",
                            headers={"Cache-Control": "no-cache"})

    async def _tables(self, request: web.Request) -> web.Response:
        if not self._reads.allow(request.remote or "?"):
            return _error(429, "too many requests")
        return web.json_response({"hall": self.desk.hall, "now": time.time(),
                                  "tables": self.desk.tables(), "warnings": self.warnings,
                                  "on_bus": getattr(self.desk, "on_bus", True)})

    async def _command(self, request: web.Request) -> web.Response:
        if not self._commands.allow(request.remote or "?"):
            return _error(429, "too many commands; wait a moment")
        auth = request.headers.get("Authorization", "")
        if not self.tokens.valid(auth.removeprefix("Bearer ").strip() or None):
            return _error(401, "commands need the desk's token (the link `hall serve` "
                               "printed)")
        try:
            body = safejson.loads(await asyncio.wait_for(request.read(), 5.0), MAX_BODY, 3)
        except ValueError:
            return _error(400, "the body must be a JSON object")
        except (TimeoutError, ConnectionError, web.HTTPBadRequest):
            return _error(408, "the command's body did not arrive whole")
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"a command is at most {MAX_BODY} bytes")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        kind = body.get("command")
        if kind not in KINDS:
            return _error(400, f"unknown command; commands: {', '.join(KINDS)}")
        try:
            at = instant(None, _text(body.get("in")), kind)
            seconds = _seconds(body.get("seconds")) if kind == "add" else None
            profile = _text(body.get("profile"))
            table = _text(body.get("table"))
        except (DeskError, ValueError) as exc:
            return _error(400, str(exc))
        command = new_command(kind, at, profile, seconds)
        loop = asyncio.get_running_loop()
        try:  # (waits for the tables' answers: off the loop)
            answers = await loop.run_in_executor(None, self.desk.send, command, table)
        except ValueError as exc:
            return _error(400, str(exc))
        log.info("desk: %s sent from the overview page (%d tables answered)", command.id,
                 len(answers))
        return web.json_response({"ok": True, "id": command.id, "at": at, "answers": answers})


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str | int) or isinstance(value, bool) or len(str(value)) > 32:
        raise ValueError("a field is too long or of the wrong kind")
    return str(value)


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not 0 < abs(value) <= MAX_ADD:
        raise ValueError(f"seconds must be a number, 0 < |seconds| <= {MAX_ADD:g}")
    return float(value)


def _error(status: int, reason: str) -> web.Response:
    return web.json_response({"ok": False, "error": reason}, status=status)


def serve(desk: Desk, host: str, port: int, state: Path, out=print, director=None,
          lang: str = language.DEFAULT) -> int:
    """Serve the overview until interrupted, in language `lang` unless a page asks for another
    (`/hall?lang=de`); prints the links (the desk's with its token); with a `director`
    (hall serve --tournament), the board too (hall/board.py)."""
    tokens = TokenStore(state)
    warnings = [ANONYMOUS_WARNING] if anonymous_allowed(desk.broker) else []
    for warning in warnings:
        out(warning)
        log.warning("%s", warning)
    shown = "localhost" if host in ("127.0.0.1", "::1") else host
    out(f"hall {desk.hall}: overview http://{shown}:{port}/hall (read-only)")
    out(f"the desk's link (commands): http://{shown}:{port}/hall#token={tokens.token}")
    app = Overview(desk, tokens, lang, warnings).app()
    if director is not None:
        from timekeeper.hall.board import add_board

        add_board(app, director, tokens, lang)
        out(f"the board (the hall's big screen): http://{shown}:{port}/board")
    web.run_app(app, host=host, port=port, print=None, handle_signals=True)
    return 0
