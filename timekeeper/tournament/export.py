"""Exports for the world outside the hall: results and standings as CSV and JSON (the fields
are documented in docs/tournament.md), and the plain list the ITHF ranking's web form takes
(tournament details, then the final standings, one player a line, the winner first)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from timekeeper.tournament.events import ResultEvent
from timekeeper.tournament.results import Result
from timekeeper.tournament.state import Fixture, Tournament

RESULT_FIELDS = (
    "round",
    "table",
    "match",
    "stage",
    "profile",
    "home",
    "away",
    "home_goals",
    "away_goals",
    "decided",
    "at_fault",
    "score_at_forfeit",
    "status",
    "corrections",
    "best_of",
    "game",
)
STANDING_FIELDS = (
    "group",
    "place",
    "player",
    "played",
    "won",
    "ot_won",
    "drawn",
    "ot_lost",
    "lost",
    "goals_for",
    "goals_against",
    "goal_difference",
    "points",
    "ahead_by",
    "lot",
)


def status(m: Fixture) -> str:
    if m.result is not None:
        return "played"
    if m.replay:
        return "replay ordered"
    return "to play" if m.home and m.away else "waiting"


def result_rows(t: Tournament) -> list[dict[str, Any]]:
    """One row a match; a series' row (its games won) is followed by one row a game."""
    corrections: dict[tuple[str, int | None], int] = {}
    for e in t.events:
        if isinstance(e, ResultEvent) and e.corrects:
            key = (e.match, e.game)
            corrections[key] = corrections.get(key, 0) + 1
    rows = []
    for m in t.fixtures():
        r = m.result
        games = t.series_of(m.id).games  # (a single match: a series of one, no games)
        row = _row(t, m, r, status(m), sum(n for (i, _), n in corrections.items() if i == m.id))
        rows.append(row)
        for g in games:
            typed = t.game_result(m.id, g.number)
            game = {**_row(t, m, typed, "played", corrections.get((m.id, g.number), 0))}
            game["game"] = g.number
            if g.walkover:
                game["decided"] = "walkover"
            rows.append(game)
    return rows


def _row(t: Tournament, m: Fixture, r: Result | None, state: str, corrected: int) -> dict[str, Any]:
    return {
        "round": m.slot.round,
        "table": m.slot.table,
        "match": m.id,
        "stage": m.stage,
        "profile": t.profile_of(m.id),
        "home": m.home or "",
        "away": m.away or "",
        "home_goals": r.home if r else None,
        "away_goals": r.away if r else None,
        "decided": r.decided if r else "",
        "at_fault": (r.at_fault or "") if r else "",
        "score_at_forfeit": f"{r.at_forfeit[0]}:{r.at_forfeit[1]}" if r and r.at_forfeit else "",
        "status": state,
        "corrections": corrected,
        "best_of": t.best_of(m.id),
        "game": None,
    }


def standing_rows(t: Tournament) -> list[dict[str, Any]]:
    """The groups' rows; a tie no criterion breaks is `pending` (a lot must decide it) only
    once its group is complete, `tied` while it is still played, as `standings` says."""
    rows = []
    for g in t.groups:
        done = t.complete(g)
        for row in t.standings(g):
            out = {"group": g, **row.to_json()}
            if row.lot == "pending" and not done:
                out["lot"] = "tied"
            rows.append(out)
    return rows


def _csv(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row[k] is None else row[k] for k in fields})
    return out.getvalue()


def about(t: Tournament) -> dict[str, Any]:
    s = t.spec
    return {
        "title": s.title,
        "date": s.date,
        "place": s.place,
        "country": s.country,
        "rules": s.rules.key,
        "rules_title": s.rules.title,
        "players": len(s.players),
        "tables": list(s.tables),
        "seed": t.draw.seed if t.draw else None,
        "draw": t.draw.method if t.draw else None,
        "ranking_date": ithf_date(t.draw.ranking_date) if t.draw and t.draw.ranking_date else None,
    }


