"""A series: best of N games (N odd), the first side to ⌈N/2⌉ wins takes it (ITHF's A
play-off "na čtyři vítězné zápasy", best of seven); a single match is a series of one.

One model for every holder of a series: the tournament (its games from the ledger), the
desk's pairing (the game it calls and the wins before it) and the box (the games it counted,
kept in its series journal). Each game is a whole match with a winner (a drawn game goes to
its overtime, ITHF 4.8) and how it was decided; only the games still needed are played: once
a side has its wins, no game comes after. A walkover gives the whole series to the side not
at fault; a forfeit of one game counts as that game only. A holder that knows the games
before some point only by their count (a box told the series by the desk) keeps them as
`earlier` wins. Checked whole when made: a state that cannot be is a SeriesError."""

from __future__ import annotations

from dataclasses import dataclass

from timekeeper.rules.decision import DECISIONS

BEST_OF = (1, 3, 5, 7, 9)  # 1: a single match
MAX_GAMES = max(BEST_OF)
SIDES = ("home", "away")
# how a game was decided: the engine's decisions (rules/decision.py), with the desk's forfeit
DECIDED = (*DECISIONS, "forfeit")


class SeriesError(ValueError):
    """A state or a game the series cannot take (decided already, a game out of turn)."""


def _whole(value: object, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def needed(best_of: int) -> int:
    """The wins that take a best-of-N series: ⌈N/2⌉ (N odd: 1, 3, 5, 7 or 9)."""
    if not _whole(best_of) or best_of not in BEST_OF:
        raise SeriesError(f"a series is the best of 1, 3, 5, 7 or 9 games, not {best_of!r}")
    return (best_of + 1) // 2


@dataclass(frozen=True)
class Game:
    """One game of a series: its number, its score (a shoot-out's winner one goal up, as the
    table's result has it) and how it was decided (one of DECIDED)."""

    number: int
    home: int
    away: int
    decided: str = "regulation"
    walkover: bool = False  # a forfeit that gives the whole series

    def __post_init__(self) -> None:
        if not _whole(self.number, 1):  # (its series says how far it goes)
            raise SeriesError(f"a game's number is a whole number from 1, not {self.number!r}")
        if not (_whole(self.home) and _whole(self.away)):
            raise SeriesError(
                f"game {self.number}: a score of whole goals, not {self.home!r}:{self.away!r}"
            )
        if self.decided not in DECIDED:
            raise SeriesError(f"game {self.number}: decided is one of {', '.join(DECIDED)}")
        if not isinstance(self.walkover, bool) or (self.walkover and self.decided != "forfeit"):
            raise SeriesError(f"game {self.number}: only a forfeit is a walkover")

    @property
    def winner(self) -> str:
        return "home" if self.home > self.away else "away"

    def text(self) -> str:
        suffix = {
            "overtime": " (OT)",
            "sudden_death": " (SD)",
            "shootout": " (SO)",
            "forfeit": " (W.O.)" if self.walkover else " (forfeit)",
        }.get(self.decided, "")
        return f"{self.home}:{self.away}{suffix}"


@dataclass(frozen=True)
class Series:
    """The games played so far, in order, after `earlier` wins known only by their count."""

    best_of: int = 1
    games: tuple[Game, ...] = ()
    earlier: tuple[int, int] = (0, 0)  # (home, away): wins before games[0]

    def __post_init__(self) -> None:
        need = needed(self.best_of)
        if (
            not isinstance(self.earlier, tuple)
            or len(self.earlier) != 2
            or not all(_whole(w) for w in self.earlier)
            or max(self.earlier) > need
            or min(self.earlier) >= need
        ):
            raise SeriesError(
                f"a best-of-{self.best_of} series cannot stand at {self.earlier!r} in games"
            )
        if not isinstance(self.games, tuple) or not all(isinstance(g, Game) for g in self.games):
            raise SeriesError("a series' games are games")
        first = sum(self.earlier) + 1
        home, away = self.earlier
        if self.games and max(home, away) >= need:
            raise SeriesError(f"the series was decided before game {first}")
        for i, g in enumerate(self.games):
            if g.number != first + i:
                raise SeriesError(f"game {g.number} cannot come after game {first + i - 1}")
            if g.number > self.best_of:
                raise SeriesError(f"a best-of-{self.best_of} series has games 1–{self.best_of}")
            if g.home == g.away and g.decided != "forfeit":
                raise SeriesError("a game of a series has a winner (overtime decides a draw)")
            home, away = home + (g.winner == "home"), away + (g.winner == "away")
            over = g.walkover or max(home, away) >= need
            if over and i + 1 < len(self.games):
                raise SeriesError(
                    f"the series was decided in game {g.number}, yet game {g.number + 1} was played"
                )

    @classmethod
    def called(cls, best_of: int, game: int, home_wins: int, away_wins: int) -> Series:
        """The series as the desk calls its next game: game `game` with the wins before it
        (the games before it known by their count only)."""
        s = cls(best_of, earlier=(home_wins, away_wins))
        if s.decided:
            raise SeriesError(f"the series is won at {home_wins}:{away_wins}: no game {game}")
        if game != s.next_game:
            raise SeriesError(
                f"game {game} cannot be the next at {home_wins}:{away_wins} in games "
                f"(game {s.next_game} is)"
            )
        return s

    @property
    def need(self) -> int:
        return needed(self.best_of)

    @property
    def home_wins(self) -> int:
        won = sum(1 for g in self.games if g.winner == "home" and not g.walkover)
        return self.earlier[0] + won

    @property
    def away_wins(self) -> int:
        won = sum(1 for g in self.games if g.winner == "away" and not g.walkover)
        return self.earlier[1] + won

    @property
    def walkover(self) -> Game | None:
        return next((g for g in self.games if g.walkover), None)

    @property
    def winner(self) -> str | None:
        """home or away once decided: its wins reached, or the other side walked over."""
        if (w := self.walkover) is not None:
            return w.winner
        if self.home_wins >= self.need:
            return "home"
        if self.away_wins >= self.need:
            return "away"
        return None

    @property
    def decided(self) -> bool:
        return self.winner is not None

    @property
    def played(self) -> int:
        """How many games have been played (counted), the earlier ones included."""
        return sum(self.earlier) + len(self.games)

    @property
    def next_game(self) -> int | None:
        """The number of the game to play next; None once the series is decided."""
        return None if self.decided else self.played + 1

    @property
    def on_table(self) -> int:
        """The game a table shows: the next one, or the last one played once decided."""
        return self.played if self.decided else self.played + 1

    def shown(self, match: str) -> dict[str, object]:
        """A table's status's `match_series` (hall/bus/tablestatus.py reads it back): the game
        on the table, the wins and the winner, for the match `match`."""
        return {
            "best_of": self.best_of,
            "game": self.on_table,
            "home_wins": self.home_wins,
            "away_wins": self.away_wins,
            "winner": self.winner,
            "match": match,
        }

    def add(self, game: Game) -> Series:
        """The series with one more game (the next one), or with game k replaced (a
        correction); refused where a game would come after the series was decided."""
        if not 1 <= game.number <= self.best_of:
            raise SeriesError(f"a best-of-{self.best_of} series has games 1–{self.best_of}")
        if game.home == game.away and game.decided != "forfeit":
            raise SeriesError("a game of a series has a winner (overtime decides a draw)")
        first = sum(self.earlier) + 1
        if game.number == self.played + 1:
            if self.decided:
                raise SeriesError(f"the series is decided ({self.score_text()}): no game more")
            games = (*self.games, game)
        elif first <= game.number <= self.played:
            games = tuple(game if g.number == game.number else g for g in self.games)
        elif game.number < first:
            raise SeriesError(f"game {game.number} is known here by its winner only")
        else:
            raise SeriesError(f"game {game.number} cannot come before game {self.played + 1}")
        for i in range(1, len(games)):  # no game after the one that decided it
            if Series(self.best_of, games[:i], self.earlier).decided:
                raise SeriesError(
                    f"with game {game.number} as {game.text()} the series was decided after "
                    f"game {games[i - 1].number}, yet game {games[i].number} was played: "
                    "correct the later games first"
                )
        return Series(self.best_of, games, self.earlier)

    def without_last(self) -> Series:
        """The series before its last game listed (a game taken back, a replay ordered)."""
        if not self.games:
            raise SeriesError("no game of the series to take back")
        return Series(self.best_of, self.games[:-1], self.earlier)

    def score_text(self) -> str:
        """`4:2` in games, `W.O.` for a walkover."""
        if self.walkover is not None:
            before = self.played > 1
            return f"W.O. after {self.home_wins}:{self.away_wins}" if before else "W.O."
        return f"{self.home_wins}:{self.away_wins}"

    def text(self) -> str:
        """`4:1 in games (3:1, 2:3 (OT), 1:0, 1:0, 1:0)`; a walkover `W.O.`, after the
        games played before it, if any (`W.O. after 1:0 (3:1)`)."""
        played = [g.text() for g in self.games if not g.walkover]
        games = f" ({', '.join(played)})" if played else ""
        unit = "" if self.walkover is not None else " in games"
        return f"{self.score_text()}{unit}{games}"

    def games_text(self) -> str:
        """Each game's score: `3:1, 2:3 (OT), 4:0`."""
        return ", ".join(g.text() for g in self.games)

    def state_text(self, home: str, away: str) -> str:
        """`Novák leads 2:0`, `2:2`, `Novák wins 4:2` (the leader's wins first)."""
        h, a = self.home_wins, self.away_wins
        if self.winner is not None:
            name = home if self.winner == "home" else away
            wins = f"{max(h, a)}:{min(h, a)}" if self.walkover is None else "by walkover"
            return f"{name} wins {wins}"
        if h == a:
            return f"{h}:{a}"
        return f"{home if h > a else away} leads {max(h, a)}:{min(h, a)}"
