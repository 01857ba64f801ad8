"""`timekeeper run`, `ctl` and `audio`: the box's commands — a match played live, the
running box controlled, its sound set up. Argument wiring only: the box wing does the work,
imported when a command runs (so `timekeeper --help` loads none of it)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from timekeeper.box.controls.socket import NOT_ON_SOCKET
from timekeeper.cli.profiles import default_profile
from timekeeper.rules.commands import Action
from timekeeper.sound.devices import AUTO, SINKS

# what `ctl` may send: the socket's own requests (status, link, result: a hall box's last
# result, `result confirm`) and every action the socket
# takes, but GO, the START/NEXT button's (at a prompt one says start or next)
CTL_COMMANDS = (
    "status",
    *(action.value for action in Action if action not in (*NOT_ON_SOCKET, Action.GO)),
    "link",
    "result",
)


def add_commands(sub: argparse._SubParsersAction) -> None:
    _add_run(sub)
    _add_ctl(sub)
    _add_series(sub)
    _add_audio(sub)


def _add_run(sub: argparse._SubParsersAction) -> None:
    chosen = default_profile()
    # options spelled in full: an abbreviation could be taken for, or offer, the retired
    # --audio-output, which stays in the parser only to be refused naming --audio
    run = sub.add_parser("run", help="run matches live with sound", allow_abbrev=False)
    # `-v` after the command too (`timekeeper run -v`); SUPPRESS keeps an earlier `-v`
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log more (audio settings, holds)",
    )
    run.add_argument("--profile", help=f"name or path (default: the config's, else {chosen})")
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
        metavar="SINK[,SINK…]",
        help=f"where the sound goes: one of {', '.join(SINKS)}, or a list tried in turn "
        f"(e.g. pulse,alsa,sdl), each logged with why it was or was not taken; auto "
        f"(default, or the config's audio.sink): {','.join(AUTO)}; mixer: plain "
        "Sound.play() at the deadline (the fallback); silent: no sound card, every cue "
        "only logged",
    )
    run.add_argument(
        "--audio-chunk",
        type=int,
        metavar="FRAMES",
        help="audio buffer in frames (stream 2048, mixer 512); larger costs "
        "less CPU, and on a stream sink only adds look-ahead",
    )
    run.add_argument("--audio-output", action=_Refused, help=argparse.SUPPRESS)
    run.add_argument(
        "--audio-latency",
        type=float,
        metavar="MS",
        help="sdl only: SDL's output latency to compensate (audio.latency_ms; default: "
        "0.75 chunk, as measured on PulseAudio). The speaker path's own delay, on every "
        "sink, is audio.latency, written by `timekeeper calibrate`",
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
    run.set_defaults(func=cmd_run, default_profile=chosen)


def _add_ctl(sub: argparse._SubParsersAction) -> None:
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


def _add_series(sub: argparse._SubParsersAction) -> None:
    series = sub.add_parser(
        "series",
        help="the result sheet of the series a box played without a desk (run --best-of)",
        description="Read from the box's state folder (the box may be stopped): every series "
        "it has played since the folder was made, each game's score and how it was decided.",
    )
    actions = series.add_subparsers(required=True, metavar="ACTION")
    show = actions.add_parser("show", help="print the sheet")
    export = actions.add_parser("export", help="write the sheet as CSV (a row per game) or JSON")
    export.add_argument("--format", choices=("csv", "json"), default="csv", help="default: csv")
    export.add_argument("-o", "--output", type=Path, help="the file (default: standard output)")
    for action in (show, export):
        action.add_argument(
            "--state-dir",
            type=Path,
            help="the box's state folder (default: as `run`: the config's, $STATE_DIRECTORY, "
            "else ~/.local/state/timekeeper)",
        )
        action.add_argument("--config", type=Path, help="box config (its state_dir)")
        action.set_defaults(func=cmd_series, export=action is export)


def cmd_series(args: argparse.Namespace) -> int:
    """Exit 0: printed; 1: no series played in the folder; 2: a line that is not a series
    (named; the others printed)."""
    from timekeeper.box import config as box_config
    from timekeeper.box import seriessheet
    from timekeeper.box.journal import state_dir

    cfg = box_config.load(args.config)
    folder = state_dir(args.state_dir or cfg.state_dir)
    played, problems = seriessheet.read(folder)
    for problem in problems:
        print(f"timekeeper: {problem}", file=sys.stderr)
    if not played:
        if not problems:
            print(
                f"timekeeper: no series played in {folder} (`timekeeper run --best-of N` plays "
                "one)",
                file=sys.stderr,
            )
        return 2 if problems else 1
    if not args.export:
        print(seriessheet.text(played))
    else:
        body = (seriessheet.csv_text if args.format == "csv" else seriessheet.json_text)(played)
        if args.output is None:
            sys.stdout.write(body if body.endswith("\n") else body + "\n")
        else:
            args.output.write_text(body if body.endswith("\n") else body + "\n", encoding="utf-8")
            print(f"{len(played)} series written to {args.output}")
    return 2 if problems else 0


def _add_audio(sub: argparse._SubParsersAction) -> None:
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
        "--audio", metavar="SINK[,SINK…]", help="as for run (default: the config's audio.sink)"
    )
    test.add_argument("--driver", help="SDL audio driver (default: the config's)")
    test.add_argument("--device", help="SDL device name (default: the config's)")
    test.add_argument(
        "--volume", help="level 0.0-1.0 or dB, e.g. 0.5 or -6dB (default: the config's)"
    )
    test.set_defaults(func=cmd_audio_test)


class _Refused(argparse.Action):
    """--audio-output: the sink is named by --audio alone (one option, one config key)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.error(
            f"{option_string} is no option: --audio names the sink, or a list tried in turn "
            f"(e.g. --audio {values or 'alsa'}, --audio pulse,alsa,sdl)"
        )


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
