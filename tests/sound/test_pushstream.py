"""The stream that takes its time from the device (sound/framed.py, sound/pulse.py):
the frame clock from the device's own figures, the writer's placement of cues on the exact
frame, no mixing while nothing plays, and a device that fails or stalls reported as a fault.
Deterministic: a fake sink whose writes the test lets through, an injected clock."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest
from helpers import wait_for

from timekeeper.rules.engine import Cue
from timekeeper.sound.framed import DelayClock, FramedOutput, Sink
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError
from timekeeper.sound.pack import default_pack_dir, load_pack


@pytest.fixture(scope="module")
def pack():
    return load_pack(default_pack_dir())


class FakeSink(Sink):
    """A device that takes a block only when the test lets it (`allow`), reports that
    frame `report[0]` is heard at `report[1]`, and keeps every block it was given."""

    name, reports = "fake", True

    def __init__(
        self,
        report: tuple[int, float] | None = (0, 10.0),
        delay: float = 0.08,
        fail_after: int | None = None,
    ) -> None:
        self.report, self._delay, self.fail_after = report, delay, fail_after
        self.blocks: list[np.ndarray] = []
        self.silent_blocks = 0
        self.closed = False
        self._gate = threading.Semaphore(1)  # the first write starts the stream

    def allow(self, blocks: int) -> None:
        for _ in range(blocks):
            self._gate.release()

    def delay(self) -> float:
        return self._delay

    def timing(self, clock) -> tuple[int, float] | None:
        report, self.report = self.report, None  # each report is handed over once
        return report

    def write(self, block: np.ndarray) -> None:
        if self.fail_after is not None and len(self.blocks) >= self.fail_after:
            raise AudioError("PulseAudio stream: Connection terminated")
        self._gate.acquire()
        self.silent_blocks += not block.any()
        self.blocks.append(block.copy())

    def close(self) -> None:
        self.closed = True
        self.allow(1000)


def open_push(pack, sink: Sink, clock=lambda: 9.5) -> FramedOutput:
    return FramedOutput(pack, sink, clock=clock, realtime=False)


def shut(audio: FramedOutput, sink: FakeSink) -> None:
    """Close, let the writer's blocked write return, and see it close the device."""
    audio.close()
    sink.allow(2)
    wait_for(lambda: sink.closed, "the writer to close the device")


# ----------------------------------------------------------------------------- the clock


def test_a_report_of_the_device_sets_the_clock_without_any_delay_of_ours() -> None:
    clock = DelayClock()
    clock.observe_report(48000, 11.0)  # frame 48000 is heard at 11.0
    assert clock.origin == pytest.approx(10.0)
    assert clock.frame_at(10.5) == 24000
    assert clock.time_of(24000) == pytest.approx(10.5)


def test_a_delay_read_while_the_thread_was_held_up_is_not_trusted() -> None:
    clock = DelayClock(read_gap=0.0005)
    clock.observe(0, 1.0, 1.0002, 0.080)
    clock.observe(1920, 1.04, 1.05, 0.070)  # took 10 ms to read: when was it true?
    assert clock.dropped == 1
    assert clock.origin == pytest.approx(1.0001 + 0.080)


def test_the_first_report_replaces_the_figures_read_around_delay() -> None:
    clock = DelayClock()
    clock.observe(0, 1.0, 1.0, 0.090)
    clock.observe_report(0, 1.085)
    assert clock.reported and clock.origin == pytest.approx(1.085)


def test_the_clock_refuses_to_place_before_the_device_said_anything() -> None:
    with pytest.raises(RuntimeError):
        DelayClock().frame_at(1.0)


# ----------------------------------------------------------------------------- the writer


