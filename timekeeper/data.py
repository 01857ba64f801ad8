"""Where the built-in profiles and sound packs are, installed or in a source checkout."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path


def builtin_dir(kind: str) -> Path:
    """`profiles` or `sounds`: shipped as the packages timekeeper.profiles / timekeeper.sounds,
    kept at the top of the repo (see pyproject's package-dir)."""
    try:
        found = Path(str(importlib.resources.files(f"timekeeper.{kind}")))
        if found.is_dir():
            return found
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parent.parent / kind


def user_dirs(kind: str) -> list[Path]:
    """User folders searched before the built-ins: $TIMEKEEPER_<KIND>_PATH (colon-separated),
    else ~/.config/timekeeper/<kind> and /etc/timekeeper/<kind>."""
    env = os.environ.get(f"TIMEKEEPER_{kind.upper()}_PATH")
    if env is not None:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [config / "timekeeper" / kind, Path("/etc/timekeeper") / kind]
