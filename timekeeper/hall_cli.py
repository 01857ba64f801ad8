"""`timekeeper hall …`: the desk's commands (start, stop, status, serve, round, announce) from
the command line, apart from cli.py as the tournament's are: argument wiring, nothing else."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import language


def cmd_hall(args: argparse.Namespace) -> int:
    from timekeeper.box import config as box_config
    from timekeeper.hall import console

    cfg = box_config.load(args.config) if args.config or not args.broker else None
    broker = args.broker or (cfg.hall.broker if cfg and cfg.hall else None)
    if broker is None:
        raise ConfigError("which hall? give --broker mqtt://HOST (and --hall NAME), or a "
                          "config with a hall: section", field="--broker")
    hall = args.hall_name or (cfg.hall.hall if cfg and cfg.hall else "hall")
    if cfg is None and not args.user:  # the account may still be the config's
        cfg = box_config.load(None)
    account = cfg.hall if cfg and cfg.hall else None
    user = args.user or (account.user if account else None)
    password_file = args.password_file or (account.password_file if account else None)
    password = None if args.password_file or args.user else \
        (account.password if account else None)
    try:
        broker = _desk_broker(broker, user, password, password_file)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--password-file") from None
    args.language_given = args.language is not None  # (else the tournament's may say it)
    args.language = args.language or (cfg.language if cfg else language.DEFAULT)
    try:
        language.check(args.language)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--language") from None
    if args.action == "serve":
        return _hall_serve(args, broker, hall)
    if args.action == "round":
        return _hall_round(args, broker, hall)
    if args.action == "announce":
        return _hall_announce(args, broker, hall, args.seconds or "")
    seconds = None
    if args.seconds is not None:
        try:
            seconds = float(args.seconds)
        except ValueError:
            raise ConfigError(f"hall add takes SECONDS, not {args.seconds!r}",
                              field="SECONDS") from None
    return console.run(args.action, broker, hall, args.table, args.profile, args.at, args.in_,
                       seconds, as_json=args.json)


def _hall_round(args: argparse.Namespace, broker, hall: str) -> int:
    """`hall round N --tournament FILE`: push each of the round's tables its pairing."""
    from timekeeper.hall.director import Director

    if args.tournament is None:
        raise ConfigError("hall round needs the tournament: --tournament FILE",
                          field="--tournament")
    try:
        number = int(args.seconds or "")
    except ValueError:
        raise ConfigError(f"hall round takes the round's number, not {args.seconds!r}",
                          field="N") from None
    with _desk(broker, hall) as desk:
        if desk is None:
            return 1
        director = Director(desk, args.tournament)
        _tournament_language(args, director.t.spec)
        print(f"hall {hall}: round {number} of {director.t.spec.title}")
        for table, what in director.call_round(number):
            print(f"  table {table}: {what}")
        if args.say:
            from timekeeper.hall import calls

            called = [(t, p.home, p.away) for t, p in director.called.items()
                      if p.round == number]
            return _speak(args, desk, calls.round_call(number, called,
                                                       language=args.language))
    return 0


def _tournament_language(args: argparse.Namespace, spec) -> None:
    """The tournament file's `language:` for the calls and the pages, unless --language."""
    if not args.language_given and spec.language:
        args.language = spec.language


@contextlib.contextmanager
def _desk(broker, hall: str) -> Iterator:
    """The desk on the hall's bus, closed afterwards; None (and said why) if it cannot be."""
    from timekeeper.hall.desk import Desk, DeskError

    try:
        desk = Desk(broker, hall)
    except DeskError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        yield None
        return
    try:
        yield desk
    finally:
        desk.close()


def _hall_announce(args: argparse.Namespace, broker, hall: str, text: str) -> int:
    """`hall announce "TEXT"`: spoken whole, never over a table's start signal; in the
    tournament's language where `--tournament` names one (and no --language is given)."""
    if args.tournament is not None:
        from timekeeper.tournament import spec

        _tournament_language(args, spec.load(args.tournament))
    with _desk(broker, hall) as desk:
        return 1 if desk is None else _speak(args, desk, text)


def _speak(args: argparse.Namespace, desk, text: str) -> int:
    import time

    from timekeeper.box.journal import state_dir
    from timekeeper.hall import calls

    try:
        wav = calls.Voice(args.language, args.voice).render(
            text, state_dir(args.state_dir) / "hall" / "calls")
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


def _desk_broker(url: str, user: str | None, password: str | None,
                 password_file: Path | None):
    from timekeeper.hall.account import with_account
    from timekeeper.hall.link import Broker

    try:
        broker = Broker.parse(url)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--broker") from None
    return with_account(broker, user, password, password_file)


def _hall_serve(args: argparse.Namespace, broker, hall: str) -> int:
    from timekeeper.box.journal import state_dir
    from timekeeper.hall.desk import Desk, DeskError
    from timekeeper.hall.overview import serve
    from timekeeper.web.listen import parse_listen

    try:
        host, port = parse_listen(args.listen)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--listen") from None
    try:
        desk = Desk(broker, hall)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--broker") from None
    except DeskError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    director = None
    if args.tournament is not None:
        from timekeeper.hall.director import Director

        try:
            director = Director(desk, args.tournament)
        except Exception:
            desk.close()
            raise
        _tournament_language(args, director.t.spec)
    try:
        return serve(desk, host, port, state_dir(args.state_dir) / "hall", director=director,
                     lang=args.language)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                          field="--listen") from None
    finally:
        desk.close()
