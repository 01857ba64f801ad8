"""Shared test set-up: no real sound device, no user profiles, short profiles on demand."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers import HALL_PROFILE, SKEWED, wait_for
from running import MATCH, TIMEOUT, hall_box

from timekeeper.box.journal import FILE_NAME

if TYPE_CHECKING:
    from boardhall import FakeDesk

# The tests' rewritten bytecode is cached even where the machine sets PYTHONDONTWRITEBYTECODE
# (this one does): else every xdist worker rewrites every test module's asserts again, 4 s of
# CPU each (the cache is in tests/__pycache__, ignored by git).
sys.dont_write_bytecode = False


def pytest_configure(config: pytest.Config) -> None:
    """`HYPOTHESIS_PROFILE=deep pytest` searches 200 times harder than the everyday run (whose
    100 examples a test keep the suite within its time on 2 cores). Imported here, not at the
    top: pytest rewrites Hypothesis's modules as a plugin's, and only now (bytecode allowed,
    above) is that work cached, not done again by every worker (0.9 s of CPU each)."""
    from hypothesis import settings

    settings.register_profile("default", max_examples=100, deadline=None)  # (Hypothesis's)
    settings.register_profile("deep", max_examples=20_000, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# Real pygame, but SDL's dummy driver: the tests must pass on a box with no sound card.
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ["TIMEKEEPER_PROFILES_PATH"] = ""  # only built-in profiles unless a test adds some
os.environ["TIMEKEEPER_SOUNDS_PATH"] = ""
# Journals go to a folder of each test (see below), never to the tester's ~/.local/state.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="tk-state-")
os.environ.pop("STATE_DIRECTORY", None)
os.environ.pop("NOTIFY_SOCKET", None)
os.environ.pop("WATCHDOG_USEC", None)
# gpiozero's mock pins everywhere (subprocesses too): a test never touches a real GPIO chip.
os.environ["GPIOZERO_PIN_FACTORY"] = "mock"
os.environ.pop("TIMEKEEPER_CONFIG", None)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The package's bytecode, written once before the workers start: where the machine sets
    PYTHONDONTWRITEBYTECODE (this one does), each of the suite's ~180 `timekeeper`
    processes would otherwise compile every module again, 0.15 s of CPU each."""
    if not hasattr(session.config, "workerinput"):  # (the controller, or a run without -n)
        import compileall

        compileall.compile_dir(Path(__file__).resolve().parent.parent / "timekeeper", quiet=1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject.toml): four workers, the suite's and the fast tier's alike: most
    tests wait on real boxes, brokers, browsers or a server's timeouts more than they compute
    (the fast tier on 2 cores: 44 s with two workers, 29 s with four)."""
    return 4


# tests that wait on real time far longer than any other (a whole evening, a whole ITHF day):
# first, so that a worker starts them at once instead of finishing the run with them alone
FIRST = ("test_hall_whole_evening.py", "test_ithf_day_boxes.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.split("::")[0].endswith(FIRST))


# ------------------------------------------------- the fast tier: `pytest -m "not slow"`
# A test that starts a real process (a box, a desk, a broker, PulseAudio, espeak, pip) or
# borrows a browser is marked `slow`, by hand, where it is written: most start theirs through
# helpers (tests/running.py, webbox.py), not fixtures, so no fixture list could mark them.
# Kept honest here: an unmarked test that starts one fails and says so, whichever tier runs.

_SPAWNS = (
    "subprocess.Popen",
    "os.posix_spawn",
    "os.exec",
    "os.system",
    "os.fork",
    "webbox.browser",
)
_spawned: list[str] | None = None  # (None: the current test is marked slow, or none runs)


def _audit(event: str, args: tuple) -> None:
    if _spawned is not None and event in _SPAWNS:
        _spawned.append(f"{event} {str(args[0])[:80]}")


sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    global _spawned
    _spawned = None if item.get_closest_marker("slow") else []
    try:
        yield
    finally:
        _spawned = None


@pytest.fixture(autouse=True)
def fast_means_in_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """An unmarked test that started a process or a browser (in its fixtures too) fails."""
    yield
    if _spawned:
        pytest.fail(
            f"{request.node.nodeid} starts {_spawned[0]}: mark it @pytest.mark.slow "
            "(tests/conftest.py, the fast tier)",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def own_state_dir(tmp_path_factory, monkeypatch) -> Path:
    """Each test its own journal folder: one test's match is never resumed by the next."""
    folder = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder / "timekeeper"


