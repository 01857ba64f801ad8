"""The broker account a desk command or a box logs in with: the URL's own `user:password@`,
else `--user` / `--password-file`, else the config's hall.user with hall.password_file (or
hall.password). A password is best kept in a file of its own (0600), never on a command line
that `ps` shows to everyone."""

from __future__ import annotations

from pathlib import Path

from timekeeper.hall.bus.broker import Broker

MAX_PASSWORD_FILE = 4096  # bytes: a password file holds one line


def read_password(path: Path) -> str:
    """The first line of `path`; ValueError names the file and what is wrong."""
    try:
        raw = path.read_bytes()[: MAX_PASSWORD_FILE + 1]
    except OSError as exc:
        raise ValueError(f"cannot read the password file {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_PASSWORD_FILE:
        raise ValueError(
            f"the password file {path} is over {MAX_PASSWORD_FILE} bytes: it "
            "holds one line, the password"
        )
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"the password file {path} is not UTF-8 text") from None
    if not lines or not lines[0]:
        raise ValueError(f"the password file {path} is empty: its first line is the password")
    return lines[0]


def with_account(
    broker: Broker,
    user: str | None = None,
    password: str | None = None,
    password_file: Path | None = None,
) -> Broker:
    """`broker` logged in as `user` (unless its URL names a user already)."""
    if broker.user is not None or not user:
        return broker
    if password is None and password_file is not None:
        password = read_password(password_file)
    return Broker(broker.host, broker.port, user, password)
