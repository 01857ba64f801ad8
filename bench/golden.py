"""Behaviour unchanged? Every built-in profile rendered with a few operator scripts: the
SHA-256 of each WAV and of each events log, compared with `bench/golden.json`.

A restructuring must give the same bytes and the same events; a change of behaviour (a rules
fix) re-records the file on purpose, and its diff shows which renders moved.

    .venv/bin/python bench/golden.py            # compare with bench/golden.json (exit 1 if not)
    .venv/bin/python bench/golden.py --record   # write bench/golden.json anew
    .venv/bin/python bench/golden.py --keep DIR # also keep the WAVs and events in DIR"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

from timekeeper.rules import profile
from timekeeper.rules.replay import ScriptError, Step, parse_actions
from timekeeper.sound.pack import find_pack, load_pack, melody_window
from timekeeper.sound.render import render

GOLDEN = Path(__file__).with_name("golden.json")

# Operator scripts, seconds after the first start signal. Each profile gets the plain match,
# the common stop/resume/added-time script, and those that fit its kind of match; a command
# that does not apply is refused by the engine and left out of the render, as it would be live.
COMMON = {
    "plain": "",
    "stop-add": "40:pause,52.5:resume,100:add=10,101:add=-10,170:add,250:pause,251.25:resume",
    "goals": "20:goal=home:7,95:goal=away,130:goal=home,140:undo-goal=home,200:goal=away:11",
    "replay": "30:goal=home,60:pause,61:replay,70:start,120:finish",
}
BALL_HOCKEY = {
    "penalties": "30:penalty=home:minor:17,45:penalty=away:major+game,60:pause,61:timeout=home,"
    "80:resume,100:goal=away,130:pause,131:set=3:00,135:resume,200:release=home,"
    "220:penalty=home:minor+minor+personal,300:pause,301:penalty-shot=away,"
    "310:attempt=away:goal,330:resume,400:remove=home",
    "shootout": "60:goal=home,200:goal=away",
    # rule 30 d: a goal against a short-handed team ends no penalty being served
    "power-play": "30:penalty=away:minor:4,40:goal=home",
}


def scripts_for(p: profile.Profile) -> dict[str, str]:
    out = dict(COMMON)
    if p.penalties is not None or p.timeout is not None:
        out |= BALL_HOCKEY
    if any(part.overtime for part in p.periods):
        out["sudden-death"] = _sudden_death(p)
    return out


def _sudden_death(p: profile.Profile) -> str:
    """1:1 in regulation, then a goal 30 s into the first overtime part: a sudden death ends
    on it; an overtime played in full (Radegast's 3 minutes) goes on, and then, decided, ends
    with FINISH. The replay's operator starts each part as soon as it may."""
    brk = p.intermission.length if p.intermission is not None else 0.0
    length = p.periods[0].length or 0.0
    overtime = p.regulation * length + (p.regulation - 1) * brk
    return f"10:goal=home,20:goal=away,{overtime + 30:g}:goal=home"


def run(keep: Path | None) -> dict[str, dict[str, str]]:
    results: dict[str, dict[str, str]] = {}
    pack_dir = find_pack(None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for file in sorted(profile.builtin_dir("profiles").glob("*.yaml")):
            key = file.stem
            p = profile.load(key)
            pack = load_pack(pack_dir, p.cue_names, melody_window(p))
            for name, script in scripts_for(p).items():
                wav, events = folder / f"{key}-{name}.wav", folder / f"{key}-{name}.jsonl"
                steps, dropped = parse_actions(script), []
                while True:
                    try:
                        result = render(p, pack, wav, steps, events)
                        break
                    except ScriptError as exc:  # a step this profile refuses: left out
                        bad = _refused_step(steps, str(exc))
                        steps.remove(bad)
                        dropped.append(f"{bad.at:g}:{bad.command}")
                cues = "\n".join(repr(c) for c in result.cues).encode()
                results[f"{key} {name}"] = {
                    "wav": _sha(wav.read_bytes()),
                    "events": _sha(events.read_bytes()),
                    "cues": _sha(cues),
                    "refused": ",".join(dropped),
                }
    return results


def _refused_step(steps: list[Step], message: str) -> Step:
    for step in steps:
        if message.startswith(f"{step.at:g}:{step.command} refused"):
            return step
    raise SystemExit(f"golden: a script fails other than by a refused step: {message}")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true", help="write bench/golden.json anew")
    ap.add_argument("--keep", type=Path, help="keep the WAVs and events logs in this folder")
    args = ap.parse_args()
    began = time.perf_counter()
    results = run(args.keep)
    took = time.perf_counter() - began
    if args.record:
        GOLDEN.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(results)} renders in {GOLDEN} ({took:.1f} s)")
        return 0
    golden = json.loads(GOLDEN.read_text())
    print(f"{'render':34} {'wav':>8} {'events':>8} {'cues':>8}")
    bad = 0
    for name in sorted(set(golden) | set(results)):
        want, got = golden.get(name), results.get(name)
        if want is None or got is None:
            print(f"{name:34} {'new' if want is None else 'gone':>8}")
            bad += 1
            continue
        marks = ["same" if want[k] == got[k] else "DIFFERS" for k in ("wav", "events", "cues")]
        if want["refused"] != got["refused"]:
            marks.append(f"refused {got['refused'] or 'nothing'}, was {want['refused']}")
        bad += any(m != "same" for m in marks)
        print(f"{name:34} {marks[0]:>8} {marks[1]:>8} {' '.join(marks[2:]):>8}")
    print(
        f"{len(results)} renders in {took:.1f} s: "
        + ("all the same as bench/golden.json" if not bad else f"{bad} differ")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
