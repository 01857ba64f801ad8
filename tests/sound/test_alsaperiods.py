"""The ALSA sink (sound/alsasink.py) on a device whose period and buffer it did not choose:
a fake libasound with the calls the sink makes (a device that starts at its start
threshold, moves its position in steps of its own period, and underruns when starved), on
a virtual clock that the sink's waits advance. Periods of 256, 441, 480 (the Pi's 10 ms),
1000 and 1024 frames, and buffers the device shrinks or grows: the stream never stalls.
The real paced stack (JACK at 480 frames) in a slow test."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import wait_for

from timekeeper.sound import alsasink
from timekeeper.sound.framed import FramedOutput
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import default_pack_dir, load_pack

PREPARED, RUNNING, XRUN = 2, 3, 4  # snd_pcm_state_t
EPIPE = 32


class FakeDevice:
    """libasound as the sink calls it, for one playback device of `period` frames a period
    and a buffer of `buffer` frames (None: the latency asked, rounded down to its periods)."""

    def __init__(self, period: int, buffer: int | None = None) -> None:
        self.period, self.fixed = period, buffer
        self.now = 1000.0  # the device's time (s), moved on by the sink's waits
        self.buffer = self.threshold = 0
        self.state, self.appl, self.hw, self.started = PREPARED, 0, 0, 0.0
        self.base = 0  # hw position when last started
        self.xruns = 0
        self._sw: dict[int, int] = {}

    def clock(self) -> float:
        return self.now

    def played(self) -> int:
        """Frames heard, counted at the end of each period (the position moves in steps)."""
        if self.state != RUNNING:
            return self.hw
        steps = int((self.now - self.started) * RATE) // self.period
        hw = self.base + steps * self.period
        if hw > self.appl:  # starved: an underrun
            self.state, self.hw = XRUN, self.appl
            self.xruns += 1
            return self.hw
        self.hw = hw
        return hw

    # -- the calls the sink makes
    def snd_pcm_open(self, pcm, _name, _stream, _mode) -> int:
        pcm._obj.value = 1
        return 0

    def snd_pcm_type(self, _pcm) -> int:
        return 0

    def snd_pcm_type_name(self, _kind) -> bytes:
        return b"HW"

    def snd_pcm_set_params(self, _pcm, _fmt, _access, _ch, _rate, _resample, latency) -> int:
        asked = latency * RATE // 1_000_000
        self.buffer = self.fixed or max(2, asked // self.period) * self.period
        # as alsa-lib's snd_pcm_set_params: started at the buffer rounded to the periods
        self.threshold = self.buffer // self.period * self.period
        return 0

    def snd_pcm_get_params(self, _pcm, buffer, period) -> int:
        buffer._obj.value, period._obj.value = self.buffer, self.period
        return 0

    def snd_pcm_hw_params_malloc(self, hw) -> int:
        hw._obj.value = 8
        return 0

    def snd_pcm_hw_params_any(self, _pcm, _hw) -> int:
        return 0

    def snd_pcm_hw_params_set_rate(self, _pcm, _hw, _rate, _dir) -> int:
        return 0

    def snd_pcm_hw_params_get_period_size_min(self, _hw, frames, _dir) -> int:
        frames._obj.value = self.period  # (JACK's PCM: periods are whole JACK periods)
        return 0

    def snd_pcm_hw_params_free(self, _hw) -> None:
        pass

    def snd_pcm_sw_params_malloc(self, sw) -> int:
        sw._obj.value = 7
        return 0

    def snd_pcm_sw_params_current(self, _pcm, _sw) -> int:
        self._sw = {"start": self.threshold}
        return 0

    def snd_pcm_sw_params_set_start_threshold(self, _pcm, _sw, frames) -> int:
        self._sw["start"] = frames
        return 0

    def snd_pcm_sw_params(self, _pcm, _sw) -> int:
        self.threshold = self._sw["start"]
        return 0

    def snd_pcm_sw_params_set_tstamp_mode(self, *_a) -> int:
        return 0

    snd_pcm_sw_params_set_tstamp_type = snd_pcm_sw_params_set_avail_min = (
        snd_pcm_sw_params_set_tstamp_mode
    )

    def snd_pcm_sw_params_free(self, _sw) -> None:
        pass

    def snd_pcm_status_malloc(self, status) -> int:
        status._obj.value = 9
        return 0

    def snd_pcm_status_free(self, _status) -> None:
        pass

    def snd_pcm_status(self, _pcm, _status) -> int:
        self._status = (self.state, self.appl - self.played())
        return 0

    def snd_pcm_status_get_state(self, _status) -> int:
        return self._status[0]

    def snd_pcm_status_get_delay(self, _status) -> int:
        return self._status[1]

    def snd_pcm_status_get_htstamp(self, _status, stamp) -> None:
        # (stamped on CLOCK_MONOTONIC, as the sink asks: mapped onto its clock by the sink)
        real = time.monotonic()
        stamp._obj.sec, stamp._obj.nsec = int(real), int(real % 1 * 1e9)

    def snd_pcm_delay(self, _pcm, frames) -> int:
        frames._obj.value = self.appl - self.played()
        return 0

    def snd_pcm_avail_update(self, _pcm) -> int:
        hw = self.played()
        return -EPIPE if self.state == XRUN else self.buffer - (self.appl - hw)

    def snd_pcm_writei(self, _pcm, _address, frames) -> int:
        if self.state == XRUN:
            return -EPIPE
        n = min(frames, self.buffer - (self.appl - self.played()))
        self.appl += n
        if self.state == PREPARED and self.appl - self.hw >= self.threshold:
            self.state, self.started, self.base = RUNNING, self.now, self.hw
        return n

    def snd_pcm_recover(self, _pcm, _error, _silent) -> int:
        self.state, self.hw = PREPARED, self.appl
        return 0

    def snd_pcm_rewindable(self, _pcm) -> int:
        return self.appl - self.played()

    def snd_pcm_rewind(self, _pcm, frames) -> int:
        self.appl -= frames
        return frames

    def snd_pcm_close(self, _pcm) -> int:
        return 0

    def snd_strerror(self, _error) -> bytes:
        return b"fake error"


class JackLikeDevice(FakeDevice):
    """As ALSA's JACK PCM: JACK's thread copies a whole period at each cycle's start, and
    here a cycle comes just after a rewind, before the sink writes the frames again (the
    writer waiting for the GIL)."""

    def snd_pcm_rewind(self, pcm, frames) -> int:
        done = super().snd_pcm_rewind(pcm, frames)
        cycles = int((self.now - self.started) * RATE) // self.period + 1
        self.now = self.started + (cycles * self.period + 1) / RATE
        self.played()  # (the cycle: an underrun if it finds less than a period written)
        return done


class VirtualPoll:
    """The sink's wait: the device's time moves on by the wait's timeout, at once."""

    def __init__(self, device: FakeDevice) -> None:
        self.device = device

    def poll(self, timeout: float) -> list:
        self.device.now += timeout / 1000
        time.sleep(0)  # (let the test's thread look)
        return []


