"""`timekeeper tournament …`: a whole tournament run from the terminal, results typed in.

Parsing and printing only: the tournament wing decides, its ledger remembers. This is the
top of the house, so it is where the wall clock is read (the time stamp a result gets in the
ledger) and where a draw's seed is picked when none is given. Like the other cli modules, it
imports the wing only when a tournament command runs, so `timekeeper run` starts no slower."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from timekeeper.tournament.rulesets import BUILT_IN  # the names only: dataclasses, no I/O

if TYPE_CHECKING:
    from timekeeper.tournament.ledger import Ledger
    from timekeeper.tournament.state import Fixture, Tournament

DEFAULT_FILE = "tournament.yaml"


def add_commands(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser(
        "tournament",
        help="the evening: draw, rounds, results, standings, play-off, sheets (docs/tournament.md)",
    )
    actions = t.add_subparsers(required=True, metavar="ACTION")
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument(
        "-f",
        "--file",
        type=Path,
        default=Path(os.environ.get("TIMEKEEPER_TOURNAMENT", DEFAULT_FILE)),
        help=f"the tournament file (default: $TIMEKEEPER_TOURNAMENT, else ./{DEFAULT_FILE})",
    )

    new = actions.add_parser("new", help="write a new tournament file to fill in")
    new.add_argument("path", type=Path, metavar="FILE")
    new.add_argument("--rules", choices=tuple(BUILT_IN), default="radegast")
    new.add_argument("--players", type=int, default=16, help="how many placeholder names")
    new.add_argument("--names", type=Path, help="the players, one a line")
    new.add_argument("--tables", type=int, default=4)
    new.add_argument("--title", default="")
    new.set_defaults(func=cmd_new)

    d = actions.add_parser("draw", parents=[where], help="draw the groups (or the tree)")
    d.add_argument("--seed", type=int, help="repeat a draw (default: a new seed, printed)")
    d.add_argument(
        "--ranking",
        type=Path,
        help="seed from a ranking: the ITHF world ranking's ranking.txt as published (title, "
        "header, tab-separated: rank, id, name, club, nation, points, value) or a list, one "
        "player a line, best first",
    )
    d.add_argument(
        "--unranked-ok",
        action="store_true",
        help="with --ranking: draw by lot when the ranking names none of the players "
        "(else refused)",
    )
    d.set_defaults(func=cmd_draw)

    r = actions.add_parser("rounds", parents=[where], help="every round's matches by table")
    r.add_argument("--next", action="store_true", help="only each table's next match")
    r.set_defaults(func=cmd_rounds)

    res = actions.add_parser("result", parents=[where], help="type in (or correct) a result")
    res.add_argument(
        "at",
        nargs="+",
        metavar="ROUND TABLE | MATCH",
        help="the match: its round and table (1 3), or its id (QF2); then HOME:AWAY, the "
        "score (a forfeit: the score at that moment, if it started)",
    )
    res.add_argument(
        "--game",
        type=int,
        metavar="N",
        help="a series: game N (a correction of one played); default: the next game",
    )
    res.add_argument(
        "--one-game",
        action="store_true",
        help="a series: --forfeit loses this game only (default: a walkover of the series)",
    )
    how = res.add_mutually_exclusive_group()
    how.add_argument(
        "--ot", dest="decided", action="store_const", const="overtime", help="decided in overtime"
    )
    how.add_argument(
        "--sd",
        dest="decided",
        action="store_const",
        const="sudden_death",
        help="decided by a sudden-death goal",
    )
    how.add_argument(
        "--so",
        dest="decided",
        action="store_const",
        const="shootout",
        help="decided in the shoot-out (the winner's score one goal more)",
    )
    how.add_argument(
        "--forfeit",
        choices=("home", "away"),
        metavar="SIDE",
        help="SIDE (home or away) forfeits: the rule set's forfeit result",
    )
    res.add_argument("--reason", default="", help="why a result is corrected")
    res.set_defaults(func=cmd_result, decided="regulation")

    rp = actions.add_parser("replay", parents=[where], help="a replay ordered by a referee")
    rp.add_argument(
        "at", nargs="+", metavar="ROUND TABLE | MATCH", help="the match (a series: its last game)"
    )
    rp.add_argument("--reason", required=True)
    rp.set_defaults(func=cmd_replay)

    w = actions.add_parser(
        "withdraw", parents=[where], help="a player leaves: every match still to play forfeited"
    )
    w.add_argument("player", metavar="PLAYER")
    w.add_argument("--reason", required=True)
    w.set_defaults(func=cmd_withdraw)

    lot = actions.add_parser("lot", parents=[where], help="record the lot for a tie")
    lot.add_argument("group", metavar="GROUP")
    lot.add_argument("--order", help="the order the desk drew: names, comma-separated")
    lot.add_argument("--seed", type=int, help="draw it here from this seed")
    lot.set_defaults(func=cmd_lot)

    st = actions.add_parser("standings", parents=[where], help="every group's table")
    st.add_argument("group", nargs="?", metavar="GROUP")
    st.set_defaults(func=cmd_standings)

    b = actions.add_parser("bracket", parents=[where], help="the play-off tree and places")
    b.set_defaults(func=cmd_bracket)

    h = actions.add_parser("history", parents=[where], help="the ledger, readable")
    h.set_defaults(func=cmd_history)

    e = actions.add_parser("export", parents=[where], help="CSV, JSON, A4 sheets, ITHF form")
    e.add_argument("--out", type=Path, help="folder (default: FILE's name + -export)")
    e.add_argument(
        "--form", action="store_true", help="show the ITHF ranking's result form filled in"
    )
    e.add_argument(
        "--surname",
        choices=("last", "first"),
        default="last",
        help="the form's switch: where the surname stands in the names (default: last, as "
        "the ITHF ranking writes them)",
    )
    e.set_defaults(func=cmd_export)


# ---------------------------------------------------------------------------- helpers


def _now() -> str:
    from timekeeper.tournament.ledger import stamp

    return stamp(time.time())


def _open(args: argparse.Namespace, drawn: bool = False) -> tuple[Tournament, Ledger]:
    """The tournament of -f FILE with its ledger (`drawn`: refused if not drawn yet)."""
    from timekeeper.tournament.ledger import open_tournament

    t, ledger = open_tournament(args.file, drawn)
    if ledger.torn:
        print(
            f"timekeeper: {ledger.path}: its last line was cut off (a crash while writing) "
            "and is left out; the next entry replaces it",
            file=sys.stderr,
        )
    return t, ledger


def result_text(m: Fixture) -> str:
    """The result as the lists print it; a series with each game's score."""
    if m.series is not None and m.series.games:
        return m.series.text()
    return m.result.text() if m.result else "replay ordered" if m.replay else ""


