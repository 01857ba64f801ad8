"""Everything on the box that is not the sound fails alone: the runner's listeners (events
log, journal, screens, the web, the hall), the lamp's and relays' pins."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


class FailAlone:
    """Calls that fail alone: the match goes on, a failure is told once per `what`, the call
    is tried again at its next turn, and told once more when it works again."""

    def __init__(self) -> None:
        self.failing: set[str] = set()

    def call(self, what: str, action: Callable[..., object], *args: object) -> bool:
        """`action(*args)`; True if it worked. `what` names it in the log."""
        try:
            action(*args)
        except Exception as exc:
            if what not in self.failing:
                self.failing.add(what)
                log.error(
                    "%s failed (%s); the match goes on, and it is tried again",
                    what,
                    exc,
                    exc_info=not isinstance(exc, OSError),
                )
            return False
        if what in self.failing:
            self.failing.discard(what)
            log.info("%s works again", what)
        return True
