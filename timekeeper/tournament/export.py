"""Exports for the world outside the hall: results, standings and the final standings as
CSV and JSON for a program (the fields are documented in docs/tournament.md), and the ITHF
ranking's result form as a director fills it in: each field as it is pasted, the standings
one name a line, the winner first."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
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
FINAL_FIELDS = ("place", "player", "ithf_id", "ithf_name", "club", "nation")


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


def final_rows(t: Tournament) -> list[dict[str, Any]]:
    """The final standings for a program: the ITHF id and the name as the ranking writes it
    where the draw matched the player to a ranking line; club and nation the ranking's, else
    the tournament file's."""
    ranked = (t.draw.ranking or {}) if t.draw else {}
    players = {p.name: p for p in t.spec.players}
    rows = []
    for place, name in t.placings():
        entry, player = ranked.get(name) or {}, players.get(name)
        rows.append(
            {
                "place": place,
                "player": name,
                "ithf_id": str(entry.get("id") or ""),
                "ithf_name": str(entry.get("name") or ""),
                "club": str(entry.get("club") or "") or (player.club if player else ""),
                "nation": str(entry.get("nation") or "") or (player.country if player else ""),
            }
        )
    return rows


# the table-hockey nations' codes (IOC, and ISO 3166 where it differs) -> the English name
# the ranking site's country list gives; a tournament file's `country:` is such a code
COUNTRIES = {
    "ARG": "Argentina", "AUS": "Australia", "AUT": "Austria", "BEL": "Belgium",
    "BLR": "Belarus", "BRA": "Brazil", "BUL": "Bulgaria", "BGR": "Bulgaria",
    "CAN": "Canada", "CHN": "China", "CRO": "Croatia", "HRV": "Croatia",
    "CZE": "Czech Republic", "DEN": "Denmark", "DNK": "Denmark", "ESP": "Spain",
    "EST": "Estonia", "FIN": "Finland", "FRA": "France", "GBR": "Great Britain",
    "GER": "Germany", "DEU": "Germany", "HUN": "Hungary", "ISR": "Israel",
    "ITA": "Italy", "JPN": "Japan", "KAZ": "Kazakhstan", "LAT": "Latvia",
    "LVA": "Latvia", "LTU": "Lithuania", "NED": "Netherlands", "NLD": "Netherlands",
    "NOR": "Norway", "POL": "Poland", "ROU": "Romania", "RSA": "South Africa",
    "ZAF": "South Africa", "RUS": "Russia", "SLO": "Slovenia", "SVN": "Slovenia",
    "SRB": "Serbia", "SUI": "Switzerland", "CHE": "Switzerland", "SVK": "Slovakia",
    "SWE": "Sweden", "UKR": "Ukraine", "USA": "USA",
}  # fmt: skip


def country_name(country: str) -> tuple[str, bool]:
    """The form's Country: the English name of a 3-letter code, else as written; and whether
    it is a code the table cannot name (left as written, and the `--form` view says so)."""
    code = country.strip().upper()
    if code in COUNTRIES:
        return COUNTRIES[code], False
    return country, len(code) == 3 and code.isalpha()  # (no country's English name is 3 letters)


