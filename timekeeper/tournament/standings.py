"""A group's standings by the rule set: counted from the results, ordered by the seed's
tie-breakers, the lot last.

Head-to-head is computed on the tied players alone: the points of the matches among the
players still level at that step (a mini-table). If it splits them, those still level are
compared by head-to-head again among themselves (the smaller mini-table), then go on to the
next criterion. Where all criteria leave a tie, a lot the desk drew and recorded orders it;
until then the tie stands in draw order, marked `lot pending`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from timekeeper.rules.decision import EXTRA
from timekeeper.tournament.results import Result
from timekeeper.tournament.rulesets import HEAD_TO_HEAD, RuleSet

Played = tuple[str, str, Result]  # home, away, result


@dataclass
class Row:
    player: str
    played: int = 0
    won: int = 0  # in regulation (or by forfeit)
    ot_won: int = 0  # in overtime, sudden death or the shoot-out
    drawn: int = 0
    ot_lost: int = 0
    lost: int = 0
    goals_for: int = 0
    goals_against: int = 0
    points: int = 0
    place: int = 0
    ahead_by: str = ""  # the criterion that put this row above the next one
    lot: str = ""  # "drawn" (ordered by a recorded lot) or "pending"
    tied_with: tuple[str, ...] = field(default=())

    @property
    def goal_difference(self) -> int:
        return self.goals_for - self.goals_against

    def to_json(self) -> dict[str, object]:
        return {
            "place": self.place,
            "player": self.player,
            "played": self.played,
            "won": self.won,
            "ot_won": self.ot_won,
            "drawn": self.drawn,
            "ot_lost": self.ot_lost,
            "lost": self.lost,
            "goals_for": self.goals_for,
            "goals_against": self.goals_against,
            "goal_difference": self.goal_difference,
            "points": self.points,
            "ahead_by": self.ahead_by,
            "lot": self.lot,
        }


def count(players: Sequence[str], played: Sequence[Played], rules: RuleSet) -> dict[str, Row]:
    rows = {p: Row(p) for p in players}
    for home, away, result in played:
        for me, mine, theirs in (
            (home, result.home, result.away),
            (away, result.away, result.home),
        ):
            row = rows[me]
            row.played += 1
            row.goals_for += mine
            row.goals_against += theirs
            row.points += rules.points.for_result(mine, theirs, result.decided)
            extra = result.decided in EXTRA
            if mine == theirs:
                row.drawn += 1
            elif mine > theirs:
                row.ot_won += extra
                row.won += not extra
            else:
                row.ot_lost += extra
                row.lost += not extra
    return rows


def standings(
    players: Sequence[str],
    played: Sequence[Played],
    rules: RuleSet,
    lots: Sequence[Sequence[str]] = (),
) -> list[Row]:
    """The group's rows, first to last: a total order (the lot, drawn or pending, last).
    `players` in draw order; `lots`: the orders the desk recorded, the latest last."""
    rows = count(players, played, rules)
    ranked: list[str] = []
    gaps: list[str] = []  # gaps[i]: what separates ranked[i] from ranked[i + 1]
    _order(list(players), 0, rules, rows, played, lots, ranked, gaps)
    out = []
    for i, name in enumerate(ranked):
        row = rows[name]
        row.place = i + 1
        row.ahead_by = gaps[i] if i < len(gaps) else ""
        out.append(row)
    return out


def pending_lots(rows: Sequence[Row]) -> list[tuple[str, ...]]:
    """The ties a lot must still decide, each as the tied players in their current order."""
    seen: list[tuple[str, ...]] = []
    for row in rows:
        if row.lot == "pending" and row.tied_with not in seen:
            seen.append(row.tied_with)
    return seen


def _order(
    tied: list[str],
    step: int,
    rules: RuleSet,
    rows: dict[str, Row],
    played: Sequence[Played],
    lots: Sequence[Sequence[str]],
    ranked: list[str],
    gaps: list[str],
) -> None:
    if len(tied) == 1:
        ranked.append(tied[0])
        return
    criterion = rules.tiebreakers[step]
    if criterion == "lot":
        _lot(tied, rows, lots, ranked, gaps)
        return
    value = _value(criterion, tied, rows, played, rules)
    levels = sorted({value(p) for p in tied}, reverse=True)
    parts = [[p for p in tied if value(p) == v] for v in levels]
    # a head-to-head criterion that splits the tie: those still level start the mini-table
    # again among themselves, at the first head-to-head criterion of the run it belongs to
    again = criterion in HEAD_TO_HEAD and len(parts) > 1
    first = step
    while again and first > 0 and rules.tiebreakers[first - 1] in HEAD_TO_HEAD:
        first -= 1
    for i, part in enumerate(parts):
        _order(
            part,
            first if again and len(part) > 1 else step + 1,
            rules,
            rows,
            played,
            lots,
            ranked,
            gaps,
        )
        if i < len(parts) - 1:
            gaps.append(criterion)


def _value(
    criterion: str, tied: list[str], rows: dict[str, Row], played: Sequence[Played], rules: RuleSet
) -> Callable[[str], int]:
    if criterion in HEAD_TO_HEAD:
        among = set(tied)
        mini = {p: 0 for p in tied}
        for home, away, result in played:
            if home in among and away in among:
                if criterion == "head_to_head":
                    mini[home] += rules.points.for_result(result.home, result.away, result.decided)
                    mini[away] += rules.points.for_result(result.away, result.home, result.decided)
                elif criterion == "head_to_head_goal_difference":
                    mini[home] += result.home - result.away
                    mini[away] += result.away - result.home
                else:
                    mini[home] += result.home
                    mini[away] += result.away
        return mini.__getitem__
    getters: dict[str, Callable[[Row], int]] = {
        "points": lambda r: r.points,
        "goal_difference": lambda r: r.goal_difference,
        "goals_for": lambda r: r.goals_for,
        "goals_against": lambda r: -r.goals_against,
        "wins": lambda r: r.won + r.ot_won,
    }
    get = getters[criterion]
    return lambda p: get(rows[p])


def _lot(
    tied: list[str],
    rows: dict[str, Row],
    lots: Sequence[Sequence[str]],
    ranked: list[str],
    gaps: list[str],
) -> None:
    drawn = next((lot for lot in reversed(lots) if set(tied) <= set(lot)), None)
    order = sorted(tied, key=list(drawn).index) if drawn else tied
    for i, name in enumerate(order):
        rows[name].lot = "drawn" if drawn else "pending"
        rows[name].tied_with = tuple(order)
        ranked.append(name)
        if i < len(order) - 1:
            gaps.append("lot")


def tie_told(row: Row, complete: bool) -> tuple[str, str]:
    """What a table says of `row` (`ahead_by`, `lot`): the criterion that put it above the
    next one, and a lot drawn or pending — but before its group is complete, players level
    are level for now: no lot said. The board's and the sheets' one reading."""
    ahead_by = row.ahead_by if complete or row.ahead_by != "lot" else ""
    return ahead_by, row.lot if complete else ""
