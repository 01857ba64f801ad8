"""Controls turn presses into commands on the runner's queue, and nothing more."""
