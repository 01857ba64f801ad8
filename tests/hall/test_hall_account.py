"""The director's first hour: the desk logs in to its own broker (a user and a password
file, or the config's), a practice hall on one machine (`sync: local`, loopback only), the
shipped Mosquitto config without warnings, and `hall status` as a table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_for

from timekeeper.box import config as box_config
from timekeeper.hall.bus import timesync
from timekeeper.hall.bus.account import read_password, with_account
from timekeeper.hall.bus.broker import Broker
from timekeeper.hall.desk import console
from timekeeper.hall.desk.console import status_table
from timekeeper.hall.practice import Mosquitto
from timekeeper.rules.yamldoc import ConfigError


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "127.0.1.1", "::1", "[::1]"])
def test_sync_local_is_accepted_for_a_loopback_broker(host: str) -> None:
    assert timesync.checker("local", host)() == timesync.LOCAL
    assert "one machine" in timesync.LOCAL.text


@pytest.mark.parametrize("host", ["desk", "192.168.1.10", "desk.local", "10.0.0.1"])
def test_sync_local_is_refused_for_a_broker_elsewhere_with_the_reason(host: str) -> None:
    with pytest.raises(ValueError, match="broker must be on this machine") as refused:
        timesync.checker("local", host)
    assert host in str(refused.value) and "chrony" in str(refused.value)


def test_the_config_reads_the_account_and_sync_and_refuses_local_elsewhere(tmp_path) -> None:
    secret = tmp_path / "desk.pass"
    secret.write_text("s3cret\n")
    good = tmp_path / "desk.yaml"
    good.write_text(
        "hall:\n  broker: mqtt://localhost:1883\n  hall: cup\n  user: desk\n"
        "  password_file: desk.pass\n  sync: local\n"
    )
    hall = box_config.load(good).hall
    assert hall.user == "desk" and hall.password_file == secret and hall.sync == "local"
    assert hall.table == ""  # the desk has no table
    broker = with_account(Broker.parse(hall.broker), hall.user, hall.password, hall.password_file)
    assert (broker.user, broker.password) == ("desk", "s3cret")
    bad = tmp_path / "bad.yaml"
    bad.write_text("hall:\n  broker: mqtt://desk:1883\n  table: 3\n  sync: local\n")
    with pytest.raises(ConfigError, match="sync") as refused:
        box_config.load(bad)
    assert "bad.yaml" in str(refused.value) and "must be on this machine" in str(refused.value)


def test_a_password_file_is_one_line_and_a_url_account_wins(tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty"):
        read_password(empty)
    with pytest.raises(ValueError, match="cannot read"):
        read_password(tmp_path / "missing")
    named = Broker.parse("mqtt://other:pw@localhost")
    assert with_account(named, "desk", "x") == named


def test_the_desks_options_go_over_its_config_in_one_place(tmp_path) -> None:
    """hall/desk/deskconfig.py: --broker over the config's hall.broker, the config's account
    unless --user, the config's language unless --language; a bad option is refused."""
    import argparse

    from timekeeper.hall.desk.deskconfig import desk_settings

    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        f"language: cs\nhall:\n  broker: mqtt://10.0.0.2\n  hall: club\n"
        f"  user: desk\n  password_file: {secret}\n",
        encoding="utf-8",
    )

    def settings(**given):
        args = argparse.Namespace(
            **{
                "config": cfg,
                "broker": None,
                "hall_name": None,
                "user": None,
                "password_file": None,
                "language": None,
                **given,
            }
        )
        return desk_settings(args, box_config.load)

    own = settings()
    assert (own.broker, own.hall, own.language, own.language_given) == (
        Broker("10.0.0.2", 1883, "desk", "s3cret"),
        "club",
        "cs",
        False,
    )
    other = settings(broker="mqtt://10.0.0.3:1884", hall_name="b", user="u", language="de")
    assert (other.broker, other.hall, other.language_for("cs")) == (
        Broker("10.0.0.3", 1884, "u", "s3cret"),
        "b",
        "de",
    )  # (the password file: the config's)
    with pytest.raises(ConfigError, match="--language"):
        settings(language="xx")
    with pytest.raises(ConfigError, match="--broker"):
        settings(broker="http://nope")


