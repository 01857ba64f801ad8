"""The command line as a user runs it: `python -m timekeeper …` in a subprocess (exit codes,
what lands on stdout/stderr, the ctl socket), or `cli.main([...])` where no process is needed."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import wave
from pathlib import Path

import pytest
from helpers import wait_for
from running import (
    TIMEOUT,
    ctl,
    start_match,
    start_run,
    tk,
    wait_for_state,
    wait_until_answers,
    write,
)

from timekeeper import cli
from timekeeper.box.controls.socket_client import send
from timekeeper.sound.mixing import RATE

BUILTINS = (
    "ithf",
    "ithf-thirds",
    "ithf-playoff",
    "radegast",
    "radegast-playoff",
    "pl-3x6",
    "pl-3x6-ko",
    "pl-3x6-final",
    "hokejbal",
    "hokejbal-group-ot",
    "hokejbal-playoff",
)

# ~6 s of match: prestart 1, 5-s period, marks at 4 and 2 s left (×2, ×1), 2-s melody
LIVE = """\
    title: 6-second live test
    prestart: 1
    period:
      length: 5
      marks: 2
      melody: 2
"""
SHORT_RENDER = """\
    title: 8-second render test
    prestart: 1
    period:
      length: 6
      marks: 2
      melody: 2
"""


# ----------------------------------------------------------------------------- helpers


def wav_seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, RATE)
        return w.getnframes() / w.getframerate()


# ----------------------------------------------------------------------------- profiles / show


def test_profiles_lists_every_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    """`profiles` names all ten built-in profiles, each marked built-in with its title."""
    assert cli.main(["profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1] for line in lines}
    assert sorted(rows) == sorted(BUILTINS)
    assert set(rows.values()) == {"built-in"}
    assert not any("INVALID" in line for line in lines)


def test_show_ithf_prints_the_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    """`show ithf` prints the match as cues on the match clock: prestart at -0:20, the start,
    four minute marks counting down, the melody at 4:30 and the end at 5:00."""
    assert cli.main(["show", "ithf"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ithf — ")
    cues = [
        (m[1], m[2])
        for line in out.splitlines()
        if (m := re.match(r"\s+(-?\d+:\d\d)\s+(?:\d+:\d\d)?\s+p[-\d] (\S+(?: ×\d)?)", line))
    ]
    assert cues == [
        ("-0:20", "prestart"),
        ("0:00", "start"),
        ("1:00", "minute ×4"),
        ("2:00", "minute ×3"),
        ("3:00", "minute ×2"),
        ("4:00", "minute"),
        ("4:30", "last30"),
        ("5:00", "end"),
    ]


# ----------------------------------------------------------------------------- check


def test_check_accepts_the_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    """`check` validates every built-in profile and the built-in pack and exits 0."""
    assert cli.main(["check"]) == 0
    out = capsys.readouterr().out
    for name in BUILTINS:
        assert f"ok  profile {name}:" in out
    assert "ok  sound pack default" in out


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("period:\n  length: -5\n", "2:11: period.length", "must be more than zero seconds"),
        (
            "period:\n  length: 300\n  lenght: 10\n",
            "3:3: period.lenght",
            "unknown key; did you mean 'length'?",
        ),
        ("period:\n  length: 20\n  melody: 30\n", "3:11: period.melody", "longer than the period"),
        ("period:\n  length: 20\n  marks: often\n", "3:10: period.marks", "must be minutes"),
        (
            "follows: ithf\nprestart: 5\nperiod:\n  length: 300\n  marks: minutes\n  melody: 30\n",
            "2:11: prestart",
            "ITHF rule 4.4",
        ),
    ],
)
def test_check_bad_profile_names_file_line_column_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, where: str, message: str
) -> None:
    """A bad profile is refused with exit 2 and `FILE:LINE:COLUMN: FIELD: what is wrong`."""
    path = tmp_path / "bad.yaml"
    path.write_text("title: bad\n" + body, encoding="utf-8")
    line, column, field = where.split(":", 2)
    assert cli.main(["check", "--profile", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{int(line) + 1}:{column}:{field}: " in err  # +1: the title line
    assert message in err


@pytest.mark.slow
def test_check_bad_profile_exit_status_of_the_process(tmp_path: Path, env: dict[str, str]) -> None:
    """The process itself exits 2 (not a traceback) on a bad profile."""
    path = write(tmp_path / "bad.yaml", "period:\n  length: abc\n")
    done = tk(env, "check", "--profile", str(path))
    assert done.returncode == 2
    assert f"{path}:2:11: period.length: must be a number of seconds" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["missing", "garbage", "bad-header"])
def test_check_sounds_refuses_a_missing_or_corrupt_file(
    tmp_path: Path, env: dict[str, str], damage: str
) -> None:
    """`check --sounds PACK` exits 2 naming the audio file (and where pack.yaml names it)
    when a cue's file is missing or is not audio."""
    pack = tmp_path / "pack"
    pack.mkdir()
    write(pack / "pack.yaml", "name: broken\ncues:\n  start: start.wav\n")
    audio = pack / "start.wav"
    if damage == "garbage":
        audio.write_bytes(b"this is not a sound file \x00\xff" * 200)
    elif damage == "bad-header":
        audio.write_bytes(b"RIFF\x24\x00\x00\x00WAVEjunk" + bytes(64))
    done = tk(env, "check", "--profile", "ithf", "--sounds", str(pack))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{pack / 'pack.yaml'}:3:10: cues.start: {audio}" in done.stderr
    wanted = "missing audio file" if damage == "missing" else "not a WAV, FLAC, OGG or MP3 file"
    assert wanted in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_unknown_profile_lists_the_available_ones(env: dict[str, str]) -> None:
    """An unknown profile name exits 2 and lists every profile that can be chosen."""
    done = tk(env, "show", "nosuch")
    assert done.returncode == 2
    assert "unknown profile 'nosuch'; available: " in done.stderr
    listed = done.stderr.split("available: ", 1)[1].strip().split(", ")
    assert sorted(listed) == sorted(BUILTINS)


