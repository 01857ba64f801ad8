"""The box wing: a live table-side box — its config, the runner (the one reader of the
monotonic clock for the match's timing), the journal, the controls (keys, buttons, the ctl
socket), lamp and relays, systemd's notify protocol, and `run`'s wiring of them all. Builds on
every lower wing."""
