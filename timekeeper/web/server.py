"""The web server: the display page, the operator page, and a small JSON API, from the box's
own process.

It runs aiohttp on a thread of its own with its own event loop, so that the runner's timing
never waits for a browser: told once per change (a runner listener), it only drops the status
it is handed into a slot and wakes the loop (it never blocks), and each page has a
one-message slot and a send timeout of its own, so a slow or vanished client is dropped
without stalling the others.

    GET  /              the display page (open)
    GET  /control       the operator page (commands need the token)
    GET  /overlay       a score bar for a stream (OBS browser source): transparent, read-only
    GET  /api/status    the status as `ctl status --json` gives it (`Status.to_dict()`,
                        the profile's facts the pages need among them: `add_step`,
                        `length`, `tenths`) (open)
    POST /api/command   {"command": "add", "args": ["10"]}, header Authorization: Bearer TOKEN
    GET  /api/live      WebSocket: the status on every change, and at least every second
    GET  /lang/XX.js    the pages' words in language XX (lang/XX.json, docs/web.md)

A page is in the box's language (`language:` in its config, English by default) unless its
address asks for another (`/?lang=de`); the box says which in the page itself: its `<html
lang>` and the words script it loads."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable

from aiohttp import WSMsgType, web

from timekeeper.rules.commands import Action, Command, Refused, command_line
from timekeeper.rules.engine import Status
from timekeeper.show import language
from timekeeper.sound.listener import LiveRunner, RunnerListener
from timekeeper.web import guard, safejson
from timekeeper.web.guard import error
from timekeeper.web.listen import url_host
from timekeeper.web.ratelimit import Bucket
from timekeeper.web.token import TokenStore

log = logging.getLogger(__name__)

STATIC = guard.STATIC
HEARTBEAT = 1.0  # a status at least this often (pages say OFFLINE after 2.5 s of silence)
SEND_TIMEOUT = 2.0  # a page that takes longer to take one message is dropped
REPLY_TIMEOUT = 5.0  # as the ctl socket waits for the runner
MAX_BODY = 2048  # bytes of a command request
MAX_ARGS, MAX_ARG = 4, 32  # a command's words and their length
MAX_CLIENTS = 140  # live pages at once (within guard.MAX_CONNECTIONS)
MAX_LIVE_PER_ADDRESS = 8  # live pages from one address: no one takes every slot
MAX_BUFFERED = 64 * 1024  # bytes a page has not taken yet: more, and it is dropped
COMMANDS_PER_SECOND, COMMAND_BURST = 5.0, 20  # per client address
SESSION_CLOSED = 4001  # WebSocket close code: the operator link was renewed


class _Client:
    """One live page: the latest message waits in a one-message slot until sent."""

    def __init__(self, ws: web.WebSocketResponse, who: str) -> None:
        self.ws, self.who = ws, who
        self.slot: str | None = None
        self.ready = asyncio.Event()
        self.reply: str | None = None
        self.token: str | None = None  # an operator page's token (closed when renewed)
        self.ending: tuple[int, bytes] | None = None  # a close the pump sends (code, why)
        self.stuck = False  # it took longer than SEND_TIMEOUT for a message

    def offer(self, message: str) -> None:
        self.slot = message  # an unsent older status is simply replaced
        self.ready.set()

    def end(self, code: int, why: bytes) -> None:
        self.ending = (code, why)  # sent by the pump: the only writer on this socket
        self.ready.set()

    def offer_first(self, message: str) -> None:
        self.reply = message  # an answer to the page itself (sent before any status)
        self.ready.set()

    def backlog(self) -> int:
        """Bytes written to this page that it has not taken yet."""
        transport = _transport(self.ws)
        return transport.get_write_buffer_size() if transport is not None else 0

    async def pump(self) -> None:
        """The only sender on this page's socket (aiohttp allows one writer at a time); ends
        when the page is gone or took longer than SEND_TIMEOUT for one message."""
        while not self.ws.closed:
            await self.ready.wait()
            self.ready.clear()
            messages = [m for m in (self.reply, self.slot) if m is not None]
            self.reply = self.slot = None
            for message in messages:
                if self.backlog() > MAX_BUFFERED:  # it does not read: it gets no more
                    log.debug("dropping a live page that does not read")
                    self.stuck = True
                    return
                try:
                    await asyncio.wait_for(self.ws.send_str(message), SEND_TIMEOUT)
                except (TimeoutError, ConnectionError, RuntimeError) as exc:
                    log.debug("dropping a live page: %s", exc or type(exc).__name__)
                    self.stuck = isinstance(exc, TimeoutError)
                    return
            if self.ending is not None:
                code, why = self.ending
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.ws.close(code=code, message=why), SEND_TIMEOUT)
                return


def _transport(ws: web.WebSocketResponse) -> asyncio.Transport | None:
    writer = getattr(ws, "_writer", None)  # (aiohttp keeps the page's transport here)
    return getattr(writer, "transport", None)


class WebServer(RunnerListener):
    def __init__(
        self,
        box: LiveRunner,
        host: str,
        port: int,
        tokens: TokenStore,
        lang: str = language.DEFAULT,
        commands: dict[str, Callable[[list[str]], dict]] | None = None,
    ) -> None:
        """`commands`: the box's commands beyond the match's, as the ctl socket has them (the
        hall's `result confirm`), each answering as `ctl` does."""
        self.box, self.host, self.port, self.tokens = box, host, port, tokens
        self.lang = language.check(lang)
        self.commands = dict(commands or {})
        self.loop: asyncio.AbstractEventLoop | None = None
        self.clients: set[_Client] = set()
        self._latest: Status | None = None  # the last status the runner handed over
        self._pushed: Status | None = None  # the last of them pushed
        self._woken = False
        self._changed: asyncio.Event | None = None
        self.guard = guard.Guard("box")  # (the caps, the timeouts, the rate limits)
        self.guard.limit(
            "/api/command", COMMANDS_PER_SECOND, COMMAND_BURST, "too many commands: slow down"
        )
        self.doors, self._log_budget = self.guard.doors, self.guard.budget
        self._thread = threading.Thread(target=self._serve, name="web", daemon=True)
        self._started = threading.Event()
        self._failure: BaseException | None = None
        self._stop: asyncio.Event | None = None

    # ------------------------------------------------------------------ the runner's side

    def start(self) -> WebServer:
        """Listen (raises OSError, e.g. for a port in use), then serve on the web thread."""
        self._thread.start()
        self._started.wait()
        if self._failure is not None:
            raise self._failure
        self.box.listeners.append(self)  # (told only while it serves)
        return self

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.box.listeners.remove(self)
        if self.loop is not None and self._stop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(5)

    def match_changed(self, status: Status, now: float) -> None:
        """On the runner's thread: keep the status, wake the loop once; never blocks (one
        reference written; the loop pushes the latest when it wakes)."""
        self._latest = status
        if not self._woken and self.loop is not None and self._changed is not None:
            self._woken = True
            with contextlib.suppress(RuntimeError):  # (the loop has just closed)
                self.loop.call_soon_threadsafe(self._changed.set)

    @property
    def url(self) -> str:
        return f"http://{url_host(self.host)}:{self.port}"

    def link(self, renew: bool = False) -> dict:
        """For `ctl link` (any thread): the operator URL with the token; `renew` makes a new
        token and ends every session of the old one."""
        if renew:
            self.tokens.renew()
            if self.loop is not None:
                self.loop.call_soon_threadsafe(self._end_old_sessions)
            log.info("web: the operator link was renewed; old sessions are closed")
        return {
            "ok": True,
            "url": f"{self.url}/control#token={self.tokens.token}",
            "display": f"{self.url}/",
            "token": self.tokens.token,
            "status": self.box.status().to_dict(),
        }  # (as every ctl reply)

    # ------------------------------------------------------------------ the web thread

    def _serve(self) -> None:
        self.loop = asyncio.new_event_loop()
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:
            self._failure = exc
            self._started.set()
        finally:
            self.loop.close()

    async def _main(self) -> None:
        self._changed, self._stop = asyncio.Event(), asyncio.Event()
        site = guard.Site(self.guard, self.app(), self.host, self.port)
        await site.start()
        log.info(
            "web: display %s/, operator page %s/control (`timekeeper ctl link` gives its link)",
            self.url,
            self.url,
        )
        self._started.set()
        pusher = asyncio.create_task(self._push())
        await self._stop.wait()
        pusher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pusher
        for client in list(self.clients):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.ws.close(), 0.5)
        await site.close()

    def app(self) -> web.Application:
        app = self.guard.app(MAX_BODY)
        app.router.add_get("/", guard.page(STATIC / "display.html", self.lang))
        app.router.add_get("/control", guard.page(STATIC / "control.html", self.lang))
        app.router.add_get("/overlay", guard.page(STATIC / "overlay.html", self.lang))
        app.router.add_get("/api/status", self._status)
        app.router.add_post("/api/command", self._command)
        app.router.add_get("/api/live", self._live)
        app.router.add_get("/lang/{code}.js", guard.words("pages", "parts", "series"))
        app.router.add_get("/static/{name}", guard.files(*STATIC.glob("*.*")))
        return app

    async def _status(self, request: web.Request) -> web.Response:
        return web.json_response(self.box.status().to_dict())

    async def _command(self, request: web.Request) -> web.Response:
        if not guard.authorized(request, self.tokens):
            return error(
                401, "no valid operator token: open the link that `timekeeper ctl link` prints"
            )
        body = await guard.json_body(
            request, MAX_BODY, bad='the body must be JSON, e.g. {"command": "add", "args": ["10"]}'
        )
        try:
            name, args = _words_of(body)
            handler = self.commands.get(name)
            command = None if handler is not None else _match_command(name, args)
        except ValueError as exc:
            return error(400, str(exc))
        if command is None:
            return await self._handled(handler, name, args, request.remote or "?")
        try:
            status = await asyncio.wait_for(
                asyncio.wrap_future(self.box.submit(command)), REPLY_TIMEOUT
            )
        except Refused as exc:
            return error(409, str(exc))
        except TimeoutError:  # (cancelled: the runner drops it unless it is applying it now)
            return error(
                504,
                "the timekeeper did not answer in time: the command may or "
                "may not have been applied; the status shows which",
            )
        if self._log_budget.allow(request.remote or "?"):
            log.info("web: %s from %s", command, request.remote)
        return web.json_response({"ok": True, "status": status.to_dict()})

    async def _handled(self, handler, name: str, args: list, who: str) -> web.Response:
        """One of the box's own commands (`result confirm`): answered as `ctl` answers it."""
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(None, handler, [str(a) for a in args])
        if not answer.get("ok"):
            return error(409, str(answer.get("error", "refused")))
        if self._log_budget.allow(who):
            log.info("web: %s from %s", " ".join([name, *map(str, args)]), who)
        return web.json_response({"ok": True, "status": self.box.status().to_dict()})

    async def _live(self, request: web.Request) -> web.StreamResponse:
        who = request.remote or "?"
        if len(self.clients) >= MAX_CLIENTS:
            return error(503, f"at most {MAX_CLIENTS} live pages at once")
        if sum(c.who == who for c in self.clients) >= MAX_LIVE_PER_ADDRESS:
            return error(503, f"at most {MAX_LIVE_PER_ADDRESS} live pages from one address")
        # autoping off: a page's pings are answered here, counted, and only while it reads
        ws = web.WebSocketResponse(max_msg_size=1024, compress=False, autoping=False)
        await ws.prepare(request)
        client = _Client(ws, who)
        self.clients.add(client)
        client.offer(self._message("status", self.box.status()))
        pump = asyncio.create_task(client.pump())
        listen = asyncio.create_task(self._listen(client))
        try:  # until the page leaves, or its pump gives up on it
            await asyncio.wait({pump, listen}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.clients.discard(client)
            if client.ending is not None and not pump.done():
                # the pump is closing with its own code (a renewed link: 4001): aiohttp's
                # close() first ends our reading task, which got us here; let it finish
                # sending the close, or the page would see the connection merely dropped
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(pump), SEND_TIMEOUT)
            for task in (pump, listen):
                task.cancel()
            if client.stuck and request.transport is not None:
                request.transport.abort()  # a page that takes nothing takes no close either
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 0.5)
        return ws

    async def _listen(self, client: _Client) -> None:
        """A page only ever says who it is: {"token": "..."} (an operator page); a ping is
        answered while the page takes what it is sent; a flood of either ends it."""
        heard = Bucket(2.0, 10)
        with contextlib.suppress(ConnectionError, RuntimeError, TimeoutError):
            async for msg in client.ws:
                if not heard.take() or client.backlog() > MAX_BUFFERED:
                    client.stuck = True  # (aborted: a flooding page takes no close either)
                    return
                if msg.type is WSMsgType.PING:
                    await asyncio.wait_for(client.ws.pong(msg.data), SEND_TIMEOUT)
                    continue
                if msg.type is WSMsgType.PONG:
                    continue
                if msg.type is not WSMsgType.TEXT:
                    return
                try:
                    said = safejson.loads(msg.data, 1024, max_depth=2)
                except ValueError:
                    return
                if not isinstance(said, dict):
                    return
                token = said.get("token")
                ok = self.tokens.valid(token if isinstance(token, str) else None)
                client.token = token if ok else None
                client.offer_first(json.dumps({"type": "auth", "ok": ok}))

    def _end_old_sessions(self) -> None:
        for client in list(self.clients):
            if client.token is not None and not self.tokens.valid(client.token):
                client.token = None
                client.end(SESSION_CLOSED, b"the operator link was renewed")

    def _message(self, kind: str, status: Status) -> str:
        return json.dumps({"type": kind, "status": status.to_dict()}, separators=(",", ":"))

    async def _push(self) -> None:
        """A change at once, else a heartbeat each second: one JSON text for all pages.

        Ends when `_stop` is set, not only when cancelled: Python 3.11's `wait_for` swallows
        a cancel that comes as the wait ends (the runner's last change and the stop arrive
        together at shutdown), and the box then waited 5 s for this loop."""
        assert self._changed is not None and self._stop is not None
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._changed.wait(), HEARTBEAT)
                self._changed.clear()
                self._woken = False  # (before the slot is read: a later change wakes it again)
                status, kind = self._latest, "status"
                if status is None or status is self._pushed:
                    continue
                self._pushed = status
            except TimeoutError:
                if not self.clients:
                    continue
                status, kind = self.box.status(), "heartbeat"
            if not self.clients:
                continue
            message = self._message(kind, status)
            for client in list(self.clients):
                client.offer(message)