# ----------------------------------------------------------------------------- render


@pytest.mark.slow
def test_render_writes_a_wav(tmp_path: Path, env: dict[str, str]) -> None:
    """`render --profile X -o out.wav --actions …` exits 0 and writes the match as a WAV whose
    events file shows the operator's pause and resume."""
    prof = write(tmp_path / "short.yaml", SHORT_RENDER)
    out, events = tmp_path / "out.wav", tmp_path / "ev.jsonl"
    done = tk(
        env,
        "render",
        "--profile",
        str(prof),
        "-o",
        str(out),
        "--events",
        str(events),
        "--actions",
        "1.5:pause,3:resume",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}: ")
    # 0.5 lead-in + 1 prestart + 6 play + 1.5 stopped, then the 2.5-s end sound and 0.5 tail
    assert wav_seconds(out) == pytest.approx(9.0 + 2.5 + 0.5)
    names = [json.loads(line)["cue"] for line in events.read_text().splitlines()]
    assert names == ["prestart", "start", "pause", "resume", "minute", "minute", "last30", "end"]


@pytest.mark.slow
def test_render_reports_the_length_of_the_file_it_wrote(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The `wrote FILE: N s` line states the length of the WAV written."""
    prof = write(tmp_path / "short.yaml", SHORT_RENDER)
    out = tmp_path / "out.wav"
    done = tk(env, "render", "--profile", str(prof), "-o", str(out))
    assert done.returncode == 0, done.stderr
    stated = float(re.search(r": ([\d.]+) s,", done.stdout)[1])  # type: ignore[index]
    assert stated == pytest.approx(wav_seconds(out), abs=0.05)


@pytest.mark.parametrize(
    ("actions", "says"),
    [
        ("xx", "'xx': write TIME:COMMAND"),
        ("10:bogus", "'10:bogus': unknown command 'bogus'"),
        ("-5:pause", "cannot be negative"),
        ("10:quit", "quit is not a match command"),
        ("10:pause=3", "pause takes no argument"),
        ("10:add=lots", "add takes a number of seconds"),
        ("10:resume", "10:resume refused: the clock is not stopped"),
    ],
)
def test_render_bad_actions_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], actions: str, says: str
) -> None:
    """A malformed or refused --actions script exits 2, names --actions and the bad item,
    and writes no WAV."""
    out = tmp_path / "never.wav"
    assert cli.main(["render", "--profile", "ithf", "-o", str(out), f"--actions={actions}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("timekeeper: --actions: ")
    assert says in err
    assert not out.exists()


@pytest.mark.slow
def test_render_bad_actions_process_exit_status(tmp_path: Path, env: dict[str, str]) -> None:
    """The process exits 2 with the message, no traceback."""
    done = tk(
        env,
        "render",
        "--profile",
        "ithf",
        "-o",
        str(tmp_path / "x.wav"),
        "--actions",
        "120:pause,oops",
    )
    assert done.returncode == 2
    assert "--actions: 'oops': write TIME:COMMAND" in done.stderr
    assert "Traceback" not in done.stderr


# ----------------------------------------------------------------------------- run and ctl


@pytest.mark.slow
def test_run_a_live_match_controlled_over_the_socket(
    tmp_path: Path, env: dict[str, str], sock: Path, procs: list[subprocess.Popen]
) -> None:
    """A whole live match on SDL's dummy driver, driven by `ctl`: status, pause, add, resume,
    a refused resume; the match runs out, SIGTERM ends the process cleanly (exit 0, socket
    removed); stdout logs every cue and state change; the events file has every cue in order,
    none played before it was due, all on one consistent clock."""
    prof = write(tmp_path / "live.yaml", LIVE)
    proc, events = start_match(procs, env, prof, sock)

    first = wait_until_answers(proc, env, sock)
    assert {"profile", "state", "period", "periods", "play_time", "remaining", "added"} <= (
        first.keys()
    )
    assert first["profile"] == "live" and first["periods"] == 1
    assert sock.stat().st_mode & 0o777 == 0o660

    wait_for_state(sock, "running")  # prestart over: the clock can be stopped now
    # paused from here, not by a new `ctl` process: a busy machine takes a second or more to
    # start one, and the match's first second (before its first mark) would be gone
    answer = send(sock, "pause")
    assert answer["ok"], answer
    paused = answer["status"]
    assert paused["state"] == "stopped" and paused["period"] == 1
    code, added, _ = ctl(env, sock, "add", "3")
    assert code == 0 and added is not None
    assert added["added"] == 3 and added["state"] == "stopped"
    assert added["remaining"] == pytest.approx(paused["remaining"] + 3, abs=1e-3)
    code, resumed, _ = ctl(env, sock, "resume")
    assert code == 0 and resumed is not None and resumed["state"] == "running"
    code, again, err = ctl(env, sock, "resume")
    assert code == 1 and again is None
    assert "resume refused" in err and "not stopped" in err

    final = wait_for_state(sock, "finished")
    assert final["remaining"] == 0 and final["play_time"] == 8.0 and final["added"] == 3

    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    assert not sock.exists(), "the control socket was left behind"
    assert "Traceback" not in err

    entries = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    names = [e["cue"] for e in entries]
    # the pause normally lands well inside the first second of play, before the first mark
    # (4 s left); on a busy machine that mark may come first, and then sounds again after
    # the added 3 s took the clock back above it (marks are re-armed by the time left)
    early = names[2 : names.index("pause")]
    assert early in ([], ["minute"]), names
    assert names == [
        "prestart",
        "start",
        *early,
        "pause",
        "time_added",
        "resume",
        "minute",
        "minute",
        "last30",
        "end",
    ]
    for e in entries:
        assert {"cue", "due", "played", "period", "play_time"} <= e.keys()
        assert e["due"] <= e["played"], f"{e['cue']} played before it was due"
    by_name = {e["cue"]: e for e in entries}
    pause_at = by_name["pause"]["play_time"]
    assert by_name["time_added"]["play_time"] == by_name["resume"]["play_time"] == pause_at
    minutes = [e for e in entries if e["cue"] == "minute"]
    # (an early mark is the one at 4 s left, before the pause: it sounds again at 4.0)
    assert [m.get("count", 1) for m in minutes] == [2] * len(early) + [2, 1]
    assert [m["play_time"] for m in minutes] == [1.0] * len(early) + [4.0, 6.0]
    assert by_name["last30"]["play_time"] == 6.0 and by_name["end"]["play_time"] == 8.0
    # one clock: the end came 8 s of play plus the stopped time after the start
    stopped = by_name["resume"]["due"] - by_name["pause"]["due"]
    assert by_name["end"]["due"] - by_name["start"]["due"] == pytest.approx(8 + stopped, abs=1e-5)

    lines = out.splitlines()
    assert all(re.match(r"\d\d:\d\d:\d\d (cue|state) ", line) for line in lines), out
    cue_lines = [line for line in lines if " cue " in line]
    assert [line.split()[2] for line in cue_lines] == [*names[:-1], "last30", "end"]
    assert "cue last30 stop" in cue_lines[-2]
    assert any(" cue start " in line for line in lines)
    assert any(" cue end " in line for line in lines)
    states = [line.split()[3] for line in lines if " state " in line]
    assert states == ["PRESTART", "RUNNING", "STOPPED", "RUNNING", "FINISHED"]


@pytest.mark.slow
def test_ctl_with_nobody_running(tmp_path: Path, env: dict[str, str], sock: Path) -> None:
    """`ctl status` with no timekeeper on the socket (none at all, or a stale socket file)
    exits 1 saying so and how to fix it, without a traceback."""
    done = tk(env, "ctl", "status")  # the socket from $TIMEKEEPER_CONTROL
    assert done.returncode == 1
    assert f"no timekeeper is running at {sock}" in done.stderr
    assert "Traceback" not in done.stderr and not done.stdout

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))  # bound, never listening: what a killed timekeeper leaves
    stale.close()
    done = tk(env, "ctl", "pause", "--control", str(sock))
    assert done.returncode == 1
    assert f"no timekeeper is running at {sock}" in done.stderr


@pytest.mark.slow
def test_ctl_offers_every_action_the_socket_takes_and_stays_light() -> None:
    """ctl's words are the socket's: a new action is offered without a second list (the
    button's `go` and `quit` aside), and the command line imports no numpy or pygame."""
    from timekeeper.cli.box import CTL_COMMANDS
    from timekeeper.rules.commands import Action

    offered = set(CTL_COMMANDS)
    assert offered == {a.value for a in Action} - {"go", "quit"} | {"status", "link", "result"}
    code = "import sys, timekeeper.cli; print(sorted({'numpy', 'pygame'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.slow
def test_second_run_on_the_same_socket_is_refused(
    tmp_path: Path, env: dict[str, str], sock: Path, procs: list[subprocess.Popen]
) -> None:
    """A second `run` on a socket another timekeeper listens on exits 1 saying so, and leaves
    the first one's socket working."""
    first = start_run(procs, env, tmp_path, "--profile", "ithf", "--control", str(sock))
    assert wait_until_answers(first, env, sock)["state"] == "idle"

    second = tk(env, "run", "--profile", "ithf", "--control", str(sock))
    assert second.returncode == 1
    assert "another timekeeper is already listening" in second.stderr
    assert str(sock) in second.stderr

    code, status, _ = ctl(env, sock, "start")  # the first one still owns the socket
    assert code == 0 and status is not None and status["state"] == "prestart"

    # the refusal says how to run a second box beside it, and that advice works as written
    advice = next(
        line.split()
        for line in second.stderr.splitlines()
        if line.strip().startswith("timekeeper run --control")
    )
    assert "--state-dir" in advice
    other_sock = Path(advice[advice.index("--control") + 1])
    beside = start_run(
        procs, env, tmp_path, *[os.path.expanduser(a) for a in advice[2:]], "--profile", "ithf"
    )
    assert wait_until_answers(beside, env, other_sock)["state"] == "idle"
    beside.send_signal(signal.SIGTERM)
    beside.communicate(timeout=TIMEOUT)
    assert beside.returncode == 0
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=TIMEOUT)
    assert first.returncode == 0
    assert not sock.exists()


@pytest.mark.slow
def test_a_client_hanging_up_does_not_put_a_traceback_in_the_log(
    tmp_path: Path, env: dict[str, str], sock: Path, procs: list[subprocess.Popen]
) -> None:
    """A ctl client that disconnects without reading the answer (here: the probe a second
    `run` makes) must not make the running timekeeper log a traceback."""
    first = start_run(procs, env, tmp_path, "--profile", "ithf", "--control", str(sock))
    wait_until_answers(first, env, sock)
    assert tk(env, "run", "--profile", "ithf", "--control", str(sock)).returncode == 1
    wait_until_answers(first, env, sock)  # answered after the probe's connection was served
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=TIMEOUT)
    assert first.returncode == 0
    assert "Traceback" not in err, err