def test_a_cue_lands_on_the_frame_the_device_reported(pack) -> None:
    sink = FakeSink(report=(0, 10.0))  # frame 0 is heard at 10.0 on the runner's clock
    audio = open_push(pack, sink)
    try:
        wait_for(lambda: audio.frames.reported, "the device's report")
        audio.play(Cue("start", 10.5), 9.5)  # the clock says 9.5
        sink.allow(20)  # 20 more blocks of 1920 frames: past 24000 + the signal's start
        wait_for(lambda: len(sink.blocks) >= 21, "the blocks to be written")
    finally:
        shut(audio, sink)
    written = np.concatenate(sink.blocks)
    samples = pack.sounds["start"].samples
    first = int(np.argmax(np.abs(written) > 0))
    assert first == 24000 + int(np.argmax(np.abs(samples) > 0))
    assert np.allclose(written[24000 : 24000 + 1000], np.clip(samples[:1000], -1, 1))
    assert audio.voices.late == 0


def test_nothing_is_mixed_while_no_cue_is_due(pack) -> None:
    sink = FakeSink()
    audio = open_push(pack, sink)
    try:
        sink.allow(10)
        wait_for(lambda: len(sink.blocks) >= 11, "the blocks to be written")
    finally:
        shut(audio, sink)
    assert sink.silent_blocks == len(sink.blocks)
    assert audio.voices.next_frame >= 11 * audio.period


def test_a_cue_handed_over_too_late_sounds_at_once_and_says_so(pack, caplog) -> None:
    sink = FakeSink(report=(0, 10.0))
    audio = open_push(pack, sink)
    try:
        sink.allow(5)
        wait_for(lambda: len(sink.blocks) >= 6, "the blocks to be written")
        with caplog.at_level(logging.WARNING, "timekeeper.sound.framed"):
            audio.play(Cue("start", 10.01), 9.5)  # its frame (480) is long written
        assert audio.voices.late == 1
        assert "too late for its frame" in caplog.text
    finally:
        shut(audio, sink)


def test_a_device_that_fails_is_a_fault_and_is_closed(pack) -> None:
    sink = FakeSink(fail_after=3)
    audio = open_push(pack, sink)
    sink.allow(5)
    wait_for(audio.fault, "the fault")
    assert "Connection terminated" in (audio.fault() or "")
    assert audio.play(Cue("start", 20.0), 9.5) is not None  # not heard, and says why
    wait_for(lambda: sink.closed, "the device to be closed")


def test_a_device_that_stops_taking_blocks_is_a_stall(pack) -> None:
    now = [9.5]
    sink = FakeSink()
    audio = open_push(pack, sink, clock=lambda: now[0])
    try:
        assert audio.fault() is None
        now[0] += 1.0  # a second without a block taken: a busy server, not yet a fault
        assert audio.fault() is None
        now[0] += 1.5  # 2.5 s: a frozen server
        assert "stalled" in (audio.fault() or "")
        audio.close()
        assert audio.fault() is None  # closed on purpose is not a fault
    finally:
        shut(audio, sink)


def test_a_device_that_never_takes_a_block_is_an_audio_error(pack) -> None:
    class Stuck(FakeSink):
        def write(self, block):
            raise AudioError("PulseAudio stream: Connection refused")

    with pytest.raises(AudioError, match="Connection refused"):
        open_push(pack, Stuck(), clock=lambda: 0.0)


