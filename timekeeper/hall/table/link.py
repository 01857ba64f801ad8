"""A box's link to the hall: hall commands in, its status out, over MQTT (paho-mqtt 2.x, on
its own network thread).

The link never decides anything about the match. A hall command becomes an ordinary command
on the runner's queue, given an instant on the runner's clock (the hall's wall-clock `at`
mapped once, on receipt); the runner applies it then, so every box's cues sound together.
The box goes on with its match whatever the bus does: a broker that dies, a desk that goes
away or a flood of bad messages costs the match nothing. On every (re)connect the box
publishes its status again (retained); the broker's Last Will says `offline` for a box that
vanishes. Each command id is carried out at most once, and a command sent too long ago (a
broker outage) is refused, never carried out late.

The status goes out from one thread of the link's own: the runner, as its listener, only hands
over each change (never waiting for the bus), and the desk sees it at once, with `in_step`
already as the change left it."""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from timekeeper.hall.bus import timesync
from timekeeper.hall.bus.broker import Broker, make_client
from timekeeper.hall.bus.messages import (
    MAX_AGE,
    MAX_PAYLOAD,
    BadMessage,
    HallCommand,
    Topics,
    check_name,
    parse_command,
)
from timekeeper.hall.table.deskprompts import desk_prompt
from timekeeper.hall.table.tablematch import MatchLink
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Status
from timekeeper.sound.listener import LiveRunner, RunnerListener

log = logging.getLogger(__name__)

# command ids are remembered while a copy could still pass the stale check (sent at most
# MAX_AGE ago, with room for a clock step): by time, not by count; a flood that fills the
# memory meanwhile is refused, never let through by forgetting
REMEMBER = 3 * MAX_AGE
MAX_SEEN = 5000
STATUS_EVERY = 5.0  # s: a status is published at least this often (and on every change)
STATUS_MIN_GAP = 0.1  # s: at most ten status messages a second (a burst sends its last)
# commands that move this table's clock: given locally, the table is off the hall's time
CLOCK_ACTIONS = {
    Action.START,
    Action.NEXT,
    Action.GO,
    Action.TOGGLE,
    Action.PAUSE,
    Action.RESUME,
    Action.ADD,
    Action.SET,
    Action.FINISH,
    Action.RESET,
}