def test_keys_map_to_commands() -> None:
    """The keys the README documents, and nothing for keys it does not."""
    from timekeeper.box.controls.keyboard import key_command
    from timekeeper.rules.commands import Action, Command

    assert key_command(" ").action is Action.TOGGLE
    assert key_command("S").action is Action.START
    assert key_command("\r").action is Action.START
    assert key_command("n").action is Action.NEXT
    assert key_command("+").action is Action.ADD
    minus = key_command("-")
    assert minus == Command(Action.ADD, sign=-1)  # one step back: the engine's profile's
    assert key_command("f").action is Action.FINISH
    assert key_command("r").action is Action.RESET  # (the reader wants it twice)
    assert key_command("q").action is Action.QUIT
    assert key_command("x") is None


def test_keyboard_reads_single_keys_from_a_terminal() -> None:
    """On a real (pseudo) terminal: no Enter needed, and the terminal is restored after."""
    import termios

    from timekeeper.box.controls.keyboard import Keyboard
    from timekeeper.rules.commands import Action

    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    got: list = []
    keyboard = Keyboard(got.append, fd=slave).start()
    try:
        os.write(master, b"s +-q")
        wait_for(lambda: len(got) >= 5, "five keys read", 5)
    finally:
        keyboard.close()
    assert [c.action for c in got] == [
        Action.START,
        Action.TOGGLE,
        Action.ADD,
        Action.ADD,
        Action.QUIT,
    ]
    assert got[3].sign == -1 and got[3].seconds is None  # a step back
    assert termios.tcgetattr(slave) == before
    os.close(master)
    os.close(slave)


