"""`timekeeper hall …`: the desk's commands (start, stop, status, serve, round, announce) from
the command line, apart from cli.py as the tournament's are: argument wiring, nothing else
(the options over the config are merged in hall/deskconfig.py)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from timekeeper.rules.yamldoc import ConfigError

if TYPE_CHECKING:
    from timekeeper.hall.deskconfig import DeskSettings


def cmd_hall(args: argparse.Namespace) -> int:
    if args.action == "practice":  # (its own broker: no hall to be told of)
        from timekeeper import practice_cli

        return practice_cli.run(args)
    from timekeeper.box import config as box_config
    from timekeeper.hall import console
    from timekeeper.hall.deskconfig import desk_settings

    settings = desk_settings(args, box_config.load)  # the options over the config, once
    if args.action == "serve":
        return _hall_serve(args, settings)
    if args.action == "round":
        return _hall_round(args, settings)
    if args.action == "announce":
        return _hall_announce(args, settings, args.seconds or "")
    seconds = None
    if args.seconds is not None:
        try:
            seconds = float(args.seconds)
        except ValueError:
            raise ConfigError(
                f"hall add takes SECONDS, not {args.seconds!r}", field="SECONDS"
            ) from None
    return console.run(
        args.action,
        settings.broker,
        settings.hall,
        args.table,
        args.profile,
        args.at,
        args.in_,
        seconds,
        as_json=args.json,
    )


def add_practice_options(hall: argparse.ArgumentParser) -> None:
    """`hall practice`'s own options (timekeeper/practice_cli.py)."""
    hall.add_argument(
        "--tables",
        type=int,
        metavar="N",
        help="practice: how many boxes (default: the tournament's tables, else 4)",
    )
    hall.add_argument(
        "--sound", action="store_true", help="practice: every box sounds (default: table 1 only)"
    )
    hall.add_argument(
        "--port", type=int, help="practice: the broker's port on 127.0.0.1 (default 1884)"
    )
    hall.add_argument(
        "--keep",
        action="store_true",
        help="practice: go on with the last practice's boxes (their matches), not fresh ones",
    )


def _hall_round(args: argparse.Namespace, settings: DeskSettings) -> int:
    """`hall round N --tournament FILE`: push each of the round's tables its pairing."""
    from timekeeper.hall.director import Director

    if args.tournament is None:
        raise ConfigError(
            "hall round needs the tournament: --tournament FILE", field="--tournament"
        )
    try:
        number = int(args.seconds or "")
    except ValueError:
        raise ConfigError(
            f"hall round takes the round's number, not {args.seconds!r}", field="N"
        ) from None
    with _desk(settings) as desk:
        if desk is None:
            return 1
        director = Director(desk, args.tournament, results=False)  # (the serving desk's)
        lang = settings.language_for(director.t.spec.language)
        done = director.call_round(number)  # (a round that is not: refused before a word)
        print(f"hall {settings.hall}: round {number} of {director.t.spec.title}")
        for table, what in done:
            print(f"  table {table}: {what}")
        if args.say:
            from timekeeper.hall import calls

            called = [(t, p.home, p.away) for t, p in director.called.items() if p.round == number]
            return _speak(args, lang, desk, calls.round_call(number, called, language=lang))
    return 0


@contextlib.contextmanager
def _desk(settings: DeskSettings) -> Iterator:
    """The desk on the hall's bus, closed afterwards; None (and said why) if it cannot be."""
    from timekeeper.hall.desk import Desk, DeskError

    try:
        desk = Desk(settings.broker, settings.hall)
    except DeskError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        yield None
        return
    try:
        yield desk
    finally:
        desk.close()


def _hall_announce(args: argparse.Namespace, settings: DeskSettings, text: str) -> int:
    """`hall announce "TEXT"`: spoken whole, never over a table's start signal; in the
    tournament's language where `--tournament` names one (and no --language is given)."""
    lang = settings.language
    if args.tournament is not None:
        from timekeeper.tournament import spec

        lang = settings.language_for(spec.load(args.tournament).language)
    with _desk(settings) as desk:
        return 1 if desk is None else _speak(args, lang, desk, text)


def _speak(args: argparse.Namespace, lang: str, desk, text: str) -> int:
    import time

    from timekeeper.box.journal import state_dir
    from timekeeper.hall import calls

    try:
        wav = calls.Voice(lang, args.voice).render(
            text, state_dir(args.state_dir) / "hall" / "calls"
        )
    except calls.CallError as exc:
        raise ConfigError(str(exc), field="--language / --voice") from None
    seconds = calls.length(wav)
    now = time.time()
    begin = calls.place(seconds, now, calls.signals_of(desk.read_statuses(0.5), now))
    if begin > now:
        print(f"(after the start signal: in {begin - now:.0f} s)")
        time.sleep(begin - now)
    calls.play(wav)
    print(f"spoken ({seconds:.1f} s): {text}")
    return 0


def _hall_serve(args: argparse.Namespace, settings: DeskSettings) -> int:
    from timekeeper.box.journal import state_dir
    from timekeeper.hall.desk import Desk, DeskError
    from timekeeper.hall.overview import serve
    from timekeeper.web.listen import parse_listen

    try:
        host, port = parse_listen(args.listen)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--listen") from None
    try:
        desk = Desk(settings.broker, settings.hall)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--broker") from None
    except DeskError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    director, lang = None, settings.language
    if args.tournament is not None:
        from timekeeper.hall.director import Director

        try:
            director = Director(desk, args.tournament)
        except Exception:
            desk.close()
            raise
        lang = settings.language_for(director.t.spec.language)
        director.watch()  # (a correction typed in another terminal acts at once)
    try:
        return serve(
            desk,
            host,
            port,
            state_dir(args.state_dir) / "hall",
            director=director,
            lang=lang,
            access_log=args.access_log,
        )
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="--listen"
        ) from None
    finally:
        desk.close()