def _line(m: Fixture) -> str:
    score = result_text(m)
    return f"  table {m.slot.table:<3} {m.id:<6} {m.stage:<16} {m.sides:<36} {score}"


# ---------------------------------------------------------------------------- commands


def cmd_new(args: argparse.Namespace) -> int:
    from timekeeper.tournament import spec, template
    from timekeeper.tournament.state import TournamentError

    names = (
        [
            n.strip()
            for n in args.names.read_text(encoding="utf-8").splitlines()
            if n.strip() and not n.startswith("#")
        ]
        if args.names
        else [f"Player {i}" for i in range(1, args.players + 1)]
    )
    try:
        template.write(args.path, args.rules, names, args.tables, args.title or args.path.stem)
    except FileExistsError:
        raise TournamentError(
            f"{args.path} exists; a tournament file is never overwritten"
        ) from None
    s = spec.load(args.path)  # what was written must load
    print(f"wrote {args.path}: {s.rules.title}, {len(s.players)} players, {len(s.tables)} tables")
    if note := s.rules.venue_note(len(s.players), len(s.tables)):
        print(note)
    print(f"next: edit it, then `timekeeper tournament draw -f {args.path}`")
    return 0


def cmd_draw(args: argparse.Namespace) -> int:
    from timekeeper.tournament import clerk
    from timekeeper.tournament import ranking as ranking_list
    from timekeeper.tournament.evening import evening
    from timekeeper.tournament.state import TournamentError

    if args.unranked_ok and not args.ranking:  # (it says what to do with a list's misses)
        raise TournamentError("--unranked-ok goes with --ranking LIST (without one: by lot)")
    t, ledger = _open(args)
    import secrets  # (here, not at the top: it loads OpenSSL, 4 MB in every `run`)

    seed = args.seed if args.seed is not None else secrets.randbelow(10**6)
    ranking = None
    entries = None
    day = None
    if args.ranking:
        listed = ranking_list.read(args.ranking)
        found = ranking_list.match(listed, t.spec.names)
        count, on = len(t.spec.names), args.ranking.name
        few = 2 * len(found.ranked) < count
        if not found.ranked and not args.unranked_ok:
            close = ranking_list.hints(listed, found.unranked, close_only=True)
            far = count - len(close)
            said = [*close[:5], *(["…"] if len(close) > 5 else [])]
            if far:
                said.append(f"nothing close for the other {far}" if close else "nothing close")
            raise TournamentError(
                f"{args.ranking}: names none of the {count} players (is it the ranking?): "
                f"{'; '.join(said)}; `--unranked-ok` draws them all by lot"
            )
        hints = ranking_list.hints(listed, found.unranked[:12]) if few else []
        for note in listed.notes:
            print(f"({note})")
        for rank, names in found.shared:
            print(f"({' and '.join(names)} share rank {rank} on {on}: seeded in its order)")
        if found.ranked:
            ranking, unknown = list(found.ranked), found.unknown
            entries = {n: e.to_json() for n, e in found.entries.items()}
            day = listed.date.isoformat() if listed.date else None
            if unknown:
                print(
                    f"(not in this tournament: {', '.join(unknown[:10])}"
                    f"{' …' if len(unknown) > 10 else ''})"
                )
        if found.ranked and few:
            print(
                f"WARNING: only {len(found.ranked)} of the {count} players "
                f"{'is' if len(found.ranked) == 1 else 'are'} on {on}; "
                "the others are drawn by lot after them. Not on it:",
                file=sys.stderr,
            )
            for line in hints + (["…"] if len(found.unranked) > len(hints) else []):
                print(f"  {line}", file=sys.stderr)
        if found.unranked:
            given = t.spec.groups.unranked if t.spec.groups else ()
            order = "in the file's unranked: order" if given else "drawn by lot"
            print(
                f"not on {on} ({len(found.unranked)}, unranked: {order} "
                f"after the {len(found.ranked)} ranked): {', '.join(found.unranked)}"
            )
    ledger.record(t, clerk.draw(t, seed, ranking, _now(), entries, day))
    seeding = t.spec.groups.seeding if t.spec.groups else "pots"
    how = (
        "the groups the file sets"
        if t.spec.groups and t.spec.groups.by_hand
        else "random"
        if ranking is None
        else "snake from the ranking"
        if seeding == "snake"
        else "seeded pots"
    )
    print(f"drawn ({how}) with seed {seed}: `--seed {seed}` repeats it")
    if note := t.spec.rules.venue_note(len(t.spec.players), len(t.spec.tables)):
        print(note)
    for group, players in t.groups.items():
        print(f"  group {group}: {', '.join(players)}")
    if not t.groups:
        print("  seeds: " + ", ".join(f"{i}. {n}" for i, n in enumerate(t.order, 1)))
    e = evening(t)
    groups = (
        (f" ({e.group_rounds} in groups)", f", {e.back_to_back} back-to-back group matches")
        if t.groups
        else ("", "")
    )
    print(
        f"{e.rounds} rounds{groups[0]}, {e.idle} idle table-rounds{groups[1]}; about "
        f"{_hm(e.seconds)}"
    )
    return 0


