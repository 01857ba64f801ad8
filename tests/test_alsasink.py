"""The ALSA sink (sound/alsasink.py) and how `audio.output: auto` reaches it: a device that
does not open says which and what to do; on ALSA's own `null` PCM (no card needed) a framed
output starts, takes blocks and closes; a PipeWire server's pulse layer is left for its ALSA
plugin, a PulseAudio server is kept. Timing on a paced device: bench/timing.py --stack."""

from __future__ import annotations

import pytest
from helpers import wait_for

from timekeeper.sound import alsasink, devices, pulse
from timekeeper.sound.framed import FramedOutput, Sink
from timekeeper.sound.output import AudioError
from timekeeper.sound.pack import default_pack_dir, load_pack

needs_alsa = pytest.mark.skipif(alsasink._library() is None, reason="no libasound")


@needs_alsa
def test_a_device_that_does_not_open_is_named_with_the_fix() -> None:
    with pytest.raises(AudioError, match=r"'hw:97'.*aplay -l.*--audio silent"):
        alsasink.AlsaSink("hw:97")


@needs_alsa
def test_a_framed_output_runs_on_an_alsa_device_and_closes() -> None:
    output = FramedOutput(load_pack(default_pack_dir()), alsasink.AlsaSink("null"))
    try:
        assert output.sink.name == "alsa" and output.sink.latency > 0
        wait_for(lambda: output.blocks > 3, "blocks taken by ALSA's null device")
    finally:
        output.close()
    assert output._thread is not None
    wait_for(lambda: not output._thread.is_alive(), "the writer to leave the device")


class _Pulse(Sink):
    name = "pulse"

    def __init__(self, server: str) -> None:
        self.server, self.closed = server, False

    def close(self) -> None:
        self.closed = True


class _Alsa(Sink):
    name = "alsa"
    kind = "IOPLUG"  # (PipeWire's ALSA plugin)

    def __init__(self, *_args: object) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class _Card(_Alsa):
    kind = "PLUG"  # (ALSA's default is the card itself)


@pytest.mark.parametrize(
    "server, output, taken",
    [
        ("PulseAudio (on PipeWire 0.3.65)", "auto", "alsa"),
        ("pulseaudio", "auto", "pulse"),
        ("PulseAudio (on PipeWire 0.3.65)", "pulse", "pulse"),  # (asked for by name)
    ],
)
def test_auto_leaves_pipewires_pulse_layer_for_its_alsa_plugin_never_for_the_card(
    monkeypatch, server: str, output: str, taken: str
) -> None:
    opened: list[_Pulse] = []

    def fake_pulse(*_args: object, **_kw: object) -> _Pulse:
        opened.append(_Pulse(server))
        return opened[-1]

    monkeypatch.setattr(pulse, "PulseSink", fake_pulse)
    monkeypatch.setattr(alsasink, "AlsaSink", _Alsa)
    sink = devices.open_sink(output)
    assert sink.name == taken
    assert opened[0].closed == (taken == "alsa")  # (the pulse stream let go, not left open)
    if taken == "alsa":  # ALSA's default a card PipeWire holds: PipeWire's pulse layer kept
        opened.clear()
        monkeypatch.setattr(alsasink, "AlsaSink", _Card)
        assert devices.open_sink(output).name == "pulse" and not opened[0].closed


def test_auto_on_a_pipewire_socket_opens_its_alsa_plugin_without_libpulse(
    monkeypatch, tmp_path
) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "pipewire-0"))
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
        monkeypatch.delenv("PIPEWIRE_REMOTE", raising=False)
        monkeypatch.delenv("PIPEWIRE_RUNTIME_DIR", raising=False)

        def no_pulse(*_args: object, **_kw: object) -> Sink:
            raise AssertionError("libpulse asked although PipeWire's plugin opened")

        monkeypatch.setattr(pulse, "PulseSink", no_pulse)
        monkeypatch.setattr(alsasink, "AlsaSink", _Alsa)
        assert devices.open_sink("auto").name == "alsa"
        monkeypatch.setattr(alsasink, "AlsaSink", _Card)  # (a card: left to PipeWire)
        monkeypatch.setattr(pulse, "PulseSink", lambda *_a, **_k: _Pulse("pulseaudio"))
        assert devices.open_sink("auto").name == "pulse"
