"""The fixtures of a user's whole path: boxes run as their operators run them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pytest
from running import TableBox


@pytest.fixture
def table_box() -> Iterator[Callable[..., TableBox]]:
    """`table_box({name: yaml}, prefix)`: a box's folder with those profiles (tests/running.py,
    TableBox); every one made is killed and removed at the end, whatever happened."""
    made: list[TableBox] = []

    def make(profiles: Mapping[str, str], prefix: str = "tk-box-") -> TableBox:
        made.append(TableBox(profiles, prefix))
        return made[-1]

    yield make
    for box in made:
        box.close()
