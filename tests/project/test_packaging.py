"""`pip install .` (not editable) must carry the built-in profiles and the default pack:
the wheel is built and run from another folder, away from the source checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT


@pytest.mark.slow
def test_the_wheel_carries_profiles_and_sounds_and_finds_them(tmp_path: Path) -> None:
    # built from a copy of the project's files: pip builds in the tree it is given, and a
    # build/ left in the checkout (ignored by git) would carry modules long gone into the wheel
    source = tmp_path / "source"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
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
            str(source),
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
        assert f"timekeeper/hall/desk/static/{page}" in names  # the desk's (and web's common.js)
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


# ------------------------------------------------ the tests' pulse server (bootstrap.sh --test)


def _pulse_plan(have: set[str], installed: set[str], running: set[str]) -> list[str]:
    """bootstrap.sh's pulse_server_plan on a made-up machine: what it chooses, what it installs."""
    function = re.search(
        r"^pulse_server_plan\(\) \{.*?^\}$", (ROOT / "bootstrap.sh").read_text(), re.M | re.S
    ).group()
    facts = "\n".join(
        f'{name}() {{ case " {" ".join(sorted(names))} " in *" $1 "*) return 0;; esac; return 1; }}'
        for name, names in (("have", have), ("installed", installed), ("running", running))
    )
    done = subprocess.run(
        ["/bin/bash", "-c", f"{facts}\n{function}\npulse_server_plan"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


PI_OS_DESKTOP = {"pipewire", "pipewire-pulse", "pipewire-alsa", "wireplumber"}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("have", "installed", "running", "plan"),
    [
        # a Pi OS Desktop: PipeWire runs; nothing to install, pulseaudio least of all
        (
            {"pipewire", "wireplumber", "pactl", "dbus-daemon"},
            PI_OS_DESKTOP,
            {"pipewire", "pipewire-pulse"},
            ["pipewire"],
        ),
        # ... with pactl (pulseaudio-utils) missing, as on a fresh one
        (
            {"pipewire", "wireplumber", "dbus-daemon"},
            PI_OS_DESKTOP,
            set(),
            ["pipewire", "pulseaudio-utils"],
        ),
        # PipeWire installed but only its core: the pulse layer, the session manager and the
        # session bus the tests give it come too
        (
            set(),
            {"pipewire"},
            set(),
            [
                "pipewire",
                "pipewire-pulse",
                "wireplumber",
                "pulseaudio-utils",
                "dbus-daemon",
                "dbus-session-bus-common",
            ],
        ),
        # a PipeWire not from Debian's packages, running
        (
            {"pactl", "wireplumber", "dbus-daemon"},
            set(),
            {"pipewire-pulse"},
            ["pipewire", "pipewire-pulse"],
        ),
        # pulseaudio already there (this machine, CI): used, whatever else runs
        ({"pulseaudio", "pactl"}, {"pipewire"}, {"pipewire"}, ["pulseaudio"]),
        # Pi OS Lite, a server: no sound server at all: Debian's pulseaudio
        (set(), set(), set(), ["pulseaudio", "pulseaudio"]),
    ],
)
def test_bootstrap_never_installs_pulseaudio_where_pipewire_is(
    have: set[str], installed: set[str], running: set[str], plan: list[str]
) -> None:
    """On Bookworm Debian's pulseaudio removes pipewire-alsa: on a machine with PipeWire
    (installed, or running) bootstrap takes PipeWire's own pulse server for the tests."""
    assert _pulse_plan(have, installed, running) == plan


@pytest.mark.slow
def test_bootstrap_test_on_a_pipewire_machine_says_so_before_apt_and_skips_pulseaudio(
    tmp_path: Path,
) -> None:
    """`./bootstrap.sh --test` as typed, on a machine that has PipeWire and no pulseaudio:
    the commands it asks are made up (dpkg-query, pgrep, apt-get: records and stops there)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    fakes = {
        "dpkg-query": 'case "$*" in *pipewire-pulse|*" pipewire") echo "ok installed";; esac',
        "pgrep": 'case "$*" in *pipewire*) exit 0;; esac; exit 1',
        "apt-get": 'echo "apt-get $*"; case "$*" in *install*) exit 1;; esac',
        "id": "echo 0",
    }
    for name, text in fakes.items():
        (tools / name).write_text(f"#!/bin/sh\n{text}\n")
        (tools / name).chmod(0o755)
    for name in ("python3", "uname", "grep", "dirname", "env"):  # real ones; no pulseaudio
        (tools / name).symlink_to(shutil.which(name))
    (tmp_path / "bootstrap.sh").write_text((ROOT / "bootstrap.sh").read_text())
    done = subprocess.run(
        ["/bin/bash", str(tmp_path / "bootstrap.sh"), "--test"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tools), "HOME": str(tmp_path)},
    )
    lines = done.stdout.splitlines()
    install = next(line for line in lines if line.startswith("apt-get install"))
    said = next(i for i, line in enumerate(lines) if "this machine has PipeWire" in line)
    assert said < lines.index(install), done.stdout
    assert "NOT installed" in lines[said] and "pipewire-alsa" in lines[said]
    wanted = install.split()
    assert "pulseaudio" not in wanted, install
    assert {"wireplumber", "pulseaudio-utils"} <= set(wanted), install


@pytest.mark.slow
@pytest.mark.parametrize(
    ("machine", "bits"), [("armv7l", "32"), ("aarch64", "32"), ("armv6l", "32")]
)
def test_the_pi_install_on_32_bit_pi_os_says_why_not_and_what_works_before_anything(
    tmp_path: Path, machine: str, bits: str
) -> None:
    """32-bit Pi OS (armhf; also under a 64-bit kernel, where uname says aarch64): five pins
    have no wheel, so install-pi.sh stops before apt and pip with what to do instead."""
    for name, text in (("uname", machine), ("getconf", bits)):
        (tmp_path / name).write_text(f"#!/bin/sh\necho {text}\n")
        (tmp_path / name).chmod(0o755)
    done = subprocess.run(
        [str(ROOT / "scripts" / "install-pi.sh"), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
    )
    assert done.returncode == 1
    assert done.stdout == "", "nothing is done (not even apt-get update)"
    assert f"32-bit Raspberry Pi OS ({machine}, 32-bit programs)" in done.stderr
    for pin in ("numpy", "pygame-ce", "PyYAML", "soxr", "cffi"):
        assert pin in done.stderr
    assert "64-bit Raspberry Pi OS" in done.stderr and "Nothing was installed" in done.stderr


@pytest.mark.slow
def test_the_arm64_check_says_what_it_does_and_refuses_what_it_does_not_know() -> None:
    """scripts/check-arm64.sh takes minutes under qemu (docs/pi.md runs it by hand); here only
    its help and its refusal, which must come before anything is installed or built."""
    script = str(ROOT / "scripts" / "check-arm64.sh")
    helped = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "install-pi.sh" in helped.stdout
    assert "sudo scripts/check-arm64.sh --fresh" in helped.stdout
    refused = subprocess.run([script, "--bogus"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr == "check-arm64: unknown option --bogus (see --help)\n"


@pytest.mark.slow  # (a process of its own: a fresh interpreter's modules)
def test_a_box_does_not_load_the_tournaments_file_reader_or_the_qr_library() -> None:
    """A hall topic's name check pulled in tournament.spec (and segno, through the public
    pages' QR): 7 MB more on every running box (over the box's memory budget). The pattern
    lives in rules now; this keeps it so."""
    code = (
        "import sys, timekeeper.box.live, timekeeper.box.series, timekeeper.hall.bus.messages; "
        "print(sorted(m for m in ('timekeeper.tournament.spec', 'segno') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