@pytest.mark.parametrize("buffer", [None, 2400, 32768], ids=["asked", "shrunk", "grown"])
@pytest.mark.parametrize("period", [256, 441, 480, 1000, 1024])
def test_a_period_the_box_did_not_choose_never_stalls_the_stream(
    monkeypatch, period: int, buffer: int | None
) -> None:
    """Before the sink set its own start threshold, a 480-frame device (11520 or 12000
    frames of buffer: not three 4096-frame blocks) never started, never made room, and the
    stream stalled and was reopened for ever."""
    device = FakeDevice(period, buffer)
    monkeypatch.setattr(alsasink, "_lib", device)
    sink = alsasink.AlsaSink("hw:fake")
    sink._poller = VirtualPoll(device)  # type: ignore[assignment]
    audio = FramedOutput(load_pack(default_pack_dir()), sink, clock=device.clock, realtime=False)
    try:
        wait_for(lambda: device.played() >= 3 * RATE, "3 s of the device's time played", 5)
        assert audio.stalled(device.now) is None and audio.fault() is None
        assert device.xruns == 0 and audio.frames.reported
    finally:
        audio.close()
        wait_for(lambda: not audio._thread.is_alive(), "the writer to leave the device")


@pytest.mark.parametrize("period", [256, 480, 1024])
def test_a_rewind_leaves_the_frames_the_device_takes_next(monkeypatch, period: int) -> None:
    """A press rewritten from the device's own position: the rewind stops short of the
    period the device takes next, so a cycle between the rewind and the rewrite still finds
    it written. Before, the sink rewound as far as snd_pcm_rewindable said (to the position
    itself): the cycle underran, the buffer was dropped and the stream started again, its
    cues timed by a timeline that had moved."""
    device = JackLikeDevice(period)
    monkeypatch.setattr(alsasink, "_lib", device)
    sink = alsasink.AlsaSink("hw:fake")
    sink._poller = VirtualPoll(device)  # type: ignore[assignment]
    try:
        while device.state != RUNNING:
            sink.write(np.zeros(sink.period, np.float32))
        device.now += 0.05
        at, written = device.played(), sink._written
        sink.write_at(np.ones(written - at, np.float32), at)
        assert device.xruns == 0 and sink.restarts == 0
        assert sink._written == device.appl == written
        assert sink.rewound == written - at - sink.guard and sink.guard >= period
    finally:
        sink.close()


