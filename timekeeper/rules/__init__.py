"""The rules wing: profiles, the match engine and its parts, and replays in virtual time.

Pure: told the time, never reading a clock; no I/O besides reading YAML. Every other wing
builds on it; it imports none of them."""
