"""The tournament desk's side of the hall: send a command to every table (or one), collect
their answers, and read every table's retained status.

Commands carry a fresh id and the desk's wall-clock time; an instant (`at`) is on the same
synced wall clock, at least a lead ahead, so that delivery to every box is done before it."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any

from timekeeper.hall.bus import tablestatus
from timekeeper.hall.bus.broker import Broker, make_client
from timekeeper.hall.bus.messages import HallCommand, Topics, check_name, hall_topics, topic

log = logging.getLogger(__name__)

DEFAULT_LEAD = 3.0  # s between sending a start and the instant it takes effect
MIN_LEAD = 2.0  # s: less does not cover delivery to a busy hall's boxes


class DeskError(Exception):
    """The broker cannot be reached, or the command makes no sense."""


def new_command(
    kind: str,
    at: float | None = None,
    profile: str | None = None,
    seconds: float | None = None,
    wall: Callable[[], float] = time.time,
) -> HallCommand:
    return HallCommand(
        f"{kind}-{uuid.uuid4().hex[:12]}",
        kind,
        round(wall(), 6),
        None if at is None else round(at, 6),
        profile,
        seconds,
    )


class DeskReader:
    """The one interface of what reads more of the hall's topics through the desk's
    connection (the director: the results home), as RunnerListener is the box's. Each does
    nothing by default; calls come on paho's thread."""

    def owns(self, topic: str) -> bool:
        """Whether a message on `topic` is this reader's (then only it is told)."""
        return False

    def handle(self, topic: str, payload: bytes) -> None:
        """A message on one of its topics."""

    def connected(self, client: Any) -> None:
        """On every (re)connect: subscribe, publish again what must be retained."""

    def status(self, table: str, body: dict) -> None:
        """A table's status, checked, as the desk now holds it."""


