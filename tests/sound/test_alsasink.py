"""The ALSA sink (sound/alsasink.py): a device that does not open says which and what to
do; on ALSA's own `null` PCM (no card needed) a framed output starts, takes blocks and
closes (how `--audio` reaches it: test_choice.py); a press is written into the frames
buffered already
(the real sink's rewind on `null`, its room let through by the test). Timing on a paced
device: bench/timing.py --stack."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import wait_for

from timekeeper.rules.engine import Cue
from timekeeper.sound import alsasink
from timekeeper.sound.framed import REWRITE_AHEAD, FramedOutput
from timekeeper.sound.mixing import RATE
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


class _GatedNull(alsasink.AlsaSink):
    """The real sink on ALSA's `null` PCM (its writes, rewinds and write index are the real
    ones), with room for a block only when the test lets it (`null` takes all it is given
    at once), frame 0 reported heard at 10.0, and what reached the device kept on a
    timeline, frames written again over the old ones."""

    def __init__(self) -> None:
        super().__init__("null")
        self.timeline = np.zeros(0, np.float32)
        self._room = threading.Condition()
        self._allowed = 1

    def allow(self, blocks: int) -> None:
        with self._room:
            self._allowed += blocks
            self._room.notify_all()

    def timing(self, clock) -> tuple[int, float] | None:
        return (0, 10.0) if self._written == 0 else None

    def wait_room(self, frames: int) -> bool:
        with self._room:
            self._room.wait_for(lambda: self._allowed or self._woken or self._interrupted)
            if self._interrupted:
                raise AudioError("ALSA stream: closed")
            if self._woken:
                self._woken = False
                return False
            self._allowed -= 1
            return True

    def wake(self) -> None:
        with self._room:
            super().wake()
            self._room.notify_all()

    def interrupt(self) -> None:
        with self._room:
            super().interrupt()
            self._room.notify_all()

    def write(self, block) -> None:
        start = self._written
        super().write(block)
        end = start + len(block)
        if end > len(self.timeline):
            self.timeline = np.concatenate([self.timeline, np.zeros(end, np.float32)])
        self.timeline[start:end] = block


@needs_alsa
def test_a_press_on_the_alsa_sink_is_written_into_the_buffered_frames() -> None:
    """The ALSA sink writes a whole buffer ahead (256 ms); a press is not left behind that:
    the device is rewound, the press's sound written REWRITE_AHEAD after it, the frames
    behind it written again, and the write index (which the timing report counts from) is
    back where it was. Before the sink rewrote, the sound came after all 12288 frames."""
    pack = load_pack(default_pack_dir())
    sink = _GatedNull()
    audio = FramedOutput(pack, sink, clock=lambda: 10.0, realtime=False)
    try:
        sink.allow(2)  # 3 blocks of 4096: the null device's whole buffer, 256 ms
        wait_for(lambda: audio.voices.next_frame == 3 * 4096, "the buffer written")
        assert sink._written == 3 * 4096
        audio.play(Cue("start", 10.05), 10.05)  # a press: due at once, at 10.05
        wait_for(lambda: sink.rewound, "the rewrite")
    finally:
        audio.close()
        wait_for(lambda: not audio._thread.is_alive(), "the writer to leave the device")
    placed = round((10.05 + REWRITE_AHEAD - 10.0) * RATE)
    assert sink.rewound == 3 * 4096 - placed and sink._written == 3 * 4096
    heard = int(np.argmax(np.abs(sink.timeline) > 0))
    press = round(0.05 * RATE)
    assert (heard - press) / RATE <= REWRITE_AHEAD + 0.005  # within 35 ms of the press
    samples = np.clip(pack.sounds["start"].samples, -1, 1)
    assert np.allclose(sink.timeline[placed : 3 * 4096], samples[: 3 * 4096 - placed])


@needs_alsa
def test_a_rewind_the_device_cannot_make_in_full_drops_only_the_played_head(
    monkeypatch,
) -> None:
    """Frames the device can no longer take back (snd_pcm_rewindable, less the period it
    takes next, less than asked) stay as they are: the block's tail lands on its own frames
    and the stream's end is kept."""
    sink = alsasink.AlsaSink("null")
    try:
        sink.write(np.zeros(3 * 4096, np.float32))
        lib = sink._lib
        monkeypatch.setattr(sink, "_lib", _Rewindable(lib, 1000 + sink.guard))
        sink.write_at(np.ones(3000, np.float32), 3 * 4096 - 3000)
        assert sink.rewound == 1000 and sink._written == 3 * 4096
    finally:
        sink.close()


class _Rewindable:
    """libasound, but with only `frames` rewindable."""

    def __init__(self, lib, frames: int) -> None:
        self._lib, self._frames = lib, frames

    def snd_pcm_rewindable(self, _pcm) -> int:
        return self._frames

    def __getattr__(self, name: str):
        return getattr(self._lib, name)
