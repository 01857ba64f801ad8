"""`timekeeper hall practice`: the whole hall on one machine — a private Mosquitto, N boxes
(`timekeeper run`) and the desk (`hall serve`) — as child processes of this one, which is
what a club tries before the boxes come out of the bag.

Every child is a process of its own, started with the very command a director would type,
so the practice hall is the real one on one clock (`--sync local`). They share one process
group, apart from the terminal's: Ctrl-C (or SIGTERM) reaches this process alone, which
stops the desk and the boxes first (each journals its match), then the broker, and last
kills whatever of the group is left, so no process outlives it. A child also gets SIGTERM
should this process die without stopping them (Linux's parent-death signal)."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from timekeeper.rules.yamldoc import ConfigError

FOLDER = Path("hall-practice")  # beside the tournament file, where the director works
BROKER_PORT = 1884  # not 1883: Debian's own mosquitto service may hold that one
START_TIMEOUT = 90.0  # seconds for every child to answer (N boxes starting on 2 busy cores)
STOP_TIMEOUT = 10.0  # seconds a child has to stop cleanly before it is killed
INSTALL = "sudo apt-get install mosquitto"
_PR_SET_PDEATHSIG = 1


class _Stop(Exception):
    """SIGINT or SIGTERM: stop the practice hall."""


@dataclass
class Child:
    name: str  # "broker", "desk", "table 1"
    argv: list[str]  # as started (for a box: the command to restart it with)
    log: Path
    proc: subprocess.Popen | None = None
    url: str = ""  # a box's operator page, with its token
    notes: list[str] = field(default_factory=list)


def mosquitto() -> str | None:
    """Debian installs the broker in /usr/sbin, which a user's PATH often lacks."""
    return shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if Path(p).exists()),
        None,
    )


def run(args: argparse.Namespace) -> int:
    exe = mosquitto()
    if exe is None:
        print(
            "timekeeper: hall practice needs Mosquitto, the hall's broker, which is not "
            f"installed: {INSTALL}",
            file=sys.stderr,
        )
        return 2
    hall = Practice(args, exe)
    hall.check()  # everything that can be refused, before anything is started
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return hall.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _raise_stop(*_: object) -> None:
    raise _Stop


