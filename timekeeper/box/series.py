"""A series played on one table (best of N, first to N // 2 + 1 wins): the games counted as
they end, the box ready for the next with the same players (START begins it, with its
pre-start), and no game taken once the series is won. Its state is the box's, kept in
`series.json` in the state folder, so that a box restarted mid-series (kill -9, the same
command) comes back in the same game of the same series.

One listener for both ways a box plays a series: the desk's pairing names it (its id, the
game, the wins: hall/tablematch.py hands them over, and the desk's later word corrects them),
or `timekeeper run --best-of N` with no desk (a club's play-off night). Each game needs a
winner: a game decided at the end of regulation is over (the knock-out's FINISH, done by the
box, as the hall's knock-out pairing does), a drawn one goes on to the profile's overtime
(ITHF 4.8: sudden death), and a game that still ends drawn is not counted (played again)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from timekeeper.box.journal import write_atomic
from timekeeper.hall.pairing import Pairing
from timekeeper.hall.tablematch import decided_at_the_end
from timekeeper.rules.commands import Action, Command
from timekeeper.rules.engine import Status
from timekeeper.sound.listener import RunnerListener

log = logging.getLogger(__name__)

FILE = "series.json"
MAX_BEST_OF = 9
MAX_FILE = 4096  # bytes: the file is about 150
LOCAL = "local"  # the id of a series `run --best-of` plays (the desk's is its pairing's)
UNDER_WAY = ("prestart", "running")  # a game begun (START from idle or finished)


@dataclass(frozen=True)
class Series:
    """The series' state: the game on the table (played now, or next), the wins before it."""

    best_of: int
    game: int = 1
    home_wins: int = 0
    away_wins: int = 0

    def __post_init__(self) -> None:
        needed = self.best_of // 2 + 1
        if self.best_of % 2 == 0 or not 3 <= self.best_of <= MAX_BEST_OF:
            raise ValueError(f"best of an odd number of games, 3-{MAX_BEST_OF}")
        wins = (self.home_wins, self.away_wins)
        if (
            not 1 <= self.game <= self.best_of
            or min(wins) < 0
            or max(wins) > needed
            or sum(wins) > self.game
        ):
            raise ValueError(f"not a state of a best-of-{self.best_of} series: {self}")

    @property
    def needed(self) -> int:
        return self.best_of // 2 + 1

    @property
    def winner(self) -> str | None:
        """ "home" or "away" once one side has won enough games; None while it is played."""
        if self.home_wins >= self.needed:
            return "home"
        return "away" if self.away_wins >= self.needed else None

    def after(self, won: str) -> Series:
        """Game `game` won by `won`: the next game, or the won series (its last game's)."""
        home, away = self.home_wins + (won == "home"), self.away_wins + (won == "away")
        done = max(home, away) >= self.needed
        return replace(self, game=self.game + (not done), home_wins=home, away_wins=away)


def game_winner(status: Status) -> str | None:
    """The side that won a finished game (a shoot-out's by its scored attempts); None: drawn."""
    home, away = status.score.get("home", 0), status.score.get("away", 0)
    if home == away and status.decided == "shootout":
        attempts = status.shootout_attempts or []
        home, away = (
            sum(1 for a in attempts if a.get("team") == t and a.get("goal"))
            for t in ("home", "away")
        )
    if home == away:
        return None
    return "home" if home > away else "away"


