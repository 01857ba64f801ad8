"""Renders analysed as audio: the WAV is read back and every cue is found in the samples
themselves, so a schedule that is right on paper but mixed at the wrong place fails here."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from timekeeper.rules import profile
from timekeeper.rules.engine import Cue
from timekeeper.rules.profile import Profile
from timekeeper.rules.replay import parse_actions
from timekeeper.sound.mixing import RATE, floats
from timekeeper.sound.pack import SoundPack, default_pack_dir, load_pack
from timekeeper.sound.render import render

THRESHOLD = 0.02  # an onset is the first sample louder than this (every default cue starts louder)
LSB = 1 / 32767  # one step of the 16-bit file

# 40-s match, prestart 3, a single beep every 10 s, a 5-s melody, no feedback sounds: no two
# sounds ever overlap, so every onset can be found in the audio on its own.
SPACED = """\
    title: 40-second render test
    prestart: 3
    feedback: false
    period:
      length: 40
      marks: 10
      mark_beeps: single
      melody: 5
"""


# ----------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def pack() -> SoundPack:
    return load_pack(default_pack_dir())


@pytest.fixture
def spaced(write_profile) -> Profile:
    return profile.load(str(write_profile("spaced", SPACED)))


def read_wav(path: Path) -> np.ndarray:
    """The file as float32 in [-1, 1], checking it is the mono 16-bit RATE format renders use."""
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, RATE)
        raw = w.readframes(w.getnframes())
    return np.frombuffer(raw, "<i2").astype(np.float32) / 32767


def first_above(x: np.ndarray, start: int = 0, threshold: float = THRESHOLD) -> int:
    """Index of the first sample at/after `start` louder than `threshold`."""
    hits = np.flatnonzero(np.abs(x[start:]) > threshold)
    assert len(hits), f"nothing louder than {threshold} after sample {start}"
    return start + int(hits[0])


def at(seconds: float) -> int:
    return round(seconds * RATE)


def regions(cues: list[Cue], pack: SoundPack) -> list[tuple[Cue, int, np.ndarray]]:
    """Every sounding cue with its first file sample and the samples it must put there (the
    melody cut where its stop cue is): an independent statement of what the file must hold."""
    out = []
    for i, cue in enumerate(cues):
        if cue.stop:
            continue
        samples = floats(pack.samples(cue))
        if cue.name == "last30":
            stop = next(c for c in cues[i + 1 :] if c.name == "last30" and c.stop)
            samples = samples[: at(stop.due) - at(cue.due)]
        out.append((cue, at(cue.due), samples))
    return out


def expected_mix(parts: list[tuple[Cue, int, np.ndarray]], length: int) -> np.ndarray:
    mix = np.zeros(length, np.float32)
    for _, start, samples in parts:
        mix[start : start + len(samples)] += samples
    return np.clip(mix, -1, 1)


def check_onsets(audio: np.ndarray, parts: list[tuple[Cue, int, np.ndarray]]) -> list[int]:
    """Find each cue's onset in the audio, searching from the end of everything placed before
    it, and check it is where the cue's due time says (±1 sample). Cues that start inside an
    earlier sound cannot be told apart by a threshold and are skipped. Returns the onsets."""
    found_all = []
    busy_until = 0
    for cue, start, samples in sorted(parts, key=lambda p: p[1]):
        if start < busy_until:
            continue
        expected = start + first_above(samples)
        found = first_above(audio, busy_until)
        assert abs(found - expected) <= 1, (
            f"{cue.name} due {cue.due} s: onset expected at sample {expected}, "
            f"found at {found} ({(found - expected) / RATE * 1000:+.2f} ms)"
        )
        found_all.append(found)
        busy_until = max(busy_until, start + len(samples))
    return found_all


def schedule(cues: list[Cue]) -> list[tuple[str, float, int]]:
    return [(c.name, round(c.due, 6), c.count) for c in cues if not c.stop]


# ----------------------------------------------------------------------------- tests


def test_spaced_match_every_onset_is_in_the_audio_at_its_due_sample(
    spaced: Profile, pack: SoundPack, tmp_path: Path
) -> None:
    """Every cue of a match whose sounds never overlap is audible at round(due × RATE) to the
    sample, each sound is mixed in intact, and the file is digital silence everywhere else."""
    out = tmp_path / "spaced.wav"
    result = render(spaced, pack, out)
    # the schedule, worked out by hand: lead-in 0.5 s, prestart 3 s, marks at 10/20/30 s of
    # play, melody over the last 5 s of a 40-s period
    assert schedule(result.cues) == [
        ("prestart", 0.5, 1),
        ("start", 3.5, 1),
        ("minute", 13.5, 1),
        ("minute", 23.5, 1),
        ("minute", 33.5, 1),
        ("last30", 38.5, 1),
        ("end", 43.5, 1),
    ]
    audio = read_wav(out)
    assert len(audio) == at(43.5) + len(pack.sounds["end"].samples) + at(0.5)  # end + tail

    parts = regions(result.cues, pack)
    onsets = check_onsets(audio, parts)
    assert len(onsets) == len(parts)  # none overlapped, so every cue was found on its own
    assert onsets == [at(c.due) for c, _, _ in parts]  # the default sounds start at sample 0

    expected = expected_mix(parts, len(audio))
    worst = int(np.argmax(np.abs(audio - expected)))
    assert abs(audio[worst] - expected[worst]) <= 1.5 * LSB, f"mix differs at {worst / RATE:.4f} s"
    covered = np.zeros(len(audio), bool)
    for _, start, samples in parts:
        covered[start : start + len(samples)] = True
    assert not audio[~covered].any(), "sound where nothing should play"


def test_ithf_with_pause_resume_and_added_time(pack: SoundPack, tmp_path: Path) -> None:
    """The real ITHF profile with `120:pause,135:resume,200:add=10`: start, every minute mark
    (each of its beeps), the melody and the end sound exactly where the rules put them; the
    melody fills the last 30 s; the file is silent through the pause but for sound tails."""
    ithf = profile.load("ithf")
    out = tmp_path / "ithf.wav"
    result = render(ithf, pack, out, parse_actions("120:pause,135:resume,200:add=10"))
    # by hand: prestart at 0.5, start 20 s later; 15 s stopped from play 2:00; +10 s at 3:05;
    # N beeps with N minutes left of the 310-s total; melody 30 s before the end. The 10 s
    # added at 1:55 left bring 2:00 left back: its two beeps sound again (after any
    # correction, a mark whose time has not passed at the new clock sounds)
    assert schedule(result.cues) == [
        ("prestart", 0.5, 1),
        ("start", 20.5, 1),
        ("minute", 80.5, 4),
        ("minute", 140.5, 3),
        ("pause", 140.5, 1),
        ("resume", 155.5, 1),
        ("minute", 215.5, 2),
        ("time_added", 220.5, 1),
        ("minute", 225.5, 2),
        ("minute", 285.5, 1),
        ("last30", 315.5, 1),
        ("end", 345.5, 1),
    ]
    audio = read_wav(out)
    parts = regions(result.cues, pack)
    onsets = check_onsets(audio, parts)
    for seconds in (20.5, 80.5, 140.5, 215.5, 285.5, 315.5, 345.5):
        assert at(seconds) in onsets, f"no onset found at {seconds} s"

    # every beep of a mark: N beeps at the pack's spacing (0.4 s), each found in the audio
    beep = pack.sounds["minute"]
    spacing = at(beep.repeat_every)
    for due, count in ((80.5, 4), (140.5, 3), (215.5, 2), (285.5, 1)):
        for k in range(count):
            search = at(due) + k * spacing - (spacing - len(beep.samples)) // 2
            assert abs(first_above(audio, search) - (at(due) + k * spacing)) <= 1, (due, k)

    # the mix as a whole, to the last bit
    expected = expected_mix(parts, len(audio))
    worst = int(np.argmax(np.abs(audio - expected)))
    assert abs(audio[worst] - expected[worst]) <= 1.5 * LSB, f"mix differs at {worst / RATE:.4f} s"

    # the pause: nothing between the end of the 3-beep mark (and the pause blip) and the resume
    tails = at(140.5) + max(len(pack.repeated("minute", 3)), len(pack.sounds["pause"].samples))
    assert tails < at(142)
    assert not audio[tails : at(155.5)].any(), "sound while the clock is stopped"
    # silence before the start signal after the prestart tail, and between marks
    assert not audio[at(0.5) + len(pack.sounds["prestart"].samples) : at(20.5)].any()
    assert not audio[at(285.5) + len(beep.samples) : at(315.5)].any()

    # the melody fills the last 30 s: no 100-ms stretch of it is quiet
    window = at(0.1)
    melody = audio[at(315.5) : at(345.5)]
    peaks = np.abs(melody[: len(melody) // window * window]).reshape(-1, window).max(axis=1)
    assert len(peaks) == 300 and peaks.min() > 0.05
    assert not audio[at(345.5) + len(pack.sounds["end"].samples) :].any()  # the tail is silent


def test_melody_resumes_where_it_was_paused(
    spaced: Profile, pack: SoundPack, tmp_path: Path
) -> None:
    """A pause 2.3 s into the melody stops it; on resume the tune carries on from 2.3 s, not
    from the start: the audio after the resume is the melody window from that offset."""
    out = tmp_path / "paused-melody.wav"
    result = render(spaced, pack, out, parse_actions("37.3:pause,41:resume"))
    # melody from play 35 (file 38.5), paused at play 37.3 (file 40.8), resumed at file 44.5
    assert schedule(result.cues) == [
        ("prestart", 0.5, 1),
        ("start", 3.5, 1),
        ("minute", 13.5, 1),
        ("minute", 23.5, 1),
        ("minute", 33.5, 1),
        ("last30", 38.5, 1),
        ("last30", 44.5, 1),
        ("end", 47.2, 1),
    ]
    resumed = [c for c in result.cues if c.name == "last30" and not c.stop][1]
    assert resumed.offset == pytest.approx(2.3)

    audio = read_wav(out)
    tune = floats(pack.melody(5.0))
    played = at(40.8) - at(38.5)
    assert np.abs(audio[at(38.5) : at(40.8)] - tune[:played]).max() <= 1.5 * LSB
    assert not audio[at(40.8) : at(44.5)].any(), "the melody kept playing through the pause"

    # which point of the tune follows the resume? cross-correlate 0.5 s of it over ±50 ms
    # around the expected offset; the best match must be exactly there, and exact
    segment = audio[at(44.5) : at(45.0)].astype(np.float64)
    expected_offset = at(2.3)
    lo, hi = expected_offset - at(0.05), expected_offset + at(0.05)
    candidates = tune[lo : hi + len(segment)].astype(np.float64)
    score = np.correlate(candidates, segment, mode="valid")
    energy = np.convolve(candidates**2, np.ones(len(segment)), mode="valid")
    best = lo + int(np.argmax(score / np.sqrt(energy)))
    assert abs(best - expected_offset) <= 1, f"resumed {(best - expected_offset) / RATE:+.4f} s off"
    rest = audio[at(44.5) : at(47.2)]
    assert np.abs(rest - tune[best : best + len(rest)]).max() <= 1.5 * LSB
    # …and it runs to the end signal, which starts right where the melody is cut
    assert first_above(audio, at(47.2)) == at(47.2)


def test_events_file_lists_each_sounding_cue_at_its_onset(
    spaced: Profile, pack: SoundPack, tmp_path: Path
) -> None:
    """`events=` writes one JSON line per sounding cue (no stop cues) with cue, due, played,
    period and play_time; a render plays each cue exactly when due, and `due` is the file
    time of the onset found in the audio."""
    out, events = tmp_path / "ev.wav", tmp_path / "ev.jsonl"
    result = render(spaced, pack, out, parse_actions("37.3:pause,41:resume"), events)
    lines = events.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    sounding = [c for c in result.cues if not c.stop]
    assert len(entries) == len(sounding)
    for entry, cue in zip(entries, sounding, strict=True):
        assert {"cue", "due", "played", "period", "play_time"} <= entry.keys()
        assert entry["cue"] == cue.name
        assert entry["played"] == entry["due"] == pytest.approx(cue.due, abs=1e-6)
        assert entry["period"] == cue.period
        assert entry["play_time"] == pytest.approx(cue.play_time, abs=1e-3)
    assert [e["cue"] for e in entries] == [
        "prestart",
        "start",
        "minute",
        "minute",
        "minute",
        "last30",
        "last30",
        "end",
    ]
    assert [e["play_time"] for e in entries] == [0, 0, 10, 20, 30, 35, 37.3, 40]
    assert entries[6]["offset"] == pytest.approx(2.3)

    audio = read_wav(out)
    onsets = check_onsets(audio, regions(result.cues, pack))
    assert onsets == [at(e["due"]) for e in entries]


def test_rendering_again_rewrites_the_events_file(
    spaced: Profile, pack: SoundPack, tmp_path: Path
) -> None:
    """Re-running a render with --events must leave the schedule of that render only, as the
    WAV it goes with is overwritten too."""
    out, events = tmp_path / "again.wav", tmp_path / "again.jsonl"
    render(spaced, pack, out, events=events)
    first = events.read_text(encoding="utf-8")
    render(spaced, pack, out, events=events)
    assert events.read_text(encoding="utf-8") == first


def assert_every_cue_heard_on_time(cues, out: Path, pack: SoundPack) -> None:
    """Each sound of `cues` starts in the WAV at its due sample."""
    parts = regions(cues, pack)
    assert check_onsets(read_wav(out), parts) == [at(c.due) for c, _, _ in parts]


def test_ball_hockey_renders_penalty_and_timeout_signals_on_the_game_clock(
    pack: SoundPack, tmp_path: Path
) -> None:
    """hokejbal with a script of whistles: the penalty's end moves with every stoppage and
    with a correction, it is frozen in the break, and the time-out has its own countdown;
    every signal is in the audio at its due sample."""
    hokejbal = profile.load("hokejbal")
    out, events = tmp_path / "hokejbal.wav", tmp_path / "hokejbal.jsonl"
    script = (
        "1:00:penalty=home:minor:17,1:20:pause,1:25:timeout=away,2:00:resume,"
        "7:30:penalty=away:major,7:40:pause,7:45:set=1:10,7:50:resume,12:30:next"
    )
    result = render(hokejbal, pack, out, parse_actions(script), events)
    # by hand (file time = script time + 0.5 s lead-in): the minor from 1:00 of play ends at
    # 2:00 of play, which the 40-s stoppage puts at 2:40; the time-out from 1:25 ends 30 s
    # later. At 7:40 (7:00 of play, 1:00 left, the major 10 s old) the clock is set back to
    # 1:10 left: the major moves back with it to its full 3:00. The half ends 70 s after the
    # resume, at 9:00, the major frozen with 1:50 left; the break's signal 3 minutes later;
    # the second half at 12:30, the major served 1:50 into it.
    assert schedule(result.cues) == [
        ("start", 0.5, 1),
        ("timeout_end", 115.5, 1),
        ("penalty_end", 160.5, 1),
        ("period_end", 540.5, 1),
        ("break_warning", 720.5, 1),
        ("start", 750.5, 1),
        ("penalty_end", 860.5, 1),
        ("end", 1230.5, 1),
    ]
    assert_every_cue_heard_on_time(result.cues, out, pack)
    details = [json.loads(line).get("detail") for line in events.read_text().splitlines()]
    assert details == [None, "away", "home #1 17 minor", None, None, None, "away #2 major", None]


def test_ball_hockey_playoff_render_ends_when_the_shootout_is_decided(
    pack: SoundPack, tmp_path: Path
) -> None:
    """hokejbal-playoff to a shoot-out: 0:2 after two attempts each is decided, and the
    end signal sounds at the result that decided it."""
    playoff = profile.load("hokejbal-playoff")
    out = tmp_path / "playoff.wav"
    results = [("home", "miss"), ("away", "goal"), ("home", "miss"), ("away", "goal")]
    script = "800:next,1420:next," + ",".join(
        f"{1740 + 20 * i}:attempt={team}:{result}" for i, (team, result) in enumerate(results)
    )
    result = render(playoff, pack, out, parse_actions(script))
    assert schedule(result.cues) == [
        ("start", 0.5, 1),
        ("period_end", 600.5, 1),
        ("break_warning", 780.5, 1),
        ("start", 800.5, 1),
        ("end", 1400.5, 1),
        ("start", 1420.5, 1),
        ("period_end", 1720.5, 1),
        ("end", 1800.5, 1),
    ]
    assert_every_cue_heard_on_time(result.cues, out, pack)


SHORT_KO = """\
    title: short knock-out render test
    feedback: false
    period:
      length: 20
    overtime:
      - length: 10
    shootout:
      first: 3
      then: 1
      shot: 5
