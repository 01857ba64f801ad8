"""The web server's API as a phone or a foreign page would meet it: the real runner on its
thread, the real server on its own, plain HTTP and aiohttp's WebSocket client."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from helpers import ROOT, RecordingOutput, free_port, wait_for

from timekeeper.box import config as box_config
from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.listener import RunnerListener
from timekeeper.web import server as web_server
from timekeeper.web.listen import parse_listen
from timekeeper.web.server import WebServer
from timekeeper.web.token import TokenStore


@pytest.fixture
def box(tmp_path: Path):
    """A hokejbal runner with its web server on a free port: (runner, server, output)."""
    output = RecordingOutput()
    runner = Runner(Engine(profile.load("hokejbal")), [output])
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    server = WebServer(runner, "127.0.0.1", free_port(), TokenStore(tmp_path / "state")).start()
    yield runner, server, output
    server.close()
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(5)


def call(
    server: WebServer,
    method: str,
    path: str,
    body: bytes | None = None,
    token: str | None = None,
    headers: dict | None = None,
) -> tuple[int, dict]:
    headers = dict(headers or {})
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"  # ("Bearer " alone: an empty token)
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}", data=body, method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


MINE = object()  # the server's own token


def command(server: WebServer, name: str, *args: str, token: object = MINE) -> tuple[int, dict]:
    token = server.tokens.token if token is MINE else token
    return call(
        server,
        "POST",
        "/api/command",
        json.dumps({"command": name, "args": list(args)}).encode(),
        token,
    )


def test_status_is_open_and_is_the_boxs_status(box) -> None:
    runner, server, _ = box
    code, status = call(server, "GET", "/api/status")
    assert code == 200
    assert status == dataclasses.asdict(runner.status())  # the one status, nothing added
    assert status["score"] == {"home": 0, "away": 0} and status["goals"] == []
    assert status["muted"] is False and status["add_step"] == 1.0  # (hokejbal's step)


@pytest.mark.parametrize("token", [None, "", "not-the-token-at-all-xxxxxxxxxxx"])
def test_a_command_without_a_valid_token_gets_401_and_changes_nothing(box, token) -> None:
    runner, server, output = box
    code, answer = command(server, "start", token=token)
    assert code == 401 and "ctl link" in answer["error"]  # answered instead of submitted
    assert runner.status().state == "idle" and output.played == []


def test_commands_answer_as_ctl_does_and_refusals_are_409_with_the_reason(box) -> None:
    _, server, _ = box
    code, answer = command(server, "start")
    assert code == 200 and answer["ok"] and answer["status"]["state"] == "running"
    code, answer = command(server, "set", "1:00")
    assert code == 409 and "stopped" in answer["error"]
    code, answer = command(server, "add", "10")
    assert code == 200 and answer["status"]["added"] == 10
    assert command(server, "toggle")[1]["status"]["state"] == "stopped"
    code, answer = command(server, "penalty", "away", "minor", "8")
    assert code == 200 and answer["status"]["teams"]["away"]["penalties"][0]["player"] == "8"


def test_names_from_the_web_each_arg_one_name_in_any_script(box) -> None:
    """{"command": "names", "args": [HOME, AWAY]}: a name with spaces is one arg; "" is none;
    a name with a control character is refused (400) and changes nothing."""
    runner, server, _ = box
    code, answer = command(server, "names", "HC Kladno", "Пётр Иванов")
    assert code == 200 and answer["status"]["names"] == {"home": "HC Kladno", "away": "Пётр Иванов"}
    code, answer = command(server, "names", "bad\x1b[2J", "x")
    assert code == 400 and "U+001B" in answer["error"]
    code, answer = command(server, "names", "Ž" * 33, "x")
    assert code == 400 and "at most 32 characters" in answer["error"]
    code, answer = command(server, "names", "", "Sokol Pražský")
    assert code == 200 and answer["status"]["names"] == {"home": "", "away": "Sokol Pražský"}
    assert call(server, "GET", "/api/status")[1]["names"] == runner.status().names


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        (b'{"command": ', 400, "JSON"),
        (b"[1, 2]", 400, "command"),
        (b'{"command": "fly"}', 400, "unknown command"),
        (b'{"command": "add", "args": "10"}', 400, "args"),
        (b'{"command": "add", "args": [true]}', 400, "args"),
        (b'{"command": "add", "args": ["nan"]}', 400, "add"),
        (b'{"command": "penalty", "args": ["home", "slash"]}', 400, "unknown penalty"),
        (b'{"command": "quit"}', 400, "not a command for the web"),
        (b'{"command": "' + b"x" * 5000 + b'"}', 413, "at most"),
        (b"\xff\xfe", 400, "JSON"),
    ],
)
def test_bad_requests_get_a_4xx_with_a_reason_never_a_traceback(box, body, code, words) -> None:
    runner, server, _ = box
    got, answer = call(server, "POST", "/api/command", body, server.tokens.token)
    assert got == code and words in answer["error"] and "Traceback" not in answer["error"]
    assert runner.status().state == "idle"


def test_commands_are_rate_limited_per_client(box) -> None:
    _, server, _ = box
    codes = [command(server, "pause")[0] for _ in range(web_server.COMMAND_BURST + 5)]
    assert 429 in codes and set(codes) <= {409, 429}


def test_twenty_quick_reloads_of_a_page_are_served_whole(box) -> None:
    """A page's scripts have their own, larger budget: a person flipping through the
    languages once got a 429 on live.js, and the page stayed dead."""
    _, server, _ = box

    def code(path: str) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=10) as a:
                return a.status
        except urllib.error.HTTPError as exc:
            return exc.code

    for _ in range(20):
        assert [
            code(path)
            for path in (
                "/control",
                "/static/style.css",
                "/lang/fi.js",
                "/static/live.js",
                "/static/control.js",
            )
        ] == [200] * 5


def test_no_cors_and_headers_that_keep_other_sites_out(box) -> None:
    _, server, _ = box
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/api/command",
        method="OPTIONS",
        headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=5)
    assert caught.value.code == 405
    assert "Access-Control-Allow-Origin" not in caught.value.headers
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/", timeout=5) as page:
        assert page.headers["X-Frame-Options"] == "DENY"
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        assert "Set-Cookie" not in page.headers
        assert b"/static/display.js" in page.read()


def test_every_page_file_is_served_by_the_box_no_cdn() -> None:
    static = Path(web_server.STATIC)
    for path in static.iterdir():
        text = path.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, path.name


async def _live(
    server: WebServer,
    until,
    token: str | None = None,
    then=None,
    then_when=lambda got: len(got) == 1,
    timeout: float = 10.0,
) -> tuple[list[dict], int | None]:
    """Messages one live page gets until `until(messages)` holds (or `timeout` passes), and
    the close code if the server closed it first. `then` runs once, as soon as
    `then_when(messages)` holds (by default: once the first one is in)."""
    got: list[dict] = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(f"http://127.0.0.1:{server.port}/api/live") as ws,
    ):
        if token:
            await ws.send_str(json.dumps({"token": token}))
        end = time.monotonic() + timeout
        while not until(got) and (left := end - time.monotonic()) > 0:
            try:
                msg = await ws.receive(timeout=left)
            except TimeoutError:
                break
            if msg.type is not aiohttp.WSMsgType.TEXT:
                return got, ws.close_code  # closed by the server
            got.append(json.loads(msg.data))
            if then is not None and then_when(got):
                await asyncio.get_running_loop().run_in_executor(None, then)
                then = None
        return got, None


def heartbeats(got: list[dict]) -> int:
    return sum(m["type"] == "heartbeat" for m in got)


def test_live_pushes_every_change_and_a_heartbeat_every_second(box, monkeypatch) -> None:
    _, server, _ = box
    monkeypatch.setattr(web_server, "HEARTBEAT", 0.2)  # the beat's length is not the point

    def start() -> None:
        command(server, "start")

    def seen(got: list[dict]) -> bool:  # the change pushed, then silence filled by beats
        return (
            got[-1:] != []
            and got[-1]["type"] == "heartbeat"
            and heartbeats(got) >= 2
            and any(m.get("status", {}).get("state") == "running" for m in got)
        )

    got, _ = asyncio.run(_live(server, seen, then=start))
    kinds = [m["type"] for m in got]
    assert kinds[0] == "status" and got[0]["status"]["state"] == "idle"
    assert any(m["type"] == "status" and m["status"]["state"] == "running" for m in got)
    assert kinds.count("heartbeat") >= 2  # nothing changes for a while: still heard from


def test_a_stuck_page_is_dropped_and_never_stalls_the_others(box, monkeypatch) -> None:
    _, server, _ = box
    monkeypatch.setattr(web_server, "SEND_TIMEOUT", 0.3)
    monkeypatch.setattr(web_server, "HEARTBEAT", 0.2)

    async def run() -> tuple[list[dict], bool, bool]:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(f"http://127.0.0.1:{server.port}/api/live") as stuck,
        ):
            await stuck.receive(timeout=2)
            client = next(iter(server.clients))  # (it is registered before its first status)

            async def never(message: str) -> None:  # a page that takes nothing more
                await asyncio.sleep(3600)

            client.ws.send_str = never
            # the healthy page hears beats while the stuck one is waited for and dropped
            got, _ = await _live(server, lambda got: heartbeats(got) >= 4)
            last = await stuck.receive(timeout=5)
            return (
                got,
                client in server.clients,
                last.type
                in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR),
            )

    got, kept, closed = asyncio.run(run())
    assert heartbeats(got) >= 4  # the healthy page: never stalled
    assert not kept and closed  # the stuck one was dropped and its connection closed


def test_a_new_link_ends_every_operator_session_but_not_the_displays(box, monkeypatch) -> None:
    _, server, _ = box
    monkeypatch.setattr(web_server, "HEARTBEAT", 0.2)
    old = server.tokens.token

    renewed: list[int] = []  # how many messages the display had when the link was renewed

    def renew() -> None:
        renewed.append(len(display_got))
        server.link(renew=True)

    display_got: list[dict] = []

    def display_heard_after_renew(got: list[dict]) -> bool:
        display_got[:] = got
        return bool(renewed) and len(got) > renewed[0] + 1

    async def both():
        return await asyncio.gather(
            _live(
                server,
                lambda got: False,
                token=old,
                then=renew,  # until it is closed
                then_when=lambda got: {"type": "auth", "ok": True} in got,
            ),
            _live(server, display_heard_after_renew),
        )

    (operator, code), (display, display_code) = asyncio.run(both())
    assert {"type": "auth", "ok": True} in operator
    # the session ends: with 4001 (the page then says its link was renewed); in CI's full
    # runs the connection was sometimes seen dropped instead (1006), which ends it as well: a
    # page that reconnects with the old token is refused (auth false), as checked below
    assert code in (web_server.SESSION_CLOSED, aiohttp.WSCloseCode.ABNORMAL_CLOSURE)
    assert display_code is None and len(display) >= 2
    assert server.tokens.token != old
    assert command(server, "start", token=old)[0] == 401


def test_the_token_is_made_once_kept_0600_and_renewed(tmp_path: Path) -> None:
    first = TokenStore(tmp_path / "state")
    assert (first.path.stat().st_mode & 0o777) == 0o600
    assert TokenStore(tmp_path / "state").token == first.token  # kept across restarts
    old = first.token
    assert first.renew() != old and TokenStore(tmp_path / "state").token == first.token
    assert first.valid(first.token) and not first.valid(old) and not first.valid(None)
    os.chmod(first.path, 0o644)
    TokenStore(tmp_path / "state")
    assert (first.path.stat().st_mode & 0o777) == 0o600


def test_mute_silences_the_sound_not_the_relays_and_lamp(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text("title: t\nprestart: 0.2\nperiod: {length: 0.4, marks: 0.2}\n")
    output = RecordingOutput()
    runner = Runner(Engine(profile.load(str(tiny))), [output])
    heard: list[str] = []

    class Relay(RunnerListener):
        def cue_played(self, cue, status, played, not_heard) -> None:
            heard.append(cue.name)

    runner.listeners.append(Relay())
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    runner.submit(Command(Action.MUTE)).result(timeout=5)
    runner.submit(Command(Action.START)).result(timeout=5)
    wait_for(lambda: runner.status().state == "finished", "the match to finish", 5)
    runner.submit(Command(Action.UNMUTE)).result(timeout=5)
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(5)
    assert [c for c in output.played if not c.stop] == []
    assert "prestart" in heard and "end" in heard  # relays (listeners) still hear every cue
    assert runner.muted is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8080", ("127.0.0.1", 8080)),
        ("0.0.0.0:8080", ("0.0.0.0", 8080)),
        ("[::]:80", ("::", 80)),
        ("box.local:8080", ("box.local", 8080)),
    ],
)
def test_listen_addresses(text, expected) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["", "http://x:80", "0.0.0.0:99999", "8080x", "a b:80"])
def test_bad_listen_addresses_say_what_is_wrong(text) -> None:
    with pytest.raises(ValueError, match=r"PORT|host"):
        parse_listen(text)


def test_config_web_listen_is_checked_with_file_and_line(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("web:\n  listen: 0.0.0.0:8080\n")
    assert box_config.load(good).web_listen == ("0.0.0.0", 8080)
    assert box_config.load(None).web_listen is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("profile: ithf\nweb:\n  listen: everywhere\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:3.*web.listen.*PORT"):
        box_config.load(bad)
    typo = tmp_path / "typo.yaml"
    typo.write_text("web:\n  lisen: 8080\n")
    with pytest.raises(ConfigError, match="lisen"):
        box_config.load(typo)


@pytest.mark.slow
def test_install_pi_kiosk_dry_run_sets_up_cage_and_chromium_as_their_own_unit() -> None:
    import subprocess

    root = ROOT
    done = subprocess.run(
        [str(root / "scripts" / "install-pi.sh"), "--dry-run", "--kiosk"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    for step in (
        "apt-get install -y -qq cage chromium",
        "useradd --system --create-home",
        "systemd/timekeeper-kiosk.service",
        "enable timekeeper-kiosk.service",
        "KIOSK_URL=http://127.0.0.1:8080/",
    ):
        assert step in done.stdout, step
    unit = (root / "systemd" / "timekeeper-kiosk.service").read_text()
    assert "User=timekeeper-kiosk" in unit and "/usr/bin/cage" in unit and "--kiosk" in unit


def test_ctl_link_says_how_to_turn_the_pages_on_when_they_are_off() -> None:
    from timekeeper.box.live import _link_handler

    answer = _link_handler(None)([])
    assert not answer["ok"] and "--web" in answer["error"] and "web.listen" in answer["error"]


def test_the_pusher_ends_when_its_last_change_and_the_stop_come_together(tmp_path) -> None:
    """At shutdown the runner's last change and the stop reach the loop in one go: Python
    3.11's wait_for then swallows the pusher's cancel, and the box waited 5 s for it."""
    runner = Runner(Engine(profile.load("hokejbal")), [])
    server = WebServer(runner, "127.0.0.1", free_port(), TokenStore(tmp_path / "state"))

    async def shutdown() -> bool:
        server._changed, server._stop = asyncio.Event(), asyncio.Event()
        pusher = asyncio.create_task(server._push())
        await asyncio.sleep(0)  # (the pusher waits for a change)
        asyncio.get_running_loop().call_soon(lambda: (server._changed.set(), server._stop.set()))
        await server._stop.wait()  # as _main does
        pusher.cancel()
        done, _ = await asyncio.wait({pusher}, timeout=30)  # (hung for ever before)
        return pusher in done

    assert asyncio.run(shutdown())
