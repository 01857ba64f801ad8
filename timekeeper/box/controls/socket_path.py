"""Where the ctl socket lives, and whether its folder can be trusted.

Server and client agree on the path without talking: $TIMEKEEPER_CONTROL, the service's
RuntimeDirectory, the user's runtime dir, else a folder in /tmp. That last one is shared
with every user, so both sides check it is ours and closed to others before using it."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path

SERVICE_PATH = Path("/run/timekeeper/control.sock")  # the systemd service's socket


def fallback_folder() -> Path:
    """Where the socket goes with neither systemd nor XDG_RUNTIME_DIR: a folder in /tmp
    that must be ours and closed to others (see `private_folder`)."""
    return Path(f"/tmp/timekeeper-{os.getuid()}")


def default_path() -> Path:
    """$TIMEKEEPER_CONTROL, else the service's RuntimeDirectory, else the user's runtime dir."""
    if env := os.environ.get("TIMEKEEPER_CONTROL"):
        return Path(env)
    if runtime := os.environ.get("RUNTIME_DIRECTORY"):
        return Path(runtime.split(":")[0]) / "control.sock"
    if xdg := os.environ.get("XDG_RUNTIME_DIR"):
        return Path(xdg) / "timekeeper" / "control.sock"
    return fallback_folder() / "control.sock"


def client_path() -> Path:
    """Where `timekeeper ctl` looks: the default path, else the service's socket (an
    operator's shell has no RUNTIME_DIRECTORY)."""
    path = default_path()
    try:
        if path.exists() or "TIMEKEEPER_CONTROL" in os.environ:
            return path
    except OSError:  # a folder we may not look into (another user's): connecting says so
        return path
    try:
        service = SERVICE_PATH.exists()
    except PermissionError:  # /run/timekeeper is only for its group: connect says so
        service = True
    return SERVICE_PATH if service else path


def private_folder(folder: Path, create: bool) -> None:
    """Make (0700) or check a folder in a place every user can write (/tmp): another user
    who made it first could read our commands, forge our status or block our start, so one
    that is not ours, or is open to others, is refused with what to do."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return  # (the client: no box has made it yet; connecting says so)
    fix = "or set XDG_RUNTIME_DIR, or give --control PATH"
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(
            f"{folder} is not a folder (a link or file someone put there); remove it, {fix}"
        )
    if info.st_uid != os.getuid():
        raise OSError(
            f"{folder} belongs to another user (uid {info.st_uid}), who could read "
            f"or forge its commands; have it removed (sudo rm -r {folder}), {fix}"
        )
    if info.st_mode & 0o022:  # others may write in it: anything inside may be theirs
        raise OSError(
            f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o});"
            f" remove it (rm -r {folder}) or run `chmod 700 {folder}`, {fix}"
        )
    if info.st_mode & 0o077 and create:  # ours, only readable by others (an older timekeeper
        os.chmod(folder, 0o700)  # made it 0750): nothing of theirs can be inside; closed now


def check_folder(path: Path) -> None:
    """The socket's folder, if it is the shared fallback in /tmp, is ours and closed to
    others (OSError saying how to fix it otherwise); any other folder is the caller's."""
    if path.parent == fallback_folder():
        private_folder(path.parent, create=False)


def make_folder(path: Path) -> None:
    """Create the socket's folder: the fallback one private (0700), another for the group
    (0770, as the service's RuntimeDirectory is)."""
    if path.parent == fallback_folder():
        private_folder(path.parent, create=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o770)


def alive(path: Path) -> bool:
    """Something accepts connections on `path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
            return True
        except OSError:
            return False


def in_use(path: Path) -> bool:
    """Another timekeeper answers on `path`: checked before the journal or the sound card is
    touched, so that a second `run` leaves the first one's match alone."""
    check_folder(path)  # another user's folder: refused, saying how to fix
    return path.is_socket() and alive(path)