class RewritableFakeSink(Sink):
    """A device that keeps what it was written on a timeline, lets frames written already be
    written again (`write_at`), and has room for a block only when the test lets it."""

    name, reports, rewrites, period, latency = "fake", True, True, 1920, 0.08

    def __init__(self) -> None:
        self.timeline = np.zeros(0, np.float32)
        self.index = 0  # where the next write lands
        self.rewritten: list[tuple[int, int]] = []  # (frame, frames) of each write_at
        self.closed = False
        self._room = threading.Condition()
        self._allowed, self._woken, self._interrupted = 1, False, False

    def allow(self, blocks: int) -> None:
        with self._room:
            self._allowed += blocks
            self._room.notify_all()

    def delay(self) -> float:
        return 0.08

    def timing(self, clock) -> tuple[int, float] | None:
        return (0, 10.0) if self.index == 0 else None  # frame 0 is heard at 10.0

    def wait_room(self, frames: int) -> bool:
        with self._room:
            self._room.wait_for(lambda: self._allowed or self._woken or self._interrupted)
            if self._interrupted:
                raise AudioError("closed")
            if self._woken:
                self._woken = False
                return False
            self._allowed -= bool(self._allowed)
            return True

    def wake(self) -> None:
        with self._room:
            self._woken = True
            self._room.notify_all()

    def interrupt(self) -> None:  # (a close: the wait ends in an error, as libpulse's)
        with self._room:
            self._interrupted = True
            self._room.notify_all()

    def _put(self, block: np.ndarray, frame: int) -> None:
        end = frame + len(block)
        if end > len(self.timeline):
            self.timeline = np.concatenate(
                [self.timeline, np.zeros(end - len(self.timeline), np.float32)]
            )
        self.timeline[frame:end] = block
        self.index = end

    def write(self, block: np.ndarray) -> None:
        self._put(block, self.index)

    def write_at(self, block: np.ndarray, frame: int) -> None:
        self.rewritten.append((frame, len(block)))
        self._put(block, frame)

    def close(self) -> None:
        self.closed = True
        self.allow(1000)


def test_a_press_is_mixed_into_the_frames_written_already(pack, caplog) -> None:
    """Where the device lets written frames be written again, the writer writes far ahead
    (few wake-ups) and a press is not left to wait behind that: its sound is mixed into what
    is written, REWRITE_AHEAD after the press, and the frames behind it are written again."""
    from timekeeper.sound.framed import REWRITE_AHEAD

    sink = RewritableFakeSink()
    audio = open_push(pack, sink, clock=lambda: 10.0)
    try:
        sink.allow(9)  # 10 blocks: frames 0 … 19199 written, 0.4 s ahead of 10.0
        wait_for(
            lambda: sink.index == 19200 and audio.voices.next_frame == 19200, "10 blocks written"
        )
        audio.play(Cue("start", 10.05), 10.05)  # a press: due at once, at 10.05
        wait_for(lambda: sink.rewritten, "the rewrite")
    finally:
        audio.close()
        wait_for(lambda: sink.closed, "the writer to close the device")
    placed = round((10.05 + REWRITE_AHEAD - 10.0) * RATE)
    assert sink.rewritten == [(placed, 19200 - placed)]  # up to where the stream had got
    assert sink.index == 19200 and audio.voices.next_frame == 19200
    samples = np.clip(pack.sounds["start"].samples, -1, 1)
    assert not sink.timeline[:placed].any()
    assert np.allclose(sink.timeline[placed:19200], samples[: 19200 - placed])
    assert "came 30.0 ms too late" in caplog.text  # (said, as for any late cue)


def test_a_cue_handed_over_ahead_needs_no_rewrite(pack) -> None:
    sink = RewritableFakeSink()
    audio = open_push(pack, sink, clock=lambda: 10.0)
    try:
        wait_for(lambda: audio.frames.reported, "the device's report")
        audio.play(Cue("start", 10.5), 10.0)  # frame 24000: not written yet
        sink.allow(20)
        wait_for(lambda: sink.index >= 30000, "the blocks written")
    finally:
        audio.close()
        wait_for(lambda: sink.closed, "the writer to close the device")
    assert sink.rewritten == [] and audio.voices.late == 0
    first = int(np.argmax(np.abs(sink.timeline) > 0))
    assert first == 24000 + int(np.argmax(np.abs(pack.sounds["start"].samples) > 0))


# ----------------------------------------------------------------------------- PulseAudio