@dataclass(frozen=True)
class Form:
    """The ITHF ranking's result form as a director fills it in: the general fields in the
    form's order, the switch, the standings box (one name a line, the winner first) and the
    additional-info box; and what the director should know that goes in no field."""

    fields: tuple[tuple[str, str], ...]
    surname: str  # the switch "Surname is stated": first or last
    standings: tuple[str, ...]
    info: str
    typed: tuple[str, ...]  # written as the desk typed them: matched to no ranking line
    ranked: bool  # the draw was seeded from a ranking list
    shared: tuple[tuple[int, int], ...]  # places the placing rule orders by the draw alone
    finished: bool
    unnamed_country: str = ""  # a country code the export cannot name in English

    def text(self) -> str:
        """Each field as it is pasted, in the form's order (the file `ithf-form.txt`)."""
        lines = [f"{field}: {value}".rstrip() for field, value in self.fields]
        lines += [f"Surname is stated: {self.surname}", "", "Standings:"]
        lines += [*self.standings, "", f"Additional info: {self.info}".rstrip()]
        return "\n".join(lines) + "\n"

    def notes(self) -> list[str]:
        """What the `--form` view adds below the fields: nothing of it is pasted."""
        out = [
            f"{field}: empty, and the form needs it"
            for field, value in self.fields
            if not value and field != "Series"  # (the form's one optional field)
        ]
        if self.unnamed_country:
            out.append(
                f"Country: {self.unnamed_country} is a code this export cannot name: "
                "choose the country's English name from the site's list"
            )
        if not self.finished:
            out.append("the final is not played yet: these are the standings so far")
        if self.shared:
            runs = ", ".join(f"{first}–{last}" for first, last in self.shared)
            out.append(f"shared places {runs}: one name a line, in the draw's order")
        if not self.ranked:
            out.append("the draw used no ranking list: every name is written as typed")
        elif self.typed:
            out.append(f"not matched at the draw, written as typed: {', '.join(self.typed)}")
        return out


def form(t: Tournament, surname: str = "last") -> Form:
    """The form filled in from the ledger. A player matched at the draw is written as the
    ranking writes them (the site matches its own spelling), anyone else as typed; no name
    is turned round: `surname` only sets the switch, which the director sets to the order
    the names are in (the ranking as the ITHF publishes it writes the first name first)."""
    s = t.spec
    ranked = (t.draw.ranking or {}) if t.draw else {}
    places = t.placings()
    standings = tuple(str((ranked.get(n) or {}).get("name") or n) for _, n in places)
    typed = tuple(n for _, n in places if not (ranked.get(n) or {}).get("name"))
    new = []
    for row in final_rows(t) if ranked else []:
        if not row["ithf_name"]:
            known = ", ".join(x for x in (row["nation"], row["club"]) if x)
            new.append(f"{row['player']} ({known})" if known else row["player"])
    country, unnamed = country_name(s.country)
    return Form(
        fields=(
            ("Tournament", s.title),
            ("Date", ithf_date(s.date)),
            ("Series", ""),
            ("Country", country),
            ("City", s.place),
            ("Number of participants", str(len(s.players))),
        ),
        surname=surname,
        standings=standings,
        info=f"new to the ranking: {'; '.join(new)}" if new else "",
        typed=typed,
        ranked=bool(ranked),
        shared=_shared(t, [n for _, n in places]),
        finished=t.outcome("F") is not None or not t.nodes,
        unnamed_country=s.country.strip() if unnamed else "",
    )


def _shared(t: Tournament, order: list[str]) -> tuple[tuple[int, int], ...]:
    """Runs of places that only the draw's order separates (placings.py breaks such ties by
    it): out in the same round of the same play-off, or in none, with the same place,
    points and goals in a group of the same kind; a place a match decided is never shared."""
    decided: set[str] = set()
    out_at: dict[str, int] = {}
    for node in t.nodes.values():
        if (o := t.outcome(node.id)) is not None:
            if node.places:
                decided.update(o)
            else:
                out_at[o[1]] = node.level
    rows = {}
    for g in [*t.basic, *(g for g in t.later if g in t.groups)]:
        for r in t.standings(g):
            rows[r.player] = (
                "" if g in t.basic else next((p.name for p in t.spec.playoffs if g in p.groups), g),
                r.place,
                r.points,
                r.goal_difference,
                r.goals_for,
            )

    def key(name: str) -> tuple[object, ...]:
        return (name,) if name in decided else (out_at.get(name, -1), rows.get(name))

    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or key(order[i]) != key(order[start]):
            if i - start > 1:
                runs.append((start + 1, i))
            start = i
    return tuple(runs)


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


def write_all(t: Tournament, out: Path, surname: str = "last") -> list[Path]:
    results, standings, final = result_rows(t), standing_rows(t), final_rows(t)
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
                "final": final,
                **staged,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        "final.csv": _csv(final, FINAL_FIELDS),
        "ithf-form.txt": form(t, surname).text(),
    }
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
