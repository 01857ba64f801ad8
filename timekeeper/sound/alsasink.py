"""The ALSA sink: one playback PCM through libasound (ctypes), straight on the card, as a box
on Raspberry Pi OS Lite has it (no sound server), timed by the device's own report.

Why not SDL there: SDL's ALSA driver does not say how late the device plays, so its stream
is timed by its callbacks plus a constant (+58.5 ms late on a paced ALSA device, +74.8 ms on
pipewire-alsa, docs/timing.md). libasound knows: `snd_pcm_status` gives the device's delay
(frames from the next one written until it is heard) and the instant it was read (`htstamp`,
on CLOCK_MONOTONIC as asked here), taken together by the driver — so no scheduling delay of
ours enters the figure, as with PulseAudio's timing reports (sound/pulse.py).

As a `Sink` (sound/framed.py) it is pushed (the writer waits for room in poll(), the GIL let
go, for as long as the device takes to play the frames it lacks, or until wake() or
interrupt() write to its pipe), reports its
timing, and rewrites: a press is mixed into the frames written already but not yet played
(`snd_pcm_rewind` back to them, then written again), so it is heard REWRITE_AHEAD after it
(~30 ms) and not one buffer later (256 ms + a block: 0.3-0.35 s). Where the device cannot
rewind as far (`snd_pcm_rewindable` less, less its least period: `guard`), the frames it
still can are written again: the
sound's start is cut, never its timing; the delay and report stay the device's own, as the
write index goes back with the rewind."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import math
import os
import select
import time
from collections.abc import Callable

import numpy as np

from timekeeper.sound import alsa
from timekeeper.sound.framed import Sink
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError

PERIOD = 4096  # frames per write (85 ms): ~12 wake-ups a second
BUFFER = 3  # blocks in the device's buffer (256 ms): a writer late by 170 ms underruns not
WAIT = 100  # ms at most a wait for room lasts (a wake or a close ends it at once)
# a rewind stops this far (after the device's least period) short of the frames it plays:
# the rewrite's own time (a wait for the GIL: 5 ms) before the rewound frames are full again
REWIND_MARGIN = 0.005

_PLAYBACK, _NONBLOCK = 0, 1  # snd_pcm_stream_t, open mode
_FLOAT_LE, _RW_INTERLEAVED = 14, 3  # snd_pcm_format_t, snd_pcm_access_t
_TSTAMP_ENABLE, _TSTAMP_MONOTONIC = 1, 1  # snd_pcm_tstamp_t, snd_pcm_tstamp_type_t
_RUNNING = 3  # snd_pcm_state_t


class _Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


_lib = None


def _library():
    """libasound, loaded once; None where it is not installed."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL("libasound.so.2")
        except OSError:
            return None
        p, i, u, long = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_long
        pp = ctypes.POINTER(p)
        for name, restype, argtypes in (
            ("snd_pcm_open", i, [pp, ctypes.c_char_p, i, i]),
            ("snd_pcm_set_params", i, [p, i, i, u, u, i, u]),
            ("snd_pcm_get_params", i, [p, ctypes.POINTER(long), ctypes.POINTER(long)]),
            ("snd_pcm_hw_params_malloc", i, [pp]),
            ("snd_pcm_hw_params_free", None, [p]),
            ("snd_pcm_hw_params_any", i, [p, p]),
            ("snd_pcm_hw_params_set_rate", i, [p, p, u, i]),
            ("snd_pcm_hw_params_get_period_size_min", i, [p, ctypes.POINTER(ctypes.c_ulong), p]),
            ("snd_pcm_sw_params_malloc", i, [pp]),
            ("snd_pcm_sw_params_free", None, [p]),
            ("snd_pcm_sw_params_current", i, [p, p]),
            ("snd_pcm_sw_params_set_tstamp_mode", i, [p, p, i]),
            ("snd_pcm_sw_params_set_tstamp_type", i, [p, p, i]),
            ("snd_pcm_sw_params_set_avail_min", i, [p, p, ctypes.c_ulong]),
            ("snd_pcm_sw_params_set_start_threshold", i, [p, p, ctypes.c_ulong]),
            ("snd_pcm_sw_params", i, [p, p]),
            ("snd_pcm_status_malloc", i, [pp]),
            ("snd_pcm_status_free", None, [p]),
            ("snd_pcm_status", i, [p, p]),
            ("snd_pcm_status_get_state", i, [p]),
            ("snd_pcm_status_get_delay", long, [p]),
            ("snd_pcm_status_get_htstamp", None, [p, ctypes.POINTER(_Timespec)]),
            ("snd_pcm_delay", i, [p, ctypes.POINTER(long)]),
            ("snd_pcm_avail_update", long, [p]),
            ("snd_pcm_wait", i, [p, i]),
            ("snd_pcm_rewindable", long, [p]),
            ("snd_pcm_rewind", long, [p, ctypes.c_ulong]),
            ("snd_pcm_writei", long, [p, p, ctypes.c_ulong]),
            ("snd_pcm_recover", i, [p, i, i]),
            ("snd_pcm_close", i, [p]),
            ("snd_strerror", ctypes.c_char_p, [i]),
            ("snd_pcm_type", i, [p]),
            ("snd_pcm_type_name", ctypes.c_char_p, [i]),
        ):
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        _lib = lib
    return _lib


