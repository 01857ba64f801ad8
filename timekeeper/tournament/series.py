"""A play-off match played as a series: best of N games (N odd, 3 to 9), the first side to
⌈N/2⌉ wins takes it (ITHF's A play-off "na čtyři vítězné zápasy", best of seven).

Each game is a whole match of the stage's profile with a winner (a drawn game goes to its
overtime, ITHF 4.8, in every game of a series); the series is the games played so far, in
order, and only the games still needed are played: once a side has its wins, no game comes
after. A walkover gives the whole series to the side not at fault; a forfeit of one game
(the director's choice) counts as that game only. Pure: told its games, it says who leads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

BEST_OF = (3, 5, 7, 9)  # a series; 1 is a single match
MAX_GAMES = max(BEST_OF)


class SeriesError(ValueError):
    """A game the series cannot take (decided already, a game number out of turn)."""


def needed(best_of: int) -> int:
    """The wins that take a best-of-N series: ⌈N/2⌉."""
    return best_of // 2 + 1


def round_key(match_id: str) -> str:
    """The round a match id belongs to, as `best_of:` names it: QF2 → QF, R16-3 → R16,
    SF1 → SF, F, 3P, P7 → P; a placement play-off's own prefix (B.SF1) is left off."""
    bare = match_id.rsplit(".", 1)[-1]
    if bare in ("F", "3P"):
        return bare
    if bare.startswith("R") and "-" in bare:
        return bare.split("-", 1)[0]
    return re.sub(r"\d+$", "", bare)


def best_of_for(match_id: str, setting: Mapping[str, int]) -> int:
    """The series' length for a match: its round's (`QF: 7`), else `default`, else 1."""
    return setting.get(round_key(match_id), setting.get("default", 1))


@dataclass(frozen=True)
class Game:
    """One game of a series: its score and how it was decided (the tournament's Result's
    fields, kept as plain numbers so that this module needs nothing else)."""

    number: int
    home: int
    away: int
    decided: str  # regulation, overtime, sudden_death, shootout or forfeit
    walkover: bool = False  # a forfeit that gives the whole series

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
    best_of: int
    games: tuple[Game, ...] = ()

    @property
    def need(self) -> int:
        return needed(self.best_of)

    @property
    def home_wins(self) -> int:
        return sum(1 for g in self.games if g.winner == "home" and not g.walkover)

    @property
    def away_wins(self) -> int:
        return sum(1 for g in self.games if g.winner == "away" and not g.walkover)

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
    def next_game(self) -> int | None:
        """The number of the game to play next; None once the series is decided."""
        return None if self.decided else len(self.games) + 1

    def add(self, game: Game) -> Series:
        """The series with one more game (the next one), or with game k replaced (a
        correction); refused where a game would come after the series was decided."""
        if not 1 <= game.number <= self.best_of:
            raise SeriesError(f"a best-of-{self.best_of} series has games 1–{self.best_of}")
        if game.home == game.away and game.decided != "forfeit":
            raise SeriesError("a game of a series has a winner (overtime decides a draw)")
        if game.number == len(self.games) + 1:
            if self.decided:
                raise SeriesError(f"the series is decided ({self.score_text()}): no game more")
            games = (*self.games, game)
        elif game.number <= len(self.games):
            games = tuple(game if g.number == game.number else g for g in self.games)
        else:
            raise SeriesError(f"game {game.number} cannot come before game {len(self.games) + 1}")
        after = Series(self.best_of, games)
        for i in range(1, len(games)):  # no game after the one that decided it
            if Series(self.best_of, games[:i]).decided:
                raise SeriesError(
                    f"with game {game.number} as {game.text()} the series was decided after "
                    f"game {i}, yet game {i + 1} was played: correct the later games first"
                )
        return after

    def score_text(self) -> str:
        """`4:2` in games, `W.O.` for a walkover."""
        if self.walkover is not None:
            before = len(self.games) > 1
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
