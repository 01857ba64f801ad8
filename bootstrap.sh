#!/usr/bin/env bash
# Set up timekeeper in ./.venv on Debian / Raspberry Pi OS (Bookworm or later).
#   ./bootstrap.sh          the program
#   ./bootstrap.sh --test   the program plus what the tests need (pytest, ruff, a pulse sound
#                           server, Chromium and chromedriver for the web pages, Mosquitto)
#   ./bootstrap.sh --bench  the tests' set-up plus PulseAudio's tools for bench/timing.py and
#                           stress-ng (the suite run under load)
# The pulse server: Debian's pulseaudio, except on a machine with PipeWire (Raspberry Pi OS
# Desktop): there installing pulseaudio would remove pipewire-alsa and change the machine's
# own sound, so the tests start a private PipeWire with its pulse server instead
# (pipewire-pulse, wireplumber, pulseaudio-utils: none of them removes anything).
#   ./bootstrap.sh --link   only (re)make the ~/.local/bin/timekeeper link
#   --no-link (with any of them): leave ~/.local/bin alone
# Installs the few Debian packages it needs (with sudo when not root), then pip-installs the
# project into .venv, with the dependency versions the tests ran on (constraints.txt), and links ~/.local/bin/timekeeper to it so that `timekeeper` is a command
# (it says whether ~/.local/bin is on your PATH, and how to add it). Safe to run again: it only
# does what is missing.
set -euo pipefail
cd "$(dirname "$0")"

extras=""
bench=""
link=1
link_only=""
for arg in "$@"; do
    case "$arg" in
        --test) extras="[test]" ;;
        --bench) extras="[test]"; bench=1 ;;
        --no-link) link="" ;;
        --link) link_only=1 ;;
        *) echo "bootstrap: unknown option $arg (--test, --bench, --link, --no-link)" >&2; exit 2 ;;
    esac
done

# `timekeeper` as a command: a link in ~/.local/bin (the usual place for a user's programs)
link_command() {
    local bin="$HOME/.local/bin" target="$PWD/.venv/bin/timekeeper"
    mkdir -p "$bin"
    if [ -e "$bin/timekeeper" ] && [ ! -L "$bin/timekeeper" ]; then
        echo "bootstrap: $bin/timekeeper is not a link; left alone: run .venv/bin/timekeeper"
        return
    fi
    ln -sfn "$target" "$bin/timekeeper"
    case ":$PATH:" in
        *":$bin:"*) echo "bootstrap: ready: timekeeper (linked in $bin to $target)" ;;
        *) echo "bootstrap: ready: .venv/bin/timekeeper, linked in $bin, which is not on your PATH:"
           echo "bootstrap:   add it with  echo 'export PATH=\"\$HOME/.local/bin:\$PATH\"' >> ~/.bashrc"
           echo "bootstrap:   and open a new terminal; then \`timekeeper …\` works as the docs write it" ;;
    esac
}

if [ -n "$link_only" ]; then
    link_command
    exit 0
fi

# apt-get as root: as it is when we are root (a container, a fresh image: often no sudo
# there), else through sudo; with neither, what to install is said, never "sudo: not found"
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "bootstrap: apt-get needs root and there is no sudo: run ./bootstrap.sh as root," \
             "or install ${need_apt[*]} first" >&2
        exit 1
    fi
}

# The tests' pulse server, from what this machine has: "pulseaudio" or "pipewire", then the
# packages still missing for it. Facts come from `have CMD`, `installed PKG` and `running
# NAME` (tests/project/test_packaging.py gives it made-up ones).
pulse_server_plan() {
    if have pulseaudio; then
        echo pulseaudio
    elif installed pipewire || running pipewire-pulse || running pipewire; then
        local missing=()
        installed pipewire-pulse || missing+=(pipewire-pulse)
        have wireplumber || missing+=(wireplumber)
        have pactl || missing+=(pulseaudio-utils)
        have dbus-daemon || missing+=(dbus-daemon dbus-session-bus-common)  # (wireplumber's bus)
        echo pipewire "${missing[@]}"
    else
        echo pulseaudio pulseaudio
    fi
}
have() { command -v "$1" >/dev/null; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q ' installed$'; }
running() { pgrep -x "$1" >/dev/null 2>&1; }

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv python3-pip)
# the tests play into a private pulse server of their own (a sound card lost mid-match)
if [ -n "$extras" ]; then
    read -r -a pulse_plan <<<"$(pulse_server_plan)"
    need_apt+=("${pulse_plan[@]:1}")
    if [ "${pulse_plan[0]}" = pipewire ]; then
        echo "bootstrap: this machine has PipeWire: Debian's pulseaudio is NOT installed (on" \
             "Bookworm it removes pipewire-alsa, the machine's own sound); the tests start a" \
             "private PipeWire with its pulse server (pipewire-pulse, wireplumber) in a folder" \
             "of their own, and leave this machine's sound alone"
    fi
    # the web pages' tests: headless Chromium and its driver from Debian (never downloaded)
    [ -x /usr/bin/chromium ] || need_apt+=(chromium)
    [ -x /usr/bin/chromedriver ] || need_apt+=(chromium-driver)
    # the hall's tests start a real MQTT broker of their own
    [ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || need_apt+=(mosquitto)
    # the desk's calls ("Round 3. Table 1: …") are spoken by espeak-ng, rendered in the tests
    command -v espeak-ng >/dev/null || need_apt+=(espeak-ng)
fi
if [ -n "$bench" ]; then  # the timing bench also records that server (parec) and asks it (pactl)
    command -v parec >/dev/null && command -v pactl >/dev/null || need_apt+=(pulseaudio-utils)
    # the suite's test under load: both cores kept busy (docs/how-it-works.md, Development)
    command -v stress-ng >/dev/null || need_apt+=(stress-ng)
fi
# soundfile's wheels bring their own libsndfile on x86-64 and aarch64 (64-bit Pi OS); elsewhere
# (32-bit Pi OS) it loads the system's, which reads MP3 from libsndfile 1.1 on (Bookworm: 1.2)
case "$(uname -m)" in
    x86_64|aarch64) ;;
    *) ldconfig -p 2>/dev/null | grep -q 'libsndfile\.so\.1' || need_apt+=(libsndfile1) ;;
esac
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "bootstrap: installing ${need_apt[*]} with apt-get"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

python3 - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"bootstrap: timekeeper needs Python 3.11 or newer, this is {sys.version.split()[0]}")
PY

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# constraints.txt: the versions the tests ran on (the machine's own pip constraints still
# apply). The warning filter hides only setuptools' ten-line notice that an editable install
# is one; every other warning and every error still shows.
PYTHONWARNINGS="ignore:Editable installation" \
    .venv/bin/python -m pip install -q -c constraints.txt -e ".$extras"
# the package's bytecode, written once now: an editable install is not compiled by pip, and
# where PYTHONDONTWRITEBYTECODE is set (CI) every box and command would compile every module
# it imports again (0.15 s of CPU a start; the suite starts hundreds)
.venv/bin/python -m compileall -q timekeeper
if [ -n "$link" ]; then
    link_command
else
    echo "bootstrap: ready: .venv/bin/timekeeper"
fi