def _free(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _any_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _die_with_parent() -> None:
    """(In the child, before exec) SIGTERM when this process dies, however it dies."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Practice:
    def __init__(self, args: argparse.Namespace, exe: str) -> None:
        self.args, self.exe = args, exe
        self.folder: Path = args.state_dir or FOLDER
        self.port: int = args.port or BROKER_PORT
        self.broker = f"mqtt://127.0.0.1:{self.port}"
        self.tournament: Path | None = args.tournament
        self.children: list[Child] = []
        self.group = 0  # the children's process group (the broker's pid)
        self.tables: list[str] = []
        self.profile = args.profile or "ithf"
        self.profiles_path: list[str] = []  # the tournament's own profile files' folders

    # ------------------------------------------------------------------ refused up front

    def check(self) -> None:
        from timekeeper.web.listen import parse_listen

        count = self.args.tables
        if count is not None and not 1 <= count <= 60:
            raise ConfigError(f"--tables must be 1 to 60, not {count}", field="--tables")
        names: list[str] = []
        if self.tournament is not None:
            names = self._read_tournament()
        count = count or len(names) or 4
        self.tables = (names + [str(n) for n in range(1, count + 1) if str(n) not in names])[:count]
        try:
            self.listen = parse_listen(self.args.listen)
        except ValueError as exc:
            raise ConfigError(str(exc), field="--listen") from None
        if not _free("127.0.0.1", self.port):
            raise ConfigError(
                f"port {self.port} on this machine is taken (another practice hall, or a "
                "broker?): stop it, or give the practice hall another with --port N",
                field="--port",
            )
        host, port = self.listen
        if not _free(host, port):
            raise ConfigError(
                f"{host}:{port} is taken (another desk?): stop it, or give --listen PORT",
                field="--listen",
            )

    def _read_tournament(self) -> list[str]:
        """The tournament's tables; the boxes start on its profile of the longest melody
        (a box takes a pairing's profile only if its pack decoded that much of the tune),
        and find its own profile files (paths in it) as the desk does."""
        from timekeeper.rules import profile
        from timekeeper.rules.data import user_dirs
        from timekeeper.sound.pack import melody_window
        from timekeeper.tournament import spec as tournament_spec

        assert self.tournament is not None
        spec = tournament_spec.load(self.tournament)
        names = [
            p
            for p in (
                spec.groups.profile if spec.groups else "",
                spec.knockout.profile if spec.knockout else "",
                spec.knockout.final_profile if spec.knockout else "",
            )
            if p
        ]
        folders = {
            str(tournament_spec.find_profile(n, self.tournament).parent) for n in names if "/" in n
        }
        if folders:
            self.profiles_path = [*map(str, user_dirs("profiles")), *sorted(folders)]
        if names and self.args.profile is None:
            files = [tournament_spec.find_profile(n, self.tournament) for n in names]
            longest = max(files, key=lambda f: melody_window(profile.load(str(f))))
            self.profile = longest.stem
        return list(spec.tables)

    # ------------------------------------------------------------------ the children

    def _start(self, child: Child, env: dict[str, str] | None = None) -> None:
        child.log.parent.mkdir(parents=True, exist_ok=True)
        with open(child.log, "ab") as out:
            child.proc = subprocess.Popen(
                child.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                process_group=self.group,  # (0 for the first: the group is its own)
                preexec_fn=_die_with_parent,
            )
        if not self.group:
            self.group = child.proc.pid
        self.children.append(child)

    def run(self) -> int:
        try:
            self._start_all()
            self._print_ready()
            return self._watch()
        except _Stop:
            return 0
        except _Failed as exc:
            print(f"timekeeper: {exc}", file=sys.stderr)
            return 1
        finally:
            self.stop()

    def _start_all(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._fresh()
        conf = self.folder / "mosquitto.conf"
        conf.write_text(
            "# the practice hall's broker: this machine only, anonymous, nothing kept\n"
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
            "max_packet_size 4096\npersistence false\n"
            # as ourselves: root's broker would become user mosquitto, which may not read
            # this folder, and a change of user clears the parent-death signal
            f"user {pwd.getpwuid(os.geteuid()).pw_name}\n",
            encoding="utf-8",
        )
        self._start(Child("broker", [self.exe, "-c", str(conf)], self.folder / "broker.log"))
        self._wait(lambda: _listening(self.port), "the broker to listen", self.children[0])
        config = self.folder / "box.yaml"  # (not /etc/timekeeper's: a real box's settings)
        config.write_text(
            "# the practice hall's boxes: a box that cannot open this machine's sound card\n"
            "# says so at once (and plays on silent), instead of retrying as a service does\n"
            "audio:\n  attempts: 1\n",
            encoding="utf-8",
        )
        tk = [sys.executable, "-m", "timekeeper"]
        hall_name = ["--hall-name", self.args.hall_name] if self.args.hall_name else []
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if self.profiles_path:
            env["TIMEKEEPER_PROFILES_PATH"] = os.pathsep.join(self.profiles_path)
        for number, table in enumerate(self.tables):
            box = self.folder / ("table" + re.sub(r"[^\w-]", "_", table))
            sound = self.args.sound or number == 0
            argv = [
                *tk,
                "run",
                "--config",
                str(config),
                "--profile",
                self.profile,
                "--hall",
                self.broker,
                *hall_name,
                "--table",
                table,
                "--sync",
                "local",
                "--no-gpio",
                "--no-keyboard",
                "--state-dir",
                str(box),
                "--control",
                str(box / "ctl.sock"),
                "--web",
                f"127.0.0.1:{_any_port()}",
                *([] if sound else ["--audio", "silent"]),
            ]
            self._start(Child(f"table {table}", argv, box / "box.log"), env)
            self.children[-1].notes.append("sound" if sound else "silent")
        desk = [
            *tk,
            "hall",
            "serve",
            "--broker",
            self.broker,
            *(["--hall", self.args.hall_name] if self.args.hall_name else []),
            "--listen",
            self.args.listen,
            "--state-dir",
            str(self.folder / "desk"),
            *(["--tournament", str(self.tournament)] if self.tournament else []),
            *(["--language", self.args.language] if self.args.language else []),
        ]
        self._start(Child("desk", desk, self.folder / "desk.log"), env)
        for child in self.boxes:
            try:
                self._wait(lambda c=child: self._link(c), f"{child.name}'s box to answer", child)
            except _Failed:
                if "--audio" in child.argv or "open an audio stream" not in _tail(child.log):
                    raise
                self._silent(child, env)
        self._wait(self._desk_link, "the desk to serve its pages", self.desk)

    def _fresh(self) -> None:
        """A practice starts with fresh boxes: the last one's tables (their journals, a match
        left stopped on another profile) would take the new practice's pairings only after
        a reset, and a newcomer following the docs' sections in turn met that. `--keep`
        goes on with them (a practice hall stopped mid-match, started again)."""
        from timekeeper.box.controls.socket_path import in_use

        old = sorted(p for p in self.folder.glob("table*") if (p / "box.log").exists())
        if self.args.keep or not old:
            return
        running = [p for p in old if in_use(p / "ctl.sock")]
        if running:  # (a box restarted by hand is still running: its match is left alone)
            raise _Failed(
                f"a box of the last practice still runs in {running[0]}: stop it first "
                "(Ctrl-C in its terminal), or --keep to go on with it"
            )
        for folder in old:
            shutil.rmtree(folder)
        print(
            f"a fresh practice: the last one's {len(old)} tables in {self.folder}/ cleared "
            "(--keep goes on with them)",
            flush=True,
        )

    def _silent(self, box: Child, env: dict[str, str]) -> None:
        """A box that was to sound, on a machine with no sound card: silent, and said."""
        reason = re.search(r"cannot open an audio stream \(([^)]*)\)", _tail(box.log))
        place = self.children.index(box)
        self.children.remove(box)
        box.argv += ["--audio", "silent"]
        box.notes = [f"silent: no sound card here ({reason.group(1) if reason else '?'})"]
        self._start(box, env)
        self.children.insert(place, self.children.pop())  # (its place: the tables in order)
        self._wait(lambda: self._link(box), f"{box.name}'s box to answer", box)

    @property
    def boxes(self) -> list[Child]:
        return [c for c in self.children if c.name.startswith("table ")]

    @property
    def desk(self) -> Child:
        return next(c for c in self.children if c.name == "desk")

    def _link(self, box: Child) -> bool:
        """The box's operator page, with its token, as `timekeeper ctl link` prints it."""
        from timekeeper.box.controls.socket_client import send

        sock = Path(box.argv[box.argv.index("--control") + 1])
        try:
            answer = send(sock, "link", timeout=2.0)
        except ConnectionError:
            return False
        box.url = answer.get("url", "") if answer.get("ok") else ""
        return bool(box.url)

    def _desk_link(self) -> bool:
        host, port = self.listen
        if not _listening(port, "127.0.0.1" if host in ("0.0.0.0", "::") else host):
            return False
        text = self.desk.log.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"the desk's link \(commands\): (\S+)", text)
        if found is None:
            return False
        self.desk.url = found.group(1)
        return True

    def _wait(self, ready, what: str, child: Child) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            if child.proc is not None and child.proc.poll() is not None:
                raise _Failed(f"{child.name} exited ({child.proc.returncode}): {_tail(child.log)}")
            if time.monotonic() > deadline:
                raise _Failed(f"waited {START_TIMEOUT:g} s for {what}: {_tail(child.log)}")
            time.sleep(0.1)

    def _print_ready(self) -> None:
        base = self.desk.url.split("/hall#", 1)[0]
        token = self.desk.url.split("#", 1)[1] if "#" in self.desk.url else ""
        hall = self.args.hall_name or "hall"
        lines = [
            f"practice hall {hall!r} on this machine: {len(self.tables)} tables "
            f"(its folder: {self.folder}/; Ctrl-C stops it all)",
            f"  broker:   {self.broker}",
        ]
        if self.tournament is not None:
            lines.append(f"  board:    {base}/board  (the director's: {base}/board#{token})")
        lines.append(f"  overview: {base}/hall  (the desk's: {self.desk.url})")
        for box in self.boxes:
            sock = box.argv[box.argv.index("--control") + 1]
            lines.append(f"  {box.name}: {box.url}  ({box.notes[0]}; ctl --control {sock})")
        hall_opt = f" --hall {hall}" if self.args.hall_name else ""
        where = f"--broker {self.broker}{hall_opt}"
        lines.append("hall commands, from another terminal:")
        if self.tournament is not None:
            lines.append(f"  timekeeper hall round 1 --tournament {self.tournament} {where}")
        lines += [
            f"  timekeeper hall start --in 10s {where}",
            f"  timekeeper hall status {where}",
            "ready",
        ]
        print("\n".join(lines), flush=True)

    def _watch(self) -> int:
        """Until Ctrl-C: a box that exits is said (with the command that restarts it); the
        broker or the desk exiting ends the practice hall."""
        told: set[str] = set()
        while True:
            for child in self.children:
                assert child.proc is not None
                code = child.proc.poll()
                if code is None or child.name in told:
                    continue
                if child in self.boxes:
                    told.add(child.name)
                    command = shlex.join(["timekeeper", *child.argv[3:]])
                    if self.profiles_path:  # (the tournament's profile files: found by name)
                        where = os.pathsep.join(self.profiles_path)
                        command = f"TIMEKEEPER_PROFILES_PATH={shlex.quote(where)} {command}"
                    print(
                        f"{child.name}: its box exited ({code}); see {child.log}; restart it "
                        f"by hand (then it is yours to stop): {command}",
                        flush=True,
                    )
                    continue
                raise _Failed(f"the {child.name} exited ({code}): {_tail(child.log)}")
            time.sleep(0.2)

    def stop(self) -> None:
        """The desk and the boxes first (each journals), then the broker, then whatever of
        the group is left: nothing of the practice hall outlives it. Signals are held off
        meanwhile: a second Ctrl-C does not leave it half-stopped."""
        old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for child in self.children[1:]:  # (the broker is the first)
                _term(child)
            deadline = time.monotonic() + STOP_TIMEOUT
            for child in self.children[1:]:
                _reap(child, deadline)
            if self.children:
                self._stop_group(self.children[0])
                print("practice hall stopped", flush=True)
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)

    def _stop_group(self, broker: Child) -> None:
        """The broker leads the group: while it is not reaped its pid (the group's id) is
        no one else's, so the group is killed before it is reaped, never after."""
        assert broker.proc is not None
        if broker.proc.poll() is not None:  # reaped already: its children were ours
            return
        with contextlib.suppress(ProcessLookupError):
            broker.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(ChildProcessError, subprocess.TimeoutExpired):
            deadline = time.monotonic() + STOP_TIMEOUT
            exited = os.WEXITED | os.WNOWAIT | os.WNOHANG  # (not reaped: the pid stays its)
            while os.waitid(os.P_PID, broker.proc.pid, exited) is None:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.group, signal.SIGKILL)  # (anything left: a child's child)
        broker.proc.wait()


def _term(child: Child) -> None:
    if child.proc is not None and child.proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            child.proc.send_signal(signal.SIGTERM)


def _reap(child: Child, deadline: float) -> None:
    if child.proc is None:
        return
    try:
        child.proc.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        child.proc.kill()
        child.proc.wait()


class _Failed(Exception):
    """A child did not start, or the broker or the desk went away."""


def _tail(log: Path, lines: int = 6) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return f"(no log at {log})"
    return " | ".join(text[-lines:]) or f"(nothing in {log})"
