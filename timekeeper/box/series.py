"""A series played on one table (rules/series.py: best of N, first to ⌈N/2⌉ wins): the games
counted as they end, the box ready for the next with the same players (START begins it, with
its pre-start), and no game taken once the series is won. Its state is the box's, journaled
in `series.json` in the state folder like the match beside it, so that a box restarted
mid-series (kill -9, the same command) comes back in the same game of the same series: read
once at start into the typed series, and a file that is not one set aside as `.bad`, named,
never written over.

One listener for both ways a box plays a series: the desk's pairing names it (its id, the
game, the wins: hall/table/tablematch.py hands them over, and the desk's later word corrects them;
a word for a game this box has counted already is older than its own journal, and passed),
or `timekeeper run --best-of N` with no desk (a club's play-off night). Each game needs a
winner: a game decided at the end of regulation is over (the knock-out's FINISH, done by the
box, as the hall's knock-out pairing does), a drawn one goes on to the profile's overtime
(ITHF 4.8: sudden death), and a game that still ends drawn is not counted (played again).

What it played is its record: each game's score and how it was decided, with the players'
names, in the status (`match_series.games`), a line per counted game in the events log, and
for a local series, once the box begins another (RESET after a won one, --fresh), a line in
`series-played.jsonl` beside the journal, so that `timekeeper series show|export`
(box/seriessheet.py) prints the evening's result sheet after the last series too."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from timekeeper.box.journal import keep_aside, write_atomic
from timekeeper.hall.bus.pairing import Pairing
from timekeeper.hall.table.tablematch import decided_at_the_end
from timekeeper.rules.commands import MAX_NAME, Action, Command
from timekeeper.rules.engine import Status
from timekeeper.rules.series import DECIDED, Game, Series, SeriesError
from timekeeper.sound.eventlog import EventLog
from timekeeper.sound.listener import RunnerListener

log = logging.getLogger(__name__)

FILE = "series.json"
PLAYED = "series-played.jsonl"  # the local series the box has left, one line each
FORMAT = 1
MAX_FILE = 4096  # bytes: the file is at most about 1100
LOCAL = "local"  # the id of a series `run --best-of` plays (the desk's is its pairing's)
UNDER_WAY = ("prestart", "running")  # a game begun (START from idle or finished)
BETWEEN = ("idle", "finished")  # no game on the table
_ID = re.compile(r"[A-Za-z0-9._:-]{0,64}")  # a pairing's id (hall/bus/pairing.py), LOCAL or none
_MATCH = re.compile(r"[A-Za-z0-9._-]{0,16}")
_KEYS = {"format", "id", "match", "series", "open"}
# (a file may go without them: written before the box kept the names, or the profile)
_MORE = {"names", "ended", "profile"}
_PROFILE = re.compile(r"[A-Za-z0-9_.-]{0,64}")  # a profile's key (its file's stem), or none
_SERIES_KEYS = {"best_of", "earlier", "games"}
_GAME_KEYS = {"number", "home", "away", "decided"}


class SeriesFileError(ValueError):
    """A series file that is not one (the message says which field, and why)."""


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

    def __init__(
        self,
        folder: Path | None,
        submit: Callable[[Command], Any],
        events: EventLog | None = None,
    ) -> None:
        self.file = None if folder is None else Path(folder) / FILE
        self.submit, self.events = submit, events
        self.id, self.match = "", ""  # the desk's pairing id (LOCAL: run --best-of), its match
        self.series: Series | None = None
        self.names = {"home": "", "away": ""}  # the players', as the last game had them
        # the profile a local series' games are played under ("": a desk's, whose pairing
        # names it, or a file written before the box kept it)
        self.profile = ""
        self.ended = ""  # when its last game was counted (local time, ISO 8601; "": none)
        # the game just counted may be taken back: a goal entered after its end
        self.open = False
        self.finishing = (self.id, 0)  # the game this box ended by itself (once)
        self.local = False  # run --best-of: the box ends a game decided in regulation
        self.on = False  # a game of it is under way (its end is counted)
        self._load()

    @property
    def before(self) -> Series | None:
        """The series before the game just counted, while that game may be taken back."""
        return self.series.without_last() if self.open and self.series else None

    # ---------------------------------------------------------------- the series' state

    def begin(self, series: Series | None, id: str, match: str = "", profile: str = "") -> None:
        """Play `series` (the desk's pairing or --best-of, its games under `profile`: a local
        series'), or no series (None); a local series left with games played goes on the
        record first (series-played.jsonl)."""
        if self.id == LOCAL and self.series is not None and self.series.games:
            self._keep_played()
        self.id, self.match, self.series, self.open, self.on = id, match, series, False, False
        self.profile = profile
        self.ended = ""
        self._save()
        if series is not None:
            log.info("series %s: best of %d, %s", match or id, series.best_of, self.text())

    def take(self, pairing: Pairing) -> bool:
        """The desk's pairing taken: a series' game, or a single match (no series); the same
        call as the series on the table's is the desk's word on it (`correct`), however it
        comes (re-published, retained, or from the table's file at a restart). False: a word
        the box has passed, not taken."""
        if not pairing.series:
            if self.series is not None or self.id:
                self.begin(None, "")
            return True
        try:
            series = pairing.called()
        except SeriesError as exc:  # (parse_pairing checked it: never, but said if so)
            log.warning("hall: %s's series refused: %s", pairing.match, exc)
            return False
        if pairing.id == self.id and self.series is not None:
            return self.correct(series)
        self.begin(series, pairing.id, pairing.match)
        return True

    def correct(self, called: Series) -> bool:
        """The desk's word on the series (a re-published pairing, with the same id), between
        games: it stands from the game on the table on (the desk has the last word on a
        corrected result). A word for a game this box has counted already is older than the
        box's own journal: passed (False)."""
        s = self.series
        if s is None:
            return False
        if called.played < s.played:
            log.info(
                "series %s: the desk's word for game %d (%d:%d) is older than this box's "
                "count (%s): passed",
                self.match,
                called.on_table,
                called.home_wins,
                called.away_wins,
                self.text(),
            )
            return False
        if (called.played, called.home_wins, called.away_wins) == (
            s.played,
            s.home_wins,
            s.away_wins,
        ):
            return True
        log.info(
            "series %s: the desk says game %d, %d:%d",
            self.match,
            called.on_table,
            called.home_wins,
            called.away_wins,
        )
        self.series, self.open = called, False
        self._save()
        return True

    def played(self, pairing: Pairing) -> Pairing:
        """The desk's pairing as the game on the table is played (its game, the wins before
        it): what that game's result carries home. Any other pairing as it is."""
        s = self.before or self.series
        if s is None or not pairing.series or pairing.id != self.id or s.winner:
            return pairing
        return replace(
            pairing,
            best_of=s.best_of,
            game=s.on_table,
            home_wins=s.home_wins,
            away_wins=s.away_wins,
        )

    def game_played(self) -> int:
        """The game whose result the table holds or plays (the result's `game`); 0: none."""
        s = self.before or self.series
        return 0 if s is None else s.on_table

    def shown(self) -> dict | None:
        """The status's `match_series` ({best_of, game, home_wins, away_wins, winner, match,
        games}): the game on the table (once one ends, the next), and the record of the
        games this box counted (`games_record`); or None."""
        if self.series is None:
            return None
        return {**self.series.shown(self.match), "games": games_record(self.series)}

    def over(self, state: str) -> bool:
        """The series is won and no game of it is on the table: START takes no further one
        (the status offers none: its `waiting_for` is empty)."""
        return self.series is not None and bool(self.series.winner) and state in BETWEEN

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
        """The series for the log (English): `game 3, 2:0`, `won by Novák 4:1` (the
        players' names, else home or away)."""
        s = self.series
        if s is None:
            return ""
        if s.winner:
            won = f"{max(s.home_wins, s.away_wins)}:{min(s.home_wins, s.away_wins)}"
            return f"won by {self.name(s.winner)} {won}"
        return under_way(s)

    def name(self, side: str) -> str:
        """A side's player, as the match names them (else home or away)."""
        return self.names.get(side) or side

    def played_under(self, key: str) -> None:
        """A local series going on keeps the profile its games are played under (a file
        written before the box kept it gets it now)."""
        if self.profile != key:
            self.profile = key
            self._save()

    def where(self) -> str:
        """How the log names the series: its match (the desk's), else its players."""
        if self.match:
            return f"series {self.match}"
        home, away = self.names["home"], self.names["away"]
        return f"series {home} – {away}" if home or away else "series"

    # ---------------------------------------------------------------- the runner's side

    def match_changed(self, status: Status, now: float) -> None:
        """The match's change, told by the runner before any status goes out: a game that
        ended is counted (or taken back), a decided one ended (the box's FINISH)."""
        s = self.series
        if s is None:
            return
        names = {side: status.names.get(side, "") for side in ("home", "away")}
        if names != self.names and any(names.values()):
            self.names = names
            self._save()
        if status.state not in ("idle", "finished"):
            self.on = True
        if status.state == "idle" and s.winner and self.id == LOCAL:
            # a reset after a won series: the next series of the evening, the same length
            self.begin(Series(s.best_of), LOCAL, profile=self.profile)
        elif status.state == "finished" and self.on and s.winner is None:
            self.on = False
            self._count(s, status)
        elif status.state in UNDER_WAY and self.open:
            self.open = False  # the next game is begun: the one before stands
            self._save()
        elif self.open and status.state not in ("idle", "finished"):
            # a goal entered after the end (or the deciding one taken back): not over yet
            log.info("%s: game %d goes on; not counted yet", self.where(), s.played)
            self.series, self.open = s.without_last(), False
            self._save()
        elif (
            self.local
            and decided_at_the_end(status)
            and self.finishing != (self.id, s.on_table)  # (once: the status comes again)
        ):
            self.finishing = (self.id, s.on_table)
            log.info(
                "%s: game %d is decided at the end of regulation: over", self.where(), s.on_table
            )
            self.submit(Command(Action.FINISH))

    def _count(self, s: Series, status: Status) -> None:
        won = game_winner(status)
        number = s.played + 1
        if won is None:
            log.warning(
                "%s: game %d ended drawn, which a series game cannot: not counted, "
                "it is played again (a profile with an overtime decides it)",
                self.where(),
                number,
            )
            return
        home, away = status.score.get("home", 0), status.score.get("away", 0)
        if home == away:  # (a shoot-out's: its winner one goal up, as the result has it)
            home, away = home + (won == "home"), away + (won == "away")
        decided = status.decided if status.decided in DECIDED else "regulation"
        game = Game(number, home, away, decided)
        self.series, self.open = s.add(game), True
        self.ended = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self._save()
        how = "" if decided == "regulation" else f" in {decided.replace('_', ' ')}"
        log.info(
            "%s: game %d won by %s %s%s; %s",
            self.where(),
            number,
            self.name(won),
            f"{max(home, away)}:{min(home, away)}",
            how,
            self.text(),
        )
        if self.events is not None:  # the record beside the cues (one line per game)
            self.events.note(
                {"series": self.id, **self.record(), "counted": game_record(game)},
                self.names,
            )

    def record(self) -> dict[str, Any]:
        """The series as the record has it (`record`): the games, the names, the winner."""
        assert self.series is not None
        return record(self.series, self.match, self.names, self.ended)

    def _keep_played(self) -> None:
        """The local series being left, as one line of series-played.jsonl (appended: the
        lines before it are never rewritten)."""
        if self.file is None or self.series is None:
            return
        line = json.dumps(self.record(), ensure_ascii=False) + "\n"
        try:
            with open(self.file.with_name(PLAYED), "a", encoding="utf-8") as out:
                out.write(line)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:  # the next series goes on; its record is the lost one's
            log.warning("series: %s could not be written (%s)", self.file.with_name(PLAYED), exc)

    # ---------------------------------------------------------------- its file

    def _save(self) -> None:
        if self.file is None:
            return
        try:
            write_atomic(
                self.file,
                dumps(
                    self.id,
                    self.match,
                    self.series,
                    self.open,
                    self.names,
                    self.ended,
                    self.profile,
                ),
            )
        except OSError as exc:  # the games go on; a restart would not know the series
            log.warning("series: %s could not be written (%s)", self.file, exc)

    def _load(self) -> None:
        """The journaled series; a file that is not one is set aside (never written over)
        and named, and the box begins with none."""
        if self.file is None:
            return
        try:
            j = loads(_read(self.file))
            self.id, self.match, self.series, self.open = j.id, j.match, j.series, j.open
            self.names, self.ended, self.profile = j.names, j.ended, j.profile
        except FileNotFoundError:
            return
        except (OSError, SeriesFileError) as exc:
            kept = keep_aside(self.file)
            where = (
                f"kept as {kept}"
                if kept
                else "it could not be set aside; the next change writes over it"
            )
            log.warning("series %s not resumed: %s; %s", self.file, exc, where)


def under_way(series: Series) -> str:
    """A series not yet won, for the log and a refusal: `game 3, 2:0`."""
    return f"game {series.on_table}, {series.home_wins}:{series.away_wins}"


def _read(file: Path) -> bytes:
    if not stat.S_ISREG(os.stat(file).st_mode):  # (a FIFO would block the start)
        raise SeriesFileError("not a regular file")
    with open(file, "rb") as f:
        return f.read(MAX_FILE + 1)


def journaled(folder: Path) -> Journaled | None:
    """The series file in `folder` as it stands, if it is one (None: none, or not one;
    nothing is set aside here: SeriesPlay does that): a starting box takes a local series'
    profile and players from it before it builds the match."""
    try:
        return loads(_read(Path(folder) / FILE))
    except (OSError, SeriesFileError):
        return None


@dataclass(frozen=True)
class Journaled:
    """A series file, checked whole: the pairing's id and match, the series (None: single
    matches), whether its last game may be taken back, the players' names, when its
    last game was counted and the profile a local series' games are played under ("":
    none, or a file written before the box kept it)."""

    id: str
    match: str
    series: Series | None
    open: bool = False
    names: dict[str, str] = field(default_factory=lambda: {"home": "", "away": ""})
    ended: str = ""
    profile: str = ""


def dumps(
    id: str,
    match: str,
    series: Series | None,
    open: bool,
    names: dict[str, str] | None = None,
    ended: str = "",
    profile: str = "",
) -> str:
    body = {
        "format": FORMAT,
        "id": id,
        "match": match,
        "series": None if series is None else series_body(series),
        "open": open,
        "names": {side: (names or {}).get(side, "") for side in ("home", "away")},
        "ended": ended,
        "profile": profile,
    }
    return json.dumps(body, ensure_ascii=False) + "\n"


def series_body(series: Series) -> dict[str, Any]:
    """The series as its file keeps it: best_of, the earlier wins, each game counted here."""
    return {
        "best_of": series.best_of,
        "earlier": list(series.earlier),
        "games": [
            {"number": g.number, "home": g.home, "away": g.away, "decided": g.decided}
            for g in series.games
        ],
    }


def game_record(game: Game) -> dict[str, Any]:
    """One game on the record: its number, score, how it was decided and its winner."""
    return {
        "number": game.number,
        "home": game.home,
        "away": game.away,
        "decided": game.decided,
        "winner": game.winner,
    }


def games_record(series: Series) -> list[dict[str, Any]]:
    return [game_record(g) for g in series.games]


def record(series: Series, match: str, names: dict[str, str], ended: str) -> dict[str, Any]:
    """A series on the record (the events log's line, series-played.jsonl's, the sheet's
    export): its players, each game counted here, the wins (with the games before them
    known by their winners only, `earlier`) and the winner."""
    return {
        "match": match,
        "names": {side: names.get(side, "") for side in ("home", "away")},
        "best_of": series.best_of,
        "earlier": list(series.earlier),
        "games": games_record(series),
        "home_wins": series.home_wins,
        "away_wins": series.away_wins,
        "winner": series.winner,
        "ended": ended,
    }


def loads(raw: bytes) -> Journaled:
    """A series file checked whole: SeriesFileError says what is wrong with it, whatever it
    is."""
    if len(raw) > MAX_FILE:
        raise SeriesFileError(f"larger than {MAX_FILE} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SeriesFileError(f"not JSON (corrupt or truncated: {exc})") from None
    if (
        not isinstance(data, dict)
        or not _KEYS <= set(data) <= _KEYS | _MORE
        or data["format"] != FORMAT
    ):
        raise SeriesFileError(f"not a series file of format {FORMAT} ({', '.join(sorted(_KEYS))})")
    ident, match, body, open = data["id"], data["match"], data["series"], data["open"]
    if not isinstance(ident, str) or not _ID.fullmatch(ident):
        raise SeriesFileError(f"field 'id' is not a pairing's id ({ident!r:.40})")
    if not isinstance(match, str) or not _MATCH.fullmatch(match):
        raise SeriesFileError(f"field 'match' is not a match's id ({match!r:.40})")
    if not isinstance(open, bool):
        raise SeriesFileError(f"field 'open' is true or false ({open!r:.40})")
    names, ended = names_of(data.get("names")), data.get("ended", "")
    if not isinstance(ended, str) or len(ended) > 40:
        raise SeriesFileError(f"field 'ended' is a time ({ended!r:.40})")
    key = data.get("profile", "")
    if not isinstance(key, str) or not _PROFILE.fullmatch(key):
        raise SeriesFileError(f"field 'profile' is a profile's name ({key!r:.40})")
    if body is None:
        if open:
            raise SeriesFileError("field 'open': no series, no game to take back")
        return Journaled(ident, match, None, False, names, ended, key)
    series = parse_series(body)
    if open and not series.games:
        raise SeriesFileError("field 'open': no game counted here to take back")
    return Journaled(ident, match, series, open, names, ended, key)


def names_of(value: object) -> dict[str, str]:
    """A file's `names` ({home, away}: each a name of at most MAX_NAME characters)."""
    if value is None:
        return {"home": "", "away": ""}
    if (
        not isinstance(value, dict)
        or set(value) != {"home", "away"}
        or not all(isinstance(n, str) and len(n) <= MAX_NAME for n in value.values())
    ):
        raise SeriesFileError(f"field 'names' is {{home, away}}, each a name ({value!r:.40})")
    return {"home": value["home"], "away": value["away"]}


def parse_series(body: object) -> Series:
    if not isinstance(body, dict) or set(body) != _SERIES_KEYS:
        raise SeriesFileError(f"field 'series' has {', '.join(sorted(_SERIES_KEYS))}")
    best_of, earlier, games = body["best_of"], body["earlier"], body["games"]
    _whole("series.best_of", best_of)
    if not isinstance(earlier, list) or len(earlier) != 2:
        raise SeriesFileError(f"field 'series.earlier' is [HOME, AWAY] ({earlier!r:.40})")
    for side, wins in zip(("home", "away"), earlier, strict=True):
        _whole(f"series.earlier.{side}", wins)
    if not isinstance(games, list) or len(games) > max(best_of, 0):
        raise SeriesFileError(f"field 'series.games' is a list of at most {best_of} games")
    typed = []
    for i, g in enumerate(games):
        where = f"series.games[{i}]"
        if not isinstance(g, dict) or set(g) != _GAME_KEYS:
            raise SeriesFileError(f"field '{where}' has {', '.join(sorted(_GAME_KEYS))}")
        for key in ("number", "home", "away"):
            _whole(f"{where}.{key}", g[key])
        if g["decided"] not in DECIDED[:-1]:  # (a box decides no forfeit)
            raise SeriesFileError(f"field '{where}.decided' is one of {', '.join(DECIDED[:-1])}")
        try:
            typed.append(Game(g["number"], g["home"], g["away"], g["decided"]))
        except SeriesError as exc:
            raise SeriesFileError(f"field '{where}': {exc}") from None
    try:
        return Series(best_of, tuple(typed), (earlier[0], earlier[1]))
    except SeriesError as exc:
        raise SeriesFileError(f"field 'series': {exc}") from None


def _whole(where: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 99:
        raise SeriesFileError(f"field {where!r} is a whole number 0-99 ({value!r:.40})")
