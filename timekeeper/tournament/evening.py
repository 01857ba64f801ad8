"""How long the evening takes: every round is as long as its profile's match (the playing
time and the breaks between periods, as written; stopped time, overtime and shoot-outs come
on top) plus the changeover the tournament file allows between two matches at a table."""

from __future__ import annotations

from dataclasses import dataclass

from timekeeper.rules import profile
from timekeeper.rules.profile import Profile
from timekeeper.tournament import schedule
from timekeeper.tournament.state import Tournament


def match_seconds(p: Profile) -> float:
    """Regulation play plus the breaks between its periods."""
    play = sum(part.length or 0.0 for part in p.periods[:p.regulation])
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


def evening(t: Tournament) -> Evening:
    spec = t.spec
    tables = len(spec.tables)
    group_rounds = sorted({s.round for s in t.slots if s.match in t.pairings})
    by_round = [[t.pairings[s.match] for s in t.slots if s.round == r] for r in group_rounds]
    figures = schedule.measure(by_round, tables)
    ko_rounds = sorted({s.round for s in t.slots if s.match in t.nodes})
    seconds = 0.0
    if spec.groups:
        seconds += len(group_rounds) * (match_seconds(profile.load(spec.groups.profile))
                                        + spec.changeover)
    if spec.knockout:
        ko = match_seconds(profile.load(spec.knockout.profile))
        final = match_seconds(profile.load(spec.knockout.final_profile))
        for r in ko_rounds:
            decisive = any(t.nodes[s.match].final for s in t.slots if s.round == r)
            seconds += (final if decisive else ko) + spec.changeover
    idle = sum(tables - sum(1 for s in t.slots if s.round == r)
               for r in group_rounds + ko_rounds)
    return Evening(len(group_rounds), len(ko_rounds), idle, figures.idle,
                   figures.back_to_back, figures.tired, seconds)
