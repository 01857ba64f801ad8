"""The web server's doors: how many connections it holds, for how long, and what a stranger
can make it write to the log.

The box runs under `LimitNOFILE=256`: every connection is a descriptor, and the journal, the
ctl socket, the sound device and the hall's link need theirs. So connections are capped per
address and in all, well below the limit (a connection over the cap is closed at once, before
aiohttp sees it); one that has not sent a whole request head within HEAD_TIMEOUT, or sits idle
that long between requests, is closed (aiohttp's keep-alive timer, which covers both);
malformed requests are answered with JSON, never a traceback; and every line a client's
address can cause is counted against that address's log budget."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger(__name__)

HEAD_TIMEOUT = 10.0  # s: a request head must be whole this soon; an idle keep-alive ends then
MAX_CONNECTIONS = 160  # in all (of LimitNOFILE=256: the rest is the box's own)
MAX_PER_ADDRESS = 16  # a browser opens six at most, a WebSocket one more
MAX_LINE, MAX_FIELD, MAX_HEADERS = 2048, 4096, 48  # a request line, a header, their number
LOG_LINES_PER_MINUTE = 10  # per client address; the rest is counted and said once a minute
ACCEPT_CALM = 5.0  # s without an accept failure before "accepting again" is said
SHOWN = 60  # characters of anything a client sent that may reach the log

HANDLER_OPTIONS: dict[str, Any] = {
    "keepalive_timeout": HEAD_TIMEOUT, "max_line_size": MAX_LINE,
    "max_field_size": MAX_FIELD, "max_headers": MAX_HEADERS, "lingering_time": 1.0}


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
                log.warning("web: %d more log lines held back from %s", sum(held.values()),
                            ", ".join(f"{w} ({n})" for w, n in sorted(held.items())[:5]))
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

    def __init__(self, budget: LogBudget, total: int = MAX_CONNECTIONS,
                 per_address: int = MAX_PER_ADDRESS) -> None:
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
            log.warning("web: accepting connections again (%d accept tries failed)",
                        self._failed_tries)
        if sum(self.open.values()) >= self.total and self.open[who] < self.per_address:
            self._evict_one()
        if sum(self.open.values()) >= self.total or self.open[who] >= self.per_address:
            self.turned_away += 1
            minute = int(now // 60)
            if minute != self._said_minute:  # (once a minute in all, whoever it is)
                self._said_minute = minute
                log.warning("web: connections turned away: %d from %s open, %d in all (caps "
                            "%d and %d); %d turned away so far", self.open[who], who,
                            sum(self.open.values()), self.per_address, self.total,
                            self.turned_away)
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
        self.handlers.pop(handler, None)
        self.open[who] -= 1
        if self.open[who] <= 0:
            del self.open[who]

    def loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """The loop's exception handler: asyncio says an accept failure (out of descriptors)
        with a traceback per try; here it is said once, until a connection is let in again."""
        exc = context.get("exception")
        if "accept" in str(context.get("message", "")) or (
                isinstance(exc, OSError) and exc.errno in (23, 24)):
            now = time.monotonic()
            if not self.accept_failing:
                self.accept_failing, self._failed_tries = True, 0
                log.error("web: cannot accept connections (%s); asyncio retries each "
                          "second, said once", exc or context.get("message"))
            self._failed_at, self._failed_tries = now, self._failed_tries + 1
            return
        if self.budget.allow("(loop)"):
            loop.default_exception_handler(context)


def handler_class(doors: Doors, budget: LogBudget) -> type[RequestHandler]:
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
                transport.abort()  # (its descriptor is free at once; aiohttp never saw it)
                return
            super().connection_made(transport)

        def connection_lost(self, exc: BaseException | None) -> None:
            if self._refused:
                return
            if self._who is not None:
                doors.release(self._who, self)
                self._who = None
            super().connection_lost(exc)

        def handle_error(self, request: Any, status: int = 500,
                         exc: BaseException | None = None,
                         message: str | None = None) -> web.StreamResponse:
            who = self._who or "?"
            if budget.allow(who):  # (the kind of fault only: a parser's message may
                # quote the request, a header with a token in it too)
                log.warning("web: bad request from %s: %d %s", who, status,
                            type(exc).__name__ if exc else "")
            if request.writer.output_size > 0:
                raise ConnectionError("the answer had begun: the connection is dropped")
            reason = "the request was not HTTP the box understands" if status < 500 else \
                "the box could not answer that (see its log)"
            response = web.Response(status=status, content_type="application/json",
                                    text=json.dumps({"ok": False, "error": reason}))
            response.force_close()
            return response

    return GuardedHandler
