"""A stand-in microphone for the paced-ALSA stack (bench/stacks, JACK's dummy backend): a
JACK client that hears what the device is handed, at the instant the bench counts it heard,
and offers it as a capture device the box opens as it would a microphone (the ALSA PCM
`standin`, bench/stacks/inside.sh: ALSA's jack PCM capturing from this client's output).

    python bench/standin_mic.py [PORT]    # until SIGTERM; PORT: system:playback_1

Its input takes every client port that feeds PORT (as they appear: the box's stream). What it
outputs is that, delayed by PORT's playback latency (JackPlaybackLatency: when JACK says a
cycle's frames reach the output, what bench/stacklab.py's JackRecorder counts as heard) plus
one period: a sound heard during a cycle is handed to a capture client at the next cycle's
start, as a sound card hands over what its converter took in during the period before. So a
frame reaches the capture device exactly one period after it is heard, the way a real
microphone's card with no converter delay would deliver it, and the box's calibrate finds
the latency the bench measures. Prints `standin: ready, delay N frames` once connected."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading

import numpy as np

PCM = "standin"  # the ALSA capture device it is heard through (bench/stacks/inside.sh)


def main(target: str = "system:playback_1") -> None:
    from stacklab import (  # (stacklab names this device: imported here, not above)
        jack_links,
        libjack,
    )

    jack = libjack()
    p, u32 = ctypes.c_void_p, ctypes.c_uint32
    # ahead of a load, as stacklab's JackRecorder: a thread of ours preempted while holding
    # the GIL would hold up JACK's cycle, which waits for this client's callback
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(30))
    client = jack.jack_client_open(b"standin", 0x01, None)  # JackNoStartServer
    if not client:
        raise SystemExit("standin: no JACK server")
    port_in = jack.jack_port_register(client, b"in", b"32 bit float mono audio", 0x1, 0)
    port_out = jack.jack_port_register(client, b"out", b"32 bit float mono audio", 0x2, 0)
    mine = jack.jack_port_name(port_in)
    span = (u32 * 2)()
    jack.jack_port_get_latency_range(jack.jack_port_by_name(client, target.encode()), 1, span)
    period = jack.jack_get_buffer_size(client)
    delay = span[0] + period  # heard at the cycle's start + latency; captured a period later
    history = np.zeros(delay, np.float32)  # the input's last `delay` frames before a cycle

    @ctypes.CFUNCTYPE(ctypes.c_int, u32, p)
    def process(n: int, _arg) -> int:
        nonlocal history
        got = np.ctypeslib.as_array(
            ctypes.cast(jack.jack_port_get_buffer(port_in, n), ctypes.POINTER(ctypes.c_float)),
            (n,),
        )
        both = np.concatenate((history, got))
        ctypes.memmove(jack.jack_port_get_buffer(port_out, n), both[:n].ctypes.data, n * 4)
        history = both[n:]
        return 0

    jack.jack_set_process_callback(client, ctypes.cast(process, p), None)
    jack.jack_activate(client)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"standin: ready, delay {delay} frames ({span[0]} + a period of {period})", flush=True)
    while not stop.wait(0.02):  # every port that feeds the target, as it appears
        names = jack.jack_get_ports(client, None, b"audio", 0x2)  # JackPortIsOutput
        if not names:
            continue
        k = 0
        while names[k]:
            name = names[k]
            k += 1
            if name.startswith((b"system:", b"standin:")):
                continue
            linked = jack_links(jack, client, name)
            if target.encode() in linked and mine not in linked:
                jack.jack_connect(client, name, mine)
        jack.jack_free(ctypes.cast(names, p))
    jack.jack_deactivate(client)
    jack.jack_client_close(client)


if __name__ == "__main__":
    main(*sys.argv[1:2])
