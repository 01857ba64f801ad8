"""`timekeeper audio devices` and `timekeeper audio test`: a box's sound set up before the
first match (a Pi's HDMI or headphone jack, a USB card): which devices `audio.device` may
name, and one cue played through exactly what `run` would use (driver, device, volume)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import TextIO

from timekeeper.box import config as box_config
from timekeeper.box.config import Config
from timekeeper.rules.engine import Cue
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError

NO_DEVICES = (
    "  `aplay -l` lists the sound cards the system sees; none there: check the "
    "speaker or USB card (on a Pi: docs/box.md, HDMI or headphone jack).\n"
    "  Another driver may see more: `timekeeper audio devices --driver pulseaudio`.\n"
    "  No card at all: `timekeeper run --audio silent` runs matches without sound."
)
NOT_HEARD = (
    "heard nothing? `timekeeper audio devices` lists what audio.device may name; "
    "`alsamixer` (F6: the card) sets the card's own level; docs/box.md has the recipe"
)


def list_devices(driver: str | None, configured: str | None, out: TextIO = sys.stdout) -> int:
    """Print the output devices of `driver` (None: SDL's choice); 1 when there are none."""
    from timekeeper.sound.devices import output_devices

    try:
        used, names = output_devices(driver)
    except AudioError as exc:
        print(f"timekeeper: {exc}\n{NO_DEVICES}", file=out)
        return 1
    if not names:
        print(f"driver {used}: no output devices.\n{NO_DEVICES}", file=out)
        return 1
    print(
        f"driver {used}: {len(names)} output device{'s' if len(names) > 1 else ''}; "
        "name one in the config as audio.device (none: the system's default):",
        file=out,
    )
    for name in names:
        print(f"{'*' if name == configured else ' '} {name}", file=out)
    if configured is not None and configured not in names:
        print(f"  audio.device {configured!r} in the config is not among them", file=out)
    return 0


def play_test(
    cfg: Config,
    sounds: str | None,
    cue_name: str,
    sinks: tuple[str, ...],
    gain: float,
    out: TextIO = sys.stdout,
) -> int:
    """Play one cue through the configured output and wait for it to end; 1 when the
    device cannot be opened (the reason and what to do are printed)."""
    from timekeeper.sound.devices import Settings, current_driver, described, open_output
    from timekeeper.sound.pack import CUE_NAMES, find_pack, load_pack

    if cue_name not in CUE_NAMES:
        raise ConfigError(f"unknown cue {cue_name!r}; cues: {', '.join(CUE_NAMES)}", field="CUE")
    if sinks == ("silent",):
        print(
            "timekeeper: audio.sink is silent: nothing to play; "
            "`timekeeper audio test --audio auto` tries the card",
            file=out,
        )
        return 1
    pack = load_pack(find_pack(sounds or cfg.sounds), {cue_name}).scaled(gain)
    samples = pack.sounds[cue_name].samples
    seconds = len(samples) / RATE
    try:
        output = open_output(
            pack,
            None,
            sinks,
            Settings(cfg.audio_driver, cfg.audio_device, cfg.audio_chunk, cfg.audio_latency),
        )
    except AudioError as exc:
        print(f"timekeeper: {_reason(exc)}\n{NO_DEVICES}", file=out)
        return 1
    try:
        level = "as recorded" if gain == 1.0 else f"{20 * math.log10(gain):+.1f} dB"
        print(
            f"playing {cue_name} ({seconds:.1f} s) from pack {pack.name}: driver "
            f"{current_driver() or cfg.audio_driver or '?'}, device "
            f"{cfg.audio_device or '(default)'}, volume {level}, {described(output)}",
            file=out,
            flush=True,
        )
        now = time.monotonic()
        due = now + output.lead
        cue = Cue(cue_name, due, length=seconds) if cue_name == "last30" else Cue(cue_name, due)
        output.play(cue, now)
        end = due + seconds + 0.2
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 0.1))
            if (why := output.fault()) is not None:
                print(f"timekeeper: the device failed while playing: {why}", file=out)
                return 1
    finally:
        output.close()
    print(f"done; {NOT_HEARD}", file=out)
    return 0


def _reason(exc: AudioError) -> str:
    """The device's own error, without the advice meant for `run`."""
    return str(exc).split("; check the speaker", 1)[0]


def devices_command(config: Path | None, driver: str | None) -> int:
    """`audio devices`: the config's driver unless --driver names another."""
    cfg = box_config.load(config)
    return list_devices(driver or cfg.audio_driver, cfg.audio_device)


def test_command(args: argparse.Namespace) -> int:
    """`audio test`: its options over the config, as `run` takes them (--volume checked as
    audio.volume is)."""
    cfg = box_config.load(args.config)
    gain = cfg.audio_volume
    if args.volume is not None:
        try:
            value: object = float(args.volume)
        except ValueError:
            value = args.volume
        checked = box_config.volume_gain(value)
        if isinstance(checked, str):
            raise ConfigError(checked, field="--volume")
        gain = checked
    cfg = dataclasses.replace(
        cfg,
        audio_driver=args.driver or cfg.audio_driver,
        audio_device=args.device or cfg.audio_device,
    )
    from timekeeper.sound.devices import parse

    sinks = cfg.audio_sinks
    if args.audio is not None:
        try:
            sinks = parse(args.audio)
        except ValueError as exc:
            raise ConfigError(str(exc), field="--audio") from None
    return play_test(cfg, args.sounds, args.cue, sinks, gain)
