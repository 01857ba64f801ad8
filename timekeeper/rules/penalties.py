"""The penalty box of a stopped-time game (ball hockey): which penalties run, which wait.

It knows only *play time* of the period being played, never the runner's clock: a penalty
ends when the game clock's play time reaches the end of its sentence, so stops, breaks and
time corrections carry it along without a single tick being counted. The engine turns the
play time of the next expiry into a deadline through the period clock's mapping.

A penalty here is one player's sentence, e.g. minor, major, or a combination served one
after the other (minor+minor+personal, major+game). It holds one of the team's places in the
box (at most `running` per team, the rest wait in the order given) until its timed part is
served; a game misconduct keeps the player out for the rest of the match but holds no place,
and a match penalty holds one for its set time (as a major does) and then keeps the player
out, as a game misconduct does.

Everything is plain data (`to_dict`/`from_dict`) so that a journal can keep it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

TEAMS = ("home", "away")
# game: game misconduct, out for the rest of the match, holding no place; match: match penalty
# (rule 17e), out for the rest of the match too, but the team is short for its timed part
KINDS = ("minor", "major", "personal", "game", "match")
RUNNING, WAITING, GAME = "running", "waiting", "game"
MAX_KINDS = 4  # parts of one penalty (minor+minor+personal is three): a range the journal checks


@dataclass
class Penalty:
    id: int  # per match, 1-based, in the order entered: what the operator names it by
    team: str
    kinds: tuple[str, ...]  # ("minor",), ("minor", "minor", "personal"), ("major", "game")
    segments: tuple[float, ...]  # the timed parts, seconds, served one after the other
    player: str = ""
    state: str = WAITING  # running (holds a place), waiting (queued), game (timed part over)
    served: float = 0.0  # play time served before `since`
    since: float | None = None  # play time (of the current period) it counts from; None: frozen

    @property
    def total(self) -> float:
        return sum(self.segments)

    @property
    def game(self) -> bool:
        """The player is out for the rest of the match once the timed part is served."""
        return "game" in self.kinds or "match" in self.kinds

    @property
    def label(self) -> str:
        who = f" {self.player}" if self.player else ""
        return f"{self.team} #{self.id}{who} {'+'.join(self.kinds)}"

    def served_at(self, play: float | None) -> float:
        if self.state != RUNNING or self.since is None or play is None:
            return self.served
        return min(self.total, self.served + max(0.0, play - self.since))

    def left_at(self, play: float | None) -> float:
        return self.total - self.served_at(play)

    def expiry(self) -> float | None:
        """The play time at which the timed part is served (running and counting only)."""
        if self.state != RUNNING or self.since is None:
            return None
        return self.since + self.total - self.served

    def segment_at(self, play: float | None) -> tuple[int, float]:
        """(index of the part being served, play time left in that part)."""
        served, end = self.served_at(play), 0.0
        for i, length in enumerate(self.segments):
            end += length
            if served < end - 1e-9:
                return i, end - served
        return len(self.segments) - 1, 0.0

    def _timed_kinds(self) -> list[str]:
        return [k for k in self.kinds if k != "game"]


@dataclass
class PenaltyBox:
    running_max: int = 2  # places per team
    penalties: list[Penalty] = field(default_factory=list)
    next_id: int = 1

    # ---------------------------------------------------------------- operator actions

    def add(
        self,
        team: str,
        kinds: tuple[str, ...],
        lengths: dict[str, float],
        play: float | None,
        player: str = "",
    ) -> Penalty:
        """Enter a penalty at play time `play` (None: between periods, frozen until the next)."""
        segments = tuple(lengths[k] for k in kinds if k != "game")
        penalty = Penalty(self.next_id, team, kinds, segments, player)
        self.next_id += 1
        if not segments:
            penalty.state = GAME
        self.penalties.append(penalty)
        self._fill(team, play)
        return penalty

    def release(self, team: str, play: float | None) -> Penalty | None:
        """A power-play goal against `team`: the running minor with the least time left in
        it ends now (a combination goes on with its next part). None: no running minor."""
        minors = []
        for p in self.of(team, RUNNING):
            index, left = p.segment_at(play)
            if p._timed_kinds()[index] == "minor":
                minors.append((left, p.id, p, index))
        if not minors:
            return None
        _, _, penalty, index = min(minors)
        penalty.served = sum(penalty.segments[: index + 1])
        penalty.since = play
        if penalty.served >= penalty.total - 1e-9:
            self._finish(penalty)
            self._fill(team, play)
        return penalty

    def remove(self, team: str, penalty_id: int | None, play: float | None) -> Penalty | None:
        """Take back a penalty entered by mistake: `penalty_id`, or the team's latest."""
        mine = [p for p in self.penalties if p.team == team]
        chosen = (
            (mine[-1] if mine else None)
            if penalty_id is None
            else next((p for p in mine if p.id == penalty_id), None)
        )
        if chosen is None:
            return None
        self.penalties.remove(chosen)
        self._fill(team, play)
        return chosen

    # ---------------------------------------------------------------- the game clock

    def next_expiry(self) -> float | None:
        times = [t for p in self.penalties if (t := p.expiry()) is not None]
        return min(times) if times else None

    def expire(self, play: float) -> list[tuple[float, Penalty]]:
        """Every penalty served by play time `play`, each with the play time it ended at; the
        places it frees go at once (at that very play time) to the waiting penalties."""
        ended = []
        while (due := self.next_expiry()) is not None and due <= play + 1e-9:
            penalty = next(p for p in self.penalties if p.expiry() == due)
            self._finish(penalty)
            ended.append((due, penalty))
            self._fill(penalty.team, due)
        return ended

    def freeze(self, play: float) -> None:
        """The period is over at play time `play`: the penalties stop until the next one."""
        for p in self.penalties:
            p.served, p.since = p.served_at(play), None

    def thaw(self, play: float) -> None:
        """A period begins at play time `play`: the running penalties count from there."""
        for p in self.of(None, RUNNING):
            p.since = play

    def shift(self, old_play: float, new_play: float) -> None:
        """The game clock was corrected while stopped: every running penalty moves with it,
        by the same amount, but never below nothing served or past its end (`expire` then)."""
        if new_play >= old_play:
            return  # the mapping already counts the time as served; `expire` ends what is due
        for p in self.of(None, RUNNING):
            if p.since is not None:
                p.served = max(0.0, p.served_at(old_play) - (old_play - new_play))
                p.since = new_play

    def give_back(self, seconds: float, play: float) -> None:
        """The game clock got `seconds` more time left (fewer if negative) at play time `play`
        without play time moving (ADD): every running penalty gets the same, never below
        nothing served nor past its end (`expire` then ends it)."""
        for p in self.of(None, RUNNING):
            if p.since is not None:
                p.served = min(p.total, max(0.0, p.served_at(play) - seconds))
                p.since = play

    # ---------------------------------------------------------------- reading

    def of(self, team: str | None, state: str) -> list[Penalty]:
        return [p for p in self.penalties if p.state == state and team in (None, p.team)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "running_max": self.running_max,
            "next_id": self.next_id,
            "penalties": [asdict(p) for p in self.penalties],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PenaltyBox:
        penalties = [
            Penalty(**{**p, "kinds": tuple(p["kinds"]), "segments": tuple(p["segments"])})
            for p in data["penalties"]
        ]
        return cls(data["running_max"], penalties, data["next_id"])

    # ---------------------------------------------------------------- inside

    def _finish(self, penalty: Penalty) -> None:
        penalty.served, penalty.since = penalty.total, None
        if penalty.game:
            penalty.state = GAME  # the player stays out; a team-mate came back
        else:
            self.penalties.remove(penalty)

    def _fill(self, team: str, play: float | None) -> None:
        """Give free places to the team's waiting penalties, first entered first."""
        while len(self.of(team, RUNNING)) < self.running_max and (
            waiting := self.of(team, WAITING)
        ):
            waiting[0].state, waiting[0].since = RUNNING, play
