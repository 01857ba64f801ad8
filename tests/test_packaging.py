"""`pip install .` (not editable) must carry the built-in profiles and the default pack:
the wheel is built and run from another folder, away from the source checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_carries_profiles_and_sounds_and_finds_them(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("timekeeper-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(site)
    assert "timekeeper/profiles/ithf.yaml" in names
    assert "timekeeper/sounds/default/pack.yaml" in names
    assert "timekeeper/sounds/default/last30.wav" in names
    for page in ("display.html", "control.html", "live.js", "style.css"):  # the web pages
        assert f"timekeeper/web/static/{page}" in names

    env = dict(os.environ, PYTHONPATH=str(site), SDL_AUDIODRIVER="dummy")
    run = [sys.executable, "-m", "timekeeper"]
    where = subprocess.run([sys.executable, "-c", "import timekeeper; print(timekeeper.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.stdout.startswith(str(site)), "the test must run the installed copy"
    listed = subprocess.run([*run, "profiles"], cwd=tmp_path, env=env, capture_output=True,
                            text=True)
    builtins = len(list((ROOT / "profiles").glob("*.yaml")))
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == builtins, listed.stderr
    checked = subprocess.run([*run, "check"], cwd=tmp_path, env=env, capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stderr
    assert str(site / "timekeeper" / "sounds" / "default") in checked.stdout
