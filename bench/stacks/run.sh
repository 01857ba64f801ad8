#!/usr/bin/env bash
# bench/stacks/run.sh STACK CMD...: run CMD inside STACK's chroot (built by build.sh, once),
# with the stack's own daemons started for it and stopped after it. The mounts live in a
# private mount namespace (gone with the command); the project and its venv's Python are
# bound in at the same paths, so CMD runs this checkout as it is (from its folder).
#   pipewire    dbus + pipewire + wireplumber + pipewire-pulse, a null sink "bench" as the
#               default, and the graph's quantum FORCED to $TK_QUANTUM (1024) frames: without
#               it pipewire-pulse's monitor recordings have holes
#   alsa-paced  jackd -d dummy at 48 kHz, $TK_JACK_PERIOD (256) frames a period, behind
#               ALSA's jack PCM as the default device
set -euo pipefail
STACK=${1:?usage: run.sh pipewire|alsa-paced CMD...}; shift
HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT=$(cd "$HERE/../.." && pwd)
R=$("$HERE/build.sh" "$STACK")
BASEPY=$("$PROJECT/.venv/bin/python" -c 'import sys; print(sys.base_prefix)')
VENV=$(readlink -f "$PROJECT/.venv")   # (a worktree's .venv may be a link to another's)
export TK_STACK_ROOT=$R TK_PROJECT=$PROJECT TK_BASEPY=$BASEPY TK_STACK=$STACK TK_VENV=$VENV
exec unshare --mount --propagation private -- bash -c '
set -euo pipefail
R=$TK_STACK_ROOT
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --bind /dev "$R/dev"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts"
mount -t tmpfs -o mode=1777 shm "$R/dev/shm"
mount -t tmpfs -o mode=1777 tmp "$R/tmp"
mkdir -p "$R/run/user/0"; mount -t tmpfs -o mode=700 run "$R/run/user/0"
for d in "$TK_PROJECT" "$TK_BASEPY" "$TK_VENV"; do
  [[ $d == /usr ]] && continue
  mkdir -p "$R$d"; mount --bind "$d" "$R$d"
done
exec chroot "$R" /usr/bin/env -u PIP_FIND_LINKS HOME=/root XDG_RUNTIME_DIR=/run/user/0 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TK_STACK=$TK_STACK TK_PROJECT=$TK_PROJECT TK_QUANTUM=${TK_QUANTUM:-1024} TK_JACK_PERIOD=${TK_JACK_PERIOD:-256} \
  bash "$TK_PROJECT/bench/stacks/inside.sh" "$@"
' run.sh "$@"
