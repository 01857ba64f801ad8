"""`--audio` (`audio.sink`): one name or an ordered list of sinks, tried in turn, each one's
outcome on one log line; the settings made pass over the sinks that cannot use them; a
device another program holds is named with its holder, and the box gets its sound back
once it is let go. The sinks here are stand-ins, or the real ALSA sink on ALSA's `null`."""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from helpers import wait_for

from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Engine
from timekeeper.sound import alsasink, devices, pulse, sdlsink
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.framed import Sink
from timekeeper.sound.guard import AudioGuard
from timekeeper.sound.output import AudioError
from timekeeper.sound.pack import default_pack_dir, load_pack

needs_alsa = pytest.mark.skipif(alsasink._library() is None, reason="no libasound")


@pytest.mark.parametrize(
    "value, names",
    [
        ("auto", devices.AUTO),
        ("alsa", ("alsa",)),
        ("pulse,alsa,sdl", ("pulse", "alsa", "sdl")),
        (["alsa", "mixer"], ("alsa", "mixer")),
        ("auto,mixer", (*devices.AUTO, "mixer")),
        ("silent", ("silent",)),
    ],
)
def test_a_name_or_a_list_is_the_sinks_tried_in_turn(value: object, names: tuple) -> None:
    assert devices.parse(value) == names


@pytest.mark.parametrize(
    "value, why",
    [
        ("stream", "stream is what every sink but mixer plays: name the sinks"),
        ("speaker", "'speaker' is not one of auto, silent, pipewire"),
        ("alsa,silent", "silent opens no device: it stands alone"),
        ("auto,alsa", "alsa is named twice"),
        ("alsa,", "must be a name or a list"),
        ("mixer,alsa", "mixer is the fallback: it comes last in a list, e.g. alsa,mixer"),
        (["mixer", "pulse", "alsa"], "it comes last in a list, e.g. pulse,alsa,mixer"),
    ],
)
def test_what_cannot_be_a_list_of_sinks_is_refused(value: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        devices.parse(value)


class _Stand(Sink):
    def __init__(self, name: str, kind: str | None = None, server: str = "") -> None:
        self.name, self.server, self.closed = name, server, False
        if kind is not None:
            self.kind = kind
        self.device_period = 480

    def close(self) -> None:
        self.closed = True


def _fails(why: str):
    def fail(*_args: object, **_kw: object) -> Sink:
        raise AudioError(why)

    return fail


def _no_pipewire(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("PIPEWIRE_REMOTE", raising=False)
    monkeypatch.delenv("PIPEWIRE_RUNTIME_DIR", raising=False)


def test_each_sink_tried_says_why_it_was_or_was_not_taken(monkeypatch, tmp_path, caplog) -> None:
    _no_pipewire(monkeypatch, tmp_path)
    monkeypatch.setattr(pulse, "PulseSink", _fails("no PulseAudio server answers (refused)"))
    monkeypatch.setattr(alsasink, "AlsaSink", lambda *_a: _Stand("alsa", "PLUG"))
    with caplog.at_level(logging.INFO, logger="timekeeper.sound.devices"):
        sink = devices.choose(devices.AUTO)
    assert sink.name == "alsa"
    assert (
        f"audio: pipewire: no PipeWire server (no socket at {tmp_path / 'pipewire-0'}); "
        "pulse: no PulseAudio server answers (refused); "
        "alsa: default opened (PLUG), 48 kHz, period 480 frames, latency 80 ms: taken"
    ) in caplog.text


def test_without_a_runtime_folder_no_pipewire_server_is_looked_for(monkeypatch) -> None:
    # a root shell or the service: PipeWire runs in a user's session, whose socket is in
    # that user's XDG_RUNTIME_DIR
    for name in ("XDG_RUNTIME_DIR", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AudioError) as refused:
        devices.open_sink("pipewire")
    assert str(refused.value) == "no PipeWire server (XDG_RUNTIME_DIR is not set)"


def test_a_pipewire_socket_takes_its_alsa_plugin_without_libpulse_never_the_card(
    monkeypatch, tmp_path
) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "pipewire-0"))
        _no_pipewire(monkeypatch, tmp_path)
        monkeypatch.setattr(pulse, "PulseSink", _fails("libpulse asked: not to be"))
        monkeypatch.setattr(alsasink, "AlsaSink", lambda *_a: _Stand("alsa", "IOPLUG"))
        assert devices.choose(devices.AUTO).name == "alsa"
        card = _Stand("alsa", "HW")  # (ALSA's default a card PipeWire holds: its pulse layer)
        monkeypatch.setattr(alsasink, "AlsaSink", lambda *_a: card)
        monkeypatch.setattr(pulse, "PulseSink", lambda *_a, **_k: _Stand("pulse", server="pw"))
        assert devices.choose(devices.AUTO).name == "pulse" and card.closed
        with pytest.raises(AudioError, match=r"default device is a card \(HW\)"):
            devices.choose(("pipewire",))


