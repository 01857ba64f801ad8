"""A box switching its match profile between matches, when the desk's pairing asks for
another one: the profile loaded and checked exactly as `timekeeper run --profile` does, the
sound pack the box runs with checked to hold its cues, the sound prepared for it, then a new
engine handed to the runner (which swaps it only between matches). The sound pack, outputs,
journal and pages stay; a neighbour that keeps something of the profile hears it from the
runner (`RunnerListener.engine_replaced`), and the status carries the new profile's facts."""

from __future__ import annotations

import logging

from timekeeper.rules import profile
from timekeeper.rules.engine import Engine
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound.pack import SoundPack, melody_window

log = logging.getLogger(__name__)


class ProfileSwitch:
    """`switch(name)`: '' when the next match is played with `name`, else why it is not."""

    def __init__(self, runner, pack: SoundPack, melody: float, audio=None) -> None:
        self.runner, self.pack, self.melody, self.audio = runner, pack, melody, audio

    def __call__(self, name: str) -> str:
        try:
            chosen = profile.load(name)  # what `run --profile NAME` loads, refused the same
        except ConfigError as exc:
            log.warning("hall: profile %s refused: %s", name, exc)
            return f"profile {name} refused: {exc}"
        missing = sorted(chosen.cue_names - set(self.pack.sounds))
        if missing or melody_window(chosen) > self.melody:
            why = (
                f"the sound pack {self.pack.name} has no {', '.join(missing)}"
                if missing
                else "its melody is longer than the one this box loaded"
            )
            return (
                f"profile {chosen.key} not taken: {why}; restart the box with --profile "
                f"{chosen.key}"
            )
        output = getattr(self.audio, "output", None)
        if self.audio is not None:
            self.audio.profile = chosen  # (a device reopened later is prepared for it)
        if output is not None:
            output.prepare(chosen)  # every sample array built now, never mid-match
        self.runner.replace_engine(Engine(chosen))
        log.info("hall: switching to profile %s for the next match", chosen.key)
        return ""
