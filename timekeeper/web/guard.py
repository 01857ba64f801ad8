"""The one hardened base of both web apps, the box's (`run --web`, web/server.py) and the
desk's (`hall serve`, hall/desk/overview.py): how many connections they hold, for how long, what a
request may be, what every answer says about itself, and what a stranger can make them log.

The box runs under `LimitNOFILE=256`: every connection is a descriptor, and the journal, the
ctl socket, the sound device and the hall's link need theirs. So connections are capped per
address and in all, well below the limit (a connection over the cap is closed at once, before
aiohttp sees it); one that has not sent a whole request head within HEAD_TIMEOUT, or sits idle
that long between requests, is closed (aiohttp's keep-alive timer, which covers both); a body
must arrive within BODY_TIMEOUT and is parsed as bounded JSON (safejson); malformed requests
are answered with JSON, never a traceback; every answer carries the same security headers
(CSP: nothing but the app's own files); requests are rate-limited per address in lanes (pages,
their files, commands); and every line a client's address can cause is counted against that
address's log budget. `Guard` holds one app's share of all this, `Site` serves an app behind
it, `error` is the only shape of a refusal, `authorized` the only token check."""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import language
from timekeeper.web import safejson
from timekeeper.web.ratelimit import RateLimits
from timekeeper.web.token import TokenStore

log = logging.getLogger(__name__)

HEAD_TIMEOUT = 10.0  # s: a request head must be whole this soon; an idle keep-alive ends then
MAX_CONNECTIONS = 160  # in all (of LimitNOFILE=256: the rest is the box's own)
# descriptors kept for the app's own work whatever the web does: the journal, the tournament's
# files, the bus, the sound; the cap in all is lowered to fit a lower limit (`ulimit -n`)
RESERVED_FILES = 96
MAX_PER_ADDRESS = 16  # a browser opens six at most, a WebSocket one more
MAX_LINE, MAX_FIELD, MAX_HEADERS = 2048, 4096, 48  # a request line, a header, their number
LOG_LINES_PER_MINUTE = 10  # per client address; the rest is counted and said once a minute
ACCEPT_CALM = 5.0  # s without an accept failure before "accepting again" is said
SHOWN = 60  # characters of anything a client sent that may reach the log
BODY_TIMEOUT = 5.0  # s: a request's body must arrive this soon
MAX_PATH = 256  # characters of a request's path (a longer one is refused unread)
READS_PER_SECOND, READ_BURST = 20.0, 60  # pages, status and live links per client address
# a page's own scripts and styles, apart: a reload costs 4 of them, and a 429 on one would
# leave the page dead (a person flipping through the languages hit it)
FILES_PER_SECOND, FILE_BURST = 80.0, 240
FILES = ("/static/", "/lang/")
STATIC = Path(__file__).resolve().parent / "static"
COMMON_SCRIPT = STATIC / "common.js"  # the words, the clock, the parts: every page's, both apps'

HANDLER_OPTIONS: dict[str, Any] = {
    "keepalive_timeout": HEAD_TIMEOUT,
    "max_line_size": MAX_LINE,
    "max_field_size": MAX_FIELD,
    "max_headers": MAX_HEADERS,
    "lingering_time": 1.0,
}


def shown(text: object) -> str:
    """What a client sent, cut short for the log (and never a whole 5,000-character path)."""
    text = str(text)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}…({len(text)} chars)"


