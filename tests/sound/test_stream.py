"""The sample-accurate stream: frame clock, placement of cues at their frame (the same as an
offline render), late cues, the melody's stop, the runner's look-ahead, and the real SDL
device (dummy and disk drivers). No wall-clock timing is asserted anywhere."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import RecordingOutput, wait_for

from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Cue, Engine
from timekeeper.sound.devices import Settings, open_output
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.framed import FrameClock, FramedOutput
from timekeeper.sound.mixing import RATE, floats, mix_into
from timekeeper.sound.output import AudioError
from timekeeper.sound.pack import default_pack_dir, load_pack
from timekeeper.sound.render import voices_for, write_mix
from timekeeper.sound.sdlsink import SdlSink
from timekeeper.sound.voices import Voices


def sdl_stream(pack, **settings) -> FramedOutput:
    return FramedOutput(pack, SdlSink(**settings))


@pytest.fixture(scope="module")
def pack():
    return load_pack(default_pack_dir())


def stream_blocks(voices: Voices, frames: int, chunk: int) -> np.ndarray:
    out = np.zeros(frames, np.float32)
    for start in range(0, frames, chunk):
        voices.fill(out[start : start + chunk])
    return out


# ----------------------------------------------------------------------------- frame clock


def test_frame_clock_takes_the_earliest_callback_as_the_truth() -> None:
    clock = FrameClock(latency=0.020)
    rng = np.random.default_rng(1)
    origin, chunk = 100.0, 1024
    for n in range(200):  # callbacks are never early, only late by up to 8 ms
        clock.observe(n * chunk, origin + n * chunk / RATE + rng.uniform(0, 0.008))
    clock.observe(200 * chunk, origin + 200 * chunk / RATE)  # one right on time
    assert clock.origin == pytest.approx(origin, abs=1e-9)
    assert clock.frame_at(origin + 0.020 + 1.5) == round(1.5 * RATE)
    assert clock.time_of(round(1.5 * RATE)) == pytest.approx(origin + 0.020 + 1.5)


def test_frame_clock_follows_a_sound_card_that_drifts() -> None:
    """A card 100 ppm slow falls 180 ms behind in 30 minutes; the windowed minimum keeps up,
    where a minimum over all time would be 180 ms off by the end."""
    clock = FrameClock(window=1.0, windows=4)
    chunk, ppm = 1024, 100e-6
    t = 0.0
    for n in range(int(1800 * RATE / chunk)):
        t = n * chunk / RATE * (1 + ppm)  # the card's frames take a little longer
        clock.observe(n * chunk, t)
    frames_now = int(1800 * RATE / chunk) * chunk
    assert clock.time_of(frames_now) == pytest.approx(t + chunk / RATE * (1 + ppm), abs=0.002)


def test_frame_clock_refuses_to_place_before_the_stream_runs() -> None:
    with pytest.raises(RuntimeError):
        FrameClock().frame_at(1.0)


# ----------------------------------------------------------------------------- voices


@pytest.mark.parametrize("chunk", [256, 1000, 4096])
def test_the_stream_puts_every_cue_on_the_sample_a_render_would(
    pack, chunk: int, tmp_path: Path
) -> None:
    cues = [
        Cue("start", 0.5),
        Cue("minute", 1.2345, count=3),
        Cue("time_added", 1.3),
        Cue("end", 2.000021),
    ]
    voices = Voices()
    for cue in cues:  # handed over ahead of time, as the runner does with a lead
        voices.add(cue.name, round(cue.due * RATE), pack.samples(cue))
    frames = round(5.0 * RATE)
    live = stream_blocks(voices, frames, chunk)
    rendered = tmp_path / "r.wav"
    write_mix(rendered, voices_for(cues, pack), frames)
    import wave

    with wave.open(str(rendered)) as w:
        offline = np.frombuffer(w.readframes(frames), "<i2") / 32767
    assert voices.late == 0
    assert np.abs(live - offline).max() < 1e-4  # only the WAV's 16-bit rounding differs
    assert not voices.playing  # finished voices are dropped


def test_a_late_cue_starts_at_once_and_a_late_melody_skips_ahead(pack) -> None:
    voices = Voices()
    stream_blocks(voices, 4800, 480)  # 0.1 s already played
    assert voices.add("start", 0, pack.sounds["start"].samples) == 4800
    tune = floats(pack.melody(30.0))
    voices.add("last30", 1000, tune)
    assert voices.late == 2
    out = stream_blocks(voices, 480, 480)
    expected = pack.sounds["start"].samples[:480] + tune[3800:4280]
    assert np.abs(out - np.clip(expected, -1, 1)).max() < 1e-6


def test_a_stopped_melody_ends_at_its_stop_frame_live_as_in_a_render(pack, tmp_path: Path) -> None:
    """One rule for a stop, the render's (bench/golden.py holds its bytes): the melody ends
    at the stop frame, live and offline alike."""
    cues = [Cue("last30", 0.0, length=30), Cue("last30", 10_000 / RATE, stop=True)]
    voices = voices_for(cues, pack)
    out = stream_blocks(voices, 12_000, 512)
    tune = floats(pack.samples(cues[0]))
    assert np.array_equal(out[:10_000], np.clip(tune[:10_000], -1, 1))
    assert not out[10_000:].any()
    assert not voices.playing
    rendered = tmp_path / "r.wav"
    write_mix(rendered, voices_for(cues, pack), 12_000)
    import wave

    with wave.open(str(rendered)) as w:
        offline = np.frombuffer(w.readframes(12_000), "<i2")
    assert np.array_equal(offline, (out * 32767).astype("<i2"))


def test_overlapping_sounds_are_summed_in_start_order_whatever_order_they_came_in(pack) -> None:
    """float32 sums depend on their order: the voices keep theirs by start frame, so a live
    box that is handed cues in another order still mixes the render's very samples. (At
    -6 dB: a pack as recorded holds 16-bit steps, whose sums are exact in any order.)"""
    quieter = pack.scaled(10 ** (-6 / 20))
    sounds = [("start", 300), ("minute", 100), ("end", 200)]
    blocks = []
    for order in (sounds, sorted(sounds, key=lambda s: s[1])):
        voices = Voices()
        for name, start in order:
            voices.add(name, start, quieter.sounds[name].samples)
        blocks.append(stream_blocks(voices, 4800, 480))
    assert np.array_equal(*blocks)


# ----------------------------------------------------------------------------- runner lead


class SpyEngine(Engine):
    """The real engine, remembering every `now` it was told."""

    def __init__(self, p) -> None:
        super().__init__(p)
        self.told: list[float] = []

    def advance(self, now: float) -> list[Cue]:
        self.told.append(now)
        return super().advance(now)


TINY = """\
    title: under two seconds
    prestart: 0.5
    period: {length: 1.0, marks: 0.5}
