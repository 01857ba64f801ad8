#!/usr/bin/env bash
# The Pi's install path, checked on this x86_64 machine: an arm64 Debian Bookworm chroot run
# under qemu-user (64-bit Raspberry Pi OS is Bookworm arm64), the project installed in it by
# scripts/install-pi.sh from this checkout (every pin must come as an aarch64 wheel: nothing
# built), a match rendered there and compared byte for byte with this machine's render, and a
# subset of the tests run against the installed program. Prints a table. As root:
#
#   sudo scripts/check-arm64.sh                 build the chroot (the first time: 5-20 min) or reuse it
#   sudo scripts/check-arm64.sh --fresh         also a cold pip cache: every wheel downloaded
#   sudo scripts/check-arm64.sh --root DIR      the chroot's folder (default /var/tmp/tk-arm64-root)
#   sudo scripts/check-arm64.sh --tests "tests/rules/test_engine.py -k period"   other tests (pytest args)
#
# On the host it installs debootstrap, qemu-user-static and binfmt-support (they touch no sound)
# and enables the kernel's qemu-aarch64 handler; in the chroot, no service is started (a
# policy-rc.d says no, systemctl is a stand-in). The chroot is kept for the next run; its
# mounts are undone on exit. It takes minutes (qemu): not part of .ci/run (docs/pi.md).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
R=/var/tmp/tk-arm64-root
fresh=0
tests="tests/rules/test_engine.py tests/rules/test_profile.py"
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null \
    | awk '$2 == "bookworm" { print $1; exit }')
mirror=${mirror:-http://deb.debian.org/debian/}
while [ $# -gt 0 ]; do
    case "$1" in
        --fresh) fresh=1 ;;
        --root) shift; R=${1:?--root takes a folder} ;;
        --tests) shift; tests=${1:?--tests takes pytest arguments} ;;
        --mirror) shift; mirror=${1:?--mirror takes a Debian mirror URL} ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "check-arm64: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || { echo "check-arm64: run it as root (debootstrap, chroot)" >&2; exit 1; }
