"""The running box against real faults: a real full filesystem (a
small tmpfs mounted by the test), a real EMFILE (the box's own RLIMIT_NOFILE lowered), and
SIGHUP. Each output that is not the sound fails alone: the clock and the cues go on."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_for
from running import TIMEOUT, command, played, start, status, stop

from timekeeper.box.controls.socket_client import send

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

EVERY_SECOND = """\
title: a mark every second
prestart: 0
period: {length: 600, marks: 1, mark_beeps: single}
"""


@pytest.fixture
def disk(service_box) -> Iterator[Path]:
    """A 64 KiB tmpfs: full in a moment, freed by deleting a file."""
    folder = service_box["dir"] / "disk"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({done.stderr.strip()}): run as root, or "
            "see bench/faults.py"
        )
    yield folder
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 1024)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_full_disk_never_stops_the_match(service_box, disk) -> None:
    (service_box["dir"] / "profiles" / "minute.yaml").write_text(EVERY_SECOND)
    events = disk / "events.jsonl"
    earlier = '{"note": "an earlier match"}\n'
    events.write_text(earlier * (4096 // len(earlier)) + "#" * (4096 % len(earlier) - 1) + "\n")
    filler = fill(disk)  # (the log's last page is full too: its next line needs space)
    args = ("--start", "--events", str(events), "--state-dir", str(disk / "state"))
    proc = start(service_box, *args)
    before, asked = status(service_box, proc)["play_time"], time.monotonic()
    during = played(service_box, proc, before + 2.5)  # the box's own clock, on a full disk
    assert during["state"] == "running"  # the clock goes on with real time
    assert during["play_time"] - before == pytest.approx(time.monotonic() - asked, abs=0.3)
    out, err = stop(proc)

    again = start(service_box, *args)  # a restart on the full disk comes up and goes on
    # --start begins anew (no journal could be written), or a journal resumes it stopped; the
    # box may answer before --start is applied (idle): wait for one or the other, then go on
    state = wait_for(
        lambda: (st := status(service_box, again)["state"]) in ("running", "stopped") and st,
        "the restarted box running or stopped",
        TIMEOUT,
    )
    if state == "stopped":
        assert command(service_box, "resume")["state"] == "running"
    # a cue (one a second) or two
    played(service_box, again, status(service_box, again)["play_time"] + 1.5)
    assert lines(events) == 4096 // len(earlier) + 1  # nothing could be written
    filler.unlink()  # space again: what waited is written, in order
    wait_for(lambda: lines(events) > 4096 // len(earlier) + 1, "the events log written again")
    out2, err2 = stop(again)
    assert out.count("cue minute") >= 2 and out2.count("cue minute") >= 1  # cues went on
    for text in (err, err2):
        assert text.count(f"cannot write the events log {events}: No space left") == 1, text
        assert text.count("cannot write the journal") == 1, text
        assert "Traceback" not in text
    assert f"events log {events} written again" in err2
    assert f"journal {disk / 'state' / 'match.json'} written again" in err2


def test_out_of_file_descriptors_the_socket_comes_back(service_box) -> None:
    log = service_box["dir"] / "stderr.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "timekeeper", "run", "--profile", "minute", "--no-keyboard"],
            env=service_box["env"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    service_box["procs"].append(proc)
    # ready (the socket answers a moment before the box has said so): its start-up is over
    wait_for(lambda: "timekeeper: ready:" in log.read_text(), "the box ready", TIMEOUT)
    status(service_box, proc)
    used = len(os.listdir(f"/proc/{proc.pid}/fd"))
    hard = resource.prlimit(proc.pid, resource.RLIMIT_NOFILE)[1]
    resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (used + 4, hard))  # a real EMFILE
    held = []
    for _ in range(40):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            sock.connect(str(service_box["sock"]))
        held.append(sock)
    wait_for(
        lambda: "cannot accept a connection (Too many open files)" in log.read_text(),
        "EMFILE in accept()",
        TIMEOUT,
    )
    for sock in held:
        sock.close()
    assert wait_for(lambda: _answers(service_box), "the socket to answer again", TIMEOUT)
    resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (1024, hard))
    stop(proc)
    text = log.read_text()
    assert text.count("cannot accept a connection") == 1
    assert "accepting connections again" in text and "Traceback" not in text


def _answers(service_box: dict) -> bool:
    try:
        return send(service_box["sock"], "status", timeout=2)["ok"]
    except (ConnectionError, OSError):
        return False


def test_sighup_stops_it_like_sigterm(service_box) -> None:
    proc = start(service_box)
    status(service_box, proc)
    command(service_box, "start")
    before = played(service_box, proc, 0.4)["play_time"]
    played(service_box, proc, before + 0.2)
    proc.send_signal(signal.SIGHUP)
    proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0
    written = json.loads(service_box["journal"].read_text())
    assert written["state"] == "running" and written["play_time"] > before  # the exact time
    assert not service_box["sock"].exists()  # the socket file is gone
