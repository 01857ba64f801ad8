"""How long the evening takes: every round is as long as its profile's match (the playing
time and the breaks between periods, as written; stopped time, overtime and shoot-outs come
on top) plus the changeover the tournament file allows between two matches at a table."""

from __future__ import annotations

from dataclasses import dataclass

from timekeeper.rules import profile
from timekeeper.rules.profiletypes import Profile
from timekeeper.tournament import schedule
from timekeeper.tournament.state import Tournament


def match_seconds(p: Profile) -> float:
    """Regulation play plus the breaks between its periods."""
    play = sum(part.length or 0.0 for part in p.periods[: p.regulation])
    breaks = (p.regulation - 1) * (p.intermission.length if p.intermission else 0.0)
    return play + breaks


@dataclass(frozen=True)
class Evening:
    group_rounds: int
    knockout_rounds: int
    idle: int  # table-rounds with no match, over the whole evening
    group_idle: int  # … of them in the group stage
    back_to_back: int  # group stage: times a player plays two rounds in a row
    tired: int  # group stage: players who play two rounds in a row at least once
    seconds: float

    @property
    def rounds(self) -> int:
        return self.group_rounds + self.knockout_rounds


def round_lengths(t: Tournament) -> dict[int, float]:
    """Each round's length: its longest match's profile, plus the changeover; a series at
    its longest (every game of a best of N played, each with its changeover)."""
    lengths: dict[str, float] = {}
    out: dict[int, float] = {}
    for slot in t.slots:
        name = t.profile_of(slot.match)
        if name not in lengths:
            lengths[name] = match_seconds(profile.load(name))
        length = (lengths[name] + t.spec.changeover) * t.best_of(slot.match)
        out[slot.round] = max(out.get(slot.round, 0.0), length)
    return dict(sorted(out.items()))


def series_worst(t: Tournament) -> float:
    """The longest a play-off's series can take, one after another: each series level's
    most games (a best of N is over after N), each game its profile and the changeover."""
    return sum(
        length
        for r, length in round_lengths(t).items()
        if any(t.best_of(s.match) > 1 for s in t.slots if s.round == r)
    )


def round_starts(t: Tournament) -> dict[int, float]:
    """When each round begins, in seconds after the first (a late round does not move the
    others' plan: these are the times to print, not a clock)."""
    starts: dict[int, float] = {}
    at = 0.0
    for r, length in round_lengths(t).items():
        starts[r] = at
        at += length
    return starts


def evening(t: Tournament) -> Evening:
    tables = len(t.spec.tables)
    group_rounds = sorted({s.round for s in t.slots if s.match in t.group_matches})
    by_round = [[t.group_matches[s.match] for s in t.slots if s.round == r] for r in group_rounds]
    figures = schedule.measure(by_round, tables)
    lengths = round_lengths(t)
    idle = sum(tables - sum(1 for s in t.slots if s.round == r) for r in lengths)
    return Evening(
        len(group_rounds),
        len(lengths) - len(group_rounds),
        idle,
        figures.idle,
        figures.back_to_back,
        figures.tired,
        sum(lengths.values()),
    )


def clock(start: int, offset: float) -> str:
    """`17:22`: the start (minutes after midnight) plus an offset in seconds."""
    minutes = (start + round(offset / 60)) % (24 * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"
