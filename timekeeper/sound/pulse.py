"""A PulseAudio playback stream through libpulse's asynchronous API on a mainloop of its own,
run by the writer thread itself (ctypes): one thread, as pacat does, and the server's own
account of when the next written frame will be heard.

Why not SDL here: SDL's PulseAudio backend does not say how late the stream plays, and the
server changes that latency as streams join, after an underrun and while it settles; the
server itself knows it (its timing reports: the data it holds plus the sink's latency, on
the monotonic clock). See docs/timing.md.

Why not libpulse-simple (used before): it runs a second thread, its threaded mainloop, which
hands every request of the server to the writer and every write back: 27 system calls and
four thread wake-ups a 40-ms period, 1.3 % of a core here. Driven by the writer, one wake-up
a period remains (pacat, the same way: 0.27 %).

As a `Sink` (sound/framed.py) it is pushed, reports its own timing and lets written frames
be rewritten: a press is mixed into what is written already."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable

from timekeeper.sound.framed import Sink
from timekeeper.sound.mixing import RATE
from timekeeper.sound.output import AudioError

# frames per write (200 ms): 5 wake-ups a second, 2 periods (400 ms) written ahead; a press
# is rewritten into them (bench/rewrite.py: the writer's CPU 0.6 % → 0.16 % of a core)
REWRITE_PERIOD = 9600
# s without a block taken before the stream is a fault and is reopened. Not SDL's 0.5 s: a
# server that is merely busy (8 boxes starting at once at load 26 here) went 0.7-1.3 s
# without asking for data, and reopening it then only added work (opening took over 2 s);
# a frozen server is still noticed within STALL + the guard's 1-s check.
STALL = 2.0

_FLOAT32LE = 5  # PA_SAMPLE_FLOAT32LE: the pack's own format, nothing converted
_CONTEXT_READY, _CONTEXT_FAILED, _CONTEXT_TERMINATED = 4, 5, 6  # pa_context_state
_READY, _STREAM_FAILED, _STREAM_TERMINATED = 2, 3, 4  # pa_stream_state
# pa_simple's own flags: timing reports interpolated between the server's updates, which
# come by themselves; the latency asked is the whole path's (buffer + sink)
_STREAM_FLAGS = 0x0002 | 0x0008 | 0x2000  # INTERPOLATE_TIMING | AUTO_TIMING_UPDATE |
#                                           ADJUST_LATENCY
_DEFAULT = 0xFFFFFFFF  # (uint32_t) -1: the server's choice
_SEEK_RELATIVE = 0  # pa_seek_mode_t
_GONE = ctypes.c_size_t(-1).value  # what a stream that is no longer good says of its room
_OPEN_TIMEOUT = 5.0  # s for the server to accept the stream (pa_simple waited for ever)
_NOAUTOSPAWN = 0x0001  # pa_context_flags: a server that is not running is not started


class _SampleSpec(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rate", ctypes.c_uint32), ("channels", ctypes.c_uint8)]


class _BufferAttr(ctypes.Structure):
    _fields_ = [
        ("maxlength", ctypes.c_uint32),
        ("tlength", ctypes.c_uint32),
        ("prebuf", ctypes.c_uint32),
        ("minreq", ctypes.c_uint32),
        ("fragsize", ctypes.c_uint32),
    ]


class _Timeval(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("usec", ctypes.c_long)]


class _TimingInfo(ctypes.Structure):
    """pa_timing_info (pulse/def.h)."""

    _fields_ = [
        ("timestamp", _Timeval),
        ("synchronized_clocks", ctypes.c_int),
        ("sink_usec", ctypes.c_uint64),
        ("source_usec", ctypes.c_uint64),
        ("transport_usec", ctypes.c_uint64),
        ("playing", ctypes.c_int),
        ("write_index_corrupt", ctypes.c_int),
        ("write_index", ctypes.c_int64),
        ("read_index_corrupt", ctypes.c_int),
        ("read_index", ctypes.c_int64),
        ("configured_sink_usec", ctypes.c_uint64),
        ("configured_source_usec", ctypes.c_uint64),
        ("since_underrun", ctypes.c_int64),
    ]


class _ServerInfo(ctypes.Structure):
    """The head of pa_server_info (pulse/introspect.h): only these fields are read."""

    _fields_ = [
        ("user_name", ctypes.c_char_p),
        ("host_name", ctypes.c_char_p),
        ("server_version", ctypes.c_char_p),
        ("server_name", ctypes.c_char_p),
    ]


_SERVER_INFO_CB = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.POINTER(_ServerInfo), ctypes.c_void_p
)

_lib = None


def _library():
    """libpulse, loaded once; None where it is not installed (a Pi without a server)."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("pulse") or "libpulse.so.0")
        except OSError:
            return None
        p, i, u, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_size_t
        for name, restype, argtypes in (
            ("pa_mainloop_new", p, []),
            ("pa_mainloop_get_api", p, [p]),
            ("pa_mainloop_iterate", i, [p, i, ctypes.POINTER(i)]),
            ("pa_mainloop_prepare", i, [p, i]),
            ("pa_mainloop_poll", i, [p]),
            ("pa_mainloop_dispatch", i, [p]),
            ("pa_mainloop_wakeup", None, [p]),
            ("pa_mainloop_free", None, [p]),
            ("pa_context_new", p, [p, ctypes.c_char_p]),
            ("pa_context_connect", i, [p, ctypes.c_char_p, i, p]),
            ("pa_context_get_state", i, [p]),
            ("pa_context_errno", i, [p]),
            ("pa_context_disconnect", None, [p]),
            ("pa_context_unref", None, [p]),
            ("pa_stream_new", p, [p, ctypes.c_char_p, ctypes.POINTER(_SampleSpec), p]),
            (
                "pa_stream_connect_playback",
                i,
                [p, ctypes.c_char_p, ctypes.POINTER(_BufferAttr), u, p, p],
            ),
            ("pa_stream_get_state", i, [p]),
            ("pa_stream_writable_size", s, [p]),
            ("pa_stream_write", i, [p, p, s, p, ctypes.c_int64, i]),
            ("pa_stream_get_latency", i, [p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(i)]),
            ("pa_stream_get_timing_info", ctypes.POINTER(_TimingInfo), [p]),
            ("pa_stream_disconnect", i, [p]),
            ("pa_stream_unref", None, [p]),
            ("pa_strerror", ctypes.c_char_p, [i]),
            ("pa_context_get_server_info", p, [p, _SERVER_INFO_CB, p]),
            ("pa_operation_unref", None, [p]),
        ):
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        _lib = lib
    return _lib


