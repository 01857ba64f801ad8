"""A PulseAudio playback stream through libpulse-simple (ctypes): blocking writes, and the
server's own account of when the next written frame will be heard.

Why not SDL here: SDL's PulseAudio backend does not say how late the stream plays, and the
server changes that latency as streams join, after an underrun and while it settles; the
server itself knows it (`pa_simple_get_latency`: the data it holds plus the sink's latency,
interpolated between its timing updates on the monotonic clock). See docs/timing.md."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable

from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError

_PLAYBACK = 1  # PA_STREAM_PLAYBACK
_FLOAT32LE = 5  # PA_SAMPLE_FLOAT32LE: the pack's own format, nothing converted
_READY = 2  # PA_STREAM_READY
_DEFAULT = 0xFFFFFFFF  # (uint32_t) -1: the server's choice


class _SampleSpec(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rate", ctypes.c_uint32),
                ("channels", ctypes.c_uint8)]


class _BufferAttr(ctypes.Structure):
    _fields_ = [("maxlength", ctypes.c_uint32), ("tlength", ctypes.c_uint32),
                ("prebuf", ctypes.c_uint32), ("minreq", ctypes.c_uint32),
                ("fragsize", ctypes.c_uint32)]


class _Timeval(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("usec", ctypes.c_long)]


class _TimingInfo(ctypes.Structure):
    """pa_timing_info (pulse/def.h)."""
    _fields_ = [("timestamp", _Timeval), ("synchronized_clocks", ctypes.c_int),
                ("sink_usec", ctypes.c_uint64), ("source_usec", ctypes.c_uint64),
                ("transport_usec", ctypes.c_uint64), ("playing", ctypes.c_int),
                ("write_index_corrupt", ctypes.c_int), ("write_index", ctypes.c_int64),
                ("read_index_corrupt", ctypes.c_int), ("read_index", ctypes.c_int64),
                ("configured_sink_usec", ctypes.c_uint64),
                ("configured_source_usec", ctypes.c_uint64), ("since_underrun", ctypes.c_int64)]


_lib = None


def _library():
    """libpulse-simple, loaded once; None where it is not installed (a Pi without a server)."""
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("pulse-simple") or "libpulse-simple.so.0"
        try:
            lib = ctypes.CDLL(name)
            pulse = ctypes.CDLL(ctypes.util.find_library("pulse") or "libpulse.so.0")
        except OSError:
            return None
        lib.pa_simple_new.restype = ctypes.c_void_p
        lib.pa_simple_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                      ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.POINTER(_SampleSpec), ctypes.c_void_p,
                                      ctypes.POINTER(_BufferAttr),
                                      ctypes.POINTER(ctypes.c_int)]
        lib.pa_simple_write.restype = ctypes.c_int
        lib.pa_simple_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_int)]
        lib.pa_simple_get_latency.restype = ctypes.c_uint64
        lib.pa_simple_get_latency.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        lib.pa_simple_free.restype, lib.pa_simple_free.argtypes = None, [ctypes.c_void_p]
        pulse.pa_strerror.restype, pulse.pa_strerror.argtypes = ctypes.c_char_p, [ctypes.c_int]
        lib.strerror = pulse.pa_strerror
        for name in ("pa_threaded_mainloop_lock", "pa_threaded_mainloop_unlock"):
            getattr(pulse, name).argtypes, getattr(pulse, name).restype = [ctypes.c_void_p], None
        pulse.pa_threaded_mainloop_wait.argtypes = [ctypes.c_void_p]
        pulse.pa_threaded_mainloop_wait.restype = None
        pulse.pa_threaded_mainloop_signal.argtypes = [ctypes.c_void_p, ctypes.c_int]
        pulse.pa_threaded_mainloop_signal.restype = None
        pulse.pa_stream_writable_size.argtypes = [ctypes.c_void_p]
        pulse.pa_stream_writable_size.restype = ctypes.c_size_t
        pulse.pa_stream_get_state.argtypes = [ctypes.c_void_p]
        pulse.pa_stream_get_state.restype = ctypes.c_int
        pulse.pa_stream_get_timing_info.argtypes = [ctypes.c_void_p]
        pulse.pa_stream_get_timing_info.restype = ctypes.POINTER(_TimingInfo)
        lib.pulse = pulse
        _lib = lib
    return _lib


class PulseSink:
    """One mono float32 48-kHz playback stream on the PulseAudio server of the environment
    (PULSE_SERVER, else the user's), on PULSE_SINK or the `device` sink, else the default.

    `target` seconds of latency are asked for (the server's buffer plus its sink's), with
    requests for data `period` frames at a time. `prebuf` is 0: after an underrun the
    server plays silence and keeps its timeline, so a late write loses its own frames but
    never shifts later ones (the frame clock stays true)."""

    def __init__(self, period: int, target: float, device: str | None = None,
                 name: str = "timekeeper") -> None:
        lib = _library()
        if lib is None:
            raise AudioError("cannot open a PulseAudio stream: libpulse-simple is missing")
        self._lib, self.period = lib, period
        spec = _SampleSpec(_FLOAT32LE, RATE, 1)
        attr = _BufferAttr(_DEFAULT, round(target * RATE) * 4, 0, period * 4, _DEFAULT)
        error = ctypes.c_int(0)
        self._handle = lib.pa_simple_new(None, name.encode(), _PLAYBACK,
                                          device.encode() if device else None,
                                          b"signals", ctypes.byref(spec), None,
                                          ctypes.byref(attr), ctypes.byref(error))
        if not self._handle:
            raise AudioError(f"cannot open a PulseAudio stream ({self._why(error)}); check "
                             "the sound server, or run with --audio silent "
                             "(audio.kind: silent)")
        self._error = ctypes.c_int(0)
        # pa_simple is {mainloop, context, stream, …} (pulse/simple.c, unchanged since 0.9):
        # the stream's raw timing info is read from there, under the mainloop's lock
        fields = ctypes.cast(self._handle, ctypes.POINTER(ctypes.c_void_p))
        self._mainloop, self._stream = fields[0], fields[2]
        self._last_stamp: tuple[int, int] | None = None
        self._interrupted = False
        # the handle's life: interrupt() (another thread) never touches a stream close()
        # (the writer, once it failed: a lost server) is freeing or has freed — that aborted
        # the box in libpulse's mutex code under stress-ng
        self._life = threading.Lock()

    def timing(self, clock: Callable[[], float]) -> tuple[int, float] | None:
        """(frame, when it is heard on `clock`) from the server's newest timing report, or
        None when there is no new one. Why not `delay()`: its figure is interpolated by the
        client between reports and wanders by milliseconds under load (measured: 3 ms in
        5 s); a report itself is the server's own reading — its read index, its sink's
        latency, and the instant it answered (on the system's real-time clock, mapped here
        to `clock` at once) — so no scheduling delay of ours enters it."""
        pulse = self._lib.pulse
        pulse.pa_threaded_mainloop_lock(self._mainloop)
        try:
            info = pulse.pa_stream_get_timing_info(self._stream)
            if not info:
                return None
            i = info.contents
            stamp = (i.timestamp.sec, i.timestamp.usec)
            if (stamp == self._last_stamp or i.read_index_corrupt or not i.playing
                    or not i.synchronized_clocks):
                return None
            self._last_stamp = stamp
            heard_real = i.timestamp.sec + i.timestamp.usec / 1e6 + i.sink_usec / 1e6
            frame = i.read_index // 4
        finally:
            pulse.pa_threaded_mainloop_unlock(self._mainloop)
        return frame, heard_real + _real_to(clock)

    def helper_threads(self) -> list[int]:
        """libpulse's mainloop thread, which hands the server's requests to our writes: it
        needs the writer's priority too."""
        from timekeeper.sound.pushstream import threads_named

        return threads_named("threaded-ml")

    def _why(self, error: ctypes.c_int) -> str:
        return (self._lib.strerror(error.value) or b"unknown error").decode("utf-8", "replace")

    def delay(self) -> float:
        """Seconds until the next frame written is heard (the server's figure)."""
        usec = self._lib.pa_simple_get_latency(self._handle, ctypes.byref(self._error))
        if usec == 0xFFFFFFFFFFFFFFFF:
            raise AudioError(f"PulseAudio stream: {self._why(self._error)}")
        return usec / 1e6

    def wait_room(self, frames: int) -> None:
        """Block until the server has room for `frames` (the GIL is let go meanwhile), so that
        the block is mixed only then: cues handed over late still find their frame unmixed
        (one period more of slack than mixing first and waiting in the write)."""
        pulse = self._lib.pulse
        pulse.pa_threaded_mainloop_lock(self._mainloop)
        try:  # pa_simple's own request and state callbacks signal the mainloop
            while pulse.pa_stream_writable_size(self._stream) < frames * 4:
                if self._interrupted:
                    raise AudioError("PulseAudio stream: closed")
                if pulse.pa_stream_get_state(self._stream) != _READY:
                    raise AudioError("PulseAudio stream: the stream is gone")
                pulse.pa_threaded_mainloop_wait(self._mainloop)
        finally:
            pulse.pa_threaded_mainloop_unlock(self._mainloop)

    def interrupt(self) -> None:
        """From another thread: end the writer's wait for room now (a closing box, a frozen
        server). Why: a writer left waiting inside libpulse at exit returns from it into a
        finalizing Python, which ends the thread while it holds the mainloop's lock, and
        libpulse then aborts the process (seen at 8 boxes under load: a core dump on stop)."""
        pulse = self._lib.pulse
        with self._life:
            if not self._handle:
                return  # closed already: nothing waits
            pulse.pa_threaded_mainloop_lock(self._mainloop)
            try:
                self._interrupted = True
                pulse.pa_threaded_mainloop_signal(self._mainloop, 0)
            finally:
                pulse.pa_threaded_mainloop_unlock(self._mainloop)

    def write(self, block) -> None:
        """Write a float32 numpy array; blocks until the server has room for it (the GIL is
        let go meanwhile)."""
        if self._lib.pa_simple_write(self._handle, block.ctypes.data, block.nbytes,
                                     ctypes.byref(self._error)) < 0:
            raise AudioError(f"PulseAudio stream: {self._why(self._error)}")

    def close(self) -> None:
        with self._life:
            if self._handle:
                self._lib.pa_simple_free(self._handle)
                self._handle = None


def _real_to(clock: Callable[[], float]) -> float:
    """What to add to a real-time-clock reading to put it on `clock`: the two read back to
    back, the closest of three pairs (a report's instant is on the real-time clock; only
    this offset is used, never the wall-clock time itself)."""
    best, offset = float("inf"), 0.0
    for _ in range(3):
        a = clock()
        real = time.time()
        b = clock()
        if b - a < best:
            best, offset = b - a, (a + b) / 2 - real
    return offset
