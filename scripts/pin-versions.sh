#!/usr/bin/env bash
# Write constraints.txt: the exact versions of every dependency (the test tools too) that
# bootstrap.sh and install-pi.sh install, so that a box runs what the tests ran on.
#
#   scripts/pin-versions.sh              upgrade: the newest versions pyproject.toml allows,
#                                        resolved in a fresh venv (the network is used)
#   scripts/pin-versions.sh --from VENV  pin what VENV has installed (e.g. .venv)
#
# Then install them and run the suite before committing constraints.txt:
#   ./bootstrap.sh --test && .venv/bin/python -m pytest -q
set -euo pipefail

from=""
case "${1:-}" in
    "") ;;
    --from) from=$(realpath "${2:?"pin-versions: --from takes a venv folder"}") ;;
    *) echo "pin-versions: unknown option $1 (--from VENV)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

if [ -z "$from" ]; then
    from=$(mktemp -d)
    trap 'rm -rf "$from"' EXIT
    python3 -m venv "$from"
    "$from/bin/python" -m pip install -q --upgrade pip
    # (the filter hides only setuptools' notice about editable installs)
    PYTHONWARNINGS="ignore:Editable installation" \
        "$from/bin/python" -m pip install -q -e ".[test]"
fi

{
    echo "# The versions the tests ran on, installed by bootstrap.sh and install-pi.sh"
    echo "# (pip install -c constraints.txt). pygame-ce stays pinned: the live stream uses"
    echo "# pygame._sdl2.audio, which pygame-ce marks experimental."
    echo "# Made by scripts/pin-versions.sh; upgrade with it (docs/how-it-works.md, Development)."
    "$from/bin/python" -m pip freeze --exclude-editable | grep -v '^#'
} > constraints.txt.new
grep -q '^pygame-ce==' constraints.txt.new || {
    rm -f constraints.txt.new
    echo "pin-versions: $from has no pygame-ce: not a timekeeper venv" >&2
    exit 1
}
mv constraints.txt.new constraints.txt
echo "pin-versions: constraints.txt pins $(grep -c '==' constraints.txt) packages"