class PulseSink(Sink):
    """One mono float32 48-kHz playback stream on the PulseAudio server of the environment
    (PULSE_SERVER, else the user's), on PULSE_SINK or the `device` sink, else the default.

    `target` seconds of latency are asked for (the server's buffer plus its sink's), with
    requests for data `period` frames at a time. `prebuf` is 0: after an underrun the
    server plays silence and keeps its timeline, so a late write loses its own frames but
    never shifts later ones (the frame clock stays true).

    Every call but interrupt() belongs to one thread, the writer's: it runs the mainloop
    while it waits for room, so the server's requests and timing reports are read there."""

    name = "pulse"
    reports = True
    rewrites = True

    def __init__(
        self,
        period: int = REWRITE_PERIOD,
        target: float | None = None,
        device: str | None = None,
        name: str = "timekeeper",
        spawn: bool = True,
    ) -> None:
        """`target` None: two periods; `spawn` False: a server that is not running is an
        AudioError, not started by libpulse (`--audio auto` asks that way)."""
        lib = _library()
        if lib is None:
            raise AudioError("cannot open a PulseAudio stream: libpulse is missing")
        target = 2 * period / RATE if target is None else target
        self._lib, self.period, self.latency = lib, period, target
        self.stall = STALL + period / RATE
        self._spawn = spawn
        self.server = ""
        self._last_stamp: tuple[int, int] | None = None
        self._written = 0  # frames: the stream's write index
        self._interrupted = False
        self._woken = False
        self._addresses: dict[int, tuple[object, int]] = {}
        # the mainloop's life: interrupt() (another thread) never wakes a mainloop close()
        # (the writer, once it failed: a lost server) is freeing or has freed
        self._life = threading.Lock()
        self._mainloop = lib.pa_mainloop_new()
        self._context = self._stream = None
        try:
            self._open(period, target, device, name)
        except BaseException:
            self.close()
            raise

    def _open(self, period: int, target: float, device: str | None, name: str) -> None:
        lib = self._lib
        self._context = lib.pa_context_new(lib.pa_mainloop_get_api(self._mainloop), name.encode())
        flags = 0 if self._spawn else _NOAUTOSPAWN
        if lib.pa_context_connect(self._context, None, flags, None) < 0:
            raise AudioError(self._cannot(lib.pa_context_errno(self._context)))
        self._iterate_until(lambda: self._context_ready(), "the server")
        names: list[str] = []
        answer = _SERVER_INFO_CB(
            lambda _c, info, _u: names.append(
                (info.contents.server_name or b"").decode("utf-8", "replace") if info else ""
            )
        )
        operation = lib.pa_context_get_server_info(self._context, answer, None)
        try:
            self._iterate_until(lambda: bool(names), "the server")
        finally:
            if operation:
                lib.pa_operation_unref(operation)
        self.server = names[0]  # "pulseaudio", or "PulseAudio (on PipeWire 0.3.65)"
        spec = _SampleSpec(_FLOAT32LE, RATE, 1)
        self._stream = lib.pa_stream_new(self._context, b"signals", ctypes.byref(spec), None)
        if not self._stream:
            raise AudioError(self._cannot(lib.pa_context_errno(self._context)))
        attr = _BufferAttr(_DEFAULT, round(target * RATE) * 4, 0, period * 4, _DEFAULT)
        if (
            lib.pa_stream_connect_playback(
                self._stream,
                device.encode() if device else None,
                ctypes.byref(attr),
                _STREAM_FLAGS,
                None,
                None,
            )
            < 0
        ):
            raise AudioError(self._cannot(lib.pa_context_errno(self._context)))
        self._iterate_until(lambda: self._stream_ready(), "the stream")

    def _cannot(self, error: int) -> str:
        return (
            f"cannot open a PulseAudio stream ({self._strerror(error)}); check the sound "
            "server, or run with --audio silent (audio.sink: silent)"
        )

    def _context_ready(self) -> bool:
        state = self._lib.pa_context_get_state(self._context)
        if state in (_CONTEXT_FAILED, _CONTEXT_TERMINATED):
            raise AudioError(self._cannot(self._lib.pa_context_errno(self._context)))
        return state == _CONTEXT_READY

    def _stream_ready(self) -> bool:
        state = self._lib.pa_stream_get_state(self._stream)
        if state in (_STREAM_FAILED, _STREAM_TERMINATED):
            raise AudioError(self._cannot(self._lib.pa_context_errno(self._context)))
        return state == _READY

    def _iterate_until(self, done: Callable[[], bool], what: str) -> None:
        """Run the mainloop until `done` (an open: a server that never answers is an error
        after _OPEN_TIMEOUT, not a box that hangs)."""
        lib, deadline = self._lib, time.monotonic() + _OPEN_TIMEOUT
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AudioError(
                    f"cannot open a PulseAudio stream: {what} did not answer "
                    f"within {_OPEN_TIMEOUT:g} s"
                )
            if (
                lib.pa_mainloop_prepare(self._mainloop, round(min(left, 0.1) * 1e6)) < 0
                or lib.pa_mainloop_poll(self._mainloop) < 0
                or lib.pa_mainloop_dispatch(self._mainloop) < 0
            ):
                raise AudioError("cannot open a PulseAudio stream: the mainloop ended")

    def _iterate(self, block: bool = True) -> None:
        if self._lib.pa_mainloop_iterate(self._mainloop, int(block), None) < 0:
            raise AudioError("PulseAudio stream: the mainloop ended")

    def timing(self, clock: Callable[[], float]) -> tuple[int, float] | None:
        """(frame, when it is heard on `clock`) from the server's newest timing report, or
        None when there is no new one. Why not `delay()`: its figure is interpolated by the
        client between reports and wanders by milliseconds under load (measured: 3 ms in
        5 s); a report itself is the server's own reading — its read index, its sink's
        latency, and the instant it answered (on the system's real-time clock, mapped here
        to `clock` at once) — so no scheduling delay of ours enters it."""
        info = self._lib.pa_stream_get_timing_info(self._stream)
        if not info:
            return None
        i = info.contents
        stamp = (i.timestamp.sec, i.timestamp.usec)
        if (
            stamp == self._last_stamp
            or i.read_index_corrupt
            or not i.playing
            or not i.synchronized_clocks
        ):
            return None
        self._last_stamp = stamp
        heard_real = i.timestamp.sec + i.timestamp.usec / 1e6 + i.sink_usec / 1e6
        return i.read_index // 4, heard_real + _real_to(clock)

    def _strerror(self, error: int) -> str:
        return (self._lib.pa_strerror(error) or b"unknown error").decode("utf-8", "replace")

    def _failed(self) -> AudioError:
        return AudioError(
            f"PulseAudio stream: {self._strerror(self._lib.pa_context_errno(self._context))}"
        )

    def delay(self) -> float:
        """Seconds until the next frame written is heard (the server's figure)."""
        usec, negative = ctypes.c_uint64(0), ctypes.c_int(0)
        while (
            self._lib.pa_stream_get_latency(
                self._stream, ctypes.byref(usec), ctypes.byref(negative)
            )
            < 0
        ):
            self._check()
            self._iterate()  # (no timing report yet: it comes with the mainloop)
        return -usec.value / 1e6 if negative.value else usec.value / 1e6

    def _check(self) -> None:
        if self._interrupted:
            raise AudioError("PulseAudio stream: closed")
        if self._lib.pa_stream_get_state(self._stream) != _READY:
            raise AudioError("PulseAudio stream: the stream is gone")

    def wait_room(self, frames: int) -> bool:
        """Run the mainloop until the server has room for `frames` (the GIL is let go
        meanwhile), so that the block is mixed only then: cues handed over late still find
        their frame unmixed. False: woken before (wake()). (A stream that is no longer good
        answers (size_t) -1.)"""
        lib, stream, need = self._lib, self._stream, frames * 4
        while (room := lib.pa_stream_writable_size(stream)) < need:
            if self._interrupted:
                raise AudioError("PulseAudio stream: closed")
            if self._woken:
                self._woken = False
                return False
            self._iterate()
        if room == _GONE:
            self._check()
            raise self._failed()
        return True

    def wake(self) -> None:
        """From another thread: end the writer's wait for room now, to rewrite (a press)."""
        with self._life:
            self._woken = True
            if self._mainloop:
                self._lib.pa_mainloop_wakeup(self._mainloop)

    def write_at(self, block, frame: int) -> None:
        """Write `block` over the stream's frames from `frame` on (written already and not
        yet played — the server rewinds its sink where it must); the stream then goes on
        from the block's end.

        Why a relative seek back and not PA_SEEK_ABSOLUTE: libpulse counts an absolute
        write as new data ("the server side applies the same error", says its source; the
        server, though, sends the difference back only with a later request), so its room
        count came short after a rewrite and the next block late: 3-30 ms of silence
        inside a sound (bench/hall.py's recordings: 7 of 80 cues). A relative seek is
        counted right on both sides (the seek back cancels the write's length)."""
        if (
            self._lib.pa_stream_write(
                self._stream,
                block.ctypes.data,
                block.nbytes,
                None,
                (frame - self._written) * 4,
                _SEEK_RELATIVE,
            )
            < 0
        ):
            raise self._failed()
        self._written = frame + len(block)
        self._iterate(block=False)

    def interrupt(self) -> None:
        """From another thread: end the writer's wait for room now (a closing box, a frozen
        server). Why: a writer left waiting inside libpulse at exit returns from it into a
        finalizing Python, and libpulse then may abort the process (seen at 8 boxes under
        load: a core dump on stop)."""
        with self._life:
            self._interrupted = True
            if self._mainloop:  # (closed already: nothing waits)
                self._lib.pa_mainloop_wakeup(self._mainloop)

    def write(self, block) -> None:
        """Hand a float32 numpy array to the stream (copied, and sent at once)."""
        # (the writer hands over the same two arrays every period: their addresses are
        # kept, with the arrays, instead of a numpy ctypes object made 25 times a second)
        address = self._addresses.get(id(block))
        if address is None or address[0] is not block:
            address = self._addresses[id(block)] = (block, block.ctypes.data)
        if (
            self._lib.pa_stream_write(
                self._stream, address[1], block.nbytes, None, 0, _SEEK_RELATIVE
            )
            < 0
        ):
            raise self._failed()
        self._written += len(block)
        self._iterate(block=False)  # (out to the server now, not at the next wait)

    def close(self) -> None:
        lib = self._lib
        with self._life:
            if self._stream:
                lib.pa_stream_disconnect(self._stream)
                lib.pa_stream_unref(self._stream)
                self._stream = None
            if self._context:
                lib.pa_context_disconnect(self._context)
                lib.pa_context_unref(self._context)
                self._context = None
            if self._mainloop:
                lib.pa_mainloop_free(self._mainloop)
                self._mainloop = None


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
