"""The box (`run --web`) and the desk (`hall serve`) behind the one guard (web/guard.py): the
same caps per address and in all, head and body timeouts, bounded JSON, token check, rate
limits and headers, each test played against both apps (tests/web/test_web_attack.py holds the
box's own: live pages, pings, the descriptor limit); and no page of either has a script or a
style of its own inline, which the CSP would refuse."""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from boardhall import FakeDesk, site_thread, two_tables
from helpers import ROOT, answer, closed, connect, free_port, http_code, wait_for

from timekeeper.box.runner import Runner
from timekeeper.hall.desk import overview as hall_overview
from timekeeper.hall.desk.overview import Overview
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.web import guard
from timekeeper.web import server as web_server
from timekeeper.web.server import WebServer
from timekeeper.web.token import TokenStore

HEAD = 2.0  # s: the head/idle timeout in these tests (the apps' is guard.HEAD_TIMEOUT)


@dataclass
class App:
    """One app served for a test: where, its guard, its token, and how a command is sent."""

    name: str
    port: int
    guard: guard.Guard
    token: str
    command_path: str
    command: dict  # a body it accepts
    pages: tuple[str, ...]  # every page and file it serves
    command_burst: int


def _box(folder: Path) -> Iterator[App]:
    runner = Runner(Engine(profile.load("hokejbal")), [])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    server = WebServer(runner, "127.0.0.1", free_port(), TokenStore(folder))
    server.guard.handler_options["keepalive_timeout"] = HEAD
    server.doors.total = 40  # (so that the cap in all is reached from a few addresses)
    server.start()
    try:
        yield App(
            "box",
            server.port,
            server.guard,
            server.tokens.token,
            "/api/command",
            {"command": "pause"},
            (
                "/",
                "/control",
                "/overlay",
                "/api/status",
                "/lang/en.js",
                "/static/common.js",
                "/static/live.js",
                "/static/style.css",
            ),
            web_server.COMMAND_BURST,
        )
    finally:
        server.close()
        runner.submit(Command(Action.QUIT)).result(timeout=5)
        thread.join(5)


def _desk(folder: Path) -> Iterator[App]:
    desk = FakeDesk(two_tables(0.0))
    overview = Overview(desk, TokenStore(folder))
    overview.guard.handler_options["keepalive_timeout"] = HEAD
    overview.guard.doors.total = 40
    site = guard.Site(overview.guard, overview.app(), "127.0.0.1", free_port())
    with site_thread(site):
        yield App(
            "desk",
            site.port,
            overview.guard,
            overview.tokens.token,
            "/api/hall/command",
            {"command": "stop"},
            (
                "/hall",
                "/api/hall",
                "/lang/en.js",
                "/static/common.js",
                "/static/hall.js",
                "/static/hall.css",
            ),
            hall_overview.COMMAND_BURST,
        )


@pytest.fixture(params=["box", "desk"])
def app(request, tmp_path: Path) -> Iterator[App]:
    yield from (_box if request.param == "box" else _desk)(tmp_path / "state")


def raw(app: App, data: bytes, source: str = "127.0.0.1") -> socket.socket:
    return connect(app.port, data, source)


def code_from(app: App, source: str) -> int:
    return http_code(app.port, app.pages[-1], source)