class Desk:
    """One connection to the hall's broker for the desk's commands."""

    def __init__(self, broker: Broker, hall: str, connect_timeout: float = 3.0) -> None:
        self.broker, self.hall = broker, check_name("hall", hall)
        self.status_topic, self.reply_topic, self.all_topic = hall_topics(hall)
        desk_id = uuid.uuid4().hex[:8]
        self.echo_topic = topic(hall, "desk", desk_id)  # (our own: see _settle)
        self._settled = False
        self.statuses: dict[str, dict] = {}
        self.replies: dict[str, dict] = {}  # table -> reply, for the command being sent
        self.readers: list[DeskReader] = []  # more of the hall's topics (director.Director)
        self._awaited: str | None = None  # that command's id
        self.on_bus = False  # connected to the broker now
        self._lock = threading.Lock()
        self._connected = threading.Event()  # (set by the broker's first answer, yes or no)
        self._refused = ""  # why the broker refused us at the start
        self._changed = threading.Condition(self._lock)
        self.client = make_client(f"timekeeper-desk-{desk_id}", broker)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        try:
            self.client.connect(broker.host, broker.port, keepalive=10)
        except OSError as exc:
            raise DeskError(
                f"cannot reach the hall's broker {broker.host}:{broker.port} "
                f"({exc.strerror or exc})"
            ) from None
        self.client.loop_start()
        if not self._connected.wait(connect_timeout) or self._refused:
            self.close()
            why = f": {self._refused}" if self._refused else ""
            raise DeskError(
                f"the broker {broker.host}:{broker.port} did not let us in{why} "
                "(user and password?)"
            )

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(
        self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any = None
    ) -> None:
        if getattr(reason_code, "is_failure", False):
            if not self._connected.is_set():  # refused at the start: said at once, not
                self._refused = str(reason_code)  # after the whole connect timeout
                self._connected.set()
            return
        client.subscribe([(self.status_topic, 1), (self.reply_topic, 1), (self.echo_topic, 1)])
        for reader in list(self.readers):
            reader.connected(client)
        self.on_bus = True
        self._connected.set()

    def _on_disconnect(
        self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any = None
    ) -> None:
        self.on_bus = False  # (the overview says so: its tables are then stale)

    def add_reader(self, reader: DeskReader) -> None:
        """Another reader of the hall's topics, told of every (re)connect from now on."""
        self.readers.append(reader)
        if self._connected.is_set():
            reader.connected(self.client)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        """Every message is checked before it is believed; a bad one is refused alone (a
        bad status shows its table as BAD), and paho's thread goes on whatever happens."""
        try:
            for reader in self.readers:
                if reader.owns(message.topic):
                    return reader.handle(message.topic, message.payload)
            if message.topic == self.echo_topic:
                with self._changed:
                    self._settled = True
                    self._changed.notify_all()
                return
            self._take(message.topic, message.payload)
        except Exception:  # never: but a bug here must not kill paho's network thread
            log.exception("desk: a message on %s could not be handled", message.topic[:80])

    def _take(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        try:
            check_name("table", parts[2] if len(parts) == 4 else "")
        except ValueError:
            return
        table, leaf = parts[2], parts[3]
        try:
            body = tablestatus.parse(payload)
            body = (
                tablestatus.check_status(body)
                if leaf == "status"
                else tablestatus.check_reply(body)
            )
        except tablestatus.BadStatus as exc:
            log.warning("desk: table %s's %s refused: %s", table, leaf, exc)
            if leaf != "status":
                return
            body = {"table": table, "online": None, "bad": str(exc)}
        with self._changed:
            if leaf == "status":
                self.statuses[table] = body
            elif leaf == "reply" and body.get("id") == self._awaited:
                self.replies[table] = body  # (another desk's later answer never hides it)
            self._changed.notify_all()
        if leaf == "status":
            for reader in self.readers:
                reader.status(table, body)

    def tables(self) -> dict[str, dict]:
        """Every table's latest status, by table."""
        with self._lock:
            return dict(sorted(self.statuses.items(), key=lambda kv: _table_key(kv[0])))

    def read_statuses(self, wait: float = 1.0) -> dict[str, dict]:
        """Every table's retained status (the broker hands them over at once on subscribe)."""
        self._settle(wait)
        return self.tables()

    def _settle(self, wait: float) -> None:
        """Wait (at most `wait` s) until the broker has handed over every retained status: it
        sends them on subscribe, before it passes on anything published after that, so our
        own message on our own topic comes back behind them. Once is enough: after that
        the statuses are kept up to date as they come."""
        if self._settled:
            return
        self.client.publish(self.echo_topic, b"{}", qos=1)
        until = time.monotonic() + wait
        with self._changed:
            while not self._settled and (left := until - time.monotonic()) > 0:
                self._changed.wait(left)

    def send(
        self,
        command: HallCommand,
        table: str | None = None,
        wait: float = 2.0,
        only: Collection[str] | None = None,
    ) -> dict[str, dict]:
        """Publish `command` to every table (or one, or `only` those, each on its own topic
        at the one instant); wait until every online table answered (or `wait` s after its
        instant); returns table -> reply, with every table the desk knows of that did not
        answer (offline, a bad status, silent) and why."""
        if table is not None:  # (the command says so: its table leaves the hall's time)
            only, command = [table], replace(command, alone=True)
        topics = (
            [self.all_topic]
            if only is None
            else [Topics(self.hall, check_name("table", t)).command for t in only]
        )
        self._settle(1.0)  # the retained statuses: which tables are online
        with self._lock:
            known = set(self.statuses) if only is None else set(only)
            online = {t for t in known if self.statuses.get(t, {}).get("online")}
            self.replies, self._awaited = {}, command.id
        for name in topics:
            self.client.publish(name, command.to_json(), qos=1)
        until = time.monotonic() + wait + max(0.0, (command.at or 0) - time.time())
        with self._changed:
            while time.monotonic() < until:
                mine = {t for t, r in self.replies.items() if r.get("id") == command.id}
                if online and online <= mine:
                    break
                self._changed.wait(max(0.0, until - time.monotonic()))
            answers = {t: r for t, r in self.replies.items() if r.get("id") == command.id}
        for missing in sorted(known - set(answers), key=_table_key):
            answers[missing] = {
                "table": missing,
                "ok": False,
                "error": self._silence(missing, missing in online),
            }
        return dict(sorted(answers.items(), key=lambda kv: _table_key(kv[0])))

    def _silence(self, table: str, online: bool) -> str:
        """Why a table did not answer, as far as the desk can tell."""
        with self._lock:
            status = self.statuses.get(table)
        if status is None:
            return "no answer (the desk has no status from this table)"
        if status.get("bad"):
            return f"no answer (its status is bad: {status['bad']})"
        if not online:
            return "no answer: OFFLINE (its last status says it left the bus)"
        return "no answer"


def anonymous_allowed(broker: Broker, timeout: float = 3.0) -> bool:
    """Whether the broker lets a client in with no user name: then anyone on the hall's
    network can forge a table's status or start the hall (the shipped config refuses)."""
    import paho.mqtt.client as mqtt

    answered, admitted = threading.Event(), []
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id=f"timekeeper-probe-{uuid.uuid4().hex[:8]}"
    )

    def on_connect(_c: Any, _u: Any, _f: Any, code: Any, _p: Any = None) -> None:
        # a refusal is an answer too: the shipped broker's (it cost every desk command 3 s
        # of waiting for the timeout)
        admitted.append(not getattr(code, "is_failure", False))
        answered.set()

    client.on_connect = on_connect
    try:
        client.connect(broker.host, broker.port, keepalive=5)
    except OSError:
        return False
    client.loop_start()
    try:
        return answered.wait(timeout) and admitted[0]
    finally:
        client.disconnect()
        client.loop_stop()