def test_sdl_settings_pass_the_others_over_and_none_opening_says_each(
    monkeypatch, tmp_path, caplog
) -> None:
    _no_pipewire(monkeypatch, tmp_path)
    monkeypatch.setattr(pulse, "PulseSink", _fails("not to be asked"))
    monkeypatch.setattr(alsasink, "AlsaSink", _fails("not to be asked"))
    monkeypatch.setattr(sdlsink, "SdlSink", lambda *_a: _Stand("sdl"))
    settings = devices.Settings(latency=0.02)
    with caplog.at_level(logging.INFO, logger="timekeeper.sound.devices"):
        assert devices.choose(devices.AUTO, settings).name == "sdl"
    assert (
        "pulse: passed over: audio.latency_ms / --audio-latency is set, "
        "which is for sdl" in caplog.text
    )
    monkeypatch.setattr(sdlsink, "SdlSink", _fails("cannot open an audio stream (no device)"))
    with pytest.raises(AudioError) as raised:
        devices.choose(("pulse", "sdl"))
    assert str(raised.value) == (
        "no sound device opened: pulse: not to be asked; "
        "sdl: cannot open an audio stream (no device)"
    )
    with pytest.raises(AudioError, match=r"^not to be asked$"):  # (alone: its own error)
        devices.choose(("alsa",))


def test_the_mixer_is_the_fallback_after_the_stream_sinks(monkeypatch, caplog) -> None:
    from timekeeper.sound import pygame_mixer

    opened: list[str] = []
    monkeypatch.setattr(alsasink, "AlsaSink", _fails("cannot open the ALSA device 'default'"))
    monkeypatch.setattr(
        pygame_mixer, "PygameAudio", lambda *_a, **_k: opened.append("mixer") or "mixer"
    )
    with caplog.at_level(logging.INFO, logger="timekeeper.sound.devices"):
        assert devices.open_output(load_pack(default_pack_dir()), None, ("alsa", "mixer"))
    assert opened == ["mixer"] and "cannot open the ALSA device 'default'; mixer" in caplog.text


# ------------------------------------------------------------------ a device another one holds

BEEPS = """\
    title: a beep every second
    prestart: 0
    period: {length: 60, marks: 1, mark_beeps: single}
"""


class _Held(alsasink.AlsaSink):
    """The real sink on ALSA's `null` PCM; once `taken`, the device it plays on is lost (a
    write fails) and, while another program holds the card, opening it fails as a card's
    open does then (EBUSY, libasound's own words)."""

    taken = False

    def __init__(self, device: str | None = None, period: int = alsasink.PERIOD) -> None:
        if _Held.taken:
            self._lib, self._name = alsasink._library(), device or "default"
            self._check(-errno.EBUSY, "open")
        super().__init__("null", period)

    def write(self, block) -> None:
        if _Held.taken:
            raise AudioError("cannot write to the ALSA device 'default' (No such device)")
        super().write(block)


def _holder(proc: Path, pid: int, command: str) -> None:
    status = proc / "asound" / "card0" / "pcm0p" / "sub0" / "status"
    status.parent.mkdir(parents=True)
    status.write_text(f"state: RUNNING\nowner_pid   : {pid}\ntrigger_time: 1.0\n")
    (proc / str(pid)).mkdir()
    (proc / str(pid) / "comm").write_text(f"{command}\n")


BUSY = "'default' (Device or resource busy; held by pid 4242 (aplay, card 0))"


def test_the_holder_is_found_as_fuser_finds_it_where_proc_asound_does_not_say(
    monkeypatch, tmp_path
) -> None:
    proc = tmp_path / "proc"
    (proc / "777" / "fd").mkdir(parents=True)
    (proc / "777" / "comm").write_text("mpv\n")
    (proc / "777" / "fd" / "5").symlink_to("/dev/snd/pcmC1D0p")
    (proc / "778" / "fd").mkdir(parents=True)  # (a capture device: not a holder)
    (proc / "778" / "fd" / "3").symlink_to("/dev/snd/pcmC1D0c")
    monkeypatch.setattr(devices, "PROC", proc)
    assert devices.holders() == ["pid 777 (mpv, card 1)"]
    monkeypatch.setattr(devices, "PROC", tmp_path / "nothing")
    busy = AudioError("cannot open the ALSA device 'default' (Device or resource busy); check")
    assert (
        "(Device or resource busy; held by another program (`fuser -v /dev/snd/*` names it))"
        in str(devices._with_holder(busy))
    )


