"""What the desk reads from the bus — every table's status and every reply — checked against
a schema before it is believed.

A box may write its own status topic, and anything that passes the broker's size limit
arrives: a 1000-deep JSON, a state that is a number, a score that is a list. Each message is
parsed within bounds (timekeeper.web.safejson) and checked field by field; a bad one is
refused alone, with the reason, and the desk shows that table as BAD rather than stale data
or nothing. Fields the desk does not read pass through (a newer box may send more)."""

from __future__ import annotations

import math

from timekeeper.rules.series import Series, SeriesError
from timekeeper.web import safejson

MAX_MESSAGE = 16 * 1024  # bytes (the shipped broker allows 4 KiB)
MAX_TEXT = 2000  # characters of any text the desk shows
MAX_FIELDS = 64


class BadStatus(ValueError):
    """A table's message the desk does not believe; says which field, never the input."""


def parse(payload: bytes) -> dict:
    try:
        body = safejson.loads(payload, MAX_MESSAGE)
    except safejson.BadJSON as exc:
        raise BadStatus(f"not a status: {exc}") from None
    if not isinstance(body, dict) or len(body) > MAX_FIELDS:
        raise BadStatus("not a status: a JSON object of at most 64 fields")
    return body


def check_status(body: dict) -> dict:
    """A table's status message (`timekeeper/HALL/TABLE/status`), as HallLink publishes it."""
    _kind(body, "online", bool, required=True)
    for name in ("in_step", "synced"):
        _kind(body, name, bool)
    for name in ("table", "sync", "error"):
        _text(body, name)
    for name in ("offset", "sent"):
        _number(body, name)
    pairing = body.get("pairing")
    if pairing is not None and not (
        isinstance(pairing, dict)
        and len(pairing) <= MAX_FIELDS
        and all(
            isinstance(pairing.get(k, ""), str) and len(pairing.get(k, "")) <= MAX_TEXT
            for k in ("match", "home", "away")
        )
    ):  # (`hall status` shows its match and players)
        raise BadStatus("pairing: not {match, home, away} text")
    status = body.get("status")
    if status is not None:
        check_match(status)
    return body


def check_reply(body: dict) -> dict:
    """A table's answer to a hall command (`timekeeper/HALL/TABLE/reply`)."""
    _kind(body, "ok", bool, required=True)
    _text(body, "table")
    _text(body, "error")
    if body.get("id") is not None:
        _text(body, "id")
    if body.get("status") is not None:
        check_match(body["status"])
    return body


def check_match(status: object) -> None:
    """The match's status (`Status.to_dict()`): the fields the desk and its page read."""
    if not isinstance(status, dict) or len(status) > MAX_FIELDS:
        raise BadStatus("status: not an object")
    _text(status, "state", required=True, where="status.")
    for name in ("part", "waiting_for", "title", "profile", "audio_fault"):
        _text(status, name, where="status.")
    for name in ("remaining", "countdown", "play_time", "added"):
        _number(status, name, where="status.")
    score = status.get("score")
    if score is not None and not (
        isinstance(score, dict)
        and all(
            isinstance(score.get(side, 0), int) and not isinstance(score.get(side, 0), bool)
            for side in ("home", "away")
        )
    ):
        raise BadStatus("status.score: not {home, away} numbers")
    scheduled = status.get("scheduled", [])
    if (
        not isinstance(scheduled, list)
        or len(scheduled) > 16
        or not all(
            isinstance(w, dict)
            and isinstance(w.get("command"), str)
            and len(w["command"]) <= MAX_TEXT
            and _finite(w.get("in"))
            for w in scheduled
        )
    ):
        raise BadStatus("status.scheduled: not a list of {command, in}")
    series = status.get("match_series")
    if series is not None and not _series_shown(series):
        raise BadStatus("status.match_series: not {best_of, game, home_wins, away_wins, winner}")
    names = status.get("names")
    if names is not None and not (
        isinstance(names, dict)
        and all(isinstance(v, str) and len(v) <= MAX_TEXT for v in names.values())
    ):
        raise BadStatus("status.names: not text")


def _series_shown(value: object) -> bool:
    """A box's series (box/series.py `shown`) as one that can be (rules/series.py): the wins
    so far, the game on the table and the winner as the model has them at those wins."""
    if not isinstance(value, dict):
        return False
    keys = ("best_of", "game", "home_wins", "away_wins")
    numbers = [n for n in map(value.get, keys) if isinstance(n, int) and not isinstance(n, bool)]
    match = value.get("match", "")
    if not (isinstance(match, str) and len(match) <= MAX_TEXT) or len(numbers) != len(keys):
        return False
    best_of, game, home, away = numbers
    try:
        s = Series(best_of, earlier=(home, away))
    except SeriesError:
        return False
    return game == s.on_table and value.get("winner") == s.winner


def _kind(body: dict, name: str, kind: type, required: bool = False) -> None:
    if name not in body:
        if required:
            raise BadStatus(f"{name} is missing")
        return
    if not isinstance(body[name], kind):
        raise BadStatus(f"{name} must be {kind.__name__}")


def _text(body: dict, name: str, required: bool = False, where: str = "") -> None:
    value = body.get(name)
    if value is None and not required:
        return
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise BadStatus(f"{where}{name} must be text of at most {MAX_TEXT} characters")


def _number(body: dict, name: str, where: str = "") -> None:
    if body.get(name) is not None and not _finite(body[name]):
        raise BadStatus(f"{where}{name} must be a number")


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