[ -x .venv/bin/timekeeper ] || { echo "check-arm64: run ./bootstrap.sh first (the x86_64 render)" >&2; exit 1; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
say() { echo "check-arm64: $*"; }
# in the chroot with a clean environment: none of this machine's pip settings (its wheel
# folder is x86_64's), except the CA bundle where pip's traffic goes through a proxy
in_root() {
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 ${PIP_CERT:+PIP_CERT="$PIP_CERT"} chroot "$R" "$@"
}

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || [ -x /usr/bin/qemu-aarch64-static ] \
    || need+=(qemu-user-static)
command -v update-binfmts >/dev/null || need+=(binfmt-support)
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]} on this machine (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 \
    || { echo "check-arm64: the kernel runs no aarch64 programs (binfmt qemu-aarch64)" >&2; exit 1; }

unmount() {
    for m in "$R/dev/shm" "$R/dev/pts" "$R/dev" "$R/proc"; do
        if mountpoint -q "$m"; then umount -l "$m"; fi
    done
}
trap unmount EXIT

t0=$(now)
if [ ! -e "$R/.tk-base" ]; then
    unmount
    rm -rf "$R"
    say "building the arm64 Bookworm chroot in $R from $mirror (minutes, under qemu)"
    debootstrap --variant=minbase --arch arm64 --include=ca-certificates bookworm "$R" "$mirror" \
        > /tmp/check-arm64-debootstrap.log
    printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"  # apt starts no service
    chmod +x "$R/usr/sbin/policy-rc.d"
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" \
        > "$R/etc/apt/sources.list"
    touch "$R/.tk-base"
fi
base_time=$(since "$t0")
mountpoint -q "$R/proc" || mount -t proc proc "$R/proc"
mountpoint -q "$R/dev" || mount --bind /dev "$R/dev"
mountpoint -q "$R/dev/pts" || mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts"
mountpoint -q "$R/dev/shm" || mount -t tmpfs -o mode=1777 shm "$R/dev/shm"
cp /etc/resolv.conf "$R/etc/resolv.conf"
# pip in the chroot trusts what pip here trusts (a proxy's CA, where this machine has one):
# the same bundle at the same path (update-ca-certificates under qemu takes minutes)
if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    mkdir -p "$R$(dirname "$PIP_CERT")"
    cp "$PIP_CERT" "$R$PIP_CERT"
fi
[ "$(in_root uname -m)" = aarch64 ] || { echo "check-arm64: the chroot is not aarch64" >&2; exit 1; }

# the project as install-pi.sh installs it on a Pi, from a copy of this checkout
say "copying the checkout to $R/opt/tk-src"
rm -rf "$R/opt/tk-src" "$R/opt/timekeeper"
mkdir -p "$R/opt/tk-src" "$R/etc/systemd/system"
tar -C "$SRC" --exclude=./.venv --exclude=./.git --exclude=./build --exclude='*.egg-info' \
    --exclude=__pycache__ -cf - . | tar -C "$R/opt/tk-src" -xf -
if [ "$fresh" -eq 1 ]; then rm -rf "$R/root/.cache/pip"; fi
cache=$([ -d "$R/root/.cache/pip" ] && echo warm || echo cold)
say "install-pi.sh in the chroot (pip cache: $cache); its log: /tmp/check-arm64-install.log"
t1=$(now)
install_ok=yes
# each line stamped with the seconds since the start: the pip step's own time is read off
set +e
in_root env INSTALL_PI_SYSTEMCTL=true bash /opt/tk-src/scripts/install-pi.sh 2>&1 \
    | while IFS= read -r line; do printf '%s %s\n' "$(since "$t1" | cut -d' ' -f1)" "$line"; done \
    > /tmp/check-arm64-install.log
[ "${PIPESTATUS[0]}" -eq 0 ] || install_ok=no
set -e
install_time=$(since "$t1")
pip_time=$(awk '/^[0-9.]+ \+ .*pip install -q --upgrade -c/ { start = $1; next }
    start != "" && /^[0-9.]+ \+ / { printf "%.1f s", $1 - start; exit }' /tmp/check-arm64-install.log)
if [ "$install_ok" = no ]; then
    tail -20 /tmp/check-arm64-install.log >&2
    echo "check-arm64: install-pi.sh failed in the chroot" >&2
    exit 1
fi
# a wheel built here has a plain linux_aarch64 tag; PyPI's are manylinux (or none-any)
built=$(grep -l '^Tag: .*-linux_aarch64$' "$R"/opt/timekeeper/.venv/lib/python3*/site-packages/*.dist-info/WHEEL 2>/dev/null \
    | sed -E 's|.*/([^/]*)\.dist-info/WHEEL|\1|' | xargs || true)

# a match rendered on both, compared byte for byte
host_wav=$(mktemp --suffix=.wav)
.venv/bin/timekeeper render --profile ithf -o "$host_wav" >/dev/null
t2=$(now)
in_root /usr/local/bin/timekeeper render --profile ithf -o /root/arm64.wav >/dev/null
render_time=$(since "$t2")
if cmp -s "$host_wav" "$R/root/arm64.wav"; then identical=yes; else identical=no; fi
sum=$(sha256sum "$R/root/arm64.wav" | cut -c1-16)
rm -f "$host_wav"

# tests, against the installed program (pytest from the copy's folder sees /opt/timekeeper's)
say "tests: $tests"
in_root /opt/timekeeper/.venv/bin/python -m pip install -q -c /opt/tk-src/constraints.txt \
    pytest pytest-xdist hypothesis > /tmp/check-arm64-pytest-install.log 2>&1
t3=$(now)
tests_ok=0
# shellcheck disable=SC2086  # (the pytest arguments are split as typed)
in_root bash -c "cd /opt/tk-src && /opt/timekeeper/.venv/bin/pytest -n 0 -p no:cacheprovider $tests" \
    > /tmp/check-arm64-tests.log 2>&1 || tests_ok=$?
test_time=$(since "$t3")
summary=$(grep -E '[0-9]+ (passed|failed)' /tmp/check-arm64-tests.log | tail -1 | tr -d '=' | xargs)

echo
echo "arm64 (Debian Bookworm under qemu-user) from this checkout; logs /tmp/check-arm64-*.log"
printf '%-36s %10s  %s\n' "step" "time" "result"
printf '%-36s %10s  %s\n' "chroot (built or reused)" "$base_time" "$R"
printf '%-36s %10s  %s\n' "install-pi.sh (apt, venv, pip)" "$install_time" \
    "ok; built from source: ${built:-none (every pin a wheel)}"
printf '%-36s %10s  %s\n' "  of which pip install (cache: $cache)" "${pip_time:-?}" \
    "-c constraints.txt, the project from a copy"
printf '%-36s %10s  %s\n' "render --profile ithf" "$render_time" \
    "identical to x86_64: $identical (sha256 $sum…)"
printf '%-36s %10s  %s\n' "pytest, against the installed copy" "$test_time" \
    "${summary:-no result: see the log} ($tests)"
[ "$identical" = yes ] && [ "$tests_ok" -eq 0 ] && [ -z "$built" ]