def _hm(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min"


def cmd_rounds(args: argparse.Namespace) -> int:
    t, _ = _open(args, drawn=True)
    if args.next:
        for table, m, state in t.next_up():
            print(
                f"table {table}: "
                + (
                    "done"
                    if m is None
                    else f"round {m.slot.round}  {series_line(m)}  {m.sides}  ({state})"
                )
            )
        return 0
    from timekeeper.tournament.evening import clock, round_starts

    starts = round_starts(t) if t.spec.start is not None else {}
    current = 0
    for m in t.fixtures():
        if m.slot.round != current:
            current = m.slot.round
            profiles = dict.fromkeys(t.profile_of(s.match) for s in t.slots if s.round == current)
            when = (
                f"  about {clock(t.spec.start, starts[current])}"
                if t.spec.start is not None
                else ""
            )
            print(f"round {current}  ({', '.join(profiles)}){when}")
        print(_line(m))
    return 0


def _under_way(t: Tournament) -> dict[str, str]:
    """The matches the hall's desk saw begun at their tables (its calls file, beside the
    tournament's): a correction must not change their players, as on the board."""
    from timekeeper.hall.desk.callbook import CallBook

    book = CallBook(t.spec.file)
    book.read()
    return book.under_way()


def _match_at(t: Tournament, at: list[str], score: bool) -> tuple[int, str, str | None]:
    """(round, table, score) from `ROUND TABLE [SCORE]` or `MATCH [SCORE]`."""
    from timekeeper.tournament.state import TournamentError

    t.require_drawn()
    if at[0].isdigit():
        if len(at) < 2:
            raise TournamentError("ROUND TABLE (e.g. 1 3) or a match's id (e.g. QF2)")
        round_, table, rest = int(at[0]), at[1], at[2:]
    else:
        m = t.named(at[0])
        round_, table, rest = m.slot.round, m.slot.table, at[1:]
    if len(rest) > (1 if score else 0):
        raise TournamentError(f"unexpected {' '.join(rest)!r}")
    return round_, table, rest[0] if rest else None


def series_line(m: Fixture) -> str:
    """`QF2 · game 3 · Novák leads 2:0` (a series), or the match's id."""
    if m.series is None:
        return m.id
    if m.series.next_game is None:
        return f"{m.id} · {m.series.state_text(str(m.home), str(m.away))}"
    state = m.series.state_text(str(m.home), str(m.away)) if m.home and m.away else "0:0"
    return f"{m.id} · game {m.series.next_game} · {state}"


def cmd_result(args: argparse.Namespace) -> int:
    from timekeeper.cli import desk_client
    from timekeeper.tournament.events import ResultEvent

    t, ledger = _open(args)
    round_, table, score = _match_at(t, args.at, score=True)
    decided = "forfeit" if args.forfeit else args.decided
    fields = {
        "round": round_,
        "table": table,
        "score": score,
        "decided": decided,
        "forfeit": args.forfeit,
        "reason": args.reason,
        "game": args.game,
        "one_game": args.one_game,
    }
    t, written = desk_client.record(
        args.file, t, ledger, ResultEvent, "result", fields, _now(), _under_way(t)
    )
    m = t.fixture(written.match)
    what = "corrected" if written.corrects else "result"
    if m.series is not None:
        typed = t.game_result(m.id, written.game or 0)
        game = m.series.games[(written.game or 1) - 1]
        print(
            f"{what}: round {m.slot.round} table {m.slot.table}  {m.id} game {written.game}  "
            f"{m.sides}  {game.text() if typed else ''}  ({series_line(m)})  "
            f"(ledger entry {written.n})"
        )
        return 0
    print(
        f"{what}: round {m.slot.round} table {m.slot.table}  {m.id}  {m.sides}  "
        f"{m.result.text() if m.result else ''}  (ledger entry {written.n})"
    )
    if not m.knockout:
        group = t.group_matches[m.id].group
        for tie in t.pending_lots(group):
            print(
                f"group {group} is complete with a tie only a lot breaks: {', '.join(tie)}"
                f" — `timekeeper tournament lot {group} --order …` once drawn"
            )
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from timekeeper.cli import desk_client
    from timekeeper.tournament.events import ReplayEvent

    t, ledger = _open(args)
    round_, table, _ = _match_at(t, args.at, score=False)
    fields = {"round": round_, "table": table, "reason": args.reason}
    t, event = desk_client.record(
        args.file, t, ledger, ReplayEvent, "replay", fields, _now(), _under_way(t)
    )
    m = t.fixture(event.match)
    print(
        f"replay ordered: {m.id} {m.sides} at round {m.slot.round} table {m.slot.table}"
        + (f" (set aside: {event.voids.home}:{event.voids.away})" if event.voids else "")
    )
    return 0


def cmd_withdraw(args: argparse.Namespace) -> int:
    from timekeeper.cli import desk_client
    from timekeeper.tournament.events import WithdrawEvent

    t, ledger = _open(args)
    fields = {"player": args.player, "reason": args.reason}
    t, event = desk_client.record(args.file, t, ledger, WithdrawEvent, "withdraw", fields, _now())
    for m in t.fixtures():
        if m.id in t.walkovers and event.player in (m.home, m.away):
            print(
                f"forfeit: round {m.slot.round} table {m.slot.table}  {m.id}  {m.sides}  "
                f"{m.result.text() if m.result else ''}"
            )
    print(
        f"withdrawn: {event.player} (ledger entry {event.n}); every match still to play is "
        "forfeited, a knock-out match they reach too"
    )
    return 0


def cmd_lot(args: argparse.Namespace) -> int:
    from timekeeper.cli import desk_client
    from timekeeper.tournament.events import LotEvent

    t, ledger = _open(args)
    order = [n for n in args.order.split(",") if n.strip()] if args.order else None
    fields = {"group": args.group, "order": order, "seed": args.seed}
    t, event = desk_client.record(args.file, t, ledger, LotEvent, "lot", fields, _now())
    print(f"lot for group {event.group} ({event.how}): {' > '.join(event.order)}")
    return 0


def cmd_standings(args: argparse.Namespace) -> int:
    from timekeeper.tournament.plan import describe
    from timekeeper.tournament.state import TournamentError

    t, _ = _open(args, drawn=True)
    if not t.groups:
        print("no groups: a knock-out alone (`bracket`)")
        return 0
    wanted = (
        [args.group.upper()]
        if args.group
        else [*t.groups, *(g for g in t.later if g not in t.groups)]
    )
    for group in wanted:
        if group in t.later and group not in t.groups:
            seats = ", ".join(describe(s) for s in t.later[group].seats)
            print(f"group {group}: not filled yet ({seats})")
            continue
        if group not in t.groups:
            raise TournamentError(f"no group {group!r} (groups {', '.join(t.groups)})")
        print("\n".join(standings_text(t, group)))
    return 0


def standings_text(t: Tournament, group: str) -> list[str]:
    extra = not t.spec.rules.group_draws
    done = t.complete(group)
    head = "   W  OW  OL   L" if extra else "   W   D   L"
    kind = ""
    if group in t.later:
        carried = len(t.carried(group))
        kind = (
            f" (final group, {carried} results carried from the basic groups)"
            if t.later[group].carry
            else " (placement group)"
        )
    out = [
        f"group {group}{kind}{'' if done else ' (still playing)'}",
        f"     {'':<24} P{head}   GF:GA   +/-  Pts",
    ]
    for row in t.standings(group):
        counts = (
            f"{row.won:>4}{row.ot_won:>4}{row.ot_lost:>4}{row.lost:>4}"
            if extra
            else f"{row.won:>4}{row.drawn:>4}{row.lost:>4}"
        )
        note = ""
        if row.lot == "drawn":
            note = "  (lot)"
        elif row.lot == "pending":
            note = "  (lot pending)" if done else "  (tied)"
        elif row.ahead_by and row.ahead_by != "points":
            note = f"  (ahead on {row.ahead_by.replace('_', ' ')})"
        out.append(
            f"  {row.place:>2}. {row.player:<24}{row.played:>2}{counts}"
            f"  {row.goals_for:>3}:{row.goals_against:<3}{row.goal_difference:>+5}"
            f"{row.points:>5}{note}"
        )
    return out


def cmd_bracket(args: argparse.Namespace) -> int:
    from timekeeper.tournament.plan import describe

    t, _ = _open(args, drawn=True)
    if not t.nodes:
        print("no knock-out in this tournament")
        return 0
    for node in sorted(t.nodes.values(), key=lambda n: (n.level, n.id == "3P")):
        m = t.fixture(node.id)
        home = f"{m.home} ({describe(node.home)})" if m.home else describe(node.home)
        away = f"{m.away} ({describe(node.away)})" if m.away else describe(node.away)
        score = result_text(m)
        if node.best_of > 1:
            score = f"best of {node.best_of}" + (f": {score}" if score else "")
        print(
            f"{node.id:<6} {node.name:<18} r{m.slot.round} t{m.slot.table}  "
            f"{home} – {away}  {score}"
        )
    outcome_f = t.outcome("F")
    if outcome_f:
        print("\nfinal standings:")
        for place, name in t.placings():
            print(f"  {place:>3}. {name}")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    t, _ = _open(args)
    for e in t.history():
        print(f"{e.n:>4}  {e.time or '':<25} {e.text()}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from timekeeper.tournament import export, sheets

    t, _ = _open(args, drawn=True)
    if args.form:  # a view: the fields as the director copies them, the notes below
        form = export.form(t, args.surname)
        print(form.text(), end="")
        print("".join(f"\nnote: {note}" for note in form.notes()))
        return 0
    out = args.out or args.file.with_name(args.file.stem + "-export")
    out.mkdir(parents=True, exist_ok=True)
    written = export.write_all(t, out, args.surname) + sheets.write_all(t, out)
    print(f"wrote {len(written)} files to {out}: {', '.join(p.name for p in written)}")
    return 0
