"""The score as a user enters it: `ctl goal`, the events log, `--actions 30:goal=home:17`,
`run --replay` of a journaled match (ITHF 4.5), and a pack's optional `goal` cue."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from running import ctl, start_match, start_run, tk, wait_until_answers, write

from timekeeper.rules import profile
from timekeeper.rules.replay import parse_actions, replay
from timekeeper.sound.pack import default_pack_dir, load_pack
from timekeeper.sound.render import voices_for

pytestmark = pytest.mark.slow  # real processes (tests/conftest.py: the fast tier)

SLOW = """\
    title: a 10-minute live test
    period:
      length: 600
"""


def test_goals_over_ctl_into_the_status_and_the_events_log(
    tmp_path: Path, env: dict[str, str], sock: Path, procs: list[subprocess.Popen]
) -> None:
    prof = write(tmp_path / "slow.yaml", SLOW)
    proc, events = start_match(procs, env, prof, sock, "--state-dir", str(tmp_path))
    wait_until_answers(proc, env, sock)
    code, status, _ = ctl(env, sock, "goal", "home", "17")
    assert code == 0 and status["score"] == {"home": 1, "away": 0}
    assert status["goals"][0]["team"] == "home" and status["goals"][0]["player"] == "17"
    code, status, _ = ctl(env, sock, "goal", "away")
    assert code == 0 and status["score"] == {"home": 1, "away": 1}
    code, status, _ = ctl(env, sock, "undo-goal", "away")
    assert code == 0 and status["score"] == {"home": 1, "away": 0}
    code, _, err = ctl(env, sock, "undo-goal", "away")
    assert code == 1 and "no goal to take back" in err
    code, _, err = ctl(env, sock, "goal", "home", "17", "18")  # refused before the socket
    assert code == 2 and "goal TEAM [PLAYER]" in err
    journal = json.loads((tmp_path / "match.json").read_text(encoding="utf-8"))
    assert [g["player"] for g in journal["score"]["goals"]] == ["17"]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err
    entries = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    goals = [e for e in entries if e["cue"] == "goal"]
    assert [e["detail"] for e in goals] == ["home #17 1:0", "away 1:1"]


def test_run_replay_plays_a_journaled_match_again_keeping_its_goals(
    tmp_path: Path, env: dict[str, str], sock: Path, procs: list[subprocess.Popen]
) -> None:
    journal = tmp_path / "copied.json"
    journal.write_text(
        json.dumps(
            {
                "format": 1,
                "profile": "ithf",
                "state": "stopped",
                "period": 1,
                "play_time": 200.0,
                "added": 0.0,
                "shots": 0,
                "shootout": False,
                "extra": None,
                "score": {
                    "goals": [{"team": "away", "period": 1, "play_time": 80.0, "player": "4"}],
                    "shootout": None,
                },
            }
        ),
        encoding="utf-8",
    )
    proc = start_run(
        procs,
        env,
        tmp_path,
        "--profile",
        "ithf",
        "--resume-from",
        str(journal),
        "--replay",
        "--control",
        str(sock),
        "--state-dir",
        str(tmp_path),
    )
    status = wait_until_answers(proc, env, sock)
    assert status["state"] == "idle" and status["score"] == {"home": 0, "away": 1}
    code, status, _ = ctl(env, sock, "start")
    assert code == 0 and status["state"] == "prestart" and status["score"]["away"] == 1
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "goals kept (score 0:1)" in err


def test_run_replay_without_a_match_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    done = tk(env, "run", "--profile", "ithf", "--replay", "--fresh", "--state-dir", str(tmp_path))
    assert done.returncode == 2 and "--replay" in done.stderr


def test_render_actions_goal_and_a_packs_optional_goal_cue(
    tmp_path: Path, env: dict[str, str]
) -> None:
    events = tmp_path / "ev.jsonl"
    done = tk(
        env,
        "render",
        "--profile",
        "ithf",
        "--actions",
        "30:goal=home:17",
        "-o",
        str(tmp_path / "m.wav"),
        "--events",
        str(events),
    )
    assert done.returncode == 0, done.stderr
    logged = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    assert [(e["play_time"], e["detail"]) for e in logged if e["cue"] == "goal"] == [
        (30.0, "home #17 1:0")
    ]
    # the default pack has no goal sound: nothing is heard, the log has the goal
    pack_dir = tmp_path / "pack"
    shutil.copytree(default_pack_dir(), pack_dir)
    with (pack_dir / "pack.yaml").open("a", encoding="utf-8") as yaml:
        yaml.write("  goal: prestart.wav\n")
    ithf = profile.load("ithf")
    cues = replay(ithf, parse_actions("30:goal=home:17")).cues
    quiet = voices_for(cues, load_pack(default_pack_dir(), ithf.cue_names)).playing
    heard = voices_for(cues, load_pack(pack_dir, ithf.cue_names)).playing
    assert len(heard) == len(quiet) + 1