def test_hall_status_is_a_table_one_line_per_table() -> None:
    statuses = {
        "1": {
            "online": True,
            "synced": True,
            "in_step": True,
            "status": {
                "state": "running",
                "part": "1st half",
                "remaining": 65.2,
                "score": {"home": 2, "away": 1},
            },
        },
        "2": {
            "online": True,
            "synced": False,
            "sync": "NOT SYNCED: chrony is not running",
            "status": {"state": "idle", "score": {"home": 0, "away": 0}},
        },
        "3": {"online": False},
        "4": {
            "online": True,
            "synced": True,
            "in_step": False,
            "status": {
                "state": "running",
                "part": "1st half",
                "remaining": 30,
                "score": {"home": 0, "away": 0},
            },
        },
    }
    lines = status_table("cup", statuses).splitlines()
    assert lines[0] == "hall cup: 3 of 4 tables online"
    assert lines[1].split() == ["table", "state", "part", "time", "score", "match", "sync"]
    assert lines[2].split()[:5] == ["1", "RUNNING", "1st", "half", "1:06"]
    assert "2:1" in lines[2] and lines[2].endswith("synced")
    assert "NOT SYNCED: chrony is not running" in lines[3]
    assert lines[4].split() == ["3", "OFFLINE"]
    assert lines[5].endswith("synced; off the hall's time")  # a late table started alone


def test_hall_status_names_each_tables_match_players_and_series_and_counts_the_prestart() -> None:
    series = {"best_of": 5, "game": 3, "home_wins": 2, "away_wins": 0, "winner": None}
    pairing = {"id": "SF2-c3", "round": 4, "match": "SF2", "home": "Dvořák", "away": "Novák"}
    statuses = {
        "1": {
            "online": True,
            "synced": True,
            "in_step": True,
            "pairing": pairing,
            "status": {
                "state": "prestart",
                "countdown": 14.2,
                "remaining": None,
                "score": {"home": 0, "away": 0},
                "names": {"home": "Dvořák", "away": "Novák"},
                "match_series": {**series, "match": "SF2", "games": []},
            },
        },
        "2": {
            "online": True,
            "synced": True,
            "pairing": {**pairing, "match": "G1", "home": "Kos", "away": "Vrba"},
            "status": {"state": "idle", "score": {"home": 0, "away": 0}, "names": {}},
        },
    }
    lines = status_table("cup", statuses).splitlines()
    assert lines[2].split()[:4] == ["1", "PRESTART", "0:15", "0:0"]  # the pre-start's count
    assert "SF2 Dvořák – Novák · game 3 · Dvořák leads 2:0" in lines[2]
    assert "G1 Kos – Vrba" in lines[3]  # (the pairing's names, where the box shows none)


def test_a_start_in_4s_counts_from_when_it_goes_out_not_from_the_typing(monkeypatch) -> None:
    """Connecting to a busy hall's broker took over 3 s once: a start `--in 4s` counted from
    the typing came after its instant at every table, and every table refused it."""
    wall = [1000.0]
    sent = []

    class SlowDesk:  # (the desk's interface, as `hall start` uses it)
        def __init__(self, broker, hall) -> None:
            wall[0] += 3.2  # the connection and the retained statuses

        def add_reader(self, reader) -> None:  # (the pairings: none, no tournament)
            pass

        def read_statuses(self) -> dict:
            wall[0] += 0.5
            return {}

        def tables(self) -> dict:
            return {}

        def send(self, command, table=None, only=None) -> dict:
            sent.append(command)
            return {"1": {"table": "1", "ok": False, "error": "(not a real table)"}}

        def close(self) -> None:
            pass

    monkeypatch.setattr(console, "Desk", SlowDesk)
    monkeypatch.setattr(console, "time", type("Clock", (), {"time": lambda: wall[0]}))
    out: list[str] = []
    console.run("start", "mqtt://localhost", "cup", in_text="4s", out=out.append)
    assert sent and sent[0].at == 1000.0 + 3.2 + 0.5 + 4.0
    assert console.run("start", "mqtt://localhost", "cup", in_text="1s", out=out.append) == 2
    assert "at least 2 s" in out[-1] and len(sent) == 1  # (told before connecting)