@needs_alsa
def test_a_busy_device_names_its_holder_and_the_sound_comes_back_once_let_go(
    write_profile, monkeypatch, tmp_path, caplog
) -> None:
    """The box's card is lost and another program takes it: each reopen says who holds it,
    the match runs on (its cues logged as not heard), and once the card is let go the next
    reopen takes it and the cues are heard again."""
    _holder(tmp_path / "proc", 4242, "aplay")
    monkeypatch.setattr(devices, "PROC", tmp_path / "proc")
    monkeypatch.setattr(alsasink, "AlsaSink", _Held)
    monkeypatch.setattr(_Held, "taken", True)
    with pytest.raises(AudioError, match=re.escape(f"cannot open the ALSA device {BUSY}")):
        devices.choose(("alsa",))
    monkeypatch.setattr(_Held, "taken", False)

    beeps = profile.load(str(write_profile("beeps", BEEPS)))
    pack = load_pack(default_pack_dir())
    guard = AudioGuard(lambda: devices.open_output(pack, beeps, ("alsa",)), attempts=1)
    guard.prepare(beeps)
    events = EventLog(tmp_path / "events.jsonl", profile="beeps")
    runner = Runner(Engine(beeps), [guard], events)
    guard.start_checks(runner.clock())
    worker = threading.Thread(target=runner.run, daemon=True)
    worker.start()
    marks = tmp_path / "events.jsonl"

    def heard(heard: bool = True) -> list[int]:
        lines = (
            [json.loads(line) for line in marks.read_text().splitlines()] if marks.exists() else []
        )
        return [
            round(e["play_time"])
            for e in lines
            if e["cue"] != "start" and ("heard" not in e) == heard
        ]

    try:
        with caplog.at_level(logging.INFO):
            runner.submit(Command(Action.START))
            wait_for(lambda: heard(), "a cue heard")
            _Held.taken = True  # the card is lost, and another program takes it
            wait_for(lambda: BUSY in caplog.text, "a reopen that names the holder", timeout=10)
            assert f"audio still down (cannot open the ALSA device {BUSY}" in caplog.text
            _Held.taken = False  # let go
            wait_for(lambda: "audio is back" in caplog.text, "the sound back", timeout=10)
            back = runner.engine.status(runner.clock()).play_time
            wait_for(lambda: any(s > back for s in heard()), "a cue heard after", timeout=5)
    finally:
        _Held.taken = False
        runner.submit(Command(Action.QUIT))
        worker.join(5)
        guard.close()
        events.close()
    assert heard(False), "the cues while the card was held: logged, not heard"
    assert min(heard(False)) > min(heard()) and max(heard()) > max(heard(False))


# ------------------------------------------------------- HDMI on a Pi 4/5: IEC958 frames only

# Pi OS's own chain for vc4-hdmi, softvol left out (it needs a card's mixer control): plug
# converts to what the iec958 plugin takes, which makes IEC958 subframes for the card; the
# card here is a file (on `null`), so that what it is handed can be read back
HDMI_CHAIN = """\
</usr/share/alsa/alsa.conf>
pcm.card {{ type file slave.pcm "null" file "{raw}" format "raw" }}
pcm.hdmi_iec958 {{
    type iec958
    slave {{ pcm "card" format IEC958_SUBFRAME_LE }}
    status [ 0x04 0x82 0x00 0x02 ]
}}
pcm.!default {{ type plug slave.pcm "hdmi_iec958" }}
"""

PLAY_HALF_SCALE = """\
import logging
import numpy as np
from timekeeper.sound import devices
from timekeeper.sound.alsasink import AlsaSink
from timekeeper.sound.output import AudioError
logging.basicConfig(level=logging.INFO, format="%(message)s")
try:
    AlsaSink("hdmi_iec958")
except AudioError as exc:
    print("plain:", exc)
sink = devices.choose(("alsa",))
for _ in range(4):
    sink.write(np.full(sink.period, 0.5, np.float32))
sink.close()
"""


@needs_alsa
@pytest.mark.slow
def test_the_alsa_sink_opens_default_and_plays_where_only_iec958_frames_are_taken(
    tmp_path,
) -> None:
    """The sink never asks for a format of its own on the device: it opens `default`, whose
    plug converts the float samples into the IEC958 subframes the HDMI chain takes (a PCM
    opened without plug refuses them, as `plughw` fails on a Pi 4's HDMI)."""
    raw = tmp_path / "card.raw"
    config = tmp_path / "asound.conf"
    config.write_text(HDMI_CHAIN.format(raw=raw))
    done = subprocess.run(
        [sys.executable, "-c", PLAY_HALF_SCALE],
        env={**os.environ, "ALSA_CONFIG_PATH": str(config)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "plain: cannot set up the ALSA device 'hdmi_iec958' (Invalid argument)" in done.stdout
    assert "audio: alsa: default opened (PLUG), 48 kHz" in done.stderr
    words = np.frombuffer(raw.read_bytes(), "<u4")
    assert len(words) >= 2 * 4096  # stereo subframes, one a channel
    assert set((words >> 4) & 0xFFFFFF) == {0x400000}  # 0.5 of full scale, 24 bits
    preambles = words & 0xF
    assert set(preambles) == {0x2, 0x8} and 0x8 in preambles[:2]  # a block starts
