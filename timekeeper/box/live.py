"""`timekeeper run`: wires the live box together — config, profile, pack, journal, audio,
controls, lamp and relays, systemd — and hands over to the runner.

Order matters for an appliance: everything that can be refused (config, profile, pack,
journal) is checked before the sound card is touched, and systemd hears READY=1 only once
audio, pack and GPIO are ready."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from timekeeper.box import config as box_config
from timekeeper.box.journal import Journal, match_in_progress, state_dir
from timekeeper.box.resume import name_sides, resume, series_going_on, series_profile
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.rules.profiletypes import Profile
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import language
from timekeeper.show.prompts import resumed_text
from timekeeper.sound.output import AudioError, Output
from timekeeper.sound.priority import raise_priority

log = logging.getLogger("timekeeper")


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # each: journal, then exit 0


class _Stopped(Exception):
    """SIGTERM, SIGINT or SIGHUP before the runner runs (e.g. while audio is being retried)."""


def _stop_now(*_: object) -> None:
    raise _Stopped


def run_live(args: argparse.Namespace) -> int:
    # Until the runner can take a QUIT, a stop request simply unwinds start-up. SDL must not
    # install its own SIGINT/SIGTERM handlers (they swallow the signal into an SDL event).
    os.environ["SDL_NO_SIGNAL_HANDLERS"] = "1"
    logging.raiseExceptions = False  # a log line that cannot be written fails alone
    for sig in STOP_SIGNALS:  # SIGHUP too: a closed terminal stops it cleanly, journaled
        signal.signal(sig, _stop_now)
    try:
        return _run_live(args)
    except _Stopped:
        log.info("stopped before the match started")
        return 0


def _run_live(args: argparse.Namespace) -> int:
    from timekeeper.box.controls.keyboard import Keyboard, help_for, in_foreground
    from timekeeper.box.controls.socket import ControlServer, SocketInUse
    from timekeeper.box.controls.socket_path import default_path, in_use
    from timekeeper.box.runner import Runner
    from timekeeper.box.sdnotify import Notifier, ServiceStatus, Watchdog, watchdog_interval
    from timekeeper.box.soundcard import start_audio, terminal_asker
    from timekeeper.box.switch import ProfileSwitch
    from timekeeper.show.status import LogLines, StatusLine
    from timekeeper.sound.devices import described, open_output, shown
    from timekeeper.sound.eventlog import EventLog
    from timekeeper.sound.pack import find_pack, load_pack, melody_window

    cfg = box_config.load(args.config)
    # every file the box reads is read before it answers: a language file that cannot be read
    # later (EMFILE, a full disk's errors) would stop a running box at its first status line
    language.words(cfg.language)
    sinks, settings = box_config.audio_for_run(  # refused before anything is touched
        cfg, args.audio, args.audio_chunk, args.audio_latency
    )
    control_path = args.control or cfg.control or default_path()
    folder = state_dir(args.state_dir or cfg.state_dir)
    if in_use(control_path):  # before the journal: the running box's match is left alone
        print(_second_box(control_path, folder), file=sys.stderr)
        return 1
    if (refused := _make_folders(folder, control_path, args.events)) is not None:
        print(refused, file=sys.stderr)  # before anything that could look like a ready box
        return 1
    name = args.profile or cfg.profile or args.default_profile
    # a local series under way goes on under its own profile, with its players
    kept = series_going_on(folder, args.best_of, args.fresh, bool(args.hall or cfg.hall))
    usual = series_profile(kept, folder, profile.load(name), args.profile)
    explicit = args.resume_at or args.resume_from or args.fresh
    chosen = usual if explicit else _journaled_profile(folder, usual)
    # the sounds of both (the hall may switch back to the usual one for the next match)
    melody = max(melody_window(chosen), melody_window(usual))
    pack = load_pack(
        find_pack(args.sounds or cfg.sounds), chosen.cue_names | usual.cue_names, melody
    ).scaled(cfg.audio_volume)  # the tune as far as used
    engine = Engine(chosen)
    journal = Journal(folder, engine, cfg.journal_interval)
    resumed = resume(engine, journal, args.resume_at, args.resume_from, args.fresh, args.replay)
    name_sides(engine, kept, cfg.names)

    def open_audio() -> Output:
        return open_output(pack, chosen, sinks, settings)

    if not args.no_gpio and cfg.gpio.enabled:  # imported meanwhile: the stream's start waits
        threading.Thread(target=importlib.import_module, args=("gpiozero",), daemon=True).start()
    try:  # at a terminal, no card is told at once and SILENT offered; the service retries
        started = start_audio(open_audio, chosen, cfg.audio_attempts, sinks, terminal_asker())
    except AudioError as exc:
        print(f"timekeeper: {exc}", file=sys.stderr)
        return 1
    audio, mark = started.guard, "SILENT" if started.silent else ""
    # Devices close in the reverse order of their opening (ExitStack): the controls and the
    # pages before the runner's listeners, the events log and the sound card last.
    with contextlib.ExitStack() as devices:
        devices.callback(audio.close)
        events = (
            EventLog(
                args.events, profile=chosen.key, wall_clock=True, heard=not mark, keep_going=True
            )
            if args.events
            else None
        )
        if events is not None:
            devices.callback(events.close)
        runner = Runner(engine, [audio], events)  # (the events log: its first listener)
        runner.silent = started.silent
        # a stop signal from here on is a clean stop: queued, and taken once the loop runs
        # (before, the ctl socket answered while SIGTERM still killed the box outright)
        for sig in STOP_SIGNALS:
            signal.signal(sig, lambda *_: runner.submit(Command(Action.QUIT)))
        switch = ProfileSwitch(runner, pack, melody, audio)  # (the hall's)
        now = runner.clock()
        audio.start_checks(now)
        runner.listeners.append(journal)
        if not args.no_gpio and cfg.gpio.enabled:
            devices.enter_context(_gpio(cfg, runner, audio))

        interactive = in_foreground(sys.stdin.fileno()) and not args.no_keyboard

        def key_help() -> str:  # the profile played now: the hall may have switched it
            return help_for(runner.engine.profile)

        def show_help() -> None:  # `?` (a terminal's status line prints it above itself)
            print(key_help(), flush=True)

        if sys.stdout.isatty():
            help_text = key_help if interactive else "keys off: control it with `timekeeper ctl`"
            line = devices.enter_context(
                contextlib.closing(
                    StatusLine(
                        runner.status,
                        help_text,
                        mark=mark,
                        tail="? keys" if interactive else "",
                        words=language.words(cfg.language),
                    ).start()
                )
            )
            runner.listeners.append(line)
            show_help = line.show_help
            root = logging.getLogger()
            for handler in root.handlers[:]:
                root.removeHandler(handler)
            root.addHandler(line.log_handler())
        else:
            runner.listeners.append(LogLines(mark=mark))
        if interactive:
            keys = Keyboard(
                runner.submit, on_help=show_help, state=lambda: runner.engine.state.value
            )
            devices.callback(keys.start().close)

        series = _series(args, cfg, runner, chosen, folder, events)  # (counted first)
        hall = _hall(args, cfg, runner, chosen.key, folder, switch, series)  # (joined below)
        # the box's commands beyond the match's: ctl result [confirm] (and the page's button)
        commands = {} if hall is None else {"result": hall.match.ctl}
        web = _web(args, cfg, runner, folder, commands)  # (its own listener, serving)
        if web is not None:
            devices.callback(web.close)
        try:  # last: once the socket answers, the box is ready
            server = ControlServer(
                runner,
                control_path,
                make_folder=not (args.control or cfg.control),
                commands={**commands, "link": _link_handler(web)},
            )
        except SocketInUse:
            print(_second_box(control_path, folder), file=sys.stderr)
            return 1
        except OSError as exc:
            print(f"timekeeper: control socket {control_path}: {exc}", file=sys.stderr)
            return 1
        devices.callback(server.start().close)
        if hall is not None:  # (joined once nothing can be refused any more)
            devices.callback(hall.start().close)
        notifier = devices.enter_context(contextlib.closing(Notifier()))
        service = ServiceStatus(notifier, mark)
        runner.listeners.append(service)
        interval = watchdog_interval()
        if interval is not None:
            runner.listeners.append(Watchdog(notifier, interval, now))
        journal.save(now)  # at once: a state folder that cannot be written is said now
        if resumed is not None:
            source = (
                f"at {args.resume_at} (--resume-at)"
                if args.resume_at
                else f"from {args.resume_from}"
                if args.resume_from
                else "from the journal"
            )
            log.info("resumed %s: %s", source, resumed_text(runner.status(), args.replay))
        log.info(
            "ready: profile %s, sounds %s, audio %s (--audio %s), control %s, journal %s",
            chosen.key,
            pack.name,
            described(audio.output),
            shown(sinks),
            control_path,
            journal.path,
        )
        log.debug(
            "audio: chunk %s, latency %s, device %s, look-ahead %.0f ms",
            settings.chunk or "default",
            "default" if settings.latency is None else f"{settings.latency * 1e3:g} ms",
            settings.device or "default",
            runner.lead * 1e3,
        )
        notifier.ready(service.text(runner.status()))
        if args.start:
            runner.submit(Command(Action.START))
        # the runner's thread hands every cue over: on time as the audio writer is (8 boxes
        # under stress-ng on 2 cores, at nice 0: up to 134 ms late, its cues' frames played
        # before they were rewritten; raised: within 6 ms)
        log.debug("the runner's thread: %s", raise_priority())
        runner.run()
        notifier.stopping()
        if runner.engine.state.value not in ("idle", "finished"):
            log.info(
                "quit: the match is journaled (%s); `timekeeper run` goes on from there",
                resumed_text(runner.engine.status(runner.clock())),
            )
    return 0


def _make_folders(state: Path, control: Path, events: Path | None) -> str | None:
    """The folders the box is told to use (its state, its socket's, its events file's),
    made at once: a box that cannot have them says so before it shows a status line;
    the refusal, or None."""
    from timekeeper.box.controls.socket_path import make_folder

    try:
        state.mkdir(parents=True, exist_ok=True)
        make_folder(control)  # (the /tmp fallback private, as the socket's server makes it)
        if events is not None:
            events.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        where = exc.filename or state
        return f"timekeeper: cannot make the folder {where}: {exc.strerror or exc}"
    return None


def _journaled_profile(folder: Path, usual: Profile) -> Profile:
    """The profile of the journal's match in progress, which the box goes on with whatever
    `--profile` says: the hall's pairing may have switched it for this match (a restart with
    the usual command must not lose the match). Only a profile that can no longer be loaded
    is refused, by name: the journal is then set aside, saying how to go on with it."""
    snap = match_in_progress(folder)
    if snap is None or snap.profile == usual.key:
        return usual
    try:
        journaled = profile.load(snap.profile)
    except ConfigError as exc:
        log.warning(
            "the journal's match was played with profile %s, which can no longer be loaded "
            "(%s); it is not resumed",
            snap.profile,
            exc,
        )
        return usual
    log.info(
        "the journal's match is played with profile %s, not %s (--profile): going on with it",
        journaled.key,
        usual.key,
    )
    return journaled


def _web(args: argparse.Namespace, cfg: box_config.Config, runner, folder: Path, commands: dict):
    """The display and operator pages (--web or web.listen), started, or None."""
    from timekeeper.web.listen import parse_listen

    listen = cfg.web_listen
    if args.web is not None:
        try:
            listen = parse_listen(args.web)
        except ValueError as exc:
            raise ConfigError(str(exc), field="--web") from None
    if listen is None:
        return None
    from timekeeper.web.server import WebServer  # (aiohttp: imported only when it serves)
    from timekeeper.web.token import TokenStore

    try:
        tokens = TokenStore(folder)
    except OSError as exc:
        raise ConfigError(
            f"cannot keep the operator token: {exc.strerror or exc}", Path(exc.filename or folder)
        ) from None
    try:
        web = WebServer(runner, *listen, tokens, cfg.language, commands).start()
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror or exc}",
            field="--web / web.listen",
        ) from None
    return web


def _link_handler(web):
    """`ctl link [new]` over the ctl socket: the operator page's link, from the web server."""
    if web is None:
        return lambda _: {
            "ok": False,
            "error": "the web pages are off: run with --web PORT, or set web.listen in the config",
        }
    return lambda words: web.link(renew=words == ["new"])