def test_control_path_that_is_a_file_is_never_replaced(tmp_path: Path) -> None:
    from timekeeper.box.controls.socket import ControlServer

    precious = tmp_path / "precious.txt"
    precious.write_text("data")
    with pytest.raises(OSError, match="exists and is not a socket"):
        ControlServer(runner=None, path=precious)  # type: ignore[arg-type]
    assert precious.read_text() == "data"


def test_log_lines_stop_quietly_when_the_reader_goes_away() -> None:
    from timekeeper.rules import profile as profiles
    from timekeeper.rules.engine import Cue, Engine
    from timekeeper.show.status import LogLines

    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    lines = LogLines(Gone())
    status = Engine(profiles.load("ithf")).status(0)
    lines.cue_played(Cue("start", 0), status, 0.0, None)  # no exception: the match goes on
    assert lines.gone


# ----------------------------------------------------------------------------- ball hockey

# a 20-s half, 2-s penalties and a 1-s time-out: a live ball-hockey match in a few seconds
LIVE_BALL = """\
    title: live ball-hockey test
    extends: hokejbal
    period:
      length: 20
    penalties:
      minor: 2
      major: 6
    timeout:
      length: 1
"""


@pytest.mark.slow
def test_ball_hockey_live_over_ctl_penalties_timeouts_and_correction(
    tmp_path: Path, env: dict[str, str], sock: Path, procs: list[subprocess.Popen]
) -> None:
    """`ctl penalty home minor`, `ctl timeout away` (and refused a second time), `ctl set`,
    `ctl status` JSON with the penalties; the penalty_end and timeout_end cues are played."""
    prof = write(tmp_path / "ball.yaml", LIVE_BALL)
    proc, events = start_match(procs, env, prof, sock)
    wait_until_answers(proc, env, sock)
    wait_for_state(sock, "running")
    code, _, err = ctl(env, sock, "timeout", "away")
    assert code == 1 and "while the clock is stopped" in err
    ctl(env, sock, "pause")  # penalties entered while stopped wait for the clock
    code, st, _ = ctl(env, sock, "penalty", "home", "minor", "17")
    assert code == 0 and st is not None
    assert [(p["kinds"], p["player"], p["state"]) for p in st["teams"]["home"]["penalties"]] == [
        ("minor", "17", "running")
    ]
    ctl(env, sock, "penalty", "home", "major")
    code, st, _ = ctl(env, sock, "penalty", "home", "minor+minor+personal")
    assert [p["state"] for p in st["teams"]["home"]["penalties"]] == [  # type: ignore[index]
        "running",
        "running",
        "waiting",
    ]
    code, st, _ = ctl(env, sock, "remove", "home")  # the third one was a mistake
    assert code == 0 and len(st["teams"]["home"]["penalties"]) == 2  # type: ignore[index]
    code, st, _ = ctl(env, sock, "timeout", "away")
    assert code == 0 and st["timeout"] == "away"  # type: ignore[index]
    code, _, err = ctl(env, sock, "timeout", "away")
    assert code == 1 and "away has taken its time-out already" in err
    code, st, _ = ctl(env, sock, "set", "0:15")
    assert code == 0 and st["remaining"] == 15  # type: ignore[index]
    code, _, err = ctl(env, sock, "penalty", "home", "minr")
    assert code == 2 and "did you mean 'minor'" in err  # refused before the socket
    wait_for_state(sock, "stopped")
    wait_for(lambda: "timeout_end" in events.read_text(encoding="utf-8"), "timeout_end", TIMEOUT)
    ctl(env, sock, "resume")
    wait_for(lambda: "penalty_end" in events.read_text(encoding="utf-8"), "penalty_end", TIMEOUT)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0 and "Traceback" not in err


