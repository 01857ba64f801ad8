"""What the tests share that is not a fixture: one `wait_for`, one fake clock, the recording
fake output, a free port, a hall link without a bus. (Fixtures live in conftest.py; this
module is imported, never collected.)"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import paho.mqtt.client as mqtt

from timekeeper.hall.bus.broker import Broker
from timekeeper.hall.practice import any_port, desk_command, listening
from timekeeper.hall.table.link import HallLink
from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.sound.output import Output

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent  # the repository: its docs, package, profiles
TESTS = ROOT / "tests"  # shared helpers and data (ithf/, skewedbox.py)
SKEWED = TESTS / "skewedbox.py"  # a box whose clock is off (tests/skewedbox.py)

LENGTH = 2  # seconds: a hall match is played in real time by real boxes
HALL_WAIT = 20  # seconds: real boxes, a real broker, on a machine that may be busy
HALL_PROFILE = f"""\
title: hall test, {LENGTH} s
prestart: 1
period:
  length: {LENGTH}
  marks: 1
"""


def sudden_death(seconds: int, title: str) -> str:
    """A profile: `seconds` of play after a one-second pre-start, then (on a draw, for NEXT)
    an untimed sudden death (ITHF 4.8)."""
    period = f"period: {{length: {seconds}, marks: none}}"
    return f"title: {title}\nprestart: 1\n{period}\novertime:\n  - untimed: true\n"


# a series' game, played out by the operator's `pause`, `set 0:00`, `resume` (no waiting)
QUICK = sudden_death(60, "a minute + sudden death")

INTERVAL = 0.02  # short: a condition met is seen at once, and polling costs little


def wait_for(
    predicate: Callable[[], T], what: str, timeout: float = 10.0, interval: float = INTERVAL
) -> T:
    """Poll `predicate` until it returns something true, and return that; after `timeout`
    seconds raise AssertionError naming `what` and the last value (or error) seen.

    An exception from the predicate counts as "not yet" (a server not listening, a file
    half-written): a real process is waited for by its state, never by a fixed pause."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = predicate()
        except Exception as exc:  # not ready yet: try again until the deadline
            value, last = None, exc
        else:
            last = value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last seen: {last!r}")
        time.sleep(interval)


