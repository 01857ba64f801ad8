"""A table on the hall's time, as the desk starts it: a round's tables get one start at one
instant, each on its own topic (the tables without a match stay idle), and stay on the hall's
time; only a start for one table alone (`hall start --table T`, a late table) takes it off.
Real boxes on a real Mosquitto, the desk's own `send`; `hall status` as the director reads it."""

from __future__ import annotations

import time

import pytest
from helpers import HALL_WAIT, wait_for
from running import hall

from timekeeper.hall.bus.broker import Broker
from timekeeper.hall.desk.link import Desk, new_command

pytestmark = pytest.mark.slow


def test_a_rounds_tables_started_each_on_its_topic_stay_on_the_halls_time(boxes) -> None:
    boxes["start"]("1", "2", "3")
    wait_for(lambda: len(boxes["tables"]()) == 3, "the boxes joined", HALL_WAIT)
    desk = Desk(Broker.parse(boxes["broker"]["url"]), "hall")
    try:
        _round_then_a_late_table(boxes, desk)
    finally:
        desk.close()


def _round_then_a_late_table(boxes, desk: Desk) -> None:
    answers = desk.send(new_command("start", at=time.time() + 2.0), only=["1", "2"])
    assert all(a["ok"] for a in answers.values()), answers
    tables = wait_for(
        lambda: (
            all((s := boxes["tables"]())[t]["status"]["state"] == "running" for t in ("1", "2"))
            and s
        ),
        "the round's tables running",
        HALL_WAIT,
    )
    assert tables["1"]["in_step"] is True and tables["2"]["in_step"] is True
    assert tables["3"]["status"]["state"] == "idle"
    shown = hall(boxes["broker"]["url"], "status").stdout
    assert "off the hall's time" not in shown, shown
    late = desk.send(new_command("start", at=time.time() + 2.0), table="3")  # a late table
    assert late["3"]["ok"], late
    wait_for(
        lambda: (
            (t := boxes["tables"]()["3"])["status"]["state"] == "running" and t["in_step"] is False
        ),
        "the late table running on its own time",
        HALL_WAIT,
    )