def _series(
    args: argparse.Namespace, cfg: box_config.Config, runner, chosen: Profile, folder, events
):
    """The series the box plays (box/series.py), a listener of the runner: the desk's pairings
    name theirs; `--best-of N` with no desk plays a local one. A local series under way goes
    on by the same command, or by one that names no --best-of (said so); one that names
    another --best-of is refused, naming the command that begins a new one: a new series only
    with --fresh."""
    from timekeeper.box.series import LOCAL, SeriesPlay
    from timekeeper.rules.series import Series

    # (its own FINISH of a decided game is logged as the series', not the operator's)
    play = SeriesPlay(folder, functools.partial(runner.submit, by="series"), events)
    play.on = runner.engine.state.value not in ("idle", "finished")  # (a journaled game)
    runner.series = play  # (told of each change first: the reply shows the game counted)
    best_of = args.best_of
    in_hall = bool(args.hall or cfg.hall)
    s = play.series
    local = s is not None and play.id == LOCAL
    if args.fresh and s is not None:
        log.info("--fresh: the series in %s (%s) is not resumed", play.file, play.text())
        play.begin(None, "")
        s, local = None, False
    if best_of is None:
        if local and not in_hall and s is not None and not s.decided:
            play.local = True
            play.played_under(chosen.key)
            log.info(
                "series goes on as journaled: best of %d, %s, profile %s (`timekeeper run "
                "--best-of %d --fresh` begins a new series)",
                s.best_of,
                play.text(),
                chosen.key,
                s.best_of,
            )
        elif play.id and (local or not in_hall):  # (now single matches; a hall's series
            log.info("the series in %s (%s) is left: single matches", play.file, play.text())
            play.begin(None, "")  # goes on only in the hall, with its pairing)
        return play
    if in_hall:
        raise ConfigError(
            "a box in a hall plays the series its desk's pairing names; "
            "--best-of is for a box with no desk",
            field="--best-of",
        )
    if len(chosen.periods) == chosen.regulation and chosen.shootout is None:
        raise ConfigError(
            f"a series' game needs a winner, but profile {chosen.key} ends a draw at the end "
            "of regulation: use a profile with an overtime (--profile ithf-playoff)",
            field="--best-of",
        )
    play.local = True
    if local and s is not None and s.best_of == best_of:
        play.played_under(chosen.key)
        log.info("series resumed: best of %d, %s, profile %s", best_of, play.text(), chosen.key)
    elif local and s is not None and not s.decided:
        raise ConfigError(
            f"{play.file} holds a best-of-{s.best_of} series under way ({play.text()}): "
            f"`timekeeper run --best-of {s.best_of}` goes on with it, "
            f"`timekeeper run --best-of {best_of} --fresh` begins a new one",
            field="--best-of",
        )
    else:
        play.begin(Series(best_of), LOCAL, profile=chosen.key)
    return play