class HallLink(RunnerListener):
    """Joins a box to the hall: `start()` connects (in the background, retrying for ever);
    as a runner listener it publishes the status on every change; `close()` says offline and
    leaves."""

    def __init__(
        self,
        box: LiveRunner,
        broker: Broker,
        hall: str,
        table: str,
        profile: str,
        client_factory: Callable[[str, Broker], Any] = make_client,
        sync_check: Callable[[], timesync.Sync] = timesync.check,
        results: Path | None = None,
        switch: Callable[[str], str] | None = None,
    ) -> None:
        """`results`: the folder where the table's pairing and result are kept (None: not
        kept); `switch`: takes a pairing's other profile (box.switch.ProfileSwitch)."""
        self.box, self.broker, self.profile = box, broker, profile
        self.topics = Topics(check_name("hall", hall), check_name("table", table))
        self.sync_check = sync_check
        self.sync = timesync.Sync(False, None, "not checked yet")
        self.in_step = False  # the table's clock follows the hall's last start/resume
        self.last_error = ""  # why the last hall command was refused, for the desk
        self._seen: OrderedDict[str, float] = OrderedDict()  # id -> its `sent`
        self._lost = False  # the broker was lost (said once; its return is said too)
        self._lock = threading.Lock()
        self._latest: Status | None = None  # handed over by the runner, not yet published
        self._news = threading.Event()  # publish now (a change, an error, a reconnect)
        self._closed = threading.Event()
        self._sender = threading.Thread(target=self._send_statuses, name="hall-status", daemon=True)
        # a fresh, unguessable client id each start: another box's credentials cannot
        # take this box's connection over by reusing its id (the broker drops the older)
        self.client = client_factory(f"timekeeper-{hall}-{table}-{secrets.token_hex(6)}", broker)
        self.client.will_set(
            self.topics.status, json.dumps({"table": table, "online": False}), qos=1, retain=True
        )
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_message = self._message
        # the desk's pairings and this table's results (their topics, its status fields); a
        # runner listener of its own
        self.match = MatchLink(self, results, switch=switch)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> HallLink:
        self.sync = self.sync_check()
        log.info(
            "hall %s, table %s: broker %s:%d, clock %s",
            self.topics.hall,
            self.topics.table,
            self.broker.host,
            self.broker.port,
            self.sync.text,
        )
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=5)
        self.client.loop_start()
        self._sender.start()
        return self

    def close(self) -> None:
        self._closed.set()
        self._news.set()
        if self._sender.is_alive():
            self._sender.join(2)
        try:
            self.client.publish(
                self.topics.status,
                json.dumps({"table": self.topics.table, "online": False}),
                qos=1,
                retain=True,
            )
            self.client.disconnect()
        finally:
            self.client.loop_stop()

    # ------------------------------------------------------------------ the runner's side

    def command_applied(self, command: Command, scheduled: bool, status: Status) -> None:
        """A local command that moves the clock (keys, buttons, ctl, the phone) takes the
        table off the hall's time (told before `match_changed`, which publishes it)."""
        if not scheduled and command.action in CLOCK_ACTIONS:
            # the table's operator decides: what the hall scheduled here is called off
            self.box.cancel_scheduled(f"{command} given at the table")
            if self.in_step:
                self.in_step = False
                log.info("hall: this table is now off the hall's time (%s given here)", command)

    def match_changed(self, status: Status, now: float) -> None:
        """Every change publishes the status (a burst: its last, STATUS_MIN_GAP apart)."""
        self._latest = status
        self._news.set()

    def publish_status(self) -> None:
        """Publish the status now (from any thread): the link's own news (an error, the
        sync), or a reconnect."""
        self._news.set()

    def _send_statuses(self) -> None:
        """The one sender of the table's status: on news at once (at most every
        STATUS_MIN_GAP), else every STATUS_EVERY; the runner's status as it was handed over,
        or the box's now."""
        while not self._closed.is_set():
            self._news.wait(STATUS_EVERY)
            self._news.clear()
            if self._closed.is_set():
                return
            status, self._latest = self._latest, None  # (a change meanwhile sets news again)
            error = self.last_error  # (read first: the status is never older than it)
            try:
                self._publish(status or self.box.status(), error)
            except Exception:  # the link must never take the box down
                log.debug("hall status not published", exc_info=True)
            self._closed.wait(STATUS_MIN_GAP)

    def _publish(self, status: Status, error: str) -> None:
        payload = {
            "table": self.topics.table,
            "online": True,
            "in_step": self.in_step,
            "synced": self.sync.synced,
            "sync": self.sync.text,
            "offset": self.sync.offset,
            "error": error,
            "sent": timesync.wall_now(),
            "status": status.to_dict(),
        }
        payload.update(self.match.status_fields())
        self.client.publish(self.topics.status, json.dumps(payload), qos=1, retain=True)

    # ------------------------------------------------------------------ the bus's side

    def _connected(
        self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any = None
    ) -> None:
        if getattr(reason_code, "is_failure", False):
            log.warning("hall broker %s refused us: %s", self.broker.host, reason_code)
            return
        client.subscribe([(self.topics.command, 1), (self.topics.all_commands, 1)])
        self.match.connected(client)
        log.info(
            "hall: %s %s:%d",
            "the broker is back:" if self._lost else "connected to",
            self.broker.host,
            self.broker.port,
        )
        self._lost = False
        self.sync = self.sync_check()
        self.publish_status()  # after a broker outage: where this table stands

    def _disconnected(
        self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any = None
    ) -> None:
        """Said once when the broker is lost (paho retries each few seconds, silently); the
        match goes on, and the return is said by `_connected`."""
        if not self._lost and not self._closed.is_set():
            self._lost = True
            log.warning(
                "hall: lost the broker %s:%d (%s); the match goes on, reconnecting",
                self.broker.host,
                self.broker.port,
                reason_code,
            )

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            if self.match.owns(message.topic):
                return self.match.handle(message.payload)
            self._handle(message.payload)
        except Exception:  # never: but a bug here must not kill paho's network thread
            log.exception("hall: a message could not be handled")

    def _handle(self, payload: bytes) -> None:
        """A hall command: on the all topic or this table's own, the command itself says
        whether it is for this table alone (`alone`: a late table started on its own is off
        the hall's time), not the topic: a round's tables get one start on each one's own
        topic, at one instant, and stay on the hall's time."""
        if len(payload) > MAX_PAYLOAD:
            return self._refuse(None, f"payload of {len(payload)} bytes refused")
        try:
            command = parse_command(payload, timesync.wall_now())
        except BadMessage as exc:
            return self._refuse(_id_of(payload), str(exc))
        with self._lock:
            if command.id in self._seen:
                log.info("hall: command %s was carried out already; not again", command.id)
                return None
            if not self._remember(command):
                return self._refuse(
                    command.id,
                    f"too many hall commands in the last {REMEMBER:g} s; not carried out",
                )
        try:
            future = self._apply(command)
        except _HallRefusal as exc:
            return self._refuse(command.id, str(exc))
        # answered when the runner has applied it (a start at T: at T), never waited for here:
        # this is paho's network thread, which must keep the connection alive meanwhile
        future.add_done_callback(lambda done: self._applied(command, done))
        if not future.done():
            self.publish_status()  # held for its instant: the desk sees it pending now
        return None

    def _applied(self, command: HallCommand, future: Future) -> None:
        try:
            status = future.result()
        except Refused as exc:  # (its reason; what follows names the desk's commands, not
            # the table's keys, which mean nothing at the desk)
            return self._refuse(command.id, exc.reason + desk_prompt(self.box.status().to_dict()))
        except Exception as exc:
            return self._refuse(command.id, f"{type(exc).__name__}: {exc}")
        self.last_error = ""
        log.info("hall: %s (%s) done", command.kind, command.id)
        self._reply(command.id, True, status=status)
        self.publish_status()  # (last_error cleared; the runner has handed the change over)
        return None

    def _remember(self, command: HallCommand) -> bool:  # (under the lock)
        """Remember the id until a copy would be stale anyway; False: memory full."""
        cutoff = timesync.wall_now() - REMEMBER
        if len(self._seen) >= MAX_SEEN:
            self._seen = OrderedDict((i, s) for i, s in self._seen.items() if s >= cutoff)
        if len(self._seen) >= MAX_SEEN:
            return False
        self._seen[command.id] = command.sent
        while self._seen and next(iter(self._seen.values())) < cutoff:
            self._seen.popitem(last=False)
        return True

    def _apply(self, command: HallCommand) -> Future:
        kind, clock = command.kind, self.box.clock
        if kind == "cancel" or (kind in ("stop", "reset") and command.at is None):
            # the desk's later word calls off what it scheduled earlier on this table
            called_off = self.box.cancel_scheduled(f"hall {kind} {command.id}")
            if kind == "cancel":
                future: Future = Future()
                future.set_result(self.box.status())
                if called_off:
                    self.publish_status()
                return future
        if kind in ("start", "resume", "next"):
            self.sync = self.sync_check()
            if not self.sync.synced:
                raise _HallRefusal(self.sync.text)
        at = None
        if command.at is not None:
            at = timesync.to_clock(command.at, clock)
            late = clock() - at
            if kind in ("start", "resume", "next") and late > 0:
                raise _HallRefusal(
                    f"NOT SYNCED: the command came {late * 1e3:.0f} ms after "
                    "its instant; this table did not start"
                )
        if kind == "start":  # (a finished table's held pairing: the match this begins)
            self.match.before_start(clock() if at is None else at)
        if kind == "start" and command.profile not in (None, self.profile):
            raise _HallRefusal(
                f"this table runs profile {self.profile}, the hall start is for {command.profile}"
            )
        action = {
            "start": Action.START,
            "stop": Action.PAUSE,
            "resume": Action.RESUME,
            "next": Action.NEXT,
            "add": Action.ADD,
            "reset": Action.RESET,
            "finish": Action.FINISH,
        }[command.kind]
        seconds = command.seconds if kind == "add" else None
        future = self.box.submit(Command(action, seconds), at=clock() if at is None else at)
        if kind in ("start", "resume", "next"):
            # (a local command in the meantime takes it off again; so does a command for
            # this table alone: a late table started on its own is on its own time)
            self.in_step = not command.alone
        elif kind == "reset":
            self.in_step = False
        return future

    def _refuse(self, ident: str | None, why: str) -> None:
        log.warning("hall: command %s refused: %s", ident or "?", why)
        self.last_error = why
        self._reply(ident, False, error=why)
        self.publish_status()

    def _reply(
        self, ident: str | None, ok: bool, status: Status | None = None, error: str = ""
    ) -> None:
        body: dict[str, Any] = {"table": self.topics.table, "id": ident, "ok": ok}
        if error:
            body["error"] = error
        if status is not None:
            body["status"] = status.to_dict()
        self.client.publish(self.topics.reply, json.dumps(body), qos=1)


class _HallRefusal(Exception):
    """A hall command this table does not carry out (not synced, late, another profile)."""


def _id_of(payload: bytes) -> str | None:
    """The id of a refused command, if it has a readable one (for the desk's reply)."""
    try:
        value = json.loads(payload).get("id")
    except Exception:
        return None
    return value if isinstance(value, str) and len(value) <= 64 else None
