"""The tournament's fixtures: a cup made and drawn as its commands make it."""

from __future__ import annotations

from pathlib import Path

import pytest

from timekeeper import cli


@pytest.fixture
def cup(tmp_path: Path) -> Path:
    """`tournament new cup.yaml --players 8`, drawn with seed 11 (in this process)."""
    file = tmp_path / "cup.yaml"
    assert cli.main(["tournament", "new", str(file), "--players", "8"]) == 0
    assert cli.main(["tournament", "draw", "-f", str(file), "--seed", "11"]) == 0
    return file
