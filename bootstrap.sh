#!/usr/bin/env bash
# Set up timekeeper in ./.venv on Debian / Raspberry Pi OS (Bookworm or later).
#   ./bootstrap.sh          the program
#   ./bootstrap.sh --test   the program plus what the tests need (pytest, ruff, PulseAudio,
#                           Mosquitto)
#   ./bootstrap.sh --bench  the tests' set-up plus PulseAudio's tools for bench/timing.py
# Installs the few Debian packages it needs (with sudo when not root), then pip-installs the
# project into .venv. Safe to run again: it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")"

extras=""
bench=""
case "${1:-}" in
    --test) extras="[test]" ;;
    --bench) extras="[test]"; bench=1 ;;
esac

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv python3-pip)
# the tests play into a private PulseAudio server (a sound card lost mid-match)
if [ -n "$extras" ]; then
    command -v pulseaudio >/dev/null || need_apt+=(pulseaudio)
    # the hall's tests start a real MQTT broker of their own
    [ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || need_apt+=(mosquitto)
fi
if [ -n "$bench" ]; then  # the timing bench also records that server (parec) and asks it (pactl)
    command -v parec >/dev/null && command -v pactl >/dev/null || need_apt+=(pulseaudio-utils)
fi
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
.venv/bin/python -m pip install -q -e ".$extras"
echo "bootstrap: ready: .venv/bin/timekeeper"