ANONYMOUS_WARNING = (
    "WARNING: the hall's broker lets anonymous clients in: anyone on the "
    "hall's network can forge a table's status or start the hall. Use "
    "systemd/mosquitto-hall.conf (allow_anonymous false, a user per box)."
)
ANONYMOUS_NOTE = (
    "note: the broker at {where} lets anonymous clients in: fine for a practice hall on "
    "this machine; a hall's broker refuses them (systemd/mosquitto-hall.conf)"
)


def anonymous_warning(broker: Broker) -> str | None:
    """What to say of a broker that lets anonymous clients in (None: it refuses them): a
    warning; a calm note where it is reached on this machine's loopback address, as the
    practice hall's is (a director trying the docs was alarmed at every command)."""
    from timekeeper.hall.bus.timesync import is_loopback

    if not anonymous_allowed(broker):
        return None
    if is_loopback(broker.host):
        return ANONYMOUS_NOTE.format(where=f"{broker.host}:{broker.port}")
    return ANONYMOUS_WARNING


def _table_key(name: str) -> tuple[int, Any]:
    return (0, int(name)) if name.isdigit() else (1, name)


def summary(status: dict) -> str:
    """One line per table for `hall status` and the replies: state, part, time left."""
    if status.get("bad"):
        return f"BAD STATUS: {status['bad']}"
    if not status.get("online", False):
        return "OFFLINE"
    s = status.get("status") or {}
    words = [str(s.get("state", "?")).upper(), s.get("part") or ""]
    score = s.get("score") or {}
    if s.get("state") not in (None, "idle") or score.get("home") or score.get("away"):
        words.append(f"{score.get('home', 0)}:{score.get('away', 0)}")
    if s.get("remaining") is not None:
        whole = int(max(0.0, s["remaining"]) + 0.999)
        words.append(f"left {whole // 60}:{whole % 60:02d}")
    if not status.get("synced", True):
        words.append(status.get("sync", "NOT SYNCED"))
    elif status.get("in_step") is False and s.get("state") not in ("idle", "finished"):
        words.append("off the hall's time")
    for waiting in s.get("scheduled") or []:
        words.append(f"PENDING {waiting['command']} in {waiting['in']:.0f} s")
    if status.get("error"):
        words.append(f"last command refused: {status['error']}")
    return "  ".join(w for w in words if w)
