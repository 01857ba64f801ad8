"""The desk's calls over a speaker: "Round 3. Table 1: Novák – Svoboda. … Start in two
minutes.", in the tournament's language, spoken by espeak-ng (Debian's `espeak-ng`), or by
Piper where a voice model is configured.

A call is rendered to a WAV file before it is needed (`render`), so that it plays whole, and
is placed (`place`) where it does not cover a start signal: the hall's signals are what the
players listen for, a call never talks over one."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
import wave
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_TEXT = 600  # characters of one call (a round of 30 tables is about 550)
MARGIN = 1.0  # s kept clear before and after a start signal
SIGNAL = 3.0  # s a start signal (and its echo in the hall) is given
# the words of a round's call, by language (espeak-ng's voice of the same name)
WORDS = {
    "en": {
        "round": "Round {n}.",
        "table": "Table {table}: {home} – {away}.",
        "start": "Start in {minutes}.",
        "many": "{n} minutes",
        "when": {
            1: "one minute",
            2: "two minutes",
            3: "three minutes",
            4: "four minutes",
            5: "five minutes",
        },
    },
    "cs": {
        "round": "Kolo {n}.",
        "table": "Stůl {table}: {home} – {away}.",
        "start": "Začátek za {minutes}.",
        "many": "{n} minut",
        "when": {1: "minutu", 2: "dvě minuty", 3: "tři minuty", 4: "čtyři minuty"},
    },
    "sk": {
        "round": "Kolo {n}.",
        "table": "Stôl {table}: {home} – {away}.",
        "start": "Začiatok o {minutes}.",
        "many": "{n} minút",
        "when": {1: "minútu", 2: "dve minúty", 3: "tri minúty", 4: "štyri minúty"},
    },
    "pl": {
        "round": "Runda {n}.",
        "table": "Stół {table}: {home} – {away}.",
        "start": "Start za {minutes}.",
        "many": "{n} minut",
        "when": {1: "minutę", 2: "dwie minuty", 3: "trzy minuty", 4: "cztery minuty"},
    },
    "sl": {
        "round": "Krog {n}.",
        "table": "Miza {table}: {home} – {away}.",
        "start": "Začetek čez {minutes}.",
        "many": "{n} minut",
        "when": {1: "eno minuto", 2: "dve minuti", 3: "tri minute", 4: "štiri minute"},
    },
    "de": {
        "round": "Runde {n}.",
        "table": "Tisch {table}: {home} – {away}.",
        "start": "Beginn in {minutes}.",
        "many": "{n} Minuten",
        "when": {
            1: "einer Minute",
            2: "zwei Minuten",
            3: "drei Minuten",
            4: "vier Minuten",
            5: "fünf Minuten",
        },
    },
    "sv": {
        "round": "Omgång {n}.",
        "table": "Bord {table}: {home} – {away}.",
        "start": "Start om {minutes}.",
        "many": "{n} minuter",
        "when": {
            1: "en minut",
            2: "två minuter",
            3: "tre minuter",
            4: "fyra minuter",
            5: "fem minuter",
        },
    },
    "fi": {
        "round": "Kierros {n}.",
        "table": "Pöytä {table}: {home} – {away}.",
        "start": "Aloitus {minutes} kuluttua.",
        "many": "{n} minuutin",
        "when": {
            1: "minuutin",
            2: "kahden minuutin",
            3: "kolmen minuutin",
            4: "neljän minuutin",
            5: "viiden minuutin",
        },
    },
}
LANGUAGES = tuple(WORDS)


class CallError(Exception):
    """A call that cannot be spoken (no voice, a language without words); says why."""


def round_call(
    number: int, tables: Iterable[tuple[str, str, str]], minutes: int = 2, language: str = "en"
) -> str:
    """The call of a round: each (table, home, away) in order, and when it starts."""
    words = words_of(language)
    when = words["when"].get(minutes) or words["many"].format(n=minutes)
    parts = [words["round"].format(n=number)]
    parts += [words["table"].format(table=t, home=h, away=a) for t, h, a in tables]
    parts.append(words["start"].format(minutes=when))
    return " ".join(parts)


def words_of(language: str) -> dict:
    if language not in WORDS:
        raise CallError(f"calls are spoken in {', '.join(LANGUAGES)}, not {language!r}")
    return WORDS[language]


def _clean(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        raise CallError("nothing to say")
    if len(text) > MAX_TEXT:
        raise CallError(f"a call is at most {MAX_TEXT} characters (this one {len(text)})")
    return "".join(c for c in text if c.isprintable())


@dataclass(frozen=True)
class Voice:
    """espeak-ng by default; Piper with `model` (a .onnx voice file) if given."""

    language: str = "en"
    model: Path | None = None

    def command(self, out: Path) -> list[str]:
        if self.model is not None:
            exe = shutil.which("piper")
            if exe is None:
                raise CallError("a Piper voice is configured but `piper` is not installed")
            return [exe, "--model", str(self.model), "--output_file", str(out)]
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise CallError("espeak-ng is not installed (sudo apt-get install espeak-ng)")
        words_of(self.language)
        return [exe, "-v", self.language, "-s", "150", "-w", str(out), "--stdin"]

    def render(self, text: str, folder: Path) -> Path:
        """The call as a WAV file in `folder` (made once per text and voice, then reused)."""
        text = _clean(text)
        key = hashlib.sha256(f"{self.language}|{self.model}|{text}".encode()).hexdigest()[:16]
        out = Path(folder) / f"call-{key}.wav"
        if out.exists() and out.stat().st_size > 44:
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".part.wav")
        try:
            subprocess.run(
                self.command(partial),
                input=text,
                text=True,
                check=True,
                capture_output=True,
                timeout=60,
            )
        except subprocess.CalledProcessError as exc:
            raise CallError(f"the voice failed: {exc.stderr.strip()[:200]}") from None
        except subprocess.TimeoutExpired:
            raise CallError("the voice took over a minute") from None
        partial.replace(out)
        return out


def length(wav: Path) -> float:
    with wave.open(str(wav)) as w:
        return w.getnframes() / w.getframerate()


def place(
    duration: float,
    now: float,
    signals: Sequence[float],
    margin: float = MARGIN,
    signal: float = SIGNAL,
) -> float:
    """The earliest instant ≥ now at which a call of `duration` s plays whole without
    covering any start signal (each from its instant for `signal` s, `margin` either side)."""
    busy = sorted((at - margin, at + signal + margin) for at in signals)
    begin = now
    for start, end in busy:
        if begin + duration <= start:
            break
        if begin < end:
            begin = end
    return begin


def signals_of(statuses: dict[str, dict], now: float) -> list[float]:
    """The start signals the hall's tables will give, from their statuses: a pre-start's
    countdown ends in one."""
    out = []
    for status in statuses.values():
        s = status.get("status") or {}
        if status.get("online") and s.get("state") == "prestart" and s.get("countdown") is not None:
            out.append(now + float(s["countdown"]))
    return out


def play(wav: Path, wait: bool = True) -> float:
    """Play the call whole through the desk's speaker (SDL: $SDL_AUDIODRIVER); its length."""
    import os

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    if not pygame.mixer.get_init():
        pygame.mixer.init()
    sound = pygame.mixer.Sound(str(wav))
    seconds = sound.get_length()
    channel = sound.play()
    if wait:
        until = time.monotonic() + seconds + 0.2
        while channel is not None and channel.get_busy() and time.monotonic() < until:
            time.sleep(0.05)
    return seconds
