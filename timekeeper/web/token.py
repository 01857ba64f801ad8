"""The operator's token: what a phone must show to send commands (the display is open).

Made at first start, kept 0600 in the state folder (so it survives restarts and upgrades),
renewed by `timekeeper ctl link --new`, which ends every session that used the old one."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

FILE_NAME = "web-token"


class TokenStore:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o750)
        self.path = folder / FILE_NAME
        self.token = self._load() or self.renew()

    def _load(self) -> str | None:
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            return None
        if len(text) < 20 or not text.replace("-", "").replace("_", "").isalnum():
            return None  # damaged: a new one is made (old links stop working, nothing else)
        if self.path.stat().st_mode & 0o077:
            os.chmod(self.path, 0o600)  # tightened if someone loosened it
        return text

    def renew(self) -> str:
        """A new token, written 0600 from the start (no window), replacing the file whole."""
        token = secrets.token_urlsafe(24)
        temporary = self.path.with_name(f".{FILE_NAME}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(token + "\n")
        os.replace(temporary, self.path)
        self.token = token
        return token

    def valid(self, candidate: str | None) -> bool:
        """Constant-time comparison (a wrong token reveals nothing of the right one); a
        token is ASCII, so anything else (a header of other bytes) is simply not it."""
        if not candidate or not candidate.isascii():
            return False
        return hmac.compare_digest(candidate.encode(), self.token.encode())
