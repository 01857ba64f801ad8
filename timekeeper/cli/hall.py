"""`timekeeper hall …`: the desk's commands, each a subcommand with only its own options —
the commands every table obeys at one instant (start, stop, resume, add, next, finish,
reset, cancel), `status`, `serve`, `round`, `announce` and `practice`. Argument wiring,
nothing else (the options over the config are merged in hall/deskconfig.py)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show.language import LANGUAGES

if TYPE_CHECKING:
    from timekeeper.hall.deskconfig import DeskSettings


# the commands every table obeys (hall/console.py), with what each takes
TABLE_COMMANDS = {
    "start": "pre-start at that instant (default in 3 s); with a round called, only its tables",
    "stop": "a hall interruption: the clock stops (at once, or at the instant)",
    "resume": "the clock resumes at that instant (default in 3 s)",
    "add": "adds time (negative takes it back)",
    "next": "the next part at that instant (the next period, an overtime)",
    "finish": "ends a decided match, as the table's f does",
    "reset": "back to idle: ready for the next round's hall start",
    "cancel": "calls off every command a table holds for an instant ahead",
}


def add_commands(sub: argparse._SubParsersAction) -> None:
    hall = sub.add_parser(
        "hall",
        help="the tournament desk: start, stop, resume every table "
        "at one instant; see every table (docs/hall.md)",
    )
    actions = hall.add_subparsers(required=True, metavar="ACTION", dest="action")
    for action, what in TABLE_COMMANDS.items():
        _add_table_command(actions, action, what)
    status = actions.add_parser(
        "status", help="one line per table: state, part, time left, score, sync, what is pending"
    )
    _bus_options(status)
    status.add_argument("--json", action="store_true", help="every table's status as the raw JSON")
    status.set_defaults(
        func=_hall_console, language=None, table=None, profile=None, at=None, in_=None, seconds=None
    )
    _add_serve(actions)
    _add_round(actions)
    _add_announce(actions)
    _add_practice(actions)


def _bus_options(p: argparse.ArgumentParser) -> None:
    """How the desk reaches the hall's bus (hall/deskconfig.py merges them over the config)."""
    p.add_argument("--broker", help="mqtt://HOST[:PORT] (default: the config's hall.broker)")
    p.add_argument(
        "--hall", dest="hall_name", help="the hall's name (default: the config's, else hall)"
    )
    p.add_argument("--user", help="the desk's broker user (default: the config's hall.user)")
    p.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help="a file whose first line is that user's password (default: the "
        "config's hall.password_file)",
    )
    p.add_argument(
        "--config", type=Path, help="a config with a hall: section (the desk's, or a box's)"
    )


def _language(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--language",
        metavar="XX",
        help=f"{what} language, one of {', '.join(LANGUAGES)} (default: the tournament "
        "file's language:, else the config's, else en)",
    )