@pytest.mark.slow
def test_a_rewrite_leaves_libpulse_counting_the_room_there_is(pulseaudio, monkeypatch) -> None:
    """A write over frames written already is not new data: the room libpulse counts stays
    as it was. (Written with PA_SEEK_ABSOLUTE, its count fell by what was rewritten and came
    back only with a later request of the server: the next block came late, and 7 of 80
    recorded cues of a hall had 3-30 ms of silence inside.)"""
    import ctypes

    from timekeeper.sound.pulse import PulseSink

    for key, value in pulseaudio.env.items():
        monkeypatch.setenv(key, value)
    sink = PulseSink(9600, 0.4)
    try:
        block = np.zeros(9600, np.float32)
        for _ in range(4):  # (400 ms ahead: the server then asks for a block at a time)
            assert sink.wait_room(9600)
            sink.write(block)
        assert sink.wait_room(9600)  # room for one more block; the last one is rewritten
        sink.write_at(np.full(9600, 0.1, np.float32), 3 * 9600)
        room = sink._lib.pa_stream_writable_size(ctypes.c_void_p(sink._stream))
        assert room >= 9600 * 4
        sink._check()  # (the stream is still good)
    finally:
        sink.close()


@pytest.mark.slow
def test_a_real_pulseaudio_stream_reports_its_timing_and_its_loss(
    pack, pulseaudio, monkeypatch
) -> None:
    """On a private server: the server's own timing reports set the clock, and a server that
    goes away is a fault (the guard then reopens)."""
    from timekeeper.sound.devices import open_output
    from timekeeper.sound.pulse import PulseSink

    for key, value in pulseaudio.env.items():
        monkeypatch.setenv(key, value)
    audio = open_output(pack, None, ("pulse",))
    try:
        assert isinstance(audio, FramedOutput) and isinstance(audio.sink, PulseSink)
        wait_for(lambda: audio.frames.reported, "the server's timing report")
        assert audio.fault() is None
        pulseaudio.down()
        wait_for(audio.fault, "the fault", timeout=20)
    finally:
        audio.close()


@pytest.mark.slow
def test_a_close_takes_the_writer_out_of_libpulse_even_from_a_frozen_server(
    pack, pulseaudio, monkeypatch
) -> None:
    """A writer still waiting inside libpulse when the program exits returns into a
    finalizing Python, which ends the thread holding the mainloop's lock: libpulse then
    aborted the box (a core dump on stop, 8 boxes under load). A close ends the writer's
    wait, and waits for it, however stuck the server is."""
    from timekeeper.sound.devices import open_output
    from timekeeper.sound.framed import CLOSE_WAIT

    for key, value in pulseaudio.env.items():
        monkeypatch.setenv(key, value)
    for frozen in (False, True):
        audio = open_output(pack, None, ("pulse",))
        wait_for(lambda a=audio: a.frames.reported, "the server's timing report")
        if frozen:
            pulseaudio.freeze()
            wait_for(lambda a=audio: time.monotonic() - a.last_block > 0.3, "the writer stuck")
        try:
            began = time.monotonic()
            audio.close()
            assert not audio._thread.is_alive(), "the writer is still inside libpulse"
            assert time.monotonic() - began < CLOSE_WAIT
            assert audio.fault() is None  # (a close is no fault)
        finally:
            if frozen:
                pulseaudio.thaw()


@pytest.mark.slow
def test_an_interrupt_after_the_writer_closed_the_stream_touches_nothing(
    pulseaudio, monkeypatch
) -> None:
    """The writer closes its stream itself once the server is lost; the guard's close may
    interrupt it just then. An interrupt of a closed stream must not reach libpulse (it
    aborted a box under stress-ng: a freed mainloop's mutex)."""
    from timekeeper.sound.pulse import PulseSink

    for key, value in pulseaudio.env.items():
        monkeypatch.setenv(key, value)
    sink = PulseSink(1920, 0.08)
    sink.close()
    sink.interrupt()  # (on the old code: "pthread_mutex_unlock() failed", the process aborted)
    sink.close()  # and twice is no harm


# ----------------------------------------------------------------------------- the sinks


