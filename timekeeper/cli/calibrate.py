"""`timekeeper calibrate`: the box measures its own speaker (sound/calibration.py) and writes
what no driver reports into its config's `audio.latency`, which every output then applies."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from pathlib import Path

from timekeeper.rules.yamldoc import ConfigError

log = logging.getLogger(__name__)

OTHER_MEANS = """\
Without an input, measure by other means and set audio.latency (ms) in {file} by hand:
  - record the speaker (a microphone or a line-in on another machine) while a match runs
    with --events FILE: bench/timing.py times each recorded cue against its due time;
  - film the box's lamp and the speaker in slow motion (a phone at 240 fps: ~4 ms a frame)
    as a match starts (START): the lamp goes steady as the start signal is due; the video's
    frames from the lamp to the signal's first sound on its sound track are the latency."""


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate",
        help="measure this box's speaker with an input and set audio.latency in its config",
        description="Plays clicks through the stream as a match plays its cues, records them "
        "from an input (a USB card's line-in wired to the jack, a microphone at the speaker), "
        "and writes the median delay no driver reports into the config's audio.latency.",
    )
    p.add_argument(
        "--config",
        type=Path,
        help="the config to measure for and write (default: $TIMEKEEPER_CONFIG, else "
        "/etc/timekeeper/config.yaml, made if missing)",
    )
    p.add_argument(
        "--input",
        default="default",
        metavar="DEVICE",
        help="the ALSA capture device that hears the speaker (`arecord -L` lists them; "
        "default: %(default)s)",
    )
    p.add_argument("--clicks", type=int, default=12, help="clicks to play (%(default)s)")
    p.add_argument("--dry-run", action="store_true", help="say the figure, write nothing")
    p.set_defaults(func=calibrate)


def calibrate(args: argparse.Namespace) -> int:
    # (imported when the command runs: the command line loads no numpy for --help or ctl)
    from timekeeper.box import config as box_config
    from timekeeper.sound.calibration import APART, STEADY, Capture, click_pack, measure
    from timekeeper.sound.devices import open_output
    from timekeeper.sound.framed import FramedOutput
    from timekeeper.sound.output import AudioError

    env = os.environ.get("TIMEKEEPER_CONFIG")
    file = args.config or (Path(env) if env else box_config.DEFAULT_FILE)
    cfg = box_config.load(file) if file.exists() else box_config.Config(None)
    streams = tuple(n for n in cfg.audio_sinks if n not in ("mixer", "silent"))
    if not streams:
        raise ConfigError(
            "calibrate measures a stream's sink: set audio.sink to one (auto, pulse, alsa, …)",
            file,
        )
    if not 3 <= args.clicks <= 100:
        raise ConfigError(f"must be 3 to 100, not {args.clicks}", field="--clicks")
    _, settings = box_config.audio_for_run(cfg, None, None, None)
    settings = dataclasses.replace(settings, offset=0.0)  # (the raw path is what is measured)
    try:
        capture = Capture(args.input)
    except AudioError as exc:
        print(
            f"timekeeper calibrate: {exc}: nothing to hear the speaker with. Wire an input "
            "(a USB sound card's line-in with a cable from the jack, or a microphone at the "
            "speaker) and name it with --input (`arecord -L` lists them).\n"
            + OTHER_MEANS.format(file=file),
            file=sys.stderr,
        )
        return 1
    try:
        played = open_output(click_pack(), None, streams, settings)
    except AudioError as exc:
        capture.stop()
        print(
            f"timekeeper calibrate: no output to measure ({exc}); where the box's service "
            "holds the card: sudo systemctl stop timekeeper, calibrate, then start it again",
            file=sys.stderr,
        )
        return 1
    assert isinstance(played, FramedOutput)
    try:
        found = measure(played, capture, args.clicks)
    except AudioError as exc:
        capture.stop()
        print(f"timekeeper calibrate: {exc}", file=sys.stderr)
        return 1
    finally:
        played.close()
    heard = found.heard
    for due, error in zip(found.dues, found.errors, strict=True):  # (-v: for a bench to compare)
        log.debug("click due at %.6f s (monotonic): %s", due, error)
    each = ", ".join("–" if e is None else f"{e * 1e3:.1f}" for e in found.errors)
    apart = len(found.found) - len(heard)
    if apart:
        each += f"; {apart} left out, over {APART * 1e3:g} ms from the others"
    if len(heard) < max(3, args.clicks // 2):
        print(
            f"timekeeper calibrate: heard {len(heard)} of {args.clicks} clicks on "
            f"{args.input!r} ({each} ms): is the input wired to the speaker's output, its "
            "level up (alsamixer)?\n" + OTHER_MEANS.format(file=file),
            file=sys.stderr,
        )
        return 1
    ms = found.latency * 1e3
    if not found.steady:
        print(
            f"timekeeper calibrate: the clicks heard on {args.input!r} spread "
            f"±{found.spread * 1e3:.1f} ms ({each} ms), more than ±{STEADY * 1e3:g} ms: no "
            "figure written. Calibrate again when the box runs nothing else (and no match), "
            "and check that the input is steady (`arecord` from it)",
            file=sys.stderr,
        )
        return 1
    print(
        f"audio.latency {ms:.1f} ms: the median of {len(heard)} of {args.clicks} clicks heard "
        f"on {args.input!r} through {played.sink.name}; spread ±{found.spread * 1e3:.1f} ms "
        f"(each: {each} ms)"
    )
    if args.dry_run:
        return 0
    note = f"ms, measured by timekeeper calibrate ({played.sink.name}, ±{found.spread * 1e3:.1f})"
    box_config.write_speaker_latency(file, found.latency, note)
    was = f"{cfg.audio_offset * 1e3:g} ms" if cfg.audio_offset else "none"
    print(f"written to {file} (was {was}); every output applies it from the next start")
    return 0
