"""`pip install .` (not editable) must carry the built-in profiles and the default pack:
the wheel is built and run from another folder, away from the source checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_carries_profiles_and_sounds_and_finds_them(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
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
    for page in ("hall.html", "hall.js", "hall.css", "board.html", "board.js", "board.css"):
        assert f"timekeeper/hall/static/{page}" in names  # the desk's (and web's common.js)
    assert "timekeeper/web/static/common.js" in names
    for code in ("en", "cs", "fi"):  # the hall's languages
        assert f"timekeeper/lang/{code}.json" in names

    env = dict(os.environ, PYTHONPATH=str(site), SDL_AUDIODRIVER="dummy")
    run = [sys.executable, "-m", "timekeeper"]
    where = subprocess.run(
        [sys.executable, "-c", "import timekeeper; print(timekeeper.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(site)), "the test must run the installed copy"
    listed = subprocess.run(
        [*run, "profiles"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    builtins = len(list((ROOT / "profiles").glob("*.yaml")))
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == builtins, listed.stderr
    checked = subprocess.run([*run, "check"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert str(site / "timekeeper" / "sounds" / "default") in checked.stdout
    words = subprocess.run(
        [
            sys.executable,
            "-c",
            "from timekeeper.show import language; print(language.words('pl')['pages']['draw'])",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert words.stdout.strip() == "REMIS", words.stderr


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pairs = [line.split("==") for line in lines if line and not line.startswith("#")]
    assert all(len(pair) == 2 for pair in pairs), "constraints.txt: one NAME==VERSION a line"
    return {_canonical(name): version.strip() for name, version in pairs}


def test_every_dependency_is_pinned_and_the_pins_are_what_the_tests_run_on() -> None:
    """The box installs what CI tested: constraints.txt pins every dependency (the test
    tools too), pygame-ce first of all (its pygame._sdl2.audio is experimental), and the
    versions this suite runs with are those pins (scripts/pin-versions.sh re-pins)."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    names = {_canonical(re.match(r"[A-Za-z0-9_.-]+", spec).group()) for spec in wanted}
    pins = _pins()
    assert "pygame-ce" in pins
    assert names <= set(pins), f"not pinned in constraints.txt: {sorted(names - set(pins))}"
    differ = {}
    for name, pinned in pins.items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            continue  # (a dependency of a platform's own, e.g. one the Pi has)
        if installed != pinned:
            differ[name] = (installed, pinned)
    assert not differ, f"installed ≠ pinned (./bootstrap.sh --test installs the pins): {differ}"


@pytest.mark.slow
def test_bootstrap_and_the_pi_install_use_the_pins() -> None:
    assert '-c constraints.txt -e ".$extras"' in (ROOT / "bootstrap.sh").read_text()
    done = subprocess.run(
        [str(ROOT / "scripts" / "install-pi.sh"), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"pip install -q --upgrade -c \S+/constraints\.txt ", done.stdout)
