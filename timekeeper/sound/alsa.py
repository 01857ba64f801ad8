"""libasound's own error lines kept off the user's screen.

Opening an ALSA device that is not there makes libasound print dozens of `ALSA lib …` lines
straight to stderr (its default error handler), before SDL returns one clear error. Our own
message says what is wrong and what to do; libasound's lines go to the debug log instead
(`-v` shows them), through a handler installed with snd_lib_error_set_handler before SDL
first opens a device. SDL loads the same libasound.so.2, so the handler is shared."""

from __future__ import annotations

import contextlib
import ctypes
import logging

log = logging.getLogger(__name__)

# void (*)(const char *file, int line, const char *function, int err, const char *fmt, ...):
# the variadic arguments are never read, so a fixed signature is safe to receive it with
_HANDLER_TYPE = ctypes.CFUNCTYPE(
    None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p
)
_installed: list = []  # the C callback, kept alive for as long as libasound may call it


def _to_debug_log(
    file: bytes | None, line: int, function: bytes | None, err: int, fmt: bytes | None
) -> None:
    with contextlib.suppress(Exception):  # never raise into C
        log.debug(
            "ALSA %s:%d (%s): %s%s",
            (file or b"?").decode(errors="replace"),
            line,
            (function or b"?").decode(errors="replace"),
            (fmt or b"").decode(errors="replace"),
            f" [error {err}]" if err else "",
        )


def quiet() -> bool:
    """Send libasound's error lines to the debug log (once per process). False where there
    is no libasound (then there is nothing to keep quiet either)."""
    if _installed:
        return True
    try:
        lib = ctypes.CDLL("libasound.so.2")
        handler = _HANDLER_TYPE(_to_debug_log)
        lib.snd_lib_error_set_handler.argtypes = [_HANDLER_TYPE]
        lib.snd_lib_error_set_handler(handler)
    except (OSError, AttributeError):
        return False
    _installed.extend((lib, handler))
    return True
