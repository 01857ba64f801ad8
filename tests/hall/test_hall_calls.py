"""The desk's calls: rendered to WAV by espeak-ng in the tournament's language before they
are needed, and placed so that none covers a start signal."""

from __future__ import annotations

import array
import os
import shutil
import subprocess
import wave
from pathlib import Path

import pytest
from running import tk

from timekeeper.hall.desk import calls

TABLES = [("1", "Novák", "Svoboda"), ("2", "Dvořák", "Černý")]


def loudness(wav: Path) -> float:
    with wave.open(str(wav)) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    return max(abs(s) for s in samples) / 32768


@pytest.fixture
def espeak() -> None:
    if shutil.which("espeak-ng") is None:
        pytest.fail("espeak-ng is not installed: ./bootstrap.sh --test installs it")


def test_a_round_call_in_the_tournaments_language() -> None:
    assert calls.round_call(3, TABLES) == (
        "Round 3. Table 1: Novák – Svoboda. Table 2: Dvořák – Černý. Start in two minutes."
    )
    assert calls.round_call(3, TABLES[:1], language="cs") == (
        "Kolo 3. Stůl 1: Novák – Svoboda. Začátek za dvě minuty."
    )
    with pytest.raises(calls.CallError, match="spoken in en, cs, sk, pl, sl, de, sv, fi"):
        calls.round_call(1, TABLES, language="xx")


@pytest.mark.slow
@pytest.mark.parametrize("language", calls.LANGUAGES)
def test_calls_are_rendered_to_wav_before_they_are_needed(
    espeak, tmp_path: Path, language: str
) -> None:
    text = calls.round_call(3, TABLES, language=language)
    wav = calls.Voice(language).render(text, tmp_path)
    assert wav.exists() and 3.0 < calls.length(wav) < 30.0 and loudness(wav) > 0.1
    assert calls.Voice(language).render(text, tmp_path) == wav  # made once, reused
    assert len(list(tmp_path.glob("*.wav"))) == 1


@pytest.mark.slow
def test_a_call_never_covers_a_start_signal(espeak, tmp_path: Path) -> None:
    """A call placed among the hall's start signals, rendered into the desk's output as it
    would sound: the call is there, whole, and silent wherever a signal sounds."""
    wav = calls.Voice("en").render(calls.round_call(3, TABLES), tmp_path)
    seconds = calls.length(wav)
    # the gap between the first two signals is half a second too short for the call
    signals = [2.0, 2.0 + calls.SIGNAL + 2 * calls.MARGIN + seconds - 0.5, 60.0]
    begin = calls.place(seconds, 0.0, signals)
    windows = [(at - calls.MARGIN, at + calls.SIGNAL + calls.MARGIN) for at in signals]
    assert all(begin + seconds <= start or begin >= end for start, end in windows)
    assert begin == pytest.approx(signals[1] + calls.SIGNAL + calls.MARGIN)  # the first gap
    assert calls.place(seconds, 0.0, [seconds + calls.MARGIN + 0.01]) == 0.0  # fits before
    # the desk's output over 80 s: the call where it was placed
    with wave.open(str(wav)) as w:
        rate, voice = w.getframerate(), array.array("h", w.readframes(w.getnframes()))
    out = array.array("h", bytes(2 * rate * 80))
    first = int(begin * rate)
    out[first : first + len(voice)] = voice
    heard = [i / rate for i in range(0, len(out), rate // 100) if abs(out[i]) > 300]
    assert heard and min(heard) >= begin and max(heard) <= begin + seconds
    for start, end in windows:
        assert not [t for t in heard if start <= t <= end]


def announce(broker: dict, folder: Path, line: str, *more: str) -> subprocess.CompletedProcess:
    """`timekeeper hall announce LINE MORE` as typed, on `broker`, its calls in `folder`."""
    env = dict(os.environ, SDL_AUDIODRIVER="dummy")
    where = ("--broker", broker["url"], "--state-dir", str(folder))
    return tk(env, "hall", "announce", line, *more, *where, timeout=60)


@pytest.mark.slow
def test_hall_announce_speaks_a_line(espeak, broker, tmp_path: Path) -> None:
    done = announce(broker, tmp_path, "Table 3: the final.")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "spoken (" in done.stdout and "Table 3: the final." in done.stdout
    assert list((tmp_path / "hall" / "calls").glob("call-*.wav"))


@pytest.mark.slow
def test_hall_announce_speaks_in_the_tournaments_language(
    espeak,
    broker,
    tmp_path: Path,
) -> None:
    """`--tournament` lends its `language:` to an announcement, as to the round calls."""
    from timekeeper.hall.desk import calls

    cup = tmp_path / "cup.yaml"
    cup.write_text(
        "title: Pohár\nlanguage: cs\nrules: radegast\ntables: 1\nplayers: [A, B, "
        "C, D]\nstages:\n  knockout:\n    tree: seeded\n",
        encoding="utf-8",
    )
    line = "Stůl 3: finále."
    done = announce(broker, tmp_path, line, "--tournament", str(cup))
    assert done.returncode == 0, done.stdout + done.stderr
    folder = tmp_path / "hall" / "calls"
    spoken = calls.Voice("cs").render(line, folder)  # (made already: the same file)
    assert [p.name for p in folder.glob("call-*.wav")] == [spoken.name]
