"""Opening the live audio output `timekeeper run` plays through: the sample-exact stream, or
pygame's mixer as the fallback."""

from __future__ import annotations

import sys

from timekeeper.rules.profile import Profile
from timekeeper.sound.output import Output, SilentOutput
from timekeeper.sound.pack import SoundPack

AUDIO_KINDS = ("stream", "mixer", "silent")


def open_output(pack: SoundPack, profile: Profile, kind: str = "stream",
                driver: str | None = None, chunk: int | None = None,
                latency: float | None = None, device: str | None = None) -> Output:
    """The live audio output for `timekeeper run`, opened, warm and prepared for `profile`.

    `stream` (default): one always-running stream, cues placed at their exact frame
    (timekeeper/stream.py). `mixer`: plain `Sound.play()` through pygame's mixer at the
    deadline, the fallback. `silent`: no device at all. Raises AudioError when the device
    cannot be opened."""
    if kind == "silent":
        return SilentOutput()
    if kind == "mixer":
        if device is not None:
            from timekeeper.sound.sdl import init_mixer

            init_mixer(driver, chunk or 512, device)
        from timekeeper.sound.mixer import PygameAudio

        output: Output = PygameAudio(pack, driver, buffer=chunk or 512)
    elif kind == "stream":
        from timekeeper.sound.stream import DEFAULT_CHUNK, StreamAudio

        mixer = sys.modules.get("pygame.mixer")
        if mixer is not None and mixer.get_init():
            mixer.quit()  # an OGG decode opened SDL's audio (on the dummy driver): let it go
        output = StreamAudio(pack, driver, chunk=chunk or DEFAULT_CHUNK, latency=latency,
                             device=device)
    else:
        raise ValueError(f"audio kind {kind!r} is not one of {', '.join(AUDIO_KINDS)}")
    try:
        output.prepare(profile)
    except BaseException:
        output.close()
        raise
    return output