STACKS = Path("/var/cache/timekeeper-bench")
ROOT = Path(__file__).resolve().parents[2]
PLAY = """
import time
from timekeeper.sound.alsasink import AlsaSink
from timekeeper.sound.framed import FramedOutput
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pack import default_pack_dir, load_pack
audio = FramedOutput(load_pack(default_pack_dir()), AlsaSink(), realtime=False)
deadline = time.monotonic() + 10
while audio.blocks * audio.period < 3 * RATE and time.monotonic() < deadline:
    assert audio.fault() is None, audio.fault()
    time.sleep(0.05)
print("blocks", audio.blocks, "period", audio.period, "fault", audio.fault(),
      "reported", audio.frames.reported, flush=True)
audio.close()
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not (STACKS / "alsa-paced-root").is_dir() or shutil.which("unshare") is None,
    reason="the paced stack's chroot is not built (bench/stacks/build.sh alsa-paced, as root)",
)
def test_the_sink_plays_on_jack_at_480_frame_periods() -> None:
    """The real sink on the paced stack (JACK's dummy backend behind ALSA's jack PCM) at
    the Pi's 10 ms: 3 s of blocks taken, no fault (before: none after the first two)."""
    run = subprocess.run(
        [str(ROOT / "bench" / "stacks" / "run.sh"), "alsa-paced", sys.executable, "-c", PLAY],
        env={
            "TK_JACK_PERIOD": "480",
            "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
            "PYTHONPATH": str(ROOT),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    words = run.stdout.split()
    assert words[words.index("fault") + 1] == "None" and "reported True" in run.stdout
    assert int(words[words.index("blocks") + 1]) * int(words[words.index("period") + 1]) >= (
        3 * RATE
    )


def test_an_underrun_is_recovered_and_the_clock_told(monkeypatch) -> None:
    """A writer held up past the buffer (the device starved): the sink recovers, counts a
    restart (the clock starts over from the device's next report), and plays on."""
    device = FakeDevice(480)
    monkeypatch.setattr(alsasink, "_lib", device)
    sink = alsasink.AlsaSink("hw:fake")
    sink._poller = VirtualPoll(device)  # type: ignore[assignment]
    audio = FramedOutput(load_pack(default_pack_dir()), sink, clock=device.clock, realtime=False)
    try:
        wait_for(lambda: device.played() >= RATE, "1 s played", 5)
        device.now += 0.5  # (the writer held up for half a second)
        wait_for(lambda: sink.restarts == 1 and device.xruns == 1, "the underrun recovered", 5)
        played = device.played()
        wait_for(lambda: device.played() >= played + RATE, "1 s more played", 5)
        assert audio.stalled(device.now) is None and sink.restarts == 1
    finally:
        audio.close()
        wait_for(lambda: not audio._thread.is_alive(), "the writer to leave the device")
