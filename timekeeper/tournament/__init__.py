"""The tournament wing: the evening around the matches — the draw, the rounds at the tables,
the results, the standings and the play-off tree (docs/tournament.md).

Pure like `rules/`: it is told everything (results, seeds, even the time a result was typed)
and never reads a clock, a socket or a device. It reads and writes only its own files: the
tournament YAML, its append-only ledger and the exports. It may use `rules/` (profiles, to
know how long a match is) and nothing above it."""