def _words_of(body: object) -> tuple[str, list]:
    """The command's name and its arguments, each checked for type and size."""
    if not isinstance(body, dict) or not isinstance(body.get("command"), str):
        raise ValueError('the body must be {"command": NAME, "args": [...]}')
    args = body.get("args", [])
    if (
        not isinstance(args, list)
        or len(args) > MAX_ARGS
        or not all(
            isinstance(a, str | int | float) and not isinstance(a, bool) and len(str(a)) <= MAX_ARG
            for a in args
        )
    ):
        raise ValueError(
            f"args must be a list of at most {MAX_ARGS} words or numbers, each "
            f"at most {MAX_ARG} characters"
        )
    name = body["command"].strip().lower()
    if len(name) > MAX_ARG or not name.replace("-", "").isalpha():
        raise ValueError(f"unknown command {body['command'][:MAX_ARG]!r}")
    return name, args


def _command_of(body: object) -> Command:
    """The match's command a request's JSON names, checked as the ctl socket checks a line."""
    return _match_command(*_words_of(body))


def _match_command(name: str, args: list) -> Command:
    command = Command.parse(command_line([name, *map(str, args)]))  # (names: one arg each)
    if command.action is Action.QUIT:
        raise ValueError(f"{name} is not a command for the web (stop the box with systemctl)")
    return command
