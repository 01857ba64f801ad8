"""The command line: one `timekeeper` parser to which each wing adds its commands (the box's
`run`, `ctl`, `audio`, `calibrate`; the profiles' `profiles`, `show`, `check`, `render`; the
desk's `hall …` and `tournament …`); argument parsing and wiring, nothing else."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from timekeeper import __version__
from timekeeper.cli import box, calibrate, hall, profiles, tournament
from timekeeper.rules.yamldoc import ConfigError


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
    box.add_commands(sub)
    calibrate.add_command(sub)
    profiles.add_commands(sub)
    hall.add_commands(sub)
    tournament.add_commands(sub)
    return p
