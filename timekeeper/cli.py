"""Command line: argument parsing and wiring, nothing else."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import wave
from pathlib import Path

from timekeeper import __version__, hall_cli, tournament_cli
from timekeeper.box.controls.socket import NOT_ON_SOCKET
from timekeeper.rules import profile
from timekeeper.rules.commands import Action
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show.language import LANGUAGES
from timekeeper.sound.devices import AUDIO_KINDS, OUTPUTS

log = logging.getLogger("timekeeper")
# what `ctl` may send: the socket's own requests (status, link, result: a hall box's last
# result, `result confirm`) and every action the socket
# takes, but GO, the START/NEXT button's (at a prompt one says start or next)
CTL_COMMANDS = (
    "status",
    *(action.value for action in Action if action not in (*NOT_ON_SOCKET, Action.GO)),
    "link",
    "result",
)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="timekeeper: %(message)s",
        stream=sys.stderr,
    )
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `timekeeper profiles | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # an output file or folder that cannot be written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"timekeeper: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="timekeeper", description="Match timekeeper and sound signals for table hockey."
    )
    p.add_argument("--version", action="version", version=f"timekeeper {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = p.add_subparsers(required=True, metavar="COMMAND")
    default_profile = os.environ.get("TIMEKEEPER_PROFILE", "ithf")

    run = sub.add_parser("run", help="run matches live with sound")
    # `-v` after the command too (`timekeeper run -v`); SUPPRESS keeps an earlier `-v`
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log more (audio settings, holds)",
    )
    run.add_argument(
        "--profile", help=f"name or path (default: the config's, else {default_profile})"
    )
    run.add_argument(
        "--sounds", help="sound pack folder or name (default: the config's, else the built-in pack)"
    )
    run.add_argument(
        "--config",
        type=Path,
        help="box config: profile, pack, buttons, lamp, "
        "horn (default: /etc/timekeeper/config.yaml "
        "if it exists)",
    )
    run.add_argument(
        "--state-dir",
        type=Path,
        help="where the match journal is kept "
        "(default: $STATE_DIRECTORY, else "
        "~/.local/state/timekeeper)",
    )
    resume = run.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume-at",
        metavar="PERIOD:MM:SS",
        help="continue a match stopped at this play time, e.g. 2:01:30",
    )
    resume.add_argument(
        "--resume-from",
        type=Path,
        metavar="JOURNAL",
        help="continue the match in a journal file copied from another box",
    )
    resume.add_argument(
        "--fresh",
        action="store_true",
        help="start a new match (and series) even if the journals hold one",
    )
    run.add_argument(
        "--replay",
        action="store_true",
        help="play the journaled (or --resume-from) match again from the start, "
        "keeping its goals (ITHF 4.5: a match a timer failure interrupted); "
        "START begins it",
    )
    run.add_argument("--no-gpio", action="store_true", help="no buttons, lamp or relays")
    run.add_argument("--start", action="store_true", help="begin the countdown at once")
    run.add_argument("--events", type=Path, help="append one JSON line per cue played")
    run.add_argument("--control", type=Path, help="ctl socket path")
    run.add_argument("--no-keyboard", action="store_true", help="ignore the terminal's keys")
    run.add_argument(
        "--audio",
        choices=AUDIO_KINDS,
        help="stream: cues placed at their exact sample (default, or the "
        "config's audio.kind); mixer: plain Sound.play() at the deadline "
        "(fallback); silent: no sound card, every cue only logged",
    )
    run.add_argument(
        "--audio-chunk",
        type=int,
        metavar="FRAMES",
        help="audio buffer in frames (stream 2048, mixer 512); larger costs "
        "less CPU, and with --audio stream only adds look-ahead",
    )
    run.add_argument(
        "--audio-output",
        choices=OUTPUTS,
        help="the stream's back end: pulse (PulseAudio's or PipeWire's pulse "
        "stream, timed by the server), alsa (an ALSA device, timed by its status), "
        "sdl, or auto (default, or the config's audio.output): pulse when a "
        "server answers, else alsa when the default device opens, else sdl",
    )
    run.add_argument(
        "--audio-latency",
        type=float,
        metavar="MS",
        help="stream only: output latency to compensate (default: 0.75 "
        "chunk, as measured on PulseAudio; calibrate with bench/timing.py)",
    )
    run.add_argument(
        "--web",
        metavar="[HOST:]PORT",
        help="serve the display (/) and operator (/control) pages; a bare port "
        "is this machine only, 0.0.0.0:PORT the LAN (default: the config's "
        "web.listen, else off)",
    )
    run.add_argument(
        "--hall",
        metavar="URL",
        help="join a hall: the desk's broker, mqtt://HOST[:PORT] (docs/hall.md)",
    )
    run.add_argument(
        "--hall-name", metavar="NAME", help="the hall's name (default: the config's, else hall)"
    )
    run.add_argument("--table", metavar="T", help="this box's table in the hall")
    run.add_argument(
        "--sync",
        choices=("chrony", "local"),
        help="how this box's clock agrees with the hall's: chrony (default), or "
        "local for a practice hall on one machine (a loopback broker only)",
    )
    run.add_argument(
        "--best-of",
        type=int,
        choices=(3, 5, 7, 9),
        metavar="N",
        help="play a series with no desk: best of N games (3, 5, 7 or 9), first to ⌈N/2⌉ "
        "wins; each game needs a winner (a profile with an overtime: ithf-playoff); a series "
        "under way goes on, another N needs --fresh",
    )
    run.set_defaults(func=cmd_run, default_profile=default_profile)

    render = sub.add_parser("render", help="write a match to a WAV file")
    render.add_argument("--profile", default=default_profile)
    render.add_argument("--sounds")
    render.add_argument("-o", "--output", type=Path, default=Path("match.wav"))
    render.add_argument(
        "--actions",
        default="",
        help="operator script, seconds after the first start signal, "
        "e.g. 120:pause,135:resume,200:add=10",
    )
    render.add_argument("--events", type=Path, help="also write the cue schedule as JSON lines")
    render.set_defaults(func=cmd_render)

    profiles = sub.add_parser("profiles", help="list built-in and user profiles")
    profiles.set_defaults(func=cmd_profiles)

    show = sub.add_parser("show", help="print a profile's timeline of cues")
    show.add_argument("profile", nargs="?", help=f"name or path (default {default_profile})")
    show.add_argument(
        "--profile",
        dest="profile_option",
        metavar="PROFILE",
        help="the same, as the other commands take it",
    )
    show.add_argument("--actions", default="", help="operator script, as for render")
    show.add_argument("--svg", type=Path, help="also draw the timeline as an SVG picture")
    show.set_defaults(func=cmd_show, default_profile=default_profile)

    check = sub.add_parser("check", help="validate profiles and a sound pack")
    check.add_argument("--profile", help="one profile (default: all of them)")
    check.add_argument(
        "--sounds",
        nargs="?",
        const="",
        metavar="PACK",
        help="sound pack to check (default: the config's, else the built-in "
        "pack); given, also a table of its cues: rate, length, peak, "
        "loudness, onset, and warnings",
    )
    check.add_argument(
        "--config", type=Path, help="also a box config file (and its profile and pack)"
    )
    check.set_defaults(func=cmd_check)

    audio = sub.add_parser("audio", help="set up the sound: list devices, play a test cue")
    audio_sub = audio.add_subparsers(required=True, metavar="ACTION")
    devices = audio_sub.add_parser("devices", help="list what audio.device may name")
    devices.add_argument("--config", type=Path, help="box config (its audio.driver)")
    devices.add_argument(
        "--driver",
        help="SDL audio driver to ask (default: the config's "
        "audio.driver, else SDL's choice), e.g. alsa",
    )
    devices.set_defaults(func=cmd_audio_devices)
    test = audio_sub.add_parser("test", help="play one cue through the configured output")
    test.add_argument(
        "cue",
        nargs="?",
        default="start",
        metavar="CUE",
        help="cue to play (default start), e.g. end, minute, last30",
    )
    test.add_argument("--config", type=Path, help="box config: its audio settings and pack")
    test.add_argument("--sounds", help="sound pack folder or name (default: the config's)")
    test.add_argument(
        "--audio",
        choices=[kind for kind in AUDIO_KINDS if kind != "silent"],
        help="as for run (a test plays a sound)",
    )
    test.add_argument("--driver", help="SDL audio driver (default: the config's)")
    test.add_argument("--device", help="SDL device name (default: the config's)")
    test.add_argument(
        "--volume", help="level 0.0-1.0 or dB, e.g. 0.5 or -6dB (default: the config's)"
    )
    test.set_defaults(func=cmd_audio_test)
    hall = sub.add_parser(
        "hall",
        help="the tournament desk: start, stop, resume every table "
        "at one instant; see every table (docs/hall.md)",
    )
    hall.add_argument(
        "action",
        choices=(
            "start",
            "stop",
            "resume",
            "add",
            "next",
            "finish",
            "reset",
            "cancel",
            "status",
            "serve",
            "round",
            "announce",
            "practice",
        ),
    )
    hall.add_argument(
        "seconds",
        nargs="?",
        metavar="N",
        help="add: seconds (negative takes "
        "time back); round: the round; "
        "announce: the line to speak",
    )
    hall.add_argument(
        "--say",
        action="store_true",
        help="round: speak the round's call through the desk's speaker",
    )
    hall.add_argument(
        "--language",
        metavar="XX",
        help="the overview's and the calls' "
        f"language, one of {', '.join(LANGUAGES)} (default: the tournament "
        "file's language:, else the config's, else en; a page may ask for "
        "another: /hall?lang=de)",
    )
    hall.add_argument(
        "--voice", type=Path, metavar="MODEL", help="a Piper voice model (default: espeak-ng)"
    )
    hall.add_argument(
        "--tournament",
        type=Path,
        metavar="FILE",
        help="serve, round: the tournament the desk runs (its journal beside "
        "it; docs/tournament.md); announce: its language",
    )
    hall.add_argument("--profile", help="start: the hall's profile (a table on another refuses)")
    when = hall.add_mutually_exclusive_group()
    when.add_argument("--at", metavar="HH:MM:SS", help="the instant (wall clock, today)")
    when.add_argument(
        "--in",
        dest="in_",
        metavar="SECONDS",
        help="the instant, this long from now, e.g. 10s (default 3s for start, resume and next)",
    )
    hall.add_argument("--table", help="only this table")
    hall.add_argument("--broker", help="mqtt://HOST[:PORT] (default: the config's hall.broker)")
    hall.add_argument(
        "--hall", dest="hall_name", help="the hall's name (default: the config's, else hall)"
    )
    hall.add_argument("--user", help="the desk's broker user (default: the config's hall.user)")
    hall.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help="a file whose first line is that user's password (default: the "
        "config's hall.password_file)",
    )
    hall.add_argument(
        "--json", action="store_true", help="status: every table's status as the raw JSON"
    )
    hall.add_argument(
        "--config", type=Path, help="a config with a hall: section (the desk's, or a box's)"
    )
    hall.add_argument(
        "--listen",
        default="8090",
        metavar="[HOST:]PORT",
        help="serve: where the overview page listens (default 8090, this "
        "machine only; 0.0.0.0:8090 for the LAN)",
    )
    hall.add_argument(
        "--state-dir",
        type=Path,
        help="serve: where the desk's token is kept, in its hall/ folder (default: "
        "$STATE_DIRECTORY, else ~/.local/state/timekeeper, as a box's)",
    )
    hall.add_argument(
        "--access-log", action="store_true", help="serve: log every HTTP request (default: none)"
    )
    hall_cli.add_practice_options(hall)
    hall.set_defaults(func=hall_cli.cmd_hall)

    ctl = sub.add_parser(
        "ctl",
        help="control a running timekeeper",
        epilog='every profile: names HOME AWAY (quoted if with spaces, "" '
        "for none), goal TEAM [PLAYER], undo-goal TEAM, replay "
        "(from the start, goals kept), set M:SS, attempt TEAM goal|miss "
        "(shoot-out); ball hockey: penalty TEAM KIND[+KIND…] [PLAYER] "
        "(minor, major, personal, game, match), release TEAM, remove "
        "TEAM [ID], timeout TEAM, penalty-shot TEAM, no-show [M:SS]",
    )
    ctl.add_argument("command", choices=CTL_COMMANDS)
    ctl.add_argument(
        "args",
        nargs="*",
        metavar="ARG",
        help="add: seconds, the profile's step if none; - or a negative number takes time "
        "back; goal: home|away and the "
        "player; penalty: home|away and the penalty; set: the time left, "
        "e.g. 4:32; names: the home and the away side's name",
    )
    ctl.add_argument("--control", type=Path, help="ctl socket path")
    ctl.add_argument(
        "--new",
        action="store_true",
        help="link: make a new operator token; every old link stops working",
    )
    ctl.add_argument(
        "--json",
        action="store_true",
        help="print the status after the command as one JSON object (the same "
        "as /api/status and the hall's), not as lines for a person",
    )
    ctl.set_defaults(func=cmd_ctl)
    tournament_cli.add_parser(sub)
    return p


# ----------------------------------------------------------------------------- commands


def cmd_profiles(args: argparse.Namespace) -> int:
    found = profile.available()
    width = max((len(n) for n in found), default=0)
    for name, (file, origin) in found.items():
        try:
            title = profile.load(str(file)).title
        except ConfigError as exc:
            title = f"INVALID: {exc}"
        print(f"{name:<{width}}  {origin:<8}  {title}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from timekeeper.rules.replay import ScriptError
    from timekeeper.show.svg import svg
    from timekeeper.show.timeline import describe

    chosen = profile.load(args.profile or args.profile_option or args.default_profile)
    try:
        lines = describe(chosen, _steps(args.actions))
    except ScriptError as exc:
        raise ConfigError(str(exc), field="--actions") from None
    print("\n".join(lines))
    if args.svg:
        args.svg.write_text(svg(chosen), encoding="utf-8")
        print(f"\nwrote {args.svg}")
    return 0


def _steps(actions: str) -> list:
    from timekeeper.rules.replay import ScriptError, parse_actions

    try:
        return parse_actions(actions)
    except ScriptError as exc:
        raise ConfigError(str(exc), field="--actions") from None


def cmd_check(args: argparse.Namespace) -> int:
    from timekeeper.sound.inspect import inspect, summary, table
    from timekeeper.sound.pack import find_pack, load_pack, melody_window

    sounds = args.sounds or None
    chosen = args.profile
    if args.config:
        from timekeeper.box import config as box_config

        cfg = box_config.load(args.config)
        g = cfg.gpio
        wiring = (
            f"{len(g.buttons)} buttons{', lamp' if g.lamp else ''}"
            f"{', horn' if g.horn else ''}{', buzzer' if g.buzzer else ''}"
        )
        print(
            f"ok  config {args.config}: "
            + (
                wiring
                if g.enabled
                else "GPIO off (gpio.enabled: false): no buttons, lamp "
                "or relays; keys and `timekeeper ctl` only"
            )
        )
        print(f"ok  audio: {box_config.audio_text(cfg)}")
        chosen, sounds = chosen or cfg.profile, sounds or cfg.sounds
    names = [chosen] if chosen else [str(f) for f, _ in profile.available().values()]
    needed: set[str] = set()
    melody = 0.0
    for name in names:
        loaded = profile.load(name)
        needed |= loaded.cue_names
        melody = max(melody, melody_window(loaded))
        print(f"ok  profile {loaded.key}: {loaded.title}")
    folder = find_pack(sounds)
    pack = load_pack(folder, needed, melody or None)  # no melody in use: the tune up to 5 min
    print(summary(pack, folder))
    if args.sounds is not None:
        print("\n".join(table(inspect(pack), levelled=pack.normalized)))
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from timekeeper.rules.replay import ScriptError
    from timekeeper.sound.pack import find_pack, load_pack, melody_window
    from timekeeper.sound.render import render

    chosen = profile.load(args.profile)
    steps = _steps(args.actions)
    pack = load_pack(find_pack(args.sounds), chosen.cue_names, melody_window(chosen))
    try:
        result = render(chosen, pack, args.output, steps, args.events)
    except ScriptError as exc:
        raise ConfigError(str(exc), field="--actions") from None
    for step in result.unused:
        log.warning(
            "--actions %g:%s comes after the end of the match; not applied", step.at, step.command
        )
    with wave.open(str(args.output), "rb") as written:
        seconds = written.getnframes() / written.getframerate()
    sounds = sum(1 for cue in result.cues if not cue.stop and pack.plays(cue))  # heard ones
    print(
        f"wrote {args.output}: {seconds:.1f} s, {sounds} cues "
        f"(first start signal at {result.start:.3f} s)"
    )
    return 0


def cmd_ctl(args: argparse.Namespace) -> int:
    """Exit 0: applied (or status); 1: refused, or no timekeeper to talk to; 2: a command
    that cannot mean anything; 3: not applied (dropped after its deadline: send it again);
    4: no answer, so whether it was applied is unknown (`ctl status` tells)."""
    import uuid

    from timekeeper.box.controls.socket_client import NoAnswer, send
    from timekeeper.box.controls.socket_path import client_path
    from timekeeper.rules.commands import Command, command_line

    if args.command == "link":
        return _link(args)
    if args.new:
        print("timekeeper: --new is for `ctl link` only", file=sys.stderr)
        return 2
    line = command_line([args.command, *args.args])  # (names: each one word, quoted)
    try:  # refused here, before the socket, if it cannot mean anything
        if args.command == "status" and args.args:
            raise ValueError("status takes no argument")
        if args.command not in ("status", "result"):
            Command.parse(line)
    except ValueError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 2
    request_id = None if args.command == "status" else uuid.uuid4().hex
    try:  # an id: a retry after a lost answer is never applied twice
        answer = send(args.control or client_path(), line, request_id=request_id, attempts=3)
    except NoAnswer as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 4
    except ConnectionError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        result = answer.get("result", "refused")
        what = "not applied" if result in ("dropped", "busy") else result
        print(f"timekeeper: {args.command} {what}: {answer.get('error')}", file=sys.stderr)
        return 3 if result in ("dropped", "busy") else 4 if result == "unknown" else 1
    if args.command != "result" and not args.json:
        from timekeeper.show.status import status_block

        print(status_block(answer["status"]))
        return 0
    print(
        json.dumps(
            answer["match_result"] if args.command == "result" else answer["status"],
            ensure_ascii=False,
        )
    )  # (a name as written, not \u escapes)
    return 0


def _link(args: argparse.Namespace) -> int:
    """The operator page's link, with its token, as text and as a QR code for a phone."""
    from timekeeper.box.controls.socket_client import send
    from timekeeper.box.controls.socket_path import client_path

    if args.args:
        print("timekeeper: link takes no argument (a new token: --new)", file=sys.stderr)
        return 2
    try:
        answer = send(args.control or client_path(), "link new" if args.new else "link")
    except ConnectionError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        print(f"timekeeper: link: {answer.get('error')}", file=sys.stderr)
        return 1
    import segno

    segno.make(answer["url"], error="m").terminal(compact=True)
    print(f"operator page: {answer['url']}")
    print(f"display page:  {answer['display']}")
    if "//127.0.0.1:" in answer["url"] or "//[::1]:" in answer["url"]:
        print(
            "(this machine only: for a phone, run the box with --web 0.0.0.0:PORT, or "
            "web.listen in the config; see docs/web.md)"
        )
    print(
        "anyone with this link may run the match; `timekeeper ctl link --new` ends it"
        + (" (done: old links no longer work)" if args.new else "")
    )
    return 0


def cmd_audio_devices(args: argparse.Namespace) -> int:
    from timekeeper.box.audiotools import devices_command

    return devices_command(args.config, args.driver)


def cmd_audio_test(args: argparse.Namespace) -> int:
    from timekeeper.box.audiotools import test_command

    return test_command(args)


def cmd_run(args: argparse.Namespace) -> int:
    from timekeeper.box.live import run_live

    return run_live(args)
