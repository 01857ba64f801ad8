"""The hall on one machine: a private Mosquitto, and the commands that start a box and a desk
on it, each a process of its own started as a director would type it.

`timekeeper hall practice` supervises these for a club trying the hall before the boxes come
out of the bag; the tests and the benches start their brokers, boxes and desks here too, so
that a hall is started one way. The broker is anonymous (the practice hall's), or, given
users, runs the shipped config and ACL (`systemd/mosquitto-hall.*` of a checkout) as
`scripts/install-pi.sh` leaves them, on a port and folder of its own."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType

INSTALL = "sudo apt-get install mosquitto"
SHIPPED = Path(__file__).resolve().parents[2] / "systemd"  # (a checkout's, not a wheel's)
# a line `install-pi.sh --hall-user T` appends to the ACL for table T's user
TABLE_ACL = "\nuser {table}\ntopic read timekeeper/+/all/command\n"
START_TIMEOUT = 10.0  # s for the broker to listen
TIMEKEEPER = (sys.executable, "-m", "timekeeper")  # how a command below starts


class NoBroker(RuntimeError):
    """Mosquitto is not installed, or did not start."""


def mosquitto() -> str | None:
    """Debian installs the broker in /usr/sbin, which a user's PATH often lacks."""
    return shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if Path(p).exists()),
        None,
    )


def any_port() -> int:
    """A TCP port free right now on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


class Mosquitto:
    """A private broker on 127.0.0.1:`port` (a free one if none is given), its files in
    `folder`. Anonymous, as the practice hall's; with `users` (name: password), the shipped
    config and ACL, each user in its password file and each of `tables` given a table's
    block in the ACL. `argv()` writes its files and says how to start it (the practice hall
    starts it in its process group); `start()` starts it and waits until it listens."""

    def __init__(
        self,
        folder: Path,
        port: int | None = None,
        users: Mapping[str, str] | None = None,
        tables: Iterable[str] = (),
    ) -> None:
        self.folder, self.port = Path(folder), port or any_port()
        self.users, self.tables = dict(users or {}), tuple(tables)
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.conf = self.folder / "mosquitto.conf"
        self.log = self.folder / "broker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def argv(self) -> list[str]:
        exe = mosquitto()
        if exe is None:
            raise NoBroker(f"Mosquitto, the hall's broker, is not installed: {INSTALL}")
        self.folder.mkdir(parents=True, exist_ok=True)
        # as ourselves: root's broker would become user mosquitto, which may not read this
        # folder, and a change of user clears a parent-death signal
        runs_as = f"user {pwd.getpwuid(os.geteuid()).pw_name}\n"
        if not self.users:
            self.conf.write_text(
                "# a practice hall's broker: this machine only, anonymous, nothing kept\n"
                f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                f"max_packet_size 4096\npersistence false\n{runs_as}",
                encoding="utf-8",
            )
            return [exe, "-c", str(self.conf)]
        conf = (SHIPPED / "mosquitto-hall.conf").read_text(encoding="utf-8")
        conf = conf.replace("listener 1883", f"listener {self.port} 127.0.0.1")
        self.conf.write_text(
            conf.replace("/etc/mosquitto/", f"{self.folder}/") + "persistence false\n" + runs_as,
            encoding="utf-8",
        )
        acl = (SHIPPED / "mosquitto-hall.acl").read_text(encoding="utf-8")
        (self.folder / "timekeeper.acl").write_text(
            acl + "".join(TABLE_ACL.format(table=t) for t in self.tables), encoding="utf-8"
        )
        passwd = self.folder / "timekeeper.passwd"
        passwd.unlink(missing_ok=True)
        for user, secret in self.users.items():
            create = [] if passwd.exists() else ["-c"]
            subprocess.run(
                ["mosquitto_passwd", "-b", *create, str(passwd), user, secret],
                check=True,
                capture_output=True,
            )
        return [exe, "-c", str(self.conf)]

    def start(self) -> Mosquitto:
        """Started (again, after `stop`), and listening."""
        argv = self.argv()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT
        while not listening(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                said = self.log.read_text(encoding="utf-8", errors="replace").strip()
                raise NoBroker(f"mosquitto did not start on port {self.port}: {said[-600:]}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Killed (a broker that vanishes, as a pulled plug): its clients see it gone."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(5)
            self.proc = None

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def box_command(
    url: str, table: str, state: str | Path, *more: str, control: str | Path | None = None
) -> list[str]:
    """`timekeeper run` for table `table` on the broker `url`, on this machine's clock
    (`--sync local`), headless, its journal in `state` and its control socket `control`
    (`ctl.sock` there); `more`: its further options (`--profile`, `--web`, `--audio` …)."""
    return [
        *TIMEKEEPER,
        "run",
        "--hall",
        url,
        "--table",
        table,
        "--sync",
        "local",
        "--no-gpio",
        "--no-keyboard",
        "--state-dir",
        str(state),
        "--control",
        str(control or Path(state) / "ctl.sock"),
        *more,
    ]


def desk_command(url: str, listen: str, state: str | Path, *more: str) -> list[str]:
    """`timekeeper hall serve` on the broker `url`, its pages on `listen` ([HOST:]PORT), its
    token in `state`; `more`: its further options (`--tournament FILE`, `--hall NAME` …)."""
    return [
        *TIMEKEEPER,
        "hall",
        "serve",
        "--broker",
        url,
        "--listen",
        listen,
        "--state-dir",
        str(state),
        *more,
    ]
