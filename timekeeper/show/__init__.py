"""The show wing: what people read — the terminal status line and log lines, and a profile's
timeline as text or SVG. Imports the rules wing only."""
