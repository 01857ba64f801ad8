"""SDL's audio plumbing that pygame leaves to us: drivers chosen through the environment,
the mixer opened at our format, and a removed device, which SDL reports only as an event."""

from __future__ import annotations

import os
from contextlib import contextmanager

from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError


@contextmanager
def _sdl_env(name: str, value: str | None):
    """SDL reads its drivers from the environment: set `name` (unless `value` is None) for
    the duration, then put back what was there."""
    old = os.environ.get(name)
    if value:
        os.environ[name] = value
    try:
        yield
    finally:
        if value:
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def _sdl_driver(driver: str | None):
    """Every SDL audio open goes through here: libasound's own error lines are kept off the
    screen first (our AudioError says what is wrong and what to do)."""
    from timekeeper.sound import alsa

    alsa.quiet()
    return _sdl_env("SDL_AUDIODRIVER", driver)


def init_mixer(driver: str | None = None, buffer: int = 512, device: str | None = None) -> None:
    """Open the mixer at our fixed format (48 kHz, 16-bit, stereo); SDL converts for the
    device, so sample arrays never need to know what the hardware wants."""
    import pygame

    with _sdl_driver(driver):
        try:
            pygame.mixer.init(
                frequency=RATE,
                size=-16,
                channels=2,
                buffer=buffer,
                allowedchanges=0,
                devicename=device,
            )
        except pygame.error as exc:
            raise AudioError(
                f"cannot open audio ({exc}); check the speaker/sound card "
                "(audio.driver/audio.device in the config), or run with "
                "--audio silent (audio.sink: silent)"
            ) from None


def watch_device_events(pygame) -> None:
    """SDL delivers AUDIODEVICEREMOVED through its event queue, which needs the video
    subsystem: SDL's dummy video driver gives the queue without touching any screen."""
    if pygame.display.get_init():
        return
    with _sdl_env("SDL_VIDEODRIVER", "dummy"):
        try:
            pygame.display.init()
        except pygame.error:
            return  # no events: a lost device is then noticed only if playing raises
    pygame.event.set_blocked(None)
    pygame.event.set_allowed([pygame.AUDIODEVICEREMOVED])
    pygame.event.clear()


def device_removed(pygame) -> str | None:
    """SDL reports a lost device only as an event: the stream goes on "playing" into nothing
    at the right rate and raises nothing, so the event queue is read here."""
    if not pygame.display.get_init():
        return None
    if any(not event.iscapture for event in pygame.event.get(pygame.AUDIODEVICEREMOVED)):
        return "the audio device was removed"
    return None