"""


def test_a_render_finished_during_a_shot_keeps_that_shots_start_signal(
    write_profile, pack: SoundPack, tmp_path: Path
) -> None:
    """A scripted finish during a shoot-out shot ends that shot; its start signal
    sounded before the finish (Polish XV.18, seed 002: "each penalty shot has a 15-second
    limit", here 5 s), so it is in the WAV and in the events log. 1:1 after regulation, the
    overtime from 20 s to 30 s, shots of 5 s from there, the finish 2 s into the second."""
    ko = profile.load(str(write_profile("short-ko", SHORT_KO)))
    out, events = tmp_path / "ko.wav", tmp_path / "ko.jsonl"
    result = render(ko, pack, out, parse_actions("5:goal=home,6:goal=away,37:finish"), events)
    assert schedule(result.cues)[-4:] == [
        ("shot_start", 30.5, 1),
        ("shot_end", 35.5, 1),
        ("shot_start", 35.5, 1),
        ("end", 37.5, 1),
    ]
    logged = [(e["cue"], e["due"]) for e in map(json.loads, events.read_text().splitlines())]
    assert logged[-2:] == [("shot_start", 35.5), ("end", 37.5)]
    audio = read_wav(out)
    heard = regions([c for c in result.cues if pack.plays(c)], pack)
    assert ("shot_start", at(35.5)) in [(c.name, start) for c, start, _ in heard]
    assert np.abs(audio - expected_mix(heard, len(audio))).max() <= 2 * LSB