class SeriesPlay(RunnerListener):
    """The box's series (None: it plays single matches). `submit` is the runner's; the runner
    asks `shown()` for the status's `match_series` and `refusal()` before every command."""

    def __init__(self, folder: Path | None, submit: Callable[[Command], Any]) -> None:
        self.file = None if folder is None else Path(folder) / FILE
        self.submit = submit
        self.id, self.match = "", ""  # the desk's pairing id (LOCAL: run --best-of), its match
        self.series: Series | None = None
        # the state before the game just counted: a goal entered after its end takes it back
        self.before: Series | None = None
        self.finishing = (self.id, 0)  # the game this box ended by itself (once)
        self.local = False  # run --best-of: the box ends a game decided in regulation
        self.on = False  # a game of it is under way (its end is counted)
        self._load()

    # ---------------------------------------------------------------- the series' state

    def begin(self, series: Series | None, id: str, match: str = "") -> None:
        """Play `series` (the desk's pairing or --best-of), or no series (None)."""
        self.id, self.match, self.series, self.before, self.on = id, match, series, None, False
        self._save()
        if series is not None:
            log.info("series %s: best of %d, %s", match or id, series.best_of, self.text())

    def take(self, pairing: Pairing, again: bool) -> bool:
        """The desk's pairing taken (`again`: its word on the series on the table): a series'
        game, or a single match (no series). False: a word the box has passed, not taken."""
        if not pairing.series:
            if self.series is not None or self.id:
                self.begin(None, "")
            return True
        try:
            series = Series(pairing.best_of, pairing.game, pairing.home_wins, pairing.away_wins)
        except ValueError as exc:  # (parse_pairing checked it: never, but said if so)
            log.warning("hall: %s's series refused: %s", pairing.match, exc)
            return False
        if again and pairing.id == self.id:
            return self.correct(series)
        self.begin(series, pairing.id, pairing.match)
        return True

    def correct(self, series: Series) -> bool:
        """The desk's word on the series (a re-published pairing, with the same id), between
        games: it stands from the game on the table on (the desk has the last word on a
        corrected result); an older game's is passed (False)."""
        if self.series is None or series.game < self.series.game:
            return False
        if series == self.series:
            return True
        log.info(
            "series %s: the desk says game %d, %d:%d",
            self.match,
            series.game,
            series.home_wins,
            series.away_wins,
        )
        self.series, self.before = series, None
        self._save()
        return True

    def played(self, pairing: Pairing) -> Pairing:
        """The desk's pairing as the game on the table is played (its game, the wins before
        it): what that game's result carries home. Any other pairing as it is."""
        s = self.before or self.series
        if s is None or not pairing.series or pairing.id != self.id or s.winner:
            return pairing
        return replace(
            pairing, best_of=s.best_of, game=s.game, home_wins=s.home_wins, away_wins=s.away_wins
        )

    def game_played(self) -> int:
        """The game whose result the table holds or plays (the result's `game`); 0: none."""
        if self.series is None:
            return 0
        return (self.before or self.series).game

    def shown(self) -> dict | None:
        """The status's `match_series` ({best_of, game, home_wins, away_wins, winner, match}):
        the game on the table (once one ends, the next), or None."""
        s = self.series
        if s is None:
            return None
        return {**asdict(s), "winner": s.winner, "match": self.match}

    def refusal(self, command: Command, state: str, names: dict | None = None) -> str:
        """Why the box takes no further game now ("": it may): the series is won (by
        `names`' side, else home or away)."""
        s = self.series
        begins = command.action is Action.START or (
            command.action is Action.GO and state in ("idle", "finished")
        )
        if s is None or s.winner is None or not begins or state not in ("idle", "finished"):
            return ""
        won = s.home_wins if s.winner == "home" else s.away_wins
        lost = s.away_wins if s.winner == "home" else s.home_wins
        who = (names or {}).get(s.winner) or s.winner
        return f"the series is over: {who} won it {won}:{lost}; no further game " + (
            "(RESET begins a new series)" if self.id == LOCAL else "(the desk calls the next)"
        )

    def text(self) -> str:
        """The series for the log (English, home/away): `game 3, 2:0`, `won by home 4:1`."""
        s = self.series
        if s is None:
            return ""
        if s.winner:
            return (
                f"won by {s.winner} {max(s.home_wins, s.away_wins)}:{min(s.home_wins, s.away_wins)}"
            )
        return f"game {s.game}, {s.home_wins}:{s.away_wins}"

    # ---------------------------------------------------------------- the runner's side

    def match_changed(self, status: Status, now: float) -> None:
        s = self.series
        if s is None:
            return
        if status.state not in ("idle", "finished"):
            self.on = True
        if status.state == "idle" and s.winner and self.id == LOCAL:
            # a reset after a won series: the next series of the evening, the same length
            self.begin(Series(s.best_of), LOCAL)
        elif status.state == "finished" and self.on and s.winner is None:
            self.on = False
            self._count(s, status)
        elif status.state in UNDER_WAY and self.before is not None:
            self.before = None  # the next game is begun: the one before stands
            self._save()
        elif self.before is not None and status.state not in ("idle", "finished"):
            # a goal entered after the end (or the deciding one taken back): not over yet
            log.info("series %s: game %d goes on; not counted yet", self.match, self.before.game)
            self.series, self.before = self.before, None
            self._save()
        elif (
            self.local
            and decided_at_the_end(status)
            and self.finishing != (self.id, s.game)  # (once: the status comes again)
        ):
            self.finishing = (self.id, s.game)
            log.info("series: game %d is decided at the end of regulation: over", s.game)
            self.submit(Command(Action.FINISH))

    def _count(self, s: Series, status: Status) -> None:
        won = game_winner(status)
        if won is None:
            log.warning(
                "series %s: game %d ended drawn, which a series game cannot: not counted, "
                "it is played again (a profile with an overtime decides it)",
                self.match,
                s.game,
            )
            return
        self.before, self.series = s, s.after(won)
        self._save()
        log.info("series %s: game %d won by %s; %s", self.match, s.game, won, self.text())

    # ---------------------------------------------------------------- its file

    def _save(self) -> None:
        if self.file is None:
            return
        body = {
            "id": self.id,
            "match": self.match,
            "series": None if self.series is None else asdict(self.series),
            "before": None if self.before is None else asdict(self.before),
        }
        try:
            write_atomic(self.file, json.dumps(body, ensure_ascii=False) + "\n")
        except OSError as exc:  # the games go on; a restart would not know the series
            log.warning("series: %s could not be written (%s)", self.file, exc)

    def _load(self) -> None:
        if self.file is None or not self.file.exists():
            return
        try:
            raw = self.file.read_bytes()
            if len(raw) > MAX_FILE:
                raise ValueError(f"larger than {MAX_FILE} bytes")
            data = json.loads(raw)
            series = None if data["series"] is None else Series(**data["series"])
            before = None if data["before"] is None else Series(**data["before"])
            ident, match = str(data["id"])[:64], str(data["match"])[:16]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("series: %s could not be read (%s); no series resumed", self.file, exc)
            return
        self.id, self.match, self.series, self.before = ident, match, series, before
