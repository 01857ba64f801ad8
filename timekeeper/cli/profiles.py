"""`timekeeper profiles`, `show`, `check` and `render`: the profiles and sound packs looked
at, checked and rendered without a box running. Argument wiring only: the rules, show and
sound wings do the work."""

from __future__ import annotations

import argparse
import logging
import os
import wave
from pathlib import Path

from timekeeper.rules import profile
from timekeeper.rules.yamldoc import ConfigError

log = logging.getLogger("timekeeper")


def default_profile() -> str:
    """The profile a command takes when none is named (TIMEKEEPER_PROFILE, else ithf)."""
    return os.environ.get("TIMEKEEPER_PROFILE", "ithf")


def add_commands(sub: argparse._SubParsersAction) -> None:
    chosen = default_profile()
    render = sub.add_parser("render", help="write a match to a WAV file")
    render.add_argument("--profile", default=chosen)
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
    show.add_argument("profile", nargs="?", help=f"name or path (default {chosen})")
    show.add_argument(
        "--profile",
        dest="profile_option",
        metavar="PROFILE",
        help="the same, as the other commands take it",
    )
    show.add_argument("--actions", default="", help="operator script, as for render")
    show.add_argument("--svg", type=Path, help="also draw the timeline as an SVG picture")
    show.set_defaults(func=cmd_show, default_profile=chosen)

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
