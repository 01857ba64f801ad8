"""timekeeper: the match timekeeper and sound-signal controller for table hockey."""

import os

__version__ = "0.1.0"

# pygame prints a banner on import; the journal and our status line do not want it.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
# numpy's OpenBLAS starts a thread a core at import, and they spin: ~0.1 s of CPU at every
# start of a box or a command (a third of numpy's import), for linear algebra we never do.
# (An operator's own setting stays theirs.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
