"""One status: `ctl status --json`, `/api/status` and the hall's retained status are the same
fields with the same values for the same box (the runner builds it, once), and `ctl status`
without `--json` prints it for a person."""

from __future__ import annotations

import dataclasses
import json
import urllib.request
from pathlib import Path

import pytest
from helpers import free_port, wait_for
from running import start_run, tk, wait_until_answers

from timekeeper.rules import profile
from timekeeper.rules.engine import Engine, Status
from timekeeper.show.status import status_block

FIELDS = {f.name for f in dataclasses.fields(Status)}


@pytest.mark.slow
def test_ctl_the_web_and_the_hall_carry_the_same_status(
    broker,
    procs,
    env: dict[str, str],
    sock: Path,
    tmp_path: Path,
) -> None:
    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.desk.link import Desk

    port = free_port()
    box = start_run(
        procs,
        env,
        tmp_path,
        "--profile",
        "ithf",
        "--no-gpio",
        "--fresh",
        "--state-dir",
        str(tmp_path / "state"),
        "--control",
        str(sock),
        "--web",
        str(port),
        "--hall",
        broker["url"],
        "--table",
        "1",
        "--sync",
        "local",
    )
    wait_until_answers(box, env, sock)
    for args in (("names", "Novák", "Svoboda"), ("mute",)):  # a match fact and a box fact
        assert tk(env, "ctl", *args, "--json", "--control", str(sock)).returncode == 0
    desk = Desk(Broker.parse(broker["url"]), "hall")
    try:
        hall = wait_for(
            lambda: (
                (t := desk.tables().get("1")) and t.get("status", {}).get("muted") and t["status"]
            ),
            "the hall's status of the muted box",
            15,
        )
        done = tk(env, "ctl", "status", "--json", "--control", str(sock))
        ctl = json.loads(done.stdout)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=10) as r:
            web = json.loads(r.read())
    finally:
        desk.close()
    assert set(ctl) == FIELDS  # every field of the one status, nothing added anywhere
    assert ctl == web == hall
    assert ctl["names"] == {"home": "Novák", "away": "Svoboda"} and ctl["muted"] is True
    assert (ctl["add_step"], ctl["length"], ctl["tenths"]) == (10.0, 300.0, False)
    block = tk(env, "ctl", "status", "--control", str(sock)).stdout
    assert "IDLE" in block and "Novák 0:0 Svoboda" in block and "muted" in block


def test_ctl_status_prints_a_block_for_a_person() -> None:
    """A few labelled lines, the fields that say nothing now left out; never JSON."""
    engine = Engine(profile.load("ithf"))
    engine.name_sides("Jan Novák", "")
    idle = status_block(engine.status(0.0).to_dict())
    lines = idle.splitlines()
    assert lines[0].startswith("match") and "(ithf)" in lines[0]
    assert "IDLE" in lines[1] and "clock" not in idle
    assert "Jan Novák 0:0 AWAY" in idle and "sound      on" in idle
    assert not idle.lstrip().startswith("{")
    running = engine.status(0.0).to_dict() | {
        "state": "running",
        "part": "match",
        "period": 1,
        "remaining": 216.5,
        "play_time": 83.5,
        "audio_fault": "card gone",
    }
    block = status_block(running)
    assert "RUNNING, match (1 of 1)" in block and "3:37 left, 1:23 played" in block
    assert "not heard: card gone" in block