class AlsaSink(Sink):
    """Float32 mono at 48 kHz on the ALSA PCM `device` ("default": the system's, which on
    Pi OS Lite is the first card through `plug`, converting what the card cannot take).

    Every call but interrupt() belongs to the writer thread."""

    name = "alsa"
    reports = True
    rewrites = True

    def __init__(
        self, device: str | None = None, period: int = PERIOD, periods: int = BUFFER
    ) -> None:
        lib = _library()
        if lib is None:
            raise AudioError("cannot open an ALSA device: libasound is missing")
        alsa.quiet()  # (libasound's own error lines to the debug log)
        self._lib, self._name = lib, device or "default"
        self._pcm = ctypes.c_void_p()
        self._status = ctypes.c_void_p()
        self._interrupted = self._woken = False
        self.rewound = 0  # frames written again after a press (the bench and tests read it)
        self._written = 0  # frames: the stream's write index
        self._stamp = _Timespec()
        self._last_stamp: tuple[int, int] | None = None
        self._addresses: dict[int, tuple[object, int]] = {}
        self._check(
            lib.snd_pcm_open(ctypes.byref(self._pcm), self._name.encode(), _PLAYBACK, _NONBLOCK),
            "open",
        )
        self._wake_r, self._wake_w = os.pipe()  # wake()/interrupt() end a poll() at once
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        # what the PCM is: HW (a card), PLUG (a card, converted), IOPLUG (a plugin: PipeWire's)
        kind = lib.snd_pcm_type_name(lib.snd_pcm_type(self._pcm))
        self.kind = (kind or b"?").decode("ascii", "replace")
        try:
            self._configure(period, periods)
        except BaseException:
            self.close()
            raise

    def _configure(self, period: int, periods: int) -> None:
        lib, pcm = self._lib, self._pcm
        self._check(
            lib.snd_pcm_set_params(
                pcm, _FLOAT_LE, _RW_INTERLEAVED, 1, RATE, 1, round(period * periods / RATE * 1e6)
            ),
            "set up",
        )
        buffer, got = ctypes.c_long(), ctypes.c_long()
        self._check(lib.snd_pcm_get_params(pcm, ctypes.byref(buffer), ctypes.byref(got)), "read")
        # our block, whatever the device's own period (pipewire-alsa: its quantum, 21 ms);
        # never more than half its buffer
        self.device_period = got.value
        self.period = max(64, min(period, buffer.value // 2))
        self.latency = buffer.value / RATE
        self.stall = 2.0 + self.latency
        self.guard = self._least_period() + round(REWIND_MARGIN * RATE)
        sw = ctypes.c_void_p()
        self._check(lib.snd_pcm_sw_params_malloc(ctypes.byref(sw)), "set up")
        try:
            self._check(lib.snd_pcm_sw_params_current(pcm, sw), "set up")
            # the status stamps on CLOCK_MONOTONIC (where a device cannot: the real-time
            # clock, told by the stamp's distance from it; see timing())
            lib.snd_pcm_sw_params_set_tstamp_mode(pcm, sw, _TSTAMP_ENABLE)
            lib.snd_pcm_sw_params_set_tstamp_type(pcm, sw, _TSTAMP_MONOTONIC)
            # woken once a whole block fits, not at every period of the device's own
            lib.snd_pcm_sw_params_set_avail_min(pcm, sw, self.period)
            # started by the write after which no block fits: the writer never waits for
            # room on a device that is not playing. snd_pcm_set_params starts it at a buffer
            # rounded to the DEVICE's period, which our blocks need not reach (480-frame
            # periods: 11520 frames, two 4096-frame blocks in and the third does not fit; a
            # device that never starts never makes room: the stream stalled, reopened forever)
            self.start_at = buffer.value - self.period + 1
            lib.snd_pcm_sw_params_set_start_threshold(pcm, sw, self.start_at)
            self._check(lib.snd_pcm_sw_params(pcm, sw), "set up")
        finally:
            lib.snd_pcm_sw_params_free(sw)
        self._check(lib.snd_pcm_status_malloc(ctypes.byref(self._status)), "set up")
        self._poller = select.poll()
        self._poller.register(self._wake_r, select.POLLIN)

    def _least_period(self) -> int:
        """The fewest frames the device takes at a time: the least period it offers (JACK's
        PCM: JACK's own period; a card: its DMA's), 0 where it does not say."""
        lib, hw = self._lib, ctypes.c_void_p()
        if lib.snd_pcm_hw_params_malloc(ctypes.byref(hw)) < 0:
            return 0
        try:
            least = ctypes.c_ulong()
            if (
                lib.snd_pcm_hw_params_any(self._pcm, hw) < 0
                or lib.snd_pcm_hw_params_set_rate(self._pcm, hw, RATE, 0) < 0  # (plug: any)
                or lib.snd_pcm_hw_params_get_period_size_min(hw, ctypes.byref(least), None) < 0
            ):
                return 0
            return min(least.value, self.period)
        finally:
            lib.snd_pcm_hw_params_free(hw)

    def _check(self, result: int, what: str) -> int:
        if result < 0:
            text = (self._lib.snd_strerror(result) or b"error").decode("utf-8", "replace")
            raise AudioError(
                f"cannot {what} the ALSA device {self._name!r} ({text}); check the sound card "
                "(`aplay -l`), or run with --audio silent (audio.sink: silent)"
            )
        return result

    def timing(self, clock: Callable[[], float]) -> tuple[int, float] | None:
        """(frame, when it is heard on `clock`): the device's delay and the instant it was
        read, from one snd_pcm_status; None while the device is not running or the stamp is
        not new."""
        lib, status = self._lib, self._status
        if (
            lib.snd_pcm_status(self._pcm, status) < 0
            or lib.snd_pcm_status_get_state(status) != _RUNNING
        ):
            return None
        lib.snd_pcm_status_get_htstamp(status, ctypes.byref(self._stamp))
        stamp = (self._stamp.sec, self._stamp.nsec)
        if stamp == self._last_stamp or stamp == (0, 0):
            return None
        self._last_stamp = stamp
        at = self._stamp.sec + self._stamp.nsec / 1e9
        delay = lib.snd_pcm_status_get_delay(status)
        return self._written, at + _offset_to(clock, at) + delay / RATE

    def delay(self) -> float:
        """Seconds until the next frame written is heard (before the first report)."""
        frames = ctypes.c_long()
        if self._lib.snd_pcm_delay(self._pcm, ctypes.byref(frames)) < 0:
            return self.latency
        return frames.value / RATE

    def write(self, block) -> None:
        """Waits for room (_poll), then hands `block` to the device;
        an underrun is recovered from (those frames are late: the clock follows)."""
        lib, pcm = self._lib, self._pcm
        address = self._addresses.get(id(block))
        if address is None or address[0] is not block:
            address = self._addresses[id(block)] = (block, block.ctypes.data)
        done, total = 0, len(block)
        while done < total:
            if self._interrupted:
                raise AudioError("ALSA stream: closed")
            room = lib.snd_pcm_avail_update(pcm)
            if room < 0:
                self._recover(room)
                continue
            if room < total - done:  # (a block at a time: one wake-up, one write)
                self._poll(room, total - done)
                continue
            n = lib.snd_pcm_writei(pcm, address[1] + done * 4, min(room, total - done))
            if n == -errno.EAGAIN:
                continue
            if n < 0:
                self._recover(n)
                continue
            done += n
            self._written += n

    def wait_room(self, frames: int) -> bool:
        """Blocks until the device has room for `frames` (the GIL let go); False when woken
        before (wake(): a press to write in)."""
        while True:
            if self._interrupted:
                raise AudioError("ALSA stream: closed")
            if self._woken:
                self._woken = False
                return False
            room = self._lib.snd_pcm_avail_update(self._pcm)
            if room < 0:
                self._recover(room)
                continue
            if room >= frames:
                return True
            self._poll(room, frames)

    def _poll(self, room: int, need: int) -> None:
        """Waits until `need` frames of room are due (the device plays `need - room` more),
        or the wake pipe is written to, whichever comes first. Timed from the device's own
        rate and not by its poll descriptors: a plugin's (PipeWire's eventfd) stay readable
        while its `revents` say no room, and a poll on them spun at 25 % of a core."""
        timeout = min(WAIT, max(1, math.ceil((need - room) * 1000 / RATE) + 1))
        if self._poller.poll(timeout):
            with contextlib.suppress(OSError):
                os.read(self._wake_r, 64)

    def wake(self) -> None:
        """From another thread: end the writer's wait for room now, to rewrite (a press)."""
        self._woken = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"w")

    def write_at(self, block, frame: int) -> None:
        """Writes `block` over the stream's frames from `frame` on: the device is rewound
        there (as far as it can: frames already played, or past `snd_pcm_rewindable` less
        `guard`, are
        left as they are and the block's head dropped), then the block is written; the
        stream goes on from its end, which is where it was."""
        lib, pcm = self._lib, self._pcm
        back = self._written - frame
        if back <= 0:
            self.write(block)
            return
        lib.snd_pcm_avail_update(pcm)  # (a plugin's position moves only when asked)
        # never back into the frames the device takes next (`guard`): rewindable counts
        # them, but JACK's PCM copies a whole JACK period at its cycle's start from
        # another thread, and a cycle that comes between the rewind and the rewrite finds
        # less than that period written: an underrun, the buffer dropped, the stream
        # started again
        can = max(0, min(back, lib.snd_pcm_rewindable(pcm) - self.guard))
        done = lib.snd_pcm_rewind(pcm, can) if can else 0
        done = max(0, done)
        self._written -= done
        self.rewound += done
        rest = block[back - done :]
        if len(rest):
            self.write(np.ascontiguousarray(rest))

    def _recover(self, error: int) -> None:
        """An underrun (or a suspend): the device is prepared again, the frames it held are
        gone and it starts anew, so its timeline does (`restarts`: the clock starts over)."""
        self._check(self._lib.snd_pcm_recover(self._pcm, int(error), 1), "recover")
        self.restarts += 1

    def interrupt(self) -> None:
        """From another thread: the writer leaves at once (its poll is woken)."""
        self._interrupted = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"i")

    def close(self) -> None:
        if self._pcm:
            self._lib.snd_pcm_close(self._pcm)
            self._pcm = ctypes.c_void_p()
        if self._status:
            self._lib.snd_pcm_status_free(self._status)
            self._status = ctypes.c_void_p()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1


def _offset_to(clock: Callable[[], float], stamp: float) -> float:
    """What to add to a status stamp to put it on `clock`: the stamp is on CLOCK_MONOTONIC
    as asked, or on the real-time clock where a plugin ignores that (told apart by which of
    the two it lies near); the offset from the nearest pair of readings."""
    best, offset = float("inf"), 0.0
    for _ in range(3):
        a = clock()
        mono, real = time.monotonic(), time.time()
        b = clock()
        if b - a < best:
            base = mono if abs(stamp - mono) < abs(stamp - real) else real
            best, offset = b - a, (a + b) / 2 - base
    return offset
