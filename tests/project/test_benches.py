"""Every bench runs in CI (.ci/run) in a quick form, so that a bench that no longer runs (the
code moved under it) fails CI instead of the next person who types the command a doc gives."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from helpers import ROOT

BENCH = ROOT / "bench"

# benches whose rows another bench prints, run by CI inside it: {bench: the one that runs it}
INSIDE = {
    "faults_desk": "faults",
    "cpubudget": "startup",  # (startup.py --cpu)
    "standin_mic": "timing",  # (timing.py --stack alsa-paced: worst after calibrate)
}


def ci_runs() -> dict[str, list[list[str]]]:
    """Each bench .ci/run starts, with the arguments of each of its lines."""
    runs: dict[str, list[list[str]]] = {}
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines():
        argv = shlex.split(line, comments=True)
        if len(argv) > 1 and argv[0] == ".venv/bin/python" and argv[1].startswith("bench/"):
            runs.setdefault(Path(argv[1]).stem, []).append(argv[2:])
    return runs


def benches() -> list[str]:
    """The files in bench/ with a command line of their own (libraries such as audiolab.py
    only run a child of theirs under `__main__`)."""
    plain = re.compile(r"^if __name__ == \"__main__\":$", re.MULTILINE)
    return sorted(f.stem for f in BENCH.glob("*.py") if plain.search(f.read_text("utf-8")))


def test_every_bench_runs_in_ci() -> None:
    runs = ci_runs()
    assert "tournament" in benches() and "faults" in runs  # (the two lists are read right)
    missing = [b for b in benches() if b not in runs and INSIDE.get(b) not in runs]
    assert not missing, f"benches CI does not run (add a quick form to .ci/run): {missing}"
    for inner, outer in INSIDE.items():
        assert f"from {inner} import" in (BENCH / f"{outer}.py").read_text("utf-8"), inner


def test_ci_runs_the_world_tour_day_whose_standings_figure_the_docs_give() -> None:
    assert ["--world"] in ci_runs()["tournament"]
    assert "bench/tournament.py --world" in (ROOT / "docs" / "tournament.md").read_text("utf-8")
