"""timekeeper: the match timekeeper and sound-signal controller for table hockey."""

__version__ = "0.1.0"