def _hall(
    args: argparse.Namespace,
    cfg: box_config.Config,
    runner,
    profile_key: str,
    folder: Path,
    switch=None,
    series=None,
):
    """The link to the hall (run --hall URL --table T, or the config's hall:), a listener of
    the runner, not yet started; None if not asked."""
    url = args.hall or (cfg.hall.broker if cfg.hall else None)
    if url is None:
        return None
    from timekeeper.hall.bus import timesync
    from timekeeper.hall.bus.account import with_account
    from timekeeper.hall.bus.broker import Broker
    from timekeeper.hall.table.link import HallLink

    table = args.table or (cfg.hall.table if cfg.hall else "")
    if not table:
        raise ConfigError(
            "a box joining a hall needs its table: --table T (or hall.table in the config)",
            field="--table",
        )
    try:
        broker = Broker.parse(url)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--hall") from None
    hall_name = args.hall_name or (cfg.hall.hall if cfg.hall else "hall")
    sync = getattr(args, "sync", None) or (cfg.hall.sync if cfg.hall else "chrony")
    try:
        if cfg.hall:
            broker = with_account(broker, cfg.hall.user, cfg.hall.password, cfg.hall.password_file)
        sync_check = timesync.checker(sync, broker.host)
    except ValueError as exc:
        raise ConfigError(
            str(exc), field="--sync" if "sync" in str(exc) else "hall.password_file"
        ) from None
    try:
        # the desk's pairings (the profile switched between matches), the results home
        link = HallLink(
            runner,
            broker,
            hall_name,
            str(table),
            profile_key,
            sync_check=sync_check,
            results=folder,
            switch=switch,
        )
    except ValueError as exc:
        raise ConfigError(str(exc), field="--table / --hall-name") from None
    runner.listeners += [link, link.match]
    if series is not None:  # the series a pairing names: counted by the box's SeriesPlay
        link.match.series_taken, link.match.series_played = series.take, series.played
        taken = link.match.pairing
        if taken is not None and taken.id != series.id:  # (its file lost, or older)
            series.take(taken)
    runner.hall_result = link.match.result_shown  # (box facts of the status)
    runner.hall_next = link.match.next_shown
    return link


