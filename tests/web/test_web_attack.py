"""The web server under attack from the hall's Wi-Fi: idle and half-open
connections, floods of connections, pings and bad requests, against the real aiohttp server
(and, for the descriptor limit, a real box under the unit's LimitNOFILE=256)."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from helpers import connect, free_port, http_code, wait_for
from webbox import browser, have_browser

from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.web import server as web_server
from timekeeper.web.server import WebServer
from timekeeper.web.token import TokenStore

HEAD = 2.0  # s: the head/idle timeout in these tests (the box's is guard.HEAD_TIMEOUT)


@pytest.fixture
def box(tmp_path: Path):
    """A runner and its web server with a short head timeout: (runner, server)."""
    runner = Runner(Engine(profile.load("hokejbal")), [])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    server = WebServer(runner, "127.0.0.1", free_port(), TokenStore(tmp_path / "state"))
    server.guard.handler_options["keepalive_timeout"] = HEAD
    server.doors.total = 40  # (so that the cap in all is reached from a few addresses)
    server.start()
    yield runner, server
    server.close()
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(5)


def raw(server: WebServer, data: bytes, source: str = "127.0.0.1") -> socket.socket:
    return connect(server.port, data, source)


def status_from(server: WebServer, source: str) -> int:
    return http_code(server.port, "/api/status", source)


# the caps, the timeouts, bad requests and bodies: tests/web/test_web_guard.py, for the box and
# the desk alike


async def _pages(server: WebServer, n: int, source: str) -> list[int]:
    """Open n live pages from `source`: the status each got (101: a page)."""
    connector = aiohttp.TCPConnector(local_addr=(source, 0), limit=0)
    codes = []
    async with aiohttp.ClientSession(connector=connector) as session:
        pages = []
        for _ in range(n):
            try:
                pages.append(await session.ws_connect(f"http://127.0.0.1:{server.port}/api/live"))
                codes.append(101)
            except aiohttp.WSServerHandshakeError as exc:
                codes.append(exc.status)
        for page in pages:
            await page.close()
    return codes


def test_one_address_gets_a_fair_share_of_the_live_pages(box) -> None:
    _, server = box
    codes = asyncio.run(_pages(server, web_server.MAX_LIVE_PER_ADDRESS + 2, "127.0.0.5"))
    assert codes.count(101) == web_server.MAX_LIVE_PER_ADDRESS and codes[-1] == 503
    assert asyncio.run(_pages(server, 1, "127.0.0.6")) == [101]  # another display still can


def test_a_ping_flood_that_never_reads_is_closed(box) -> None:
    _, server = box

    async def flood() -> bool:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(
                f"http://127.0.0.1:{server.port}/api/live", autoping=False
            )
            for _ in range(500):  # pings, never reading a pong
                try:
                    await ws.ping(b"x" * 100)
                except ConnectionError:
                    break
            return await asyncio.wait_for(_ends(ws), 10)

    async def _ends(ws) -> bool:
        while True:
            msg = await ws.receive()
            if msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.ERROR,
            ):
                return True

    assert asyncio.run(flood())
    wait_for(lambda: not server.clients, "the flooding page dropped")
    assert status_from(server, "127.0.0.1") == 200


ACCEPT_SCRIPT = """
import logging, resource, sys, threading, time
from pathlib import Path
from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.engine import Engine
from timekeeper.web.server import WebServer
from timekeeper.web.token import TokenStore
logging.basicConfig(level=logging.INFO, stream=sys.stdout)
resource.setrlimit(resource.RLIMIT_NOFILE, (80, 80))
runner = Runner(Engine(profile.load("hokejbal")), [])
threading.Thread(target=runner.run, daemon=True).start()
server = WebServer(runner, "127.0.0.1", int(sys.argv[1]), TokenStore(Path(sys.argv[2])))
server.doors.total = server.doors.per_address = 10_000  # (no caps: the limit is hit)
server.start()
print("ready", flush=True)
sys.stdin.readline()
"""


@pytest.mark.slow
def test_an_accept_error_is_logged_once_not_per_try(tmp_path: Path) -> None:
    """Without the caps, a descriptor limit is reached: asyncio's accept loop fails each try;
    the box says so once, and again when it accepts connections again."""
    import subprocess
    import sys

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", ACCEPT_SCRIPT, str(port), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    reader = threading.Thread(
        target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True
    )
    reader.start()

    def said(words: str) -> int:
        return sum(words in line for line in list(seen))

    def served() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2) as a:
            return a.status == 200

    try:
        wait_for(lambda: said("ready"), "the server up", 20)
        held = []
        for _ in range(120):
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                break
        wait_for(lambda: said("cannot accept connections"), "the limit hit", 10)
        threading.Event().wait(2.5)  # an observation window: asyncio's retries, each second
        for s in held:
            s.close()
        wait_for(
            lambda: served() and said("accepting connections again"),
            "served again",
            20,
            interval=0.5,
        )
    finally:
        proc.communicate("quit\n", timeout=10)
        reader.join(5)
    out = "".join(seen)
    assert said("cannot accept connections") == 1, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


@pytest.mark.slow
@pytest.mark.skipif(not have_browser(), reason="needs chromium and chromium-driver")
def test_the_operator_page_shows_a_pending_hall_command_until_called_off(box) -> None:
    runner, server = box
    runner.submit(Command(Action.START), at=runner.clock() + 600)  # (as a hall start comes)
    with browser(800, 1000) as page:
        page.get(f"http://127.0.0.1:{server.port}/control#token={server.tokens.token}")
        shown = wait_for(lambda: page.find_element("id", "pending").text, "pending shown", 15)
        assert re.fullmatch(r"from the hall: start in \d+ s \(reset calls it off\)", shown), shown
        runner.cancel_scheduled("a test")
        wait_for(lambda: not page.find_element("id", "pending").is_displayed(), "pending gone", 15)
