"""The web wing: the display page, the operator page and their small JSON API, served from
the box's own process on a thread of its own (see docs/web.md)."""
