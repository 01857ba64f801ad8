"""What the pages the desk serves without its token (the board on the hall's TV, the sheets,
a player's page on a phone, the tables' overview) may show of a tournament that plays fair:
the tournament file's `public:` settings (publicview.py's `view` applies them, told the
time: it never reads a clock). The director's board (with the desk's token) shows
everything.

    public:
      points: hidden          # no points (nor goals) in the group tables during the groups
      results_for_minutes: 15 # a group result is shown for 15 minutes after it came in
      freeze_last_rounds: 3   # a group's table stands still over its last three rounds
      url: http://192.168.1.10:8080   # the desk's address for the QR codes (else as reached)

Why: a player who knows the table and every score before the last rounds knows what result
is enough for both sides; the Czech Open's live results hide exactly that. All three hold
"during the groups" only: once every group match is in, the public sees what the director does.
Frozen rounds' results are not shown (they would give the table away), nor a result older
than `results_for_minutes`; the knock-out's results always are (the bracket says who won)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from timekeeper.rules.yamldoc import Reader

KEYS = ("points", "results_for_minutes", "freeze_last_rounds", "url")
MAX_MINUTES = 24 * 60
MAX_URL = 200


@dataclass(frozen=True)
class Public:
    points: str = "shown"  # or "hidden" (during the groups)
    results_for_minutes: int | None = None  # None: every result, as long as it stands
    freeze_last_rounds: int = 0
    url: str = ""  # the desk's address as a phone reaches it ("": as the board reached it)


def read_public(r: Reader) -> Public:
    """`public:` of a tournament file, each refusal naming file:line and the field."""
    if r.mapping(("public",), KEYS) is None:
        return Public()
    minutes = r.get(("public", "results_for_minutes"))
    if minutes is not None:
        minutes = r.integer(("public", "results_for_minutes"), 15, MAX_MINUTES)
    freeze = r.get(("public", "freeze_last_rounds"), 0)
    if isinstance(freeze, bool) or not isinstance(freeze, int) or not 0 <= freeze <= 100:
        raise r.doc.error(
            ("public", "freeze_last_rounds"),
            f"must be a whole number from 0 to 100, not {freeze!r}",
        )
    url = r.text(("public", "url"), "", most=MAX_URL).strip().rstrip("/")
    if url and (not url.startswith(("http://", "https://")) or " " in url):
        raise r.doc.error(
            ("public", "url"), f"an address such as http://192.168.1.10:8080, not {url!r}"
        )
    points = r.choice(("public", "points"), ("shown", "hidden"), "shown")
    return Public(points, minutes, freeze, url)


def qr_svg(text: str) -> str:
    """A QR code of `text` as SVG (segno, pure Python: dark on white with its quiet zone, for
    a black board and a printed sheet alike), for the players' pages' address."""
    import segno  # (only a page with a QR code needs it: not loaded by a box)

    out = io.BytesIO()
    segno.make(text[: MAX_URL + 100], error="m").save(
        out, kind="svg", scale=4, border=2, xmldecl=False, dark="#000", light="#fff"
    )
    return out.getvalue().decode()
