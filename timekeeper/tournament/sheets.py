"""Printable sheets for the wall: the groups with their standings, the play-off tree, and
every round's pairings by table. Plain HTML with print CSS (`@page { size: A4 }`), so any
browser prints them on A4 without a tool chain on the desk's laptop.

Each is drawn from a View (publicview.py): the director's (`timekeeper tournament export`,
the desk with its token) shows everything; the public's (the desk without it) only what the
file's `public:` lets the public see during the groups."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from timekeeper.tournament.evening import clock, round_starts
from timekeeper.tournament.export import ithf_date
from timekeeper.tournament.fixture import Fixture
from timekeeper.tournament.plan import describe
from timekeeper.tournament.public import qr_svg
from timekeeper.tournament.publicview import FULL, View, view
from timekeeper.tournament.results import Result
from timekeeper.tournament.rulesets import SAID, RuleSet
from timekeeper.tournament.state import Tournament

CSS = """
@page { size: A4 portrait; margin: 12mm; }
* { box-sizing: border-box; }
body { font: 11pt/1.3 "DejaVu Sans", Arial, sans-serif; color: #000; margin: 0; }
h1 { font-size: 16pt; margin: 0 0 2mm; }
h2 { font-size: 13pt; margin: 5mm 0 2mm; }
p.about { margin: 0 0 4mm; color: #333; font-size: 9pt; }
table { border-collapse: collapse; width: 100%; margin-bottom: 4mm; }
th, td { border: 0.3mm solid #555; padding: 1mm 2mm; text-align: left; }
th { background: #e8e8e8; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.cross td, table.cross th { padding: 0.5mm 1mm; font-size: 9pt; }
.block { break-inside: avoid; page-break-inside: avoid; }
.tree { display: flex; gap: 2mm; align-items: stretch; }
.level { flex: 1 1 0; display: flex; flex-direction: column; justify-content: space-around; }
.node { border: 0.3mm solid #555; margin: 0 0 3mm; padding: 1mm 2mm; break-inside: avoid; }
.node b { display: block; font-size: 9pt; color: #333; }
.score { float: right; font-weight: bold; }
.won { font-weight: bold; }
.qr { float: right; width: 30mm; margin: 0 0 2mm 4mm; font-size: 8pt; text-align: center; }
.qr svg { width: 30mm; height: 30mm; display: block; }
@media screen { body { max-width: 190mm; margin: 8mm auto; } }
"""


def _page(t: Tournament, heading: str, body: str, link: str = "") -> str:
    """`link`: the players' pages on the desk (…/player), printed as a QR code with its text."""
    s = t.spec
    about = " · ".join(escape(x) for x in (s.date, s.place, s.rules.title, seeded(t)) if x)
    if link:
        body = f"<div class=qr>{qr_svg(link)}{escape(link)}</div>\n{body}"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(s.title)} — {escape(heading)}</title><style>{CSS}</style>"
        f"</head><body><h1>{escape(s.title)} — {escape(heading)}</h1>"
        f'<p class="about">{about}</p>\n{body}</body></html>\n'
    )


def seeded(t: Tournament) -> str:
    """What the draw was seeded from: "seeded from the ITHF ranking of 12.5.2026" (the date
    its title gives), "seeded from a ranking list", or nothing for a draw by lot or hand."""
    d = t.draw
    if d is None or d.method not in ("pots", "snake"):
        return ""
    return (
        f"seeded from the ITHF ranking of {ithf_date(d.ranking_date)}"
        if d.ranking_date
        else "seeded from a ranking list"
    )


def _director(t: Tournament, seen: View | None) -> View:
    return view(t, FULL, 0.0) if seen is None else seen  # (FULL: no time limit to apply)


def cross_table(t: Tournament, group: str, seen: View | None = None) -> str:
    """The group's cross-table, its players in their places' order and numbered by place:
    each row's score against each column's player, from the row's side, as far as `seen`
    shows them; a result carried from the basic group is marked *."""
    seen = _director(t, seen)
    players = [row["player"] for row in seen.groups[group]]
    places = [row["place"] for row in seen.groups[group]]
    score: dict[tuple[str, str], str] = {}
    carried = False
    for home, away, r, was_carried in seen.played[group]:
        mark = "*" if was_carried else ""
        carried = carried or was_carried
        score[home, away] = f"{r.home}:{r.away}{mark}"
        score[away, home] = f"{r.away}:{r.home}{mark}"
    head = "".join(f"<th>{n}</th>" for n in places)
    rows = "".join(
        f"<tr><td class=n>{n}</td><td>{escape(p)}</td>"
        + "".join(
            "<td class=n>×</td>" if p == q else f"<td class=n>{escape(score.get((p, q), ''))}</td>"
            for q in players
        )
        + "</tr>"
        for n, p in zip(places, players, strict=True)
    )
    note = (
        "<p class=about>* carried from the basic group (counted once, not played again)</p>"
        if carried
        else ""
    )
    return f"<table class=cross><tr><th></th><th></th>{head}</tr>{rows}</table>{note}"


def _result(m: Fixture, shown: Result | None) -> str:
    """A match's result as a sheet writes it: "played" where the view keeps its score back."""
    return shown.text() if shown else "played" if m.result else ""


HEADS = ("W", "D", "L", "goals", "+/-", "pts")


def tie_text(row: dict[str, Any]) -> str:
    """What separated a row from the next, as the board says it (its `ahead_by` and `lot`,
    standings.tie_told): "" where the points did."""
    if row["lot"] == "pending":
        return "lot pending"
    by = row["ahead_by"]
    return "" if by in ("", "points") else f"ahead by {SAID[by]}"


def rules_text(rules: RuleSet) -> str:
    """The rule set in a line: its points, its order and where it comes from."""
    p = rules.points
    points = f"win {p.win}, draw {p.draw}, loss {p.loss}"
    if (p.ot_win, p.ot_loss) != (p.win, p.loss):
        points += f", win in overtime or the shoot-out {p.ot_win}, loss there {p.ot_loss}"
    order = ", then ".join(SAID[c] for c in rules.tiebreakers)
    return (
        f"Rule set: {rules.title} ({rules.key}). Points: {points}. Places by {order}. "
        f"The text is this project's reading of the rules: {rules.source}."
    )


def groups_sheet(t: Tournament, link: str = "", seen: View | None = None) -> str:
    """The groups: each one's table (what separated a tie said), cross-table and matches, as
    far as `seen` shows them (None: the director's, everything)."""
    seen = _director(t, seen)
    hide = seen.points_hidden
    parts = []
    for group in t.groups:
        rows = "".join(
            f"<tr><td class=n>{r['place']}</td><td>{escape(r['player'])}</td>"
            f"<td class=n>{r['played']}</td>"
            + (
                ""
                if hide
                else f"<td class=n>{r['won'] + r['ot_won']}</td><td class=n>{r['drawn']}</td>"
                f"<td class=n>{r['lost'] + r['ot_lost']}</td><td class=n>{r['goals']}</td>"
                f"<td class=n>{r['goal_difference']:+d}</td><td class=n><b>{r['points']}</b></td>"
            )
            + f"<td>{escape(tie_text(r))}</td></tr>"
            for r in seen.groups[group]
        )
        matches = "".join(
            f"<tr><td class=n>{m.slot.round}</td><td>{escape(m.slot.table)}</td>"
            f"<td>{escape(m.sides)}</td><td>{escape(_result(m, r))}</td></tr>"
            for m in t.fixtures()
            if m.stage == f"group {group}"
            for r in (seen.shown(m),)
        )
        heads = (
            "" if hide else "<th>W</th><th>D</th><th>L</th><th>goals</th><th>+/-</th><th>pts</th>"
        )
        state = (
            f" (the table as after the group's round {seen.frozen[group]})"
            if group in seen.frozen
            else ""
            if t.complete(group)
            else " (still playing)"
        )
        parts.append(
            f"<div class=block><h2>Group {escape(group)}{state}</h2><table><tr><th>#</th>"
            f"<th>player</th><th>P</th>{heads}<th></th></tr>"
            f"{rows}</table>{cross_table(t, group, seen)}"
            "<table><tr><th>round</th><th>table</th><th>match</th>"
            f"<th>result</th></tr>{matches}</table></div>"
        )
    if hide:
        parts.append("<p class=about>Points and goals are shown once the groups are over.</p>")
    parts.append(f"<p class=about>{escape(rules_text(t.spec.rules))}</p>")
    return _page(t, "groups", "\n".join(parts), link)


def bracket_sheet(t: Tournament, link: str = "", seen: View | None = None) -> str:
    """The play-off tree, each match's winner marked (bold, ✔), a series with each game;
    a side not known yet by where it comes from (as `seen` may name it)."""
    seen = _director(t, seen)
    levels: dict[int, list[str]] = {}
    for node in sorted(t.nodes.values(), key=lambda n: (n.level, n.id == "3P")):
        m = t.fixture(node.id)
        named = seen.named(m)
        winner = (t.outcome(node.id) or (None,))[0]
        home, away = (
            f"<span class=won>{escape(name)} ✔</span>"
            if name and name == winner
            else escape(name or describe(seat))
            for name, seat in zip(named, (node.home, node.away), strict=True)
        )
        result = seen.shown(m)
        score = f"<span class=score>{escape(result.text())}</span>" if result else ""
        games = ""
        if m.series is not None:  # a series: best of N, and each game's score
            score = f"<span class=score>{escape(m.series.score_text())}</span>"
            games = (
                f"<br><small>best of {m.series.best_of}"
                + "".join(f" · {g.number}: {escape(g.text())}" for g in m.series.games)
                + "</small>"
            )
        levels.setdefault(node.level, []).append(
            f"<div class=node><b>{escape(node.name)} · round {m.slot.round}, table "
            f"{escape(m.slot.table)}</b>{score}{home}<br>{away}{games}</div>"
        )
    body = (
        "<div class=tree>"
        + "".join(f"<div class=level>{''.join(nodes)}</div>" for nodes in levels.values())
        + "</div>"
    )
    if t.outcome("F"):
        body += (
            "<div class=block><h2>Final standings</h2><table>"
            + "".join(f"<tr><td class=n>{p}</td><td>{escape(n)}</td></tr>" for p, n in t.placings())
            + "</table></div>"
        )
    if levels:
        body += f"<p class=about>✔ the winner. {escape(rules_text(t.spec.rules))}</p>"
    return _page(t, "play-off", body if levels else "<p>No knock-out in this tournament.</p>", link)


def rounds_sheet(t: Tournament, link: str = "", seen: View | None = None) -> str:
    """Every round's matches by table, with each result `seen` shows."""
    seen = _director(t, seen)
    starts = round_starts(t) if t.spec.start is not None else {}
    by_round: dict[int, list[str]] = {}
    for m in t.fixtures():
        result = seen.shown(m)
        done = m.series.text() if m.series and m.series.games else _result(m, result)
        stage = f"{m.stage} (best of {m.series.best_of})" if m.series else m.stage
        sides = seen.sides(m) if m.knockout else m.sides
        by_round.setdefault(m.slot.round, []).append(
            f"<tr><td>{escape(m.slot.table)}</td><td>{escape(stage)}</td>"
            f"<td>{escape(sides)}</td><td>{escape(done)}</td></tr>"
        )
    body = "".join(
        f"<div class=block><h2>Round {r}"
        f"{f' · about {clock(t.spec.start, starts[r])}' if t.spec.start is not None else ''}"
        f"</h2><table><tr><th>table</th><th>stage</th>"
        f"<th>match</th><th>result</th></tr>{''.join(rows)}</table></div>"
        for r, rows in by_round.items()
    )
    return _page(t, "rounds", body, link)


def write_all(t: Tournament, out: Path) -> list[Path]:
    """The sheets into `out`; with `public: url:` in the file, each with the QR code of the
    players' pages (the desk serves them with the address it was reached at)."""
    written = []
    link = f"{t.spec.public.url}/player" if t.spec.public.url else ""
    pages = {"rounds.html": rounds_sheet(t, link), "bracket.html": bracket_sheet(t, link)}
    if t.groups:
        pages = {"groups.html": groups_sheet(t, link), **pages}
    for name, text in pages.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
