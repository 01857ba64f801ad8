"""systemd's notify protocol (sd_notify(3)) without libsystemd: one datagram per message to
$NOTIFY_SOCKET. Outside systemd the variable is unset and every call does nothing."""

from __future__ import annotations

import logging
import os
import socket

from timekeeper.rules.engine import Status
from timekeeper.show.status import marked, status_text
from timekeeper.sound.listener import RunnerListener

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, address: str | None = None) -> None:
        address = address if address is not None else os.environ.get("NOTIFY_SOCKET", "")
        if address.startswith("@"):  # abstract namespace
            address = "\0" + address[1:]
        self.address = address or None
        self._sock: socket.socket | None = None
        if self.address:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def notify(self, *lines: str) -> bool:
        if self._sock is None or self.address is None:
            return False
        try:
            self._sock.sendto("\n".join(lines).encode(), self.address)
        except OSError as exc:
            log.debug("sd_notify failed: %s", exc)
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={text}")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class ServiceStatus(RunnerListener):
    """systemd's STATUS= line (`systemctl status timekeeper`) follows the match's state and
    the mute, with the box's mark (SILENT)."""

    def __init__(self, notifier: Notifier, mark: str = "") -> None:
        self.notifier, self.mark = notifier, mark

    def text(self, status: Status) -> str:
        return marked(status_text(status), self.mark)

    def state_changed(self, status: Status) -> None:
        self.notifier.status(self.text(status))


def watchdog_interval() -> float | None:
    """Seconds between pings, half of systemd's WatchdogSec (as sd_watchdog_enabled(3)
    advises), or None when no watchdog is set for this process."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(0.05, int(usec) / 2e6)
    except ValueError:
        return None


class Watchdog(RunnerListener):
    """Pings systemd from the runner's thread (a listener woken at its `next_due`): if the
    engine's loop hangs, the pings stop and systemd restarts the service, which resumes from
    its journal."""

    def __init__(self, notifier: Notifier, interval: float, now: float) -> None:
        self.notifier, self.interval = notifier, interval
        self._due = now

    def next_due(self) -> float | None:
        return self._due

    def fire(self, now: float) -> None:
        self.notifier.notify("WATCHDOG=1")
        self._due = now + self.interval