@pytest.mark.slow
def test_the_shipped_broker_config_loads_without_warnings_and_the_desk_logs_in(
    tmp_path: Path,
) -> None:
    # the shipped config and ACL, users desk and 1 (as `install-pi.sh --hall-user 1`)
    users = {"desk": "desk-secret", "1": "box-1-secret"}
    with Mosquitto(tmp_path / "mq", users=users, tables=("1",)) as broker:
        port, log = broker.port, broker.log
        wait_for(lambda: "running" in log.read_text(), "mosquitto to say it runs")
        said = [
            line for line in log.read_text().splitlines() if "should not be run as root" not in line
        ]  # (the test's own setup)
        assert not [
            line
            for line in said
            if any(word in line for word in ("Warning", "Note", "Error", "recommended"))
        ], said
        secret = tmp_path / "desk.pass"
        secret.write_text("desk-secret\n")
        url = f"mqtt://127.0.0.1:{port}"

        def hall(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "timekeeper", "hall", "status", "--broker", url, *args],
                capture_output=True,
                text=True,
                timeout=30,
            )

        refused = hall()
        assert refused.returncode == 1 and "did not let us in" in refused.stdout
        assert "not authorized" in refused.stdout.lower(), refused.stdout  # (its answer)
        done = hall("--user", "desk", "--password-file", str(secret))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "no table has reported" in done.stdout
        config = tmp_path / "desk.yaml"
        config.write_text(f"hall:\n  broker: {url}\n  user: desk\n  password_file: desk.pass\n")
        by_config = subprocess.run(
            [
                sys.executable,
                "-m",
                "timekeeper",
                "hall",
                "status",
                "--config",
                str(config),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert by_config.returncode == 0 and by_config.stdout.strip() == "{}", by_config


def test_hall_status_ages_each_status_from_when_the_box_sent_it() -> None:
    """A status is the box's last, sent up to 5 s ago: a running clock, a countdown and what
    is pending are told as of now (the hall's time); a stopped clock is not; a status not
    heard from for long says how old it is."""

    def table(state: str, sent: float, **fields: object) -> dict:
        status = {"state": state, "score": {"home": 0, "away": 0}, **fields}
        return {"online": True, "synced": True, "sent": sent, "status": status}

    pending = [{"command": "start", "in": 20.0}]
    statuses = {
        "1": table("idle", 996.0, scheduled=pending),
        "2": table("prestart", 995.5, countdown=15.0, remaining=None),
        "3": table("running", 996.0, part="1st half", remaining=30.0),
        "4": table("stopped", 996.0, part="1st half", remaining=30.0),
        "5": table("running", 980.0, part="1st half", remaining=300.0),
        "6": {**table("running", 900.0, remaining=30.0), "synced": False, "sync": "NOT SYNCED"},
    }
    lines = status_table("cup", statuses, now=1000.0).splitlines()[2:]
    assert "pending: start in 16 s" in lines[0], lines[0]
    assert lines[1].split()[:3] == ["2", "PRESTART", "0:11"], lines[1]  # 15 - 4.5
    assert lines[2].split()[:5] == ["3", "RUNNING", "1st", "half", "0:26"], lines[2]
    assert lines[3].split()[:5] == ["4", "STOPPED", "1st", "half", "0:30"], lines[3]
    assert "4:40" in lines[4] and lines[4].endswith("synced; status 20 s old"), lines[4]
    assert "0:30" in lines[5] and "old" not in lines[5], lines[5]  # (its clock is not ours)
