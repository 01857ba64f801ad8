"""timekeeper: the match timekeeper and sound-signal controller for table hockey."""

import os

__version__ = "0.1.0"

# pygame prints a banner on import; the journal and our status line do not want it.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