def ithf_date(text: str) -> str:
    """The form wants day.month.year (d.m.yyyy); an ISO date is turned into it."""
    found = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text.strip())
    return f"{int(found[3])}.{int(found[2])}.{found[1]}" if found else text


def ithf_tabbed(t: Tournament) -> bool:
    """The tab-separated list (close to the ranking file) for an ITHF day: the rule set is
    ITHF's, the day has final groups, or the draw was seeded from a ranking file with ids."""
    ranked = t.draw.ranking if t.draw else None
    return (
        t.spec.rules.key == "ithf"
        or bool(t.spec.later)
        or any(e.get("id") for e in (ranked or {}).values())
    )


def ithf_line(t: Tournament, place: int, name: str) -> str:
    """place, ITHF id, name, club, nation, tab-separated: the id, the name as the ranking
    writes it, club and nation from the ranking where the player was matched to it, else
    the tournament file's name, club and country (and no id)."""
    entry = (t.draw.ranking or {}).get(name) if t.draw else None
    player = next((p for p in t.spec.players if p.name == name), None)
    cells = [
        str(place),
        str(entry.get("id", "")) if entry else "",
        str(entry.get("name") or name) if entry else name,
        str(entry.get("club") or "") if entry else (player.club if player else ""),
        str(entry.get("nation") or "") if entry else (player.country if player else ""),
    ]
    if entry and not cells[3] and player:
        cells[3] = player.club
    if entry and not cells[4] and player:
        cells[4] = player.country
    return "\t".join(c.replace("\t", " ") for c in cells)


def ithf_text(t: Tournament) -> str:
    s = t.spec
    finished = t.outcome("F") is not None or not t.nodes
    if ithf_tabbed(t):
        head = [
            f"Tournament: {s.title}",
            f"Date: {ithf_date(s.date)}",
            f"Country: {s.country}",
            f"City: {s.place}",
            f"Participants: {len(s.players)}",
            "",
            "Final standings (place, ITHF id, name, club, nation; tab-separated):"
            if finished
            else "Standings so far (the final is not played yet):",
            "",
        ]
        return "\n".join(head + [ithf_line(t, p, n) for p, n in t.placings()]) + "\n"
    lines = [
        f"Tournament: {s.title}",
        f"Date: {ithf_date(s.date)}",
        f"Country: {s.country}",
        f"City: {s.place}",
        f"Participants: {len(s.players)}",
        "",
        "Final standings (winner first, one player a line; names as written, surname last):"
        if finished
        else "Standings so far (the final is not played yet):",
        "",
    ]
    lines += [name for _, name in t.placings()]
    return "\n".join(lines) + "\n"


def carried_ids(t: Tournament) -> dict[str, list[str]]:
    """Each filled final group's carried results, as the basic groups' match ids."""
    out: dict[str, list[str]] = {}
    for g, later in t.later.items():
        if later.carry and g in t.groups:
            pairs = {(h, a) for h, a, _ in t.carried(g)}
            out[g] = [
                m.id
                for m in t.group_matches.values()
                if m.group in t.basic and (m.home, m.away) in pairs
            ]
    return out


def write_all(t: Tournament, out: Path) -> list[Path]:
    results, standings = result_rows(t), standing_rows(t)
    staged = {"carried": carried_ids(t)} if t.later else {}
    files = {
        "results.csv": _csv(results, RESULT_FIELDS),
        "results.json": json.dumps(
            {"tournament": about(t), "results": results}, ensure_ascii=False, indent=1
        )
        + "\n",
        "standings.csv": _csv(standings, STANDING_FIELDS),
        "standings.json": json.dumps(
            {
                "tournament": about(t),
                "groups": {g: [r for r in standings if r["group"] == g] for g in t.groups},
                "final": [{"place": p, "player": n} for p, n in t.placings()],
                **staged,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        "ithf.txt": ithf_text(t),
    }
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
