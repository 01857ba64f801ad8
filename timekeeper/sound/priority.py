"""A thread's head start on a busy machine (a Pi that also runs its kiosk's Chromium).

Two threads of a box decide when a cue is heard: the runner's, which hands each cue over
ahead of its due time, and the audio writer's, which mixes it into the stream. Each raises
itself; nothing else in the box does (a runaway web handler at SCHED_FIFO could lock up
the Pi). Priority costs no CPU: it only decides who runs first (docs/timing.md)."""

from __future__ import annotations

import os
import threading

RT_PRIORITY = 4  # SCHED_FIFO priority: below the sound server's io threads (PulseAudio: 5)


def raise_priority() -> str:
    """Raise the calling thread: SCHED_FIFO where the box may have it (root, CAP_SYS_NICE or
    a LimitRTPRIO=), else a nice value 10 lower where permitted (the unit's LimitNICE=),
    else nothing. Says which."""
    try:  # (threads and processes it starts, espeak-ng's included, are not real-time)
        os.sched_setscheduler(
            0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(RT_PRIORITY)
        )
        return f"SCHED_FIFO {RT_PRIORITY}"
    except (OSError, AttributeError):
        pass
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) - 10)
        return "nice -10"
    except OSError:
        return "normal"