def test_team_keys_are_two_presses() -> None:
    from timekeeper.box.controls.keyboard import KeyReader
    from timekeeper.rules.commands import Action

    keys = KeyReader()
    assert keys.feed("h") is None
    penalty = keys.feed("1")
    assert penalty is not None and (penalty.action, penalty.team, penalty.kinds) == (
        Action.PENALTY,
        "home",
        ("minor",),
    )
    assert keys.feed("1") is None  # no team key before it: nothing
    assert keys.feed("a") is None
    timeout = keys.feed("T")
    assert timeout is not None and (timeout.action, timeout.team) == (Action.TIMEOUT, "away")
    assert keys.feed("a") is None
    toggle = keys.feed(" ")  # not a team key: read on its own
    assert toggle is not None and toggle.action is Action.TOGGLE
    # g is a goal in every profile now (the engine counts it as a scored attempt in a shoot-out)
    assert [str(keys.feed(k)) for k in "hrhxhgamau"][1::2] == [
        "release=home",
        "remove=home",
        "goal=home",
        "attempt=away:miss",
        "undo-goal=away",
    ]
    assert keys.feed("h") is None and "1 minor" in keys.hint
    assert keys.feed("z") is None and "no team command; cancelled" in keys.hint


def test_reset_from_the_keyboard_takes_r_twice() -> None:
    from timekeeper.box.controls.keyboard import KeyReader
    from timekeeper.rules.commands import Action

    keys = KeyReader()
    assert keys.feed("r") is None and "press r again" in keys.hint
    assert keys.feed(" ").action is Action.TOGGLE  # any other key: no reset
    assert keys.feed("r") is None
    assert keys.feed("r").action is Action.RESET
    assert keys.feed("r") is None
    keys.expire()  # no key for a while
    assert keys.feed("r") is None


def test_key_help_adds_the_penalty_keys_for_ball_hockey_only() -> None:
    from timekeeper.box.controls.keyboard import HELP, help_for
    from timekeeper.rules import profile

    rod = help_for(profile.load("ithf"))  # the score's keys in every profile
    assert rod.startswith(HELP) and "then g goal" in rod and "1 minor" not in rod
    assert "1 minor" in help_for(profile.load("hokejbal"))


def test_status_line_shows_penalties_and_the_timeout() -> None:
    from timekeeper.rules import profile
    from timekeeper.rules.commands import Command
    from timekeeper.rules.engine import Engine
    from timekeeper.show.status import status_text

    eng = Engine(profile.load("hokejbal"))
    for at, line in [
        (0, "start"),
        (10, "penalty home minor 17"),
        (11, "penalty home major"),
        (12, "penalty home minor"),
        (13, "penalty away major+game"),
        (20, "pause"),
        (21, "timeout away"),
    ]:
        eng.handle(Command.parse(line), at)
    assert status_text(eng.status(30)) == (
        "hokejbal  STOPPED  half 1  0:0  left 7:40  TIME-OUT away 0:21  "
        "home 0:50 #17 2:51 +1 waiting  away 2:53 t/o used"
    )
