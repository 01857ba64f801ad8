"""The hall wing: many boxes on one signal over MQTT — the bus messages, the boxes' link,
the desk's commands, and the one mapping of a synced wall-clock instant to a box's clock.
Imports rules (and, for its overview page, web); never box."""
