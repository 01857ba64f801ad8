"""The built-in tournament rule sets, from the seeds (docs/RULES.md §5), and custom ones.

A rule set is what turns match results into an order: points, tie-breakers, the forfeit
score, which profile each stage plays. Kept apart from the file format so that tests and the
bench can use a rule set without a YAML file."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from timekeeper.rules.decision import EXTRA

# each criterion as the sheets say what put a player above the next ("ahead by …")
SAID = {
    "points": "points",
    "goal_difference": "goal difference",
    "goals_for": "goals scored",
    "goals_against": "fewer goals conceded",
    "head_to_head": "head-to-head points",
    "head_to_head_goal_difference": "head-to-head goal difference",
    "head_to_head_goals_for": "head-to-head goals scored",
    "wins": "more wins",
    "lot": "the lot",
}
CRITERIA = tuple(SAID)  # the tie-breakers a rule set may list; `lot` is always last
# the criteria counted on the matches among the tied players alone (a mini-table); where one
# of them splits a tie, those still level start again at the first of them (standings.py)
HEAD_TO_HEAD = ("head_to_head", "head_to_head_goal_difference", "head_to_head_goals_for")
TREES = ("cross", "vht6", "seeded")


@dataclass(frozen=True)
class Points:
    """Group points by how a match was decided (a forfeit counts as a regulation result)."""

    win: int
    draw: int
    loss: int
    ot_win: int  # a win in overtime, sudden death or the shoot-out
    ot_loss: int

    def for_result(self, mine: int, theirs: int, decided: str) -> int:
        if mine == theirs:
            return self.draw
        extra = decided in EXTRA
        if mine > theirs:
            return self.ot_win if extra else self.win
        return self.ot_loss if extra else self.loss


@dataclass(frozen=True)
class RuleSet:
    key: str
    title: str
    points: Points
    tiebreakers: tuple[str, ...]  # in the seed's order, `lot` last
    group_draws: bool  # a group draw stands; False: a group match goes on until decided
    forfeit_goals: int  # the forfeit result is 0:forfeit_goals for the side not at fault
    forfeit_plus_score: bool  # Radegast: 0:5 plus the score when the favoured side led or drew
    group_profile: str | None
    knockout_profile: str
    final_profile: str
    third_place: bool
    tree: str  # the default play-off tree: cross (A1–B2, B1–A2 …), vht6, seeded
    source: str  # where the rules come from, for the sheets and `rounds`
    venue_players: int | None = None  # the seed's most players a venue (a note, not a refusal)
    venue_tables: int | None = None  # the tables the seed plays on

    def scoring(self) -> dict[str, Any]:
        """What turns results into standings, as the draw keeps it: a ledger read with other
        scoring would silently re-rank an evening already played."""
        return {
            "key": self.key,
            "points": vars(self.points),
            "tiebreakers": list(self.tiebreakers),
            "group_draws": self.group_draws,
            "forfeit_goals": self.forfeit_goals,
            "forfeit_plus_score": self.forfeit_plus_score,
        }

    def venue_note(self, players: int, tables: int) -> str:
        """A line for the desk when the field is not the one the seed's venue is made for
        (Radegast: 4 tables, at most 32 players). A note, not a refusal: a club may run a
        bigger evening by the same rules."""
        if (
            self.venue_players is None
            or self.venue_tables is None
            or (players <= self.venue_players and tables == self.venue_tables)
        ):
            return ""
        return (
            f"note: the {self.title} is played on {self.venue_tables} tables with at most "
            f"{self.venue_players} players a venue (substitutes fill absences); this "
            f"file has {players} players and {tables} tables, taken as written"
        )

    def forfeit_score(self, at_fault: str, home: int | None, away: int | None) -> tuple[int, int]:
        """The forfeit result (home, away): 0:5 against the side at fault; with Radegast's rule,
        0:5 plus the score at that moment when the side not at fault led or drew."""
        if at_fault not in ("home", "away"):
            raise ValueError(f"the side at fault is home or away, not {at_fault!r}")
        award = (0, self.forfeit_goals) if at_fault == "home" else (self.forfeit_goals, 0)
        if not self.forfeit_plus_score or home is None or away is None:
            return award
        favoured, other = (away, home) if at_fault == "home" else (home, away)
        if favoured < other:  # the seed adds the score only for a side that led or drew
            return award
        return award[0] + home, award[1] + away


RADEGAST = RuleSet(
    key="radegast",
    title="Radegast Cup (004)",
    points=Points(win=3, draw=1, loss=0, ot_win=3, ot_loss=0),
    tiebreakers=("points", "goal_difference", "goals_for", "head_to_head", "lot"),
    group_draws=True,
    forfeit_goals=5,
    forfeit_plus_score=True,
    group_profile="radegast",
    knockout_profile="radegast-playoff",
    final_profile="radegast-playoff",
    third_place=True,
    tree="cross",
    venue_players=32,
    venue_tables=4,
    source="Radegast Cup rules (seed 004): win 3, draw 1; points, score, goals scored, "
    "head-to-head, lot; forfeit 0:5 (plus the score when the other side led or drew)",
)
HOKEJBAL = RuleSet(
    key="hokejbal",
    title="Slovak ball hockey, VHT (003)",
    points=Points(win=2, draw=1, loss=0, ot_win=2, ot_loss=0),
    tiebreakers=("points", "head_to_head", "goal_difference", "goals_for", "goals_against", "lot"),
    group_draws=True,
    forfeit_goals=5,
    forfeit_plus_score=False,
    group_profile="hokejbal",
    knockout_profile="hokejbal-playoff",
    final_profile="hokejbal-playoff",
    third_place=True,
    tree="vht6",
    source="Slovak ball hockey (seed 003) rules 1, 5, 6, VHT 6-9: win 2, draw 1 (a group draw "
    "stands); points, head-to-head, goal difference, goals scored, fewer conceded, lot; "
    "forfeit 5:0",
)
HOKEJBAL_3PT = replace(
    HOKEJBAL,
    key="hokejbal-3pt",
    title="Slovak ball hockey, 3-point system (003 rule 6)",
    points=Points(win=3, draw=0, loss=0, ot_win=2, ot_loss=1),
    group_draws=False,
    group_profile="hokejbal-group-ot",
    source="Slovak ball hockey (seed 003) rules 1, 5, 6: win 3, win in overtime or shoot-out "
    "2, loss there 1, loss 0 (a group draw goes to overtime and the shoot-out); points, "
    "head-to-head, goal difference, goals scored, fewer conceded, lot; forfeit 5:0",
)
PL_KO = RuleSet(
    key="pl-ko",
    title="Polish disc hockey, knock-out (002)",
    points=Points(win=2, draw=1, loss=0, ot_win=2, ot_loss=0),
    tiebreakers=("points", "goal_difference", "goals_for", "head_to_head", "lot"),
    group_draws=True,
    forfeit_goals=5,
    forfeit_plus_score=False,
    group_profile="pl-3x6",
    knockout_profile="pl-3x6-ko",
    final_profile="pl-3x6-final",
    third_place=False,
    tree="seeded",
    source="Polish disc hockey (seed 002) III.2-III.4: knock-out, a draw to a 3-min sudden-"
    "death overtime, then penalty shots; the final 3 + 6 min. The seed gives no points "
    "or forfeit score: groups, if any, count 2/1/0 and a forfeit is 0:5 (ours)",
)

ITHF = RuleSet(
    key="ithf",
    title="ITHF tournament",
    points=Points(win=2, draw=1, loss=0, ot_win=2, ot_loss=0),
    tiebreakers=(
        "points",
        "head_to_head",
        "head_to_head_goal_difference",
        "head_to_head_goals_for",
        "goal_difference",
        "goals_for",
        "lot",
    ),
    group_draws=True,
    forfeit_goals=5,
    forfeit_plus_score=False,
    group_profile="ithf",
    knockout_profile="ithf-playoff",
    final_profile="ithf-playoff",
    third_place=True,
    tree="seeded",
    source="ITHF tournament as this project sets it, after the Czech association's "
    "competition rules (not a quotation of the ITHF Tournament Rules of 2021): win 2, draw 1, "
    "loss 0 (a group draw stands); "
    "points, then among the tied players their matches' points, goal difference and goals "
    "scored (again for those still level), then goal difference, goals scored, lot; "
    "forfeit 0:5 (ours); play-off draws to sudden death (4.8)",
)

BUILT_IN: dict[str, RuleSet] = {r.key: r for r in (RADEGAST, HOKEJBAL, HOKEJBAL_3PT, PL_KO, ITHF)}


def criteria(names: tuple[str, ...]) -> tuple[str, ...]:
    """Tie-breakers as given, with `lot` put last (the seeds all end with it)."""
    return (*[n for n in names if n != "lot"], "lot")