class Clock:
    """The runner's clock, told by the test: `clock.now = 20.0` and the runner's next step
    sees 20 s (the engine is told the time; so is the runner, here)."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def in_process(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`timekeeper ARGV` as typed in `cwd`, run by the command line's own main in this
    process: its exit code and what it printed, as `subprocess.run` gives a process's. For
    a test of what a command does (the tournament's); the process path is the doc tests'
    (each command block run as typed: tests/project/test_docs_commands.py and its like)."""
    from timekeeper import cli

    out, err = io.StringIO(), io.StringIO()
    # main's logging, as a process's: to its stderr, from INFO on (a root logger with a
    # handler already: main's basicConfig leaves it be)
    said = logging.StreamHandler(err)
    said.setFormatter(logging.Formatter("timekeeper: %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(said)
    root.setLevel(min(level, logging.INFO) if level else logging.INFO)
    try:
        with (
            contextlib.chdir(cwd or Path.cwd()),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = cli.main(list(argv))
            except SystemExit as exc:  # (argparse: a usage error, --help)
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        root.removeHandler(said)
        root.setLevel(level)
    return subprocess.CompletedProcess(["timekeeper", *argv], code, out.getvalue(), err.getvalue())


def dollar_steps(block: str) -> list[tuple[str, list[str]]]:
    """The `$ ` commands of a doc's fenced block, each with the lines the doc shows it
    printing (those under it, up to the next `$ `)."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def write_tournament(file: Path, head: str, players: Sequence[str], tail: str = "") -> Path:
    """A tournament file: `head` (its fields, each line ending in a newline), its players
    one a line (quoted, whatever their names), then `tail` (its stages …); its path."""
    names = "".join(f"  - {json.dumps(p, ensure_ascii=False)}\n" for p in players)
    file.write_text(f"{head}players:\n{names}{tail}", encoding="utf-8")
    return file


def write_cup(folder: Path, text: str) -> Path:
    """`text` written as the tournament file folder/cup.yaml; its path."""
    file = folder / "cup.yaml"
    file.write_text(text, encoding="utf-8")
    return file


def cup_error(file: Path) -> str:
    """What the tournament file's reader says of `file` (it must refuse it)."""
    from timekeeper.rules.yamldoc import ConfigError
    from timekeeper.tournament import spec

    try:
        spec.load(file)
    except ConfigError as exc:
        return str(exc)
    raise AssertionError(f"{file} was taken")


def hall_serve(url: str, port: int, state: object, *more: str) -> list[str]:
    """`timekeeper hall serve` as a director types it (a process of its own): on the broker
    `url`, its pages on `port`, its token in `state`, and `more` (--tournament FILE …)."""
    return desk_command(url, str(port), str(state), *more)


# a TCP port free right now on 127.0.0.1, and whether one listens: the practice hall's
free_port, listening = any_port, listening


def connect(port: int, data: bytes, source: str = "127.0.0.1") -> socket.socket:
    """A raw TCP connection to 127.0.0.1:`port` from `source` (another loopback address
    stands for another machine of the hall), `data` sent on it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    if data:
        s.sendall(data)
    return s


def answer(s: socket.socket) -> bytes:
    """All the server sends until it closes (b"": closed without a word)."""
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def closed(s: socket.socket) -> bool:
    """Whether the server closed `s` (asked without waiting)."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def http_code(port: int, path: str, source: str = "127.0.0.1") -> int:
    """The status code of a GET of `path` on its own connection from `source`."""
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    with connect(port, request, source) as s:
        return int(answer(s).split(b" ", 2)[1])


class RecordingOutput(Output):
    """A fake with the real Output interface that remembers what it was given: the cues
    played (`played`), the runner's clock at each (`times`), the profiles prepared.
    `lead`: how early it wants its cues (as a stream output does)."""

    def __init__(self, lead: float = 0.0) -> None:
        self.lead = lead
        self.played: list[Cue] = []
        self.times: list[float] = []
        self.prepared: list[str] = []

    def prepare(self, profile: Profile) -> None:
        self.prepared.append(profile.key)

    def play(self, cue: Cue, now: float) -> None:
        self.played.append(cue)
        self.times.append(now)

    @property
    def names(self) -> list[str]:
        """The cues' names, a stopped melody as "name/stop"."""
        return [c.name + ("/stop" if c.stop else "") for c in self.played]


class BusClient(mqtt.Client):
    """paho's own client, as `hall.bus.broker.make_client` makes it, never connected: what is
    published is kept as (topic, payload, retain), what is subscribed as its topic."""

    def __init__(self, client_id: str = "", broker: Broker | None = None) -> None:
        super().__init__(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True)
        self.published: list[tuple[str, Any, bool]] = []
        self.subscribed: list[Any] = []

    def publish(
        self,
        topic: str,
        payload: Any = None,
        qos: int = 0,
        retain: bool = False,
        properties: Any = None,
    ) -> mqtt.MQTTMessageInfo:
        self.published.append((topic, payload, retain))
        return mqtt.MQTTMessageInfo(len(self.published))

    def subscribe(
        self, topic: Any, qos: int = 0, options: Any = None, properties: Any = None
    ) -> tuple[mqtt.MQTTErrorCode, int | None]:
        self.subscribed.append(topic)
        return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS, len(self.subscribed)


class HallLinkSide(HallLink):
    """A box's real HallLink (hall "cup", table 3, profile radegast) on a BusClient, never
    started: no broker, no thread (what it would publish is the BusClient's)."""

    def __init__(self, box: Any) -> None:
        super().__init__(box, Broker("127.0.0.1"), "cup", "3", "radegast", client_factory=BusClient)
