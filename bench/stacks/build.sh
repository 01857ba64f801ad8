#!/usr/bin/env bash
# bench/stacks/build.sh STACK: a Debian Bookworm chroot with the Pi's own sound stack, built
# once and cached under $TK_STACKS (default /var/cache/timekeeper-bench): nothing of this
# machine's own sound setup is installed, changed or started. STACK is
#   pipewire    PipeWire 0.3.65 + pipewire-pulse + WirePlumber, as on Pi OS Desktop
#   alsa-paced  JACK's dummy backend behind ALSA's jack PCM: a paced ALSA device without
#               hardware, the way SDL or the box's ALSA sink meet a Pi OS Lite sound card
# Needs root, debootstrap and the host's Debian mirror (the first deb line of its apt sources).
set -euo pipefail
STACK=${1:?usage: build.sh pipewire|alsa-paced}
CACHE=${TK_STACKS:-/var/cache/timekeeper-bench}
VERSION=2   # bump when a stack's package list changes: the chroot is built again
case $STACK in
  pipewire) PKGS="pipewire pipewire-pulse wireplumber pipewire-alsa pipewire-bin pipewire-jack pulseaudio-utils
            dbus dbus-user-session alsa-utils" ;;
  alsa-paced) PKGS="jackd2 libjack-jackd2-0 libasound2-plugins alsa-utils" ;;
  *) echo "build.sh: unknown stack '$STACK' (pipewire, alsa-paced)" >&2; exit 2 ;;
esac
# for every stack: the project's Python and its libraries, the benches' tools
PKGS="$PKGS python3 libsndfile1 libssl3 libffi8 libsqlite3-0 liblzma5 libbz2-1.0 zlib1g
      libreadline8 libncursesw6 libuuid1 procps stress-ng mosquitto util-linux"
R=$CACHE/$STACK-root
if [[ -f $R/.built-$VERSION ]]; then echo "$R"; exit 0; fi
mkdir -p "$CACHE"; exec 9> "$CACHE/.lock"; flock 9   # (one build at a time; another waits)
if [[ -f $R/.built-$VERSION ]]; then echo "$R"; exit 0; fi
command -v debootstrap >/dev/null || { echo "build.sh: debootstrap is missing (apt-get install debootstrap)" >&2; exit 2; }
MIRROR=${TK_MIRROR:-$(grep -rhoE '^(deb +|URIs: *)https?://[^ ]+/debian/?' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -1 | awk '{print $NF}' || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$CACHE"
BASE=$CACHE/base-root
if [[ ! -f $BASE/.built ]]; then
  rm -rf "$BASE"
  echo "build.sh: debootstrap bookworm from $MIRROR (about a minute)" >&2
  debootstrap --variant=minbase --include=ca-certificates bookworm "$BASE" "$MIRROR" >&2
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$MIRROR" "$MIRROR" > "$BASE/etc/apt/sources.list"
  printf '#!/bin/sh\nexit 101\n' > "$BASE/usr/sbin/policy-rc.d"; chmod +x "$BASE/usr/sbin/policy-rc.d"  # apt starts no daemon
  touch "$BASE/.built"
fi
rm -rf "$R"; cp -a "$BASE" "$R"; rm -f "$R/.built"
cp /etc/resolv.conf "$R/etc/resolv.conf"
echo "build.sh: installing $STACK's packages" >&2
unshare --mount --propagation private sh -c "mount -t proc proc '$R/proc' && chroot '$R' sh -c \
  'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(echo $PKGS)'" >&2
if [[ $STACK == alsa-paced ]]; then
  # the default device on JACK's first playback port; box1…box8 (bench/hall.py) a port each
  { echo 'pcm.!default { type plug; slave.pcm "jack" }'
    echo 'pcm.jack { type jack; playback_ports { 0 system:playback_1 } }'
    for i in 1 2 3 4 5 6 7 8; do
      echo "pcm.box$i { type plug; slave.pcm { type jack; playback_ports { 0 system:playback_$i } } }"
    done; } > "$R/etc/asound.conf"
fi
touch "$R/.built-$VERSION"
echo "$R"
