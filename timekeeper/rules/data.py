"""Where the built-in profiles and sound packs are, installed or in a source checkout."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # timekeeper/


def builtin_dir(kind: str) -> Path:
    """`profiles` or `sounds`: inside the package once installed (pyproject maps the repo's
    top-level folders there), beside it in a source checkout or an editable install."""
    installed = _PACKAGE / kind
    return installed if installed.is_dir() else _PACKAGE.parent / kind


def user_dirs(kind: str) -> list[Path]:
    """User folders searched before the built-ins: $TIMEKEEPER_<KIND>_PATH (colon-separated)
    instead of ~/.config/timekeeper/<kind> and /etc/timekeeper/<kind> when it is set."""
    env = os.environ.get(f"TIMEKEEPER_{kind.upper()}_PATH")
    if env is not None:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [config / "timekeeper" / kind, Path("/etc/timekeeper") / kind]