"""


def test_the_runner_looks_ahead_by_the_lead_and_never_tells_a_time_backwards(
    write_profile, tmp_path: Path
) -> None:
    engine = SpyEngine(profile.load(str(write_profile("tiny", TINY))))
    out = RecordingOutput(lead=0.3)  # wants its cues 0.3 s early
    events = EventLog(tmp_path / "e.jsonl")
    runner = Runner(engine, [out], events)
    assert runner.lead == 0.3
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    runner.submit(Command(Action.START)).result(timeout=5)

    def ended() -> bool:
        runner.submit(Command(Action.ADD, 0.0))  # commands in the look-ahead window too
        return [c.name for c in out.played][-1:] == ["end"]

    wait_for(ended, "the end signal", 10)
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(timeout=5)
    events.close()
    assert [c.name for c in out.played] == ["prestart", "start", "minute", "end"]
    assert engine.told == sorted(engine.told)
    import json

    for line in (tmp_path / "e.jsonl").read_text().splitlines():
        entry = json.loads(line)
        assert entry["played"] >= entry["due"]  # recorded when it sounds, never before


# ----------------------------------------------------------------------------- the device


def test_stream_audio_on_the_dummy_driver_plays_every_cue_kind(pack) -> None:
    import pygame

    pygame.mixer.quit()
    ithf = profile.load("ithf")
    audio = open_output(pack, ithf, ("sdl",), Settings("dummy", None, 512, 0.01))
    try:
        assert isinstance(audio, FramedOutput) and isinstance(audio.sink, SdlSink)
        assert audio.lead == pytest.approx(0.01 + 512 / RATE + 0.010)
        now = time.monotonic()
        for cue in [
            Cue("prestart", now),
            Cue("minute", now + 0.1, count=4),
            Cue("last30", now + 0.2, length=30),
            Cue("last30", now + 0.5, stop=True),
            Cue("last30", now + 0.6, offset=12.5, length=30),
            Cue("end", now + 0.7),
        ]:
            audio.play(cue, now)
        assert audio.fault() is None
    finally:
        audio.close()
    assert audio.fault() is None  # closed on purpose is not a fault


def test_a_stream_whose_callbacks_stop_reports_a_fault(pack) -> None:
    audio = sdl_stream(pack, driver="dummy", chunk=512)
    try:
        audio.last_block = audio.clock() + 3600.0  # the callback will not overwrite it
        assert audio.fault() is None
        audio.clock = lambda: audio.last_block + 1.0  # as if it had stopped for 1 s
        assert "stalled" in (audio.fault() or "")
    finally:
        audio.close()


def test_a_missing_device_is_an_audio_error(pack) -> None:
    with pytest.raises(AudioError, match="cannot open"):
        sdl_stream(pack, driver="dummy", device="no such sound card")


DISK_RUN = """
import json, sys, time
from timekeeper.rules.engine import Cue
from timekeeper.sound.pack import default_pack_dir, load_pack
from timekeeper.sound.framed import FrameClock, FramedOutput
from timekeeper.sound.sdlsink import SdlSink


class OneReading(FrameClock):
    # The frame clock as it stood at one moment. A callback between two plays may move the
    # live origin by a frame (under load); both cues, and the frames the test expects, are
    # placed from this one reading of it.
    def observe(self, frames_before, now):
        pass


