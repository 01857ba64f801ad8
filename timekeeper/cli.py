"""Command line: argument parsing and wiring, nothing else."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import wave
from pathlib import Path

from timekeeper import __version__, profile
from timekeeper.commands import Action, Command
from timekeeper.yamldoc import ConfigError

log = logging.getLogger("timekeeper")
CTL_COMMANDS = ("status", "start", "toggle", "pause", "resume", "add", "next", "finish", "reset")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="timekeeper: %(message)s", stream=sys.stderr)
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
        prog="timekeeper", description="Match timekeeper and sound signals for table hockey.")
    p.add_argument("--version", action="version", version=f"timekeeper {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = p.add_subparsers(required=True, metavar="COMMAND")
    default_profile = os.environ.get("TIMEKEEPER_PROFILE", "ithf")

    run = sub.add_parser("run", help="run matches live with sound")
    run.add_argument("--profile", default=default_profile, help="name or path (%(default)s)")
    run.add_argument("--sounds", help="sound pack folder or name (default: the built-in pack)")
    run.add_argument("--start", action="store_true", help="begin the countdown at once")
    run.add_argument("--events", type=Path, help="append one JSON line per cue played")
    run.add_argument("--control", type=Path, help="ctl socket path")
    run.add_argument("--no-keyboard", action="store_true", help="ignore the terminal's keys")
    run.add_argument("--audio", choices=("stream", "mixer"), default="stream",
                     help="stream: cues placed at their exact sample (default); "
                          "mixer: plain Sound.play() at the deadline (fallback)")
    run.add_argument("--audio-chunk", type=int, metavar="FRAMES",
                     help="audio buffer in frames (stream 2048, mixer 512); larger costs "
                          "less CPU, and with --audio stream only adds look-ahead")
    run.add_argument("--audio-latency", type=float, metavar="MS",
                     help="stream only: output latency to compensate (default: 0.75 "
                          "chunk, as measured on PulseAudio; calibrate with bench/timing.py)")
    run.set_defaults(func=cmd_run)

    render = sub.add_parser("render", help="write a match to a WAV file")
    render.add_argument("--profile", default=default_profile)
    render.add_argument("--sounds")
    render.add_argument("-o", "--output", type=Path, default=Path("match.wav"))
    render.add_argument("--actions", default="",
                        help="operator script, seconds after the first start signal, "
                             "e.g. 120:pause,135:resume,200:add=10")
    render.add_argument("--events", type=Path, help="also write the cue schedule as JSON lines")
    render.set_defaults(func=cmd_render)

    profiles = sub.add_parser("profiles", help="list built-in and user profiles")
    profiles.set_defaults(func=cmd_profiles)

    show = sub.add_parser("show", help="print a profile's timeline of cues")
    show.add_argument("profile", nargs="?", default=default_profile)
    show.add_argument("--actions", default="", help="operator script, as for render")
    show.add_argument("--svg", type=Path, help="also draw the timeline as an SVG picture")
    show.set_defaults(func=cmd_show)

    check = sub.add_parser("check", help="validate profiles and a sound pack")
    check.add_argument("--profile", help="one profile (default: all of them)")
    check.add_argument("--sounds", help="sound pack to check (default: the built-in pack)")
    check.set_defaults(func=cmd_check)

    ctl = sub.add_parser("ctl", help="control a running timekeeper")
    ctl.add_argument("command", choices=CTL_COMMANDS)
    ctl.add_argument("seconds", nargs="?", type=float, help="for add (negative takes time back)")
    ctl.add_argument("--control", type=Path, help="ctl socket path")
    ctl.set_defaults(func=cmd_ctl)
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
    from timekeeper.replay import ScriptError
    from timekeeper.timeline import describe
    from timekeeper.timeline_svg import svg

    chosen = profile.load(args.profile)
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
    from timekeeper.replay import ScriptError, parse_actions

    try:
        return parse_actions(actions)
    except ScriptError as exc:
        raise ConfigError(str(exc), field="--actions") from None


def cmd_check(args: argparse.Namespace) -> int:
    from timekeeper.soundpack import find_pack, load_pack

    names = [args.profile] if args.profile else [str(f) for f, _ in profile.available().values()]
    needed: set[str] = set()
    for name in names:
        loaded = profile.load(name)
        needed |= loaded.cue_names
        print(f"ok  profile {loaded.key}: {loaded.title}")
    folder = find_pack(args.sounds)
    pack = load_pack(folder, needed)
    print(f"ok  sound pack {pack.name} ({folder}): {len(pack.sounds)} cues")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from timekeeper.render import render
    from timekeeper.replay import ScriptError
    from timekeeper.soundpack import find_pack, load_pack

    chosen = profile.load(args.profile)
    steps = _steps(args.actions)
    pack = load_pack(find_pack(args.sounds), chosen.cue_names)
    try:
        result = render(chosen, pack, args.output, steps, args.events)
    except ScriptError as exc:
        raise ConfigError(str(exc), field="--actions") from None
    for step in result.unused:
        log.warning("--actions %g:%s comes after the end of the match; not applied",
                    step.at, step.command)
    with wave.open(str(args.output), "rb") as written:
        seconds = written.getnframes() / written.getframerate()
    sounds = sum(1 for cue in result.cues if not cue.stop)
    print(f"wrote {args.output}: {seconds:.1f} s, {sounds} cues "
          f"(first start signal at {result.start:.3f} s)")
    return 0


def cmd_ctl(args: argparse.Namespace) -> int:
    from timekeeper.controls.socket import default_path, send

    line = args.command
    if args.seconds is not None:
        if args.command != "add":
            print("timekeeper: only add takes a number", file=sys.stderr)
            return 2
        line += f" {args.seconds:g}"
    try:
        answer = send(args.control or default_path(), line)
    except ConnectionError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        print(f"timekeeper: {args.command} refused: {answer.get('error')}", file=sys.stderr)
        return 1
    print(json.dumps(answer["status"]))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from timekeeper.audio import AudioError, init_mixer, open_output
    from timekeeper.controls.keyboard import HELP, Keyboard, in_foreground
    from timekeeper.controls.socket import ControlServer, default_path
    from timekeeper.display import LogLines, StatusLine
    from timekeeper.engine import Engine
    from timekeeper.eventlog import EventLog
    from timekeeper.runner import Runner
    from timekeeper.soundpack import find_pack, load_pack

    chosen = profile.load(args.profile)
    folder = find_pack(args.sounds)
    if args.audio_chunk is not None and not 64 <= args.audio_chunk <= 16384:
        raise ConfigError(f"must be 64 to 16384 frames, not {args.audio_chunk}",
                          field="--audio-chunk")
    if args.audio_latency is not None and not 0 <= args.audio_latency <= 1000:
        raise ConfigError(f"must be 0 to 1000 ms, not {args.audio_latency:g}",
                          field="--audio-latency")
    try:
        if args.audio == "mixer":
            init_mixer(buffer=args.audio_chunk or 512)
        pack = load_pack(folder, chosen.cue_names)
        latency = None if args.audio_latency is None else args.audio_latency / 1000
        audio = open_output(pack, chosen, args.audio, chunk=args.audio_chunk, latency=latency)
    except AudioError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    events = EventLog(args.events, profile=chosen.key, wall_clock=True) if args.events else None
    runner = Runner(Engine(chosen), [audio], events)
    control_path = args.control or default_path()
    try:
        server = ControlServer(runner, control_path, make_folder=args.control is None).start()
    except OSError as exc:
        print(f"timekeeper: control socket {control_path}: {exc}", file=sys.stderr)
        return 1
    closers: list = [server, audio]
    interactive = in_foreground(sys.stdin.fileno()) and not args.no_keyboard
    if sys.stdout.isatty():
        help_text = HELP if interactive else "keys off: control it with `timekeeper ctl`"
        line = StatusLine(runner.status, help_text).start()
        runner.listeners.append(line)
        closers.insert(0, line)
        root = logging.getLogger()
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        root.addHandler(line.log_handler())
    else:
        runner.listeners.append(LogLines())
    if interactive:
        closers.insert(0, Keyboard(runner.submit, chosen.add_step).start())
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: runner.submit(Command(Action.QUIT)))
    log.info("ready: profile %s, sounds %s, control %s", chosen.key, pack.name, control_path)
    if args.start:
        runner.submit(Command(Action.START))
    try:
        runner.run()
    finally:
        for closer in closers:
            closer.close()
        if events:
            events.close()
    return 0