def _tournament(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--tournament", type=Path, metavar="FILE", help=what)


def _state_dir(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--state-dir",
        type=Path,
        help=f"{what} (default: $STATE_DIRECTORY, else ~/.local/state/timekeeper, as a box's)",
    )


def _voice(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--voice", type=Path, metavar="MODEL", help="a Piper voice model (default: espeak-ng)"
    )


def _add_table_command(actions: argparse._SubParsersAction, action: str, what: str) -> None:
    p = actions.add_parser(action, help=what)
    if action == "add":
        p.add_argument("seconds", metavar="SECONDS", help="negative takes time back")
    if action == "start":
        p.add_argument("--profile", help="the hall's profile (a table on another refuses)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--at", metavar="HH:MM:SS", help="the instant (wall clock, today)")
    when.add_argument(
        "--in",
        dest="in_",
        metavar="SECONDS",
        help="the instant, this long from now, e.g. 10s"
        + (" (default 3s)" if action in ("start", "resume", "next") else ""),
    )
    p.add_argument("--table", help="only this table")
    _bus_options(p)
    p.set_defaults(func=_hall_console, language=None, json=False, seconds=None, profile=None)


def _add_serve(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser(
        "serve",
        help="the overview page; with the tournament, the board, the players' pages and the "
        "results home",
    )
    _tournament(p, "the tournament the desk runs (its journal beside it; docs/tournament.md)")
    p.add_argument(
        "--listen",
        default="8090",
        metavar="[HOST:]PORT",
        help="where the overview page listens (default 8090, this machine only; "
        "0.0.0.0:8090 for the LAN)",
    )
    _state_dir(p, "where the desk's token is kept, in its hall/ folder")
    p.add_argument(
        "--access-log", action="store_true", help="log every HTTP request (default: none)"
    )
    _language(p, "the overview's and the board's")
    _bus_options(p)
    p.set_defaults(func=_hall_serve_command)


def _add_round(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser("round", help="each table of round N gets its pairing")
    p.add_argument("number", metavar="N", help="the round")
    _tournament(p, "the tournament (its journal beside it; docs/tournament.md)")
    p.add_argument(
        "--say", action="store_true", help="speak the round's call through the desk's speaker"
    )
    _language(p, "the call's")
    _voice(p)
    _state_dir(p, "where the spoken calls are kept, in its hall/calls folder")
    _bus_options(p)
    p.set_defaults(func=_hall_round_command)


def _add_announce(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser("announce", help="the desk's speaker says it, never over a start signal")
    p.add_argument("text", metavar="TEXT", help="the line to speak")
    _tournament(p, "the tournament whose language it is spoken in")
    _language(p, "the announcement's")
    _voice(p)
    _state_dir(p, "where the spoken lines are kept, in its hall/calls folder")
    _bus_options(p)
    p.set_defaults(func=_hall_announce_command)


def _add_practice(actions: argparse._SubParsersAction) -> None:
    p = actions.add_parser(
        "practice",
        help="the practice hall on this machine: a private Mosquitto, N boxes and the desk",
    )
    _tournament(p, "the tournament the practice desk runs")
    p.add_argument(
        "--tables",
        type=int,
        metavar="N",
        help="how many boxes (default: the tournament's tables, else 4)",
    )
    p.add_argument("--sound", action="store_true", help="every box sounds (default: table 1 only)")
    p.add_argument("--port", type=int, help="the broker's port on 127.0.0.1 (default 1884)")
    p.add_argument(
        "--keep",
        action="store_true",
        help="go on with the last practice's boxes (their matches), not fresh ones",
    )
    p.add_argument("--profile", help="the boxes' profile (default: the tournament's, else ithf)")
    p.add_argument(
        "--listen",
        default="8090",
        metavar="[HOST:]PORT",
        help="where the desk's pages listen (default 8090, this machine only)",
    )
    p.add_argument(
        "--state-dir", type=Path, help="the practice hall's folder (default: hall-practice)"
    )
    p.add_argument("--hall", dest="hall_name", help="the hall's name (default: hall)")
    _language(p, "the desk's")
    p.set_defaults(func=_hall_practice)


def _hall_practice(args: argparse.Namespace) -> int:
    from timekeeper.cli import practice  # (its own broker: no hall to be told of)

    return practice.run(args)


def _settings(args: argparse.Namespace) -> DeskSettings:
    from timekeeper.box import config as box_config
    from timekeeper.hall.deskconfig import desk_settings

    return desk_settings(args, box_config.load)  # the options over the config, once


def _hall_console(args: argparse.Namespace) -> int:
    from timekeeper.hall import console

    settings = _settings(args)
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


def _hall_serve_command(args: argparse.Namespace) -> int:
    return _hall_serve(args, _settings(args))


def _hall_round_command(args: argparse.Namespace) -> int:
    return _hall_round(args, _settings(args))


def _hall_announce_command(args: argparse.Namespace) -> int:
    return _hall_announce(args, _settings(args), args.text)


def _hall_round(args: argparse.Namespace, settings: DeskSettings) -> int:
    """`hall round N --tournament FILE`: push each of the round's tables its pairing (by the
    desk that serves the tournament, where one does)."""
    from timekeeper.cli import desk_client
    from timekeeper.hall import calls
    from timekeeper.hall.director import Director

    if args.tournament is None:
        raise ConfigError(
            "hall round needs the tournament: --tournament FILE", field="--tournament"
        )
    try:
        number = int(args.number)
    except ValueError:
        raise ConfigError(
            f"hall round takes the round's number, not {args.number!r}", field="N"
        ) from None
    served = desk_client.ask(args.tournament, "round", {"number": number})
    if served is not None:  # (the serving desk calls it on its own bus, and keeps the call)
        print(served["text"])
        if not args.say:
            return 0
        lang = settings.language_for(served["language"])
        with _desk(settings) as desk:
            if desk is None:
                return 1
            text = calls.round_call(number, [tuple(c) for c in served["called"]], language=lang)
            return _speak(args, lang, desk, text)
    with _desk(settings) as desk:
        if desk is None:
            return 1
        director = Director(desk, args.tournament, results=False)
        lang = settings.language_for(director.t.spec.language)
        done = director.call_round(number)  # (a round that is not: refused before a word)
        print(f"hall {settings.hall}: round {number} of {director.t.spec.title}")
        for table, what in done:
            print(f"  table {table}: {what}")
        if args.say:
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
    director, lang, owner = None, settings.language, None
    if args.tournament is not None:
        from timekeeper.hall.desksocket import DeskSocket
        from timekeeper.hall.director import Director

        try:
            director = Director(desk, args.tournament)
            owner = DeskSocket(director).start()  # (the ledger's one writer while it serves)
        except Exception:
            desk.close()
            raise
        lang = settings.language_for(director.t.spec.language)
        director.watch()  # (a held result is tried again when the files are mended)
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
        if owner is not None:
            owner.close()
        desk.close()
