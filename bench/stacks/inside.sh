#!/usr/bin/env bash
# bench/stacks/inside.sh CMD...: (in the chroot, from run.sh) start $TK_STACK's daemons, run
# CMD, stop what was started (by pid).
set -uo pipefail
cd "$XDG_RUNTIME_DIR"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap stop EXIT
case $TK_STACK in
  pipewire)
    dbus-daemon --session --address="unix:path=$XDG_RUNTIME_DIR/bus" --fork --print-pid > dbus.pid
    pids+=("$(cat dbus.pid)")
    export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
    pipewire > pipewire.log 2>&1 & pids+=($!)
    for _ in $(seq 50); do [[ -S $XDG_RUNTIME_DIR/pipewire-0 ]] && break; sleep 0.1; done
    wireplumber > wireplumber.log 2>&1 & pids+=($!)
    pipewire-pulse > pipewire-pulse.log 2>&1 & pids+=($!)
    for _ in $(seq 100); do pactl info > /dev/null 2>&1 && break; sleep 0.1; done
    pactl info | grep -q 'on PipeWire' || { echo "inside.sh: pipewire-pulse did not start" >&2; cat ./*.log >&2; exit 1; }
    # the bench's sinks are made by the bench (pactl load-module module-null-sink)
    pw-metadata -n settings 0 clock.force-quantum "$TK_QUANTUM" > /dev/null
    echo "stack pipewire: $(pipewire --version | grep -o 'libpipewire [0-9.]*'), quantum forced to $TK_QUANTUM frames (pw-metadata -n settings 0 clock.force-quantum $TK_QUANTUM)" >&2
    export PULSE_SERVER="unix:$XDG_RUNTIME_DIR/pulse/native"
    ;;
  alsa-paced)
    jackd -R -P 70 -d dummy -r 48000 -p "$TK_JACK_PERIOD" -C 2 -P 8 > jackd.log 2>&1 & pids+=($!)
    for _ in $(seq 100); do jack_lsp > /dev/null 2>&1 && break; sleep 0.1; done
    jack_lsp > /dev/null 2>&1 || { echo "inside.sh: jackd did not start" >&2; cat jackd.log >&2; exit 1; }
    # `standin`: a capture device hearing what the device plays (bench/standin_mic.py, started
    # by whoever needs it, before the device is opened)
    export XDG_CONFIG_HOME=$XDG_RUNTIME_DIR/config
    mkdir -p "$XDG_CONFIG_HOME/alsa"
    echo 'pcm.standin { type plug; slave.pcm { type jack; capture_ports { 0 standin:out } } }' \
      > "$XDG_CONFIG_HOME/alsa/asoundrc"
    echo "stack alsa-paced: jackd $(jackd --version 2>/dev/null | grep -o 'version [0-9.]*' | head -1), dummy backend, $TK_JACK_PERIOD frames a period, ALSA's jack PCM as default" >&2
    ;;
esac
cd "$TK_PROJECT" && "$@"