def test_each_sink_declares_what_it_can_do() -> None:
    """The back ends' capabilities are declared on their classes (sound/framed.py), never
    probed: PulseAudio's stream is pushed, reports its own timing and rewrites; SDL's
    device calls back and can tell nothing of its own."""
    from timekeeper.sound.pulse import PulseSink
    from timekeeper.sound.sdlsink import SdlSink

    assert (PulseSink.name, PulseSink.pulls, PulseSink.reports, PulseSink.rewrites) == (
        "pulse",
        False,
        True,
        True,
    )
    assert (SdlSink.name, SdlSink.pulls, SdlSink.reports, SdlSink.rewrites) == (
        "sdl",
        True,
        False,
        False,
    )
    assert (Sink.pulls, Sink.reports, Sink.rewrites) == (False, False, False)


def test_what_a_sink_does_not_declare_is_never_called(pack) -> None:
    """A sink that has a timing report and rewrite methods but does not declare them is
    timed by its delay figures and written block after block: nothing is looked up."""

    class Plain(FakeSink):
        reports = False

        def timing(self, clock):
            raise AssertionError("timing() called on a sink that does not report")

        def wait_room(self, frames):
            raise AssertionError("wait_room() called on a sink that does not rewrite")

        write_at = wake = wait_room

    sink = Plain(delay=0.08)
    audio = open_push(pack, sink, clock=lambda: 9.5)
    try:
        sink.allow(3)
        wait_for(lambda: len(sink.blocks) >= 4, "the blocks to be written")
        assert audio.frames.origin is not None and not audio.frames.reported
        assert audio.lead == pytest.approx(sink.latency + sink.period / RATE + sink.margin)
        audio.play(Cue("start", 9.5), 9.5)  # late: mixed into the next block, never rewritten
    finally:
        shut(audio, sink)


def test_a_sink_that_rewrites_is_handed_cues_only_the_rewrite_lead_early(pack) -> None:
    from timekeeper.sound.framed import REWRITE_LEAD

    sink = RewritableFakeSink()
    audio = open_push(pack, sink, clock=lambda: 10.0)
    try:
        assert audio.lead == REWRITE_LEAD
        assert audio.voices.keep == round(0.08 * RATE) + 2 * 1920
    finally:
        audio.close()
        wait_for(lambda: sink.closed, "the writer to close the device")


@pytest.mark.slow
def test_auto_takes_a_pulseaudio_server_that_answers_whatever_sdl_audiodriver_says(
    pack, pulseaudio, monkeypatch
) -> None:
    """`--audio` decides, not SDL_AUDIODRIVER: auto plays on the server that answers
    (SDL_AUDIODRIVER=dummy here), `sdl` on SDL (the dummy driver) although it answers, and
    SDL settings made by hand (a driver, a device, a latency) pass the others over."""
    from timekeeper.sound.devices import AUTO, Settings, choose

    for key, value in pulseaudio.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    for output, driver, latency, name in [
        (AUTO, None, None, "pulse"),
        (AUTO, "pulseaudio", None, "pulse"),
        (("pulse",), None, None, "pulse"),
        (("sdl",), None, None, "sdl"),
        (AUTO, "dummy", None, "sdl"),
        (AUTO, None, 0.02, "sdl"),
    ]:
        sink = choose(output, Settings(driver, None, None, latency))
        try:
            assert sink.name == name, (output, driver, latency)
        finally:
            sink.close()


@pytest.mark.slow
def test_auto_takes_sdl_where_no_pulseaudio_server_answers_and_pulse_says_why(
    pack, monkeypatch, tmp_path
) -> None:
    from timekeeper.sound.devices import AUTO, choose, open_sink

    monkeypatch.setenv("PULSE_SERVER", f"unix:{tmp_path / 'no-server'}")
    sink = choose(AUTO)
    try:
        assert sink.name == "sdl"  # (on SDL_AUDIODRIVER's driver: the tests' dummy)
    finally:
        sink.close()
    with pytest.raises(AudioError, match="PulseAudio"):
        open_sink("pulse")