class LogBudget:
    """At most `lines` log lines a minute per client address; what is held back is said in
    one line when the minute is over (so a flood costs the log a line a minute)."""

    def __init__(self, lines: int = LOG_LINES_PER_MINUTE, keep: int = 1024) -> None:
        self.lines, self.keep = lines, keep
        self._minute = 0
        self._used: Counter[str] = Counter()

    def allow(self, who: str) -> bool:
        minute = int(time.monotonic() // 60)
        if minute != self._minute:
            held = {w: n - self.lines for w, n in self._used.items() if n > self.lines}
            if held:
                log.warning(
                    "web: %d more log lines held back from %s",
                    sum(held.values()),
                    ", ".join(f"{w} ({n})" for w, n in sorted(held.items())[:5]),
                )
            self._minute, self._used = minute, Counter()
        if who not in self._used and len(self._used) >= self.keep:
            return False
        self._used[who] += 1
        return self._used[who] <= self.lines


class Doors:
    """Open connections per address and in all; accept errors said once, not per try.

    At the cap in all, the oldest connection that is not in a request (one still dribbling
    its head, or idle between requests) is closed to let the new one in: a slowloris from
    many addresses costs a display its slot only while it is making one, never for good."""

    def __init__(
        self, budget: LogBudget, total: int = MAX_CONNECTIONS, per_address: int = MAX_PER_ADDRESS
    ) -> None:
        self.budget, self.total, self.per_address = budget, total, per_address
        self.open: Counter[str] = Counter()
        self.handlers: dict[RequestHandler, None] = {}  # admitted, oldest first
        self.turned_away = self.evicted = 0
        self._said_minute = -1
        self.accept_failing = False
        self._failed_at, self._failed_tries = float("-inf"), 0

    def admit(self, who: str, handler: RequestHandler | None = None) -> bool:
        now = time.monotonic()
        if self.accept_failing and now - self._failed_at > ACCEPT_CALM:
            self.accept_failing = False
            log.warning(
                "web: accepting connections again (%d accept tries failed)", self._failed_tries
            )
        if sum(self.open.values()) >= self.total and self.open[who] < self.per_address:
            self._evict_one()
        if sum(self.open.values()) >= self.total or self.open[who] >= self.per_address:
            self.turned_away += 1
            minute = int(now // 60)
            if minute != self._said_minute:  # (once a minute in all, whoever it is)
                self._said_minute = minute
                log.warning(
                    "web: connections turned away: %d from %s open, %d in all (caps "
                    "%d and %d); %d turned away so far",
                    self.open[who],
                    who,
                    sum(self.open.values()),
                    self.per_address,
                    self.total,
                    self.turned_away,
                )
            return False
        self.open[who] += 1
        if handler is not None:
            self.handlers[handler] = None
        return True

    def _evict_one(self) -> None:
        for handler in self.handlers:
            # (aiohttp's own flag: a request being answered — a live page's is, for good)
            if not getattr(handler, "_request_in_progress", True):
                self.evicted += 1
                who, handler._who = handler._who, None  # type: ignore[attr-defined]
                self.release(who, handler)  # (now: its connection_lost comes later)
                handler.force_close()
                if handler.transport is not None:
                    handler.transport.abort()
                return

    def release(self, who: str, handler: RequestHandler | None = None) -> None:
        if handler is not None:
            self.handlers.pop(handler, None)
        self.open[who] -= 1
        if self.open[who] <= 0:
            del self.open[who]

    def loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """The loop's exception handler: asyncio says an accept failure (out of descriptors)
        with a traceback per try; here it is said once, until a connection is let in again."""
        exc = context.get("exception")
        if "accept" in str(context.get("message", "")) or (
            isinstance(exc, OSError) and exc.errno in (23, 24)
        ):
            now = time.monotonic()
            if not self.accept_failing:
                self.accept_failing, self._failed_tries = True, 0
                log.error(
                    "web: cannot accept connections (%s); asyncio retries each second, said once",
                    exc or context.get("message"),
                )
            self._failed_at, self._failed_tries = now, self._failed_tries + 1
            return
        if self.budget.allow("(loop)"):
            loop.default_exception_handler(context)


def handler_class(doors: Doors, budget: LogBudget, name: str = "box") -> type[RequestHandler]:
    """aiohttp's connection handler, behind the doors: over a cap, a connection is closed
    before it is read; a bad request is answered as JSON and logged within the budget."""

    class GuardedHandler(RequestHandler):
        _who: str | None = None  # its address, while it counts against the caps
        _refused = False

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            peer = transport.get_extra_info("peername")
            who = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
            self._who = who
            if not doors.admit(who, self):
                self._who, self._refused = None, True
                # (its descriptor is free at once; aiohttp never saw it)
                cast(asyncio.Transport, transport).abort()
                return
            super().connection_made(transport)

        def connection_lost(self, exc: BaseException | None) -> None:
            if self._refused:
                return
            if self._who is not None:
                doors.release(self._who, self)
                self._who = None
            super().connection_lost(exc)

        def handle_error(
            self,
            request: Any,
            status: int = 500,
            exc: BaseException | None = None,
            message: str | None = None,
        ) -> web.StreamResponse:
            who = self._who or "?"
            if budget.allow(who):  # (the kind of fault only: a parser's message may
                # quote the request, a header with a token in it too)
                log.warning(
                    "web: bad request from %s: %d %s",
                    who,
                    status,
                    type(exc).__name__ if exc else "",
                )
            if request.writer.output_size > 0:
                raise ConnectionError("the answer had begun: the connection is dropped")
            reason = (
                f"the request was not HTTP the {name} understands"
                if status < 500
                else f"the {name} could not answer that (see its log)"
            )
            response = web.Response(
                status=status,
                content_type="application/json",
                text=json.dumps({"ok": False, "error": reason}),
            )
            response.force_close()
            return response

    return GuardedHandler


def policy(styles: str = "'self'") -> str:
    """The Content-Security-Policy of every answer: the app's own files and nothing else (no
    inline script anywhere); `styles`: a page's own style sources (a printed sheet's hash)."""
    return (
        f"default-src 'self'; script-src 'self'; style-src {styles}; connect-src 'self'; "
        "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    )


def error(status: int, reason: str) -> web.Response:
    """The one shape of a refusal, in both apps: `{"ok": false, "error": reason}`."""
    return web.json_response({"ok": False, "error": reason}, status=status)


class Refusal(Exception):
    """Raised by a handler (or `json_body`) to answer with `error(status, reason)`."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def authorized(request: web.Request, tokens: TokenStore) -> bool:
    """Whether the request carries the token (`Authorization: Bearer TOKEN`, the scheme in
    any case, as HTTP has it)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and tokens.valid(token.strip() or None)


async def json_body(
    request: web.Request, max_bytes: int, max_depth: int = 3, bad: str = "the body must be JSON"
) -> object:
    """The request's body as bounded JSON; a body too long (413), not whole within
    BODY_TIMEOUT (408) or not such JSON (400, saying `bad`) raises Refusal."""
    too_long = Refusal(413, f"a command is at most {max_bytes} bytes")
    if request.content_length is not None and request.content_length > max_bytes:
        raise too_long
    try:
        data = await asyncio.wait_for(request.read(), BODY_TIMEOUT)
    except web.HTTPRequestEntityTooLarge:
        raise too_long from None
    except (TimeoutError, ConnectionError, web.HTTPBadRequest):
        raise Refusal(408, "the command's body did not arrive whole") from None
    try:
        return safejson.loads(data, max_bytes, max_depth)
    except ValueError:
        raise Refusal(400, bad) from None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def page(file: Path, lang: str) -> Handler:
    """A page's handler: the file in the app's language `lang`, or the one its `?lang=`
    asks for (language.page)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        code = language.chosen(request.query.get("lang"), lang)
        html = language.page(file.read_text(encoding="utf-8"), code)
        return web.Response(text=html, content_type="text/html")

    return answer


def words(*sections: str) -> Handler:
    """The handler of `/lang/{code}.js`: the sections of lang/XX.json a page needs, as the
    script it loads first (language.script); 404 for an unknown language."""

    async def answer(request: web.Request) -> web.StreamResponse:
        code = request.match_info["code"]
        if code not in language.LANGUAGES:
            return error(404, f"no such language; known: {', '.join(language.LANGUAGES)}")
        try:
            text = language.script(code, *sections)
        except ConfigError as exc:  # (a user's correction broken since the start: say so)
            log.error("web: language %s: %s", code, exc)
            return error(500, f"language {code}: {exc}")
        return web.Response(text=text, content_type="text/javascript")

    return answer


def files(*paths: Path) -> Handler:
    """The handler of `/static/{name}`: exactly the files given, by their names (no path is
    ever made from what a request says)."""
    by_name = {path.name: path for path in paths}

    async def answer(request: web.Request) -> web.StreamResponse:
        path = by_name.get(request.match_info["name"])
        if path is None:
            return error(404, "not found")
        return web.FileResponse(path)

    return answer


class Guard:
    """One app's hardening: its doors (caps), its log budget, its rate limits per address
    (the first lane whose path prefix a request's path starts with; pages and the API's
    reads otherwise), and the middleware that applies them to every request."""

    def __init__(self, name: str) -> None:
        self.name = name  # "box" or "desk": what a refusal says could not answer
        self.budget = LogBudget()
        self.doors = Doors(self.budget)
        self.handler_options = dict(HANDLER_OPTIONS)  # (a test shortens the timeouts)
        self.reads = RateLimits(READS_PER_SECOND, READ_BURST)
        self.lanes: list[tuple[str, RateLimits, str]] = [
            (prefix, RateLimits(FILES_PER_SECOND, FILE_BURST), "too many requests: slow down")
            for prefix in FILES
        ]

    def limit(self, prefix: str, rate: float, burst: int, said: str) -> None:
        """Requests under `prefix` (an app's commands) get their own, stricter lane."""
        self.lanes.insert(0, (prefix, RateLimits(rate, burst), said))

    def app(self, max_body: int) -> web.Application:
        """An aiohttp app behind this guard, taking bodies of at most `max_body` bytes."""
        return web.Application(client_max_size=max_body, middlewares=[self.middleware])

    def _lane(self, path: str) -> tuple[RateLimits, str]:
        for prefix, limits, said in self.lanes:
            if path.startswith(prefix):
                return limits, said
        return self.reads, "too many requests: slow down"

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every answer: a rate limit, no tracebacks, and headers that keep other sites out."""
        who = request.remote or "?"
        limits, said = self._lane(request.path)
        if not limits.allow(who):
            response: web.StreamResponse = error(429, said)
        else:
            response = await self._answer(request, handler, who)
        if not response.prepared:
            headers = response.headers
            headers["X-Content-Type-Options"] = "nosniff"
            headers["X-Frame-Options"] = "DENY"
            headers["Referrer-Policy"] = "no-referrer"
            headers.setdefault("Content-Security-Policy", policy())
            headers.setdefault("Cache-Control", "no-cache")
        return response

    async def _answer(self, request: web.Request, handler: Handler, who: str) -> web.StreamResponse:
        try:
            if len(request.raw_path) > MAX_PATH:
                raise web.HTTPRequestURITooLong()
            return await handler(request)
        except Refusal as exc:
            return error(exc.status, exc.reason)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return error(exc.status, exc.reason)
        except OSError as exc:  # (a file name the system refuses: too long, not a name)
            if self.budget.allow(who):
                log.info("web: %s from %s: %s", shown(request.path), who, exc.strerror)
            return error(404, "not found")
        except Exception:
            if self.budget.allow(who):  # a fault of ours: the traceback, within bounds
                log.exception("web: %s %s from %s failed", request.method, shown(request.path), who)
            return error(500, f"the {self.name} could not answer that (see its log)")


class Site:
    """An app served behind its guard's doors on `host:port`, quiet (no access log: what a
    stranger asks reaches the log only through the guard's budget) unless `access_log`."""

    def __init__(
        self, guard: Guard, app: web.Application, host: str, port: int, access_log: bool = False
    ) -> None:
        self.guard, self.app, self.host, self.port = guard, app, host, port
        self.access_log = logging.getLogger("aiohttp.access") if access_log else None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None

    async def start(self) -> None:
        """Listen (raises OSError, e.g. for a port in use), the cap in all fitted under the
        process's descriptor limit: a flood of connections never takes the descriptors
        the app's own files and its bus need (a desk's result read from its journal)."""
        loop = asyncio.get_running_loop()
        doors = self.guard.doors
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if limit != resource.RLIM_INFINITY and doors.total > limit - RESERVED_FILES:
            doors.total = max(doors.per_address, limit - RESERVED_FILES)
            log.info(
                "web: at most %d connections (ulimit -n %d, %d kept for the %s's files)",
                doors.total,
                limit,
                RESERVED_FILES,
                self.guard.name,
            )
        loop.set_exception_handler(self.guard.doors.loop_error)
        options = self.guard.handler_options | {"access_log": self.access_log}
        runner = web.AppRunner(self.app, handle_signals=False, shutdown_timeout=1.0, **options)
        await runner.setup()
        server = runner.server
        assert server is not None  # (made by setup)
        handler = handler_class(self.guard.doors, self.guard.budget, self.guard.name)
        try:  # (aiohttp's TCPSite, with its connection handler behind the doors)
            self._listener = await loop.create_server(
                lambda: handler(server, loop=loop, **options), self.host, self.port, backlog=64
            )
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._runner is not None:
            await self._runner.cleanup()


def run(site: Site) -> None:
    """Serve `site` until SIGINT or SIGTERM (the desk's `hall serve`), then end cleanly."""

    async def main() -> None:
        stop, loop = asyncio.Event(), asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
        await site.start()
        try:
            await stop.wait()
        finally:
            await site.close()

    asyncio.run(main())