def _gpio(cfg: box_config.Config, runner, audio) -> contextlib.ExitStack:
    """Buttons, lamp, horn and buzzer, opened and told by the runner; closed when the stack
    closes (none, with one info line, where there is no GPIO)."""
    from timekeeper.box.controls.buttons import ButtonPanel, GpioUnavailable, pin_factory
    from timekeeper.box.signals import Lamp, Relay

    try:
        factory = pin_factory()
    except GpioUnavailable as exc:
        log.info("no GPIO here (%s): running without buttons, lamp or horn", exc)
        return contextlib.ExitStack()
    g = cfg.gpio
    with contextlib.ExitStack() as opened:  # closed here only if one fails to open
        try:
            panel = ButtonPanel(g, runner.submit, runner.clock, factory)
            opened.callback(panel.close)
            if g.lamp is not None:
                lamp = opened.enter_context(contextlib.closing(Lamp(g.lamp, factory)))
                runner.listeners.append(lamp)
                now = runner.clock()
                lamp.match_changed(runner.status(), now)
                lamp.fault_changed(audio.fault(), now)
            for relay_config in (g.horn, g.buzzer):
                if relay_config is not None:
                    relay = opened.enter_context(contextlib.closing(Relay(relay_config, factory)))
                    runner.listeners.append(relay)
        except Exception as exc:  # a pin in use, or no permission for /dev/gpiochip*
            where = cfg.source or "the default wiring"
            raise ConfigError(f"GPIO: {exc}", Path(str(where))) from None
        names = [b.name for b in g.buttons]
        log.info(
            "GPIO: buttons %s%s%s%s",
            ", ".join(names) or "none",
            ", lamp" if g.lamp else "",
            ", horn" if g.horn else "",
            ", buzzer" if g.buzzer else "",
        )
        return opened.pop_all()  # (open: the caller's stack closes them)


def _second_box(control: Path, folder: Path) -> str:
    """A second `run` on a machine where one runs already: how to talk to the first, and how
    to run another box beside it."""
    home = str(Path.home())
    other, sock = (
        str(p).replace(home, "~", 1) if str(p).startswith(home + "/") else str(p)
        for p in (
            folder.with_name(f"{folder.name}-2"),
            control.with_name(f"{control.stem}-2{control.suffix}"),
        )
    )
    return (
        f"timekeeper: another timekeeper is already listening on {control} "
        f"(`timekeeper ctl status` asks it).\n"
        f"To run a second box beside it, give it its own socket and journal:\n"
        f"  timekeeper run --control {sock} --state-dir {other}\n"
        f"and control it with `timekeeper ctl --control {sock} …`"
    )