pack = load_pack(default_pack_dir(), {"start"})
audio = FramedOutput(pack, SdlSink(driver="disk", chunk=512))
due = audio.clock() + 0.3
live, audio.frames = audio.frames, OneReading(audio.frames.latency)
audio.frames.origin = live.origin
frames = [audio.frames.frame_at(due), audio.frames.frame_at(due + 0.123457)]
audio.play(Cue("start", due), audio.clock())
audio.play(Cue("start", due + 0.123457), audio.clock())
audio.frames = live
need = (frames[1] + len(pack.sounds["start"].samples)) * 4
deadline = time.monotonic() + 20
while time.monotonic() < deadline and audio.voices.next_frame * 4 < need + 4096:
    time.sleep(0.05)
audio.close()
print(json.dumps({"frames": frames, "late": audio.voices.late}))
"""


@pytest.mark.slow
def test_the_stream_reaches_the_device_on_the_frame_it_chose(pack, tmp_path: Path) -> None:
    """SDL's disk driver writes what the sound card would get: two signals 0.123457 s apart
    are in it exactly as far apart as the frames the frame clock chose, unchanged. (Where
    the file starts is SDL's: it writes silence while the device is still paused. And a child
    process: SDL's audio driver is chosen once per process, and this one is on the dummy.)"""
    import json
    import os
    import subprocess
    import sys

    raw = tmp_path / "device.raw"
    env = dict(
        os.environ, SDL_AUDIODRIVER="disk", SDL_DISKAUDIOFILE=str(raw), SDL_DISKAUDIODELAY="5"
    )
    child = subprocess.run(
        [sys.executable, "-c", DISK_RUN], env=env, capture_output=True, text=True, timeout=60
    )
    assert child.returncode == 0, child.stderr
    answer = json.loads(child.stdout.splitlines()[-1])
    first, second = answer["frames"]
    signal = pack.sounds["start"].samples
    # (the frame clock may refine its origin by a frame between the two placements, as a
    # less delayed callback comes in: the device must still get exactly the frames chosen)
    assert answer["late"] == 0 and abs(second - first - 0.123457 * RATE) <= 1.5
    expected = np.zeros(second - first + len(signal), np.float32)
    mix_into(expected, first, first, signal)
    mix_into(expected, first, second, signal)
    device = np.frombuffer(raw.read_bytes(), "<f4")
    onset = int(np.argmax(device != 0))  # the signal's very first sample is not zero
    assert signal[0] != 0
    got = device[onset : onset + len(expected)]
    assert len(got) == len(expected)
    assert np.abs(got - np.clip(expected, -1, 1)).max() < 1e-6


@pytest.mark.parametrize(
    "args",
    [
        ["--audio-chunk", "0"],
        ["--audio-latency", "-5"],
        ["--audio-latency", "nan"],
        ["--audio", "stream"],
        ["--audio", "pulse", "--audio-latency", "20"],
        ["--audio", "silent", "--audio-latency", "20"],
        ["--audio", "silent", "--audio-chunk", "512"],
        ["--audio", "mixer,alsa"],
    ],
)
def test_run_refuses_audio_settings_that_cannot_work(args, capsys) -> None:
    from timekeeper.cli import main

    assert main(["run", "--no-keyboard", *args]) == 2
    assert args[-2] in capsys.readouterr().err


def test_run_refuses_the_second_audio_option_naming_the_one_that_chooses(capsys) -> None:
    from timekeeper.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["run", "--no-keyboard", "--audio-output", "alsa"])
    assert exited.value.code == 2
    assert (
        "--audio-output is no option: --audio names the sink, or a list tried in turn "
        "(e.g. --audio alsa, --audio pulse,alsa,sdl)"
    ) in capsys.readouterr().err


def test_an_abbreviated_audio_option_is_never_taken_for_the_retired_one(capsys) -> None:
    from timekeeper.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["run", "--no-keyboard", "--aud", "silent"])
    assert exited.value.code == 2
    said = capsys.readouterr().err
    assert "--aud" in said and "--audio-output" not in said


def test_runs_help_tells_sdls_latency_from_the_speakers(capsys) -> None:
    from timekeeper.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "stream only" not in said and "bench/timing.py" not in said
    assert "--audio-latency MS sdl only" in said
    assert "audio.latency, written by `timekeeper calibrate`" in said


def test_the_mixer_fallback_has_no_lead_and_unknown_sinks_are_refused(pack) -> None:
    import pygame

    from timekeeper.sound.pygame_mixer import PygameAudio

    pygame.mixer.quit()  # (the stream tests before this one closed their devices)
    ithf = profile.load("ithf")
    audio = open_output(pack, ithf, ("mixer",), Settings("dummy"))
    try:
        assert isinstance(audio, PygameAudio)
        assert audio.lead == 0.0 and audio.fault() is None
    finally:
        audio.close()
    with pytest.raises(ValueError, match="not a stream sink"):
        open_output(pack, ithf, ("speaker",))
