"""`audio.latency` (what the speaker path adds after the output's own timing, measured by
`timekeeper calibrate`) is applied by every kind of output: a cue is placed that much
earlier, and handed over that much earlier, whether the sink is pulled (SDL), pushed and timed
by its own reports with rewrites (PulseAudio, ALSA) or pushed and timed by its delay.
Fake sinks that subclass the real Sink, declaring what each real one declares; an injected
clock."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from timekeeper.rules.engine import Cue
from timekeeper.sound.alsasink import AlsaSink
from timekeeper.sound.calibration import CLICK, Measurement, click_pack
from timekeeper.sound.framed import FramedOutput, Sink
from timekeeper.sound.mixing import RATE
from timekeeper.sound.pulse import PulseSink
from timekeeper.sound.sdlsink import SdlSink

NOW = 100.0  # the injected clock: the stream's frame 0 is heard at NOW + 0.1 on every fake


class Pulled(Sink):
    """An SDL-like device: calls back for a block once, at start, on the caller's thread."""

    name, pulls, latency = "sdl-like", SdlSink.pulls, 0.1

    def start(self, fill) -> None:
        fill(np.zeros(self.period, np.float32))


class Pushed(Sink):
    """A pushed device: takes one block, then holds the writer until closed."""

    latency = 0.1

    def __init__(self) -> None:
        self._gate = threading.Semaphore(1)

    def delay(self) -> float:
        return self.latency

    def timing(self, clock):
        return (0, NOW + self.latency)

    def wait_room(self, frames: int) -> bool:
        return True

    def wake(self) -> None:
        pass

    def write_at(self, block, frame: int) -> None:
        pass

    def write(self, block) -> None:
        self._gate.acquire()

    def interrupt(self) -> None:
        self._gate.release()

    def close(self) -> None:
        self._gate.release()


class PulseLike(Pushed):
    name, reports, rewrites = "pulse-like", PulseSink.reports, PulseSink.rewrites


class AlsaLike(Pushed):
    name, reports, rewrites = "alsa-like", AlsaSink.reports, AlsaSink.rewrites


class DelayTimed(Pushed):
    name, reports, rewrites = "delay-timed", False, False


@pytest.mark.parametrize("sink_type", [Pulled, PulseLike, AlsaLike, DelayTimed])
def test_every_output_places_a_cue_earlier_by_the_speakers_latency(sink_type) -> None:
    assert sink_type.reports or sink_type.pulls or sink_type is DelayTimed
    starts, leads = [], []
    for offset in (0.0, 0.0125, -0.004):
        audio = FramedOutput(
            click_pack(), sink_type(), clock=lambda: NOW, realtime=False, offset=offset
        )
        try:
            assert audio.play(Cue(CLICK, NOW + 1.0), NOW) is None
            starts.append(audio.voices.playing[0].start)
            leads.append(audio.lead)
        finally:
            audio.close()
    assert starts[0] - starts[1] == round(0.0125 * RATE)  # 12.5 ms late: placed 600 frames early
    assert starts[2] - starts[0] == round(0.004 * RATE)  # (heard early: placed later)
    assert leads[1] == pytest.approx(leads[0] + 0.0125)  # handed over that much earlier
    assert leads[2] == leads[0]


def test_a_click_is_found_where_it_starts_whatever_its_level_and_nothing_in_noise() -> None:
    from timekeeper.sound.calibration import click, find_click

    rng = np.random.default_rng(3)
    recording = rng.normal(0, 0.02, 3 * RATE).astype(np.float32)  # a room's noise
    recording[60000 : 60000 + len(click())] += 0.1 * click()  # quiet: a microphone far off
    assert find_click(recording, 60000 - 600, click()) == 60000  # 12.5 ms late
    assert find_click(recording, 60000 + 4800, click()) == 60000  # (100 ms early)
    assert find_click(recording, 120000, click()) is None  # only noise there
    assert find_click(np.zeros(RATE, np.float32), RATE // 2, click()) is None  # silence


def test_the_latency_is_the_median_of_the_clicks_that_agree() -> None:
    from timekeeper.sound.calibration import Measurement

    found = Measurement([1.0, 1.6, 2.2, 2.8, 3.4], [0.0121, 0.0135, None, 0.3805, 0.0124])
    assert found.heard == [0.0121, 0.0135, 0.0124]  # (an echo 370 ms late left out)
    assert found.latency == pytest.approx(0.0124)
    assert found.spread == pytest.approx(0.0011)


def test_no_click_found_is_none_heard_not_a_crash() -> None:
    """(An input that heard nothing of the speaker: calibrate then says how many it heard.)"""
    from timekeeper.sound.calibration import Measurement

    assert Measurement([1.0, 1.6, 2.2], [None, None, None]).heard == []


def test_clicks_heard_a_graph_step_apart_give_no_figure() -> None:
    """At load 9.6 PipeWire's clicks came 21.5, 42.9 and 64.2 ms late: their median is one of
    three timelines, so no figure is steady enough to write (calibrate exits 1)."""
    jumping = Measurement([0.0] * 6, [0.0215, 0.0429, 0.0642, 0.0215, 0.0429, 0.0642])
    assert not jumping.steady
    assert Measurement([0.0] * 4, [0.0301, 0.0298, 0.0303, 0.0300]).steady