@pytest.fixture(autouse=True)
def one_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """`cli.main`'s parser built once per environment in a test, not once per command: its
    hundred options cost more than most of the tournament's commands (a test types hundreds).
    It reads nothing but the environment (its defaults), so a parser built for the same
    environment is the same parser."""
    from timekeeper import cli

    build: Callable = cli.parser
    built: dict[tuple, object] = {}

    def parser() -> object:
        key = tuple(sorted(os.environ.items()))
        if key not in built:
            built[key] = build()
        return built[key]

    monkeypatch.setattr(cli, "parser", parser)


@pytest.fixture
def write_profile(tmp_path: Path):
    """write_profile("name", "yaml text") -> path of a profile file in a temp folder."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / f"{name}.yaml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


SHORT = """\
    title: 20-second test match
    prestart: 2
    add_step: 5
    period:
      length: 20
      marks: 5
      melody: 5
"""


@pytest.fixture
def short_profile(write_profile) -> Path:
    """A 20-second match with marks every 5 s and a 5-s melody: every feature, fast."""
    return write_profile("short", SHORT)


PIPEWIRE = ("pipewire", "pipewire-pulse", "wireplumber", "pactl", "dbus-daemon")


def pulse_kind() -> str:
    """Which private pulse server the tests start: Debian's pulseaudio where it is installed,
    else PipeWire's (pipewire, wireplumber, pipewire-pulse: a Pi OS Desktop, where
    bootstrap.sh installs no pulseaudio: it would remove pipewire-alsa). As bootstrap chooses."""
    if shutil.which("pulseaudio"):
        return "pulseaudio"
    if all(shutil.which(name) for name in PIPEWIRE):
        return "pipewire"
    pytest.fail("no pulse server: neither pulseaudio nor PipeWire's: run ./bootstrap.sh --test")


class PulseAudio:
    """A private pulse server with a null sink `tk` (installed by bootstrap.sh --test), in
    its own runtime folder: never the desktop's. `env` is what a client needs. The server can
    be stopped and started again (a sound card lost and back) or frozen with SIGSTOP (a hung
    sound server); `kill()` always ends it, frozen or not. It is PulseAudio, or on a PipeWire
    machine a private PipeWire: its daemon, session manager and pulse server, all three
    stopped, frozen and killed together (pulse_kind)."""

    def __init__(self, folder: Path) -> None:
        self.kind = pulse_kind()
        self.runtime = folder / "pulse-rt"
        self.runtime.mkdir(mode=0o700)
        self.socket = self.runtime / "pulse" / "native"
        self.env = {
            "XDG_RUNTIME_DIR": str(self.runtime),
            "SDL_AUDIODRIVER": "pulseaudio",
            "PULSE_SERVER": f"unix:{self.socket}",
        }
        self.procs: list[subprocess.Popen] = []

    def up(self) -> None:
        if self.kind == "pipewire":
            self._pipewire_up()
            return
        proc = subprocess.Popen(
            [
                "pulseaudio",
                "--daemonize=no",
                "--exit-idle-time=-1",
                "-n",
                "--use-pid-file=no",
                "--load=module-null-sink sink_name=tk rate=48000",
                "--load=module-native-protocol-unix",
                "--disallow-exit=no",
            ],
            # the test owns its environment: no PULSE_* of the shell (PULSE_RUNTIME_PATH would
            # move the socket, PULSE_SERVER point at a desktop's server) reaches the server
            env={
                **{k: v for k, v in os.environ.items() if not k.startswith("PULSE_")},
                **self.env,
                "HOME": str(self.runtime),
                "PULSE_RUNTIME_PATH": str(self.socket.parent),
            },
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs = [proc]
        self._wait_for_socket()

    def _wait_for_socket(self) -> None:
        with contextlib.suppress(AssertionError):  # (not up in time: failed just below)
            wait_for(
                lambda: self.socket.exists() or any(p.poll() is not None for p in self.procs),
                f"{self.kind}'s pulse socket",
                10,
            )
        if not self.socket.exists():
            self.kill()
            pytest.fail(f"{self.kind} did not start")

    def _pipewire_up(self) -> None:
        """A session bus (wireplumber needs one), pipewire, wireplumber (links the streams),
        pipewire-pulse; then the null sink, made as the pulse layer makes one, as the default
        (once wireplumber, which keeps the default, is up). All in their own folders."""
        bus = self.runtime / "bus"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PULSE_", "PIPEWIRE_"))},
            **self.env,
            "HOME": str(self.runtime),
            "XDG_CONFIG_HOME": str(self.runtime / "config"),
            "XDG_STATE_HOME": str(self.runtime / "state"),
            "PIPEWIRE_RUNTIME_DIR": str(self.runtime),
            "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}",
        }
        quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
        log = self.runtime / "pipewire.log"
        self.procs = []
        with log.open("ab") as err:
            daemon = ["dbus-daemon", "--session", f"--address=unix:path={bus}", "--nofork"]
            for command, socket in (
                ([*daemon, "--nopidfile"], bus),
                (["pipewire"], self.runtime / "pipewire-0"),
            ):
                proc = subprocess.Popen(command, env=env, stderr=err, **quiet)
                self.procs.append(proc)
                wait_for(
                    lambda s=socket, p=proc: s.exists() or p.poll() is not None,
                    f"{command[0]}'s socket",
                    10,
                )
            for name in ("wireplumber", "pipewire-pulse"):
                self.procs.append(subprocess.Popen([name], env=env, stderr=err, **quiet))
        self._wait_for_socket()
        pactl = ["pactl", "-s", self.env["PULSE_SERVER"]]
        made = subprocess.run(
            [*pactl, "load-module", "module-null-sink", "sink_name=tk", "rate=48000"],
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if made.returncode:
            self.kill()
            pytest.fail(f"pipewire-pulse: no null sink: {made.stderr} ({log})")
        default = [*pactl, "set-default-sink", "tk"]
        wait_for(
            lambda: (
                subprocess.run(default, env=env, capture_output=True, timeout=10).returncode == 0
            ),
            "wireplumber taking the default sink",
            10,
        )

    def down(self) -> None:
        """Stop the server (the sound card disappears); `up()` brings it back."""
        self.kill()
        self.socket.unlink(missing_ok=True)
        for socket in ("pipewire-0", "bus"):  # (PipeWire's own and its bus, where they run)
            (self.runtime / socket).unlink(missing_ok=True)

    def freeze(self) -> None:
        assert self.procs
        for proc in self.procs:
            proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        self.thaw()
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture
def pulseaudio() -> Iterator[PulseAudio]:
    """A private PulseAudio server, running; killed at the end whatever happened."""
    folder = Path(tempfile.mkdtemp(prefix="tk-pa-", dir="/tmp"))  # short: an AF_UNIX path
    server = PulseAudio(folder)
    try:
        server.up()
        yield server
    finally:
        server.kill()
        shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------- a real `timekeeper run` (tests/running.py)


@pytest.fixture
def sock() -> Iterator[Path]:
    """A control socket path short enough for AF_UNIX (107 bytes), whatever tmp_path is."""
    folder = tempfile.mkdtemp(prefix="tk-", dir="/tmp")
    yield Path(folder) / "c.sock"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def env(sock: Path) -> dict[str, str]:
    """The environment of every CLI process: silent SDL, built-ins only, our socket."""
    return {
        **os.environ,
        "SDL_AUDIODRIVER": "dummy",
        "TIMEKEEPER_CONTROL": str(sock),
        "TIMEKEEPER_PROFILES_PATH": "",
        "TIMEKEEPER_SOUNDS_PATH": "",
    }


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen]]:
    """Long-running processes a test starts; whatever is still alive at the end is killed."""
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=TIMEOUT)


@pytest.fixture
def service_box() -> Iterator[dict]:
    """For a box run as systemd would run it (tests/running.py starts it): a folder standing
    in for the service's state, runtime and config folders (short enough for AF_UNIX
    paths), and the environment systemd would give."""
    folder = Path(tempfile.mkdtemp(prefix="tk-box-", dir="/tmp"))
    (folder / "state").mkdir()
    (folder / "profiles").mkdir()
    (folder / "profiles" / "minute.yaml").write_text(MATCH)
    env = {
        **os.environ,
        "SDL_AUDIODRIVER": "dummy",
        "TIMEKEEPER_PROFILES_PATH": str(folder / "profiles"),
        "TIMEKEEPER_CONTROL": str(folder / "c.sock"),
        "STATE_DIRECTORY": str(folder / "state"),
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",
    }
    procs: list[subprocess.Popen] = []
    yield {
        "dir": folder,
        "env": env,
        "procs": procs,
        "sock": folder / "c.sock",
        "journal": folder / "state" / FILE_NAME,
    }
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=TIMEOUT)
    shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- a real broker, real boxes


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[dict]:
    """A private anonymous Mosquitto, the practice hall's (`down` kills it, `up` starts it
    again on the same port)."""
    from timekeeper.hall.practice import Mosquitto

    with Mosquitto(tmp_path / "broker") as mosquitto:
        yield {
            "port": mosquitto.port,
            "url": mosquitto.url,
            "up": mosquitto.start,
            "down": mosquitto.stop,
        }


@pytest.fixture
def boxes(tmp_path: Path, broker, write_profile) -> Iterator[dict]:
    """Boxes joining the hall on `broker`, and an in-process desk that sees their statuses
    as they are published (`tables()`): a test waits for a status, never for a second."""
    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.desk.link import Desk

    prof = write_profile("hall", HALL_PROFILE)
    procs: dict[str, subprocess.Popen] = {}

    def start(*tables: str, skew: float | None = None, **env: str) -> None:
        """Start the boxes of `tables` together (on this machine: `--sync local`; with `skew`,
        a box whose clock is that far off, tests/skewedbox.py), and wait until each one's
        socket is up."""
        for table in tables:
            folder = tmp_path / f"box{table}"
            folder.mkdir()
            environ = dict(os.environ, SDL_AUDIODRIVER="dummy", PYTHONUNBUFFERED="1") | env
            launcher = () if skew is None else (str(SKEWED), str(skew))
            events = ("--events", str(folder / "events.jsonl"))
            argv = hall_box(prof, folder, broker["url"], table, *events, launcher=launcher)
            with open(folder / "out.log", "w") as out:
                procs[table] = subprocess.Popen(
                    argv,
                    env=environ,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
        for table in tables:
            folder, proc = tmp_path / f"box{table}", procs[table]
            wait_for(
                lambda f=folder, p=proc: (f / "c.sock").exists() or p.poll() is not None,
                f"box {table} to start",
                30,
            )
            assert proc.poll() is None, output(table)

    def output(table: str) -> str:
        """What the box has printed so far (stdout and stderr)."""
        return (tmp_path / f"box{table}" / "out.log").read_text()

    def events(table: str) -> list[dict]:
        path = tmp_path / f"box{table}" / "events.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def log(table: str) -> str:
        """Stop the box (SIGTERM) and return all it printed."""
        proc = procs[table]
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        return output(table)

    desk: list[Desk] = []

    def tables() -> dict[str, dict]:
        """Every table's latest status as the desk sees it ({} while the broker is down)."""
        if not desk:
            desk.append(Desk(Broker.parse(broker["url"]), "hall"))
        return desk[0].tables()

    try:
        yield {
            "start": start,
            "events": events,
            "log": log,
            "output": output,
            "broker": broker,
            "tables": tables,
        }
    finally:
        for d in desk:
            d.close()
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(5)


@pytest.fixture
def overview(tmp_path: Path, request) -> Iterator[tuple[str, str, FakeDesk]]:
    """The overview served: (url, token, desk); in English, or the language an indirect
    parameter names."""
    from boardhall import FakeDesk, serving, two_tables

    desk = FakeDesk(two_tables(time.time()))
    with serving(desk, tmp_path / "desk", getattr(request, "param", "en")) as (url, token):
        yield url, token, desk