def call(
    app: App, path: str, body: bytes | None = None, headers: dict | None = None
) -> tuple[int, dict, dict]:
    """(status, JSON answer or {}, headers) of one request."""
    req = urllib.request.Request(
        f"http://127.0.0.1:{app.port}{path}",
        data=body,
        method="POST" if body is not None else "GET",
        headers=headers or {},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as got:
            text = got.read()
            kind = got.headers.get("Content-Type", "")
            return got.status, json.loads(text) if "json" in kind else {}, dict(got.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}"), dict(exc.headers)


def test_half_open_connections_are_capped_per_address_and_in_all_and_time_out(app) -> None:
    head = b"GET /api/status HTTP/1.1\r\nHost: x\r\n"  # and never the blank line
    mine = [raw(app, head) for _ in range(guard.MAX_PER_ADDRESS + 4)]
    wait_for(lambda: sum(closed(s) for s in mine) >= 4, "the ones over the cap closed", 5)
    assert app.guard.doors.open["127.0.0.1"] == guard.MAX_PER_ADDRESS
    others = [raw(app, head, f"127.0.0.{n}") for n in range(2, 40)]  # many addresses
    wait_for(lambda: sum(app.guard.doors.open.values()) == app.guard.doors.total, "the cap in all")
    assert code_from(app, "127.0.0.201") == 200  # at the cap: an idle one makes room
    assert app.guard.doors.evicted >= 1
    wait_for(
        lambda: all(closed(s) for s in mine + others), "every half-open one timed out", HEAD * 20
    )
    assert code_from(app, "127.0.0.200") == 200
    assert app.guard.doors.turned_away > 0
    for s in mine + others:
        s.close()


def test_an_idle_keepalive_connection_is_closed(app) -> None:
    s = raw(app, f"GET {app.pages[-1]} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    got = answer(s)  # the answer, then the close after HEAD s of silence
    assert got.startswith(b"HTTP/1.1 200")
    s.close()


def test_bad_requests_are_json_4xx_and_bounded_in_the_log(app, caplog) -> None:
    caplog.set_level(logging.INFO)
    cases = [
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        # (a request the server answers names `Connection: close`: the answer, then the
        # end, not the keep-alive's idle timeout)
        f"GET /static/{'a' * 1500} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode(),
        f"GET /static/{'b' * 5000} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
        b"GET /static/..%2F..%2Fserver.py HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        f"POST {app.command_path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        "Authorization: Bearer žluťoučký\r\nContent-Length: 2\r\n\r\n{}".encode(),
    ]
    for data in cases:
        with raw(app, data, "127.0.0.3") as s:
            got = answer(s)
        head, _, body = got.partition(b"\r\n\r\n")
        assert head.split(b" ")[1][:1] == b"4", got[:200]
        assert b"application/json" in head and json.loads(body)["ok"] is False
    for _ in range(200):  # a flood of malformed requests from one address
        with raw(app, b"\x16\x03\x01 not http\r\n\r\n", "127.0.0.4") as s:
            answer(s)
    text = caplog.text
    assert "Traceback" not in text and "b" * 100 not in text and "a" * 100 not in text
    lines = [r for r in caplog.records if "127.0.0.4" in r.getMessage()]
    assert len(lines) <= guard.LOG_LINES_PER_MINUTE + 1


def test_a_dropped_body_and_deep_or_long_json_get_4xx_and_no_traceback(
    app, caplog, monkeypatch
) -> None:
    monkeypatch.setattr(guard, "BODY_TIMEOUT", 1.0)
    auth = {"Authorization": f"Bearer {app.token}"}
    with raw(
        app,
        f"POST {app.command_path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        f'{app.token}\r\nContent-Length: 900\r\n\r\n{{"comm'.encode(),
    ):
        pass  # gone mid-body
    deep = b"[" * 1000 + b"]" * 1000
    code, got, _ = call(app, app.command_path, deep[:1000], auth)
    assert code == 400 and "JSON" in got["error"]
    code, got, _ = call(app, app.command_path, b'{"command": "' + b"x" * 5000 + b'"}', auth)
    assert code == 413 and "at most" in got["error"]
    with raw(
        app,
        f"POST {app.command_path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        f"{app.token}\r\nContent-Length: 20\r\n\r\n{{".encode(),
    ) as s:
        s.settimeout(HEAD * 5)
        got_raw = answer(s)  # a body that never comes whole: 408 after BODY_TIMEOUT
    assert got_raw.split(b" ", 2)[1] == b"408", got_raw[:200]
    assert code_from(app, "127.0.0.1") == 200
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_token_is_read_with_the_scheme_in_any_case(app, scheme: str) -> None:
    body = json.dumps(app.command).encode()
    code, got, _ = call(app, app.command_path, body, {"Authorization": f"{scheme} {app.token}"})
    assert code != 401, got
    for wrong in (f"{scheme} x{app.token}", f"Basic {app.token}", app.token, f"{scheme}"):
        code, got, _ = call(app, app.command_path, body, {"Authorization": wrong})
        assert code == 401 and got["ok"] is False, wrong


def test_commands_are_rate_limited_per_address_apart_from_the_pages(app) -> None:
    body = json.dumps(app.command).encode()
    codes = [
        call(app, app.command_path, body, {"Authorization": "Bearer x"})[0]
        for _ in range(app.command_burst + 5)
    ]
    assert 429 in codes and set(codes) <= {401, 429}
    assert call(app, app.pages[0])[0] == 200  # the pages have their own budget


def test_every_answer_of_both_apps_carries_the_same_headers(app) -> None:
    for path in (*app.pages, "/no/such/thing", app.command_path):
        code, _, headers = call(app, path)
        assert code in (200, 404, 405), path
        csp = headers["Content-Security-Policy"]
        assert csp == guard.policy(), path  # (scripts and styles: the app's own files only)
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert (
            headers["X-Frame-Options"] == "DENY"
            and headers["X-Content-Type-Options"] == "nosniff"
            and headers["Referrer-Policy"] == "no-referrer"
        ), path
        assert "Set-Cookie" not in headers and "Access-Control-Allow-Origin" not in headers


PAGES = [
    ROOT / "timekeeper" / "web" / "static" / f"{n}.html" for n in ("display", "control", "overlay")
] + [ROOT / "timekeeper" / "hall" / "desk" / "static" / f"{n}.html" for n in ("hall", "board")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_loads_the_shared_script_and_nothing_inline(page: Path) -> None:
    """The CSP refuses inline scripts and styles: a page has none, and loads its words, then
    common.js (the words, the clock, the parts: one copy for both apps), then its own."""
    html = page.read_text(encoding="utf-8")
    scripts = re.findall(r"<script([^>]*)>", html)
    assert all('src="' in attributes for attributes in scripts), page.name
    sources = re.findall(r'<script src="([^"]+)"', html)
    assert sources[:2] == ["/lang/en.js", "/static/common.js"], sources
    assert "<style" not in html and not re.search(r"\s(style|on\w+)=", html), page.name
    own = (
        page.with_suffix(".js")
        if page.parent.name == "static" and page.parent.parent.name == "desk"
        else None
    )
    if own is not None:  # the desk's: no copy of common.js's functions
        text = own.read_text(encoding="utf-8")
        assert "function word(" not in text and "function partName(" not in text
        assert "function el(" not in text and "padStart" not in text
