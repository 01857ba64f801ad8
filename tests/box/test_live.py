"""The live path: the runner on the real monotonic clock feeding real outputs, and pygame's
mixer really playing cues (SDL's disk driver records what the device would have heard)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from helpers import RecordingOutput, wait_for

from timekeeper.box.runner import Runner
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Cue, Engine
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import Output
from timekeeper.sound.pack import default_pack_dir, load_pack
from timekeeper.sound.pygame_mixer import PygameAudio

TINY = """\
    title: under a second
    prestart: 0.2
    period: {length: 0.6, marks: 0.2, melody: 0.2}
"""


class BrokenOutput(Output):
    def play(self, cue: Cue, now: float) -> None:
        raise RuntimeError("speaker unplugged")


@pytest.fixture
def tiny(write_profile) -> profile.Profile:
    return profile.load(str(write_profile("tiny", TINY)))


def run_in_thread(runner: Runner) -> threading.Thread:
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    return thread


def test_runner_plays_a_whole_match_in_order_never_early(tiny, tmp_path: Path) -> None:
    out = RecordingOutput()
    events = EventLog(tmp_path / "events.jsonl")
    runner = Runner(Engine(tiny), [out, BrokenOutput()], events)
    thread = run_in_thread(runner)
    runner.submit(Command(Action.START)).result(timeout=5)
    wait_for(lambda: runner.status().state == "finished", "the match to finish")
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(timeout=5)
    events.close()
    assert out.names == ["prestart", "start", "minute", "minute", "last30", "last30/stop", "end"]
    # never before its deadline
    assert all(now >= cue.due for cue, now in zip(out.played, out.times, strict=True))
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert len(lines) == 6  # every cue played, the melody's stop is not a sound


def test_commands_get_answers_and_refusals(tiny) -> None:
    runner = Runner(Engine(tiny), [RecordingOutput()])
    thread = run_in_thread(runner)
    assert runner.submit(Command(Action.START)).result(timeout=5).state == "prestart"
    with pytest.raises(Refused, match="not running"):
        runner.submit(Command(Action.PAUSE)).result(timeout=5)
    assert runner.submit(Command(Action.RESET)).result(timeout=5).state == "idle"
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(timeout=5)
    assert runner.exited.is_set()


def test_a_refusal_reaches_the_operator_with_the_press_that_goes_on() -> None:
    """The engine gives the plain reason; the runner has the prompt worded (show/prompts.py)
    before the refusal reaches ctl, the web, the hall and the log."""
    runner = Runner(Engine(profile.load("ithf")), [RecordingOutput()], clock=lambda: 100.0)
    thread = run_in_thread(runner)
    runner.submit(Command(Action.START)).result(timeout=5)
    with pytest.raises(Refused) as caught:
        runner.submit(Command(Action.NEXT)).result(timeout=5)
    assert caught.value.reason == "nothing to go on to (the start is counting down)"
    assert str(caught.value) == (
        "nothing to go on to (the start is counting down): the start signal comes by itself "
        "in 20 s (START and SPACE do nothing until then); RESET (r r, ctl reset, or hold "
        "START/NEXT) calls it off"
    )
    runner.submit(Command(Action.QUIT)).result(timeout=5)
    thread.join(timeout=5)


def test_pygame_audio_plays_every_cue_kind_on_the_dummy_driver() -> None:
    import pygame

    pygame.mixer.quit()
    ithf = profile.load("ithf")
    audio = PygameAudio(load_pack(default_pack_dir(), ithf.cue_names), driver="dummy")
    try:
        audio.prepare(ithf)
        for cue in [
            Cue("prestart", 0),
            Cue("minute", 0, count=4),
            Cue("last30", 0, length=30),
            Cue("last30", 0, stop=True),
            Cue("last30", 0, offset=12.5, length=30),
            Cue("end", 0),
        ]:
            assert audio.play(cue, 0.0) is None  # on its way: nothing says it cannot be heard
            if not cue.stop:  # a sound (a mark, the melody) is playing on the device now
                assert pygame.mixer.get_busy(), cue
            if cue.name == "last30" and not cue.stop:
                assert audio._melody.get_busy(), cue  # the melody on its own channel
            elif cue.name == "last30":  # stopped: a 5-ms fade, then silence on that channel
                wait_for(lambda: not audio._melody.get_busy(), "the melody to stop", 2)
        assert audio.fault() is None
    finally:
        audio.close()


def test_live_audio_reaches_the_device(tmp_path: Path, monkeypatch) -> None:
    """SDL's disk driver writes what the sound card would get: the start signal is in it."""
    import pygame

    pygame.mixer.quit()
    raw = tmp_path / "device.raw"
    monkeypatch.setenv("SDL_DISKAUDIOFILE", str(raw))
    monkeypatch.setenv("SDL_DISKAUDIODELAY", "1")
    pack = load_pack(default_pack_dir(), {"start"})
    audio = PygameAudio(pack, driver="disk", buffer=512)
    try:
        audio.play(Cue("start", 0), 0.0)
        expected = pack.sounds["start"].samples
        wait_for(
            lambda: raw.exists() and raw.stat().st_size > (len(expected) + RATE // 10) * 4,
            "the device file to hold the start signal",
        )
    finally:
        audio.close()
    device = np.frombuffer(raw.read_bytes(), "<i2").reshape(-1, 2)[:, 0] / 32767
    onset = int(np.argmax(np.abs(device) > 0.05))
    start_ref = int(np.argmax(np.abs(expected) > 0.05))
    got = device[onset - start_ref : onset - start_ref + len(expected)]
    assert len(got) == len(expected)
    assert np.abs(got - expected).max() < 2e-3  # the very samples of the pack, unchanged


def test_a_melody_resumed_late_skips_ahead_to_stay_on_the_match_clock() -> None:
    import pygame

    pygame.mixer.quit()
    pack = load_pack(default_pack_dir(), {"last30"})
    audio = PygameAudio(pack, driver="dummy")
    try:
        audio.play(Cue("last30", 99.0, offset=10.0, length=30), now=100.0)  # told 1 s late
        playing = audio._melody.get_sound()
        assert playing.get_length() == pytest.approx(30 - 10 - 1, abs=1e-3)
    finally:
        audio.close()
