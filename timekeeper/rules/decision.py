"""How a match was decided — regulation, overtime, sudden death, shoot-out — checked against
its profile in one place, so that `tournament result --ot/--sd/--so`, a result typed on the
desk's board and one a box sends home are held to the same rule.

What a profile offers: an overtime played in full (Radegast's 3 minutes: won by any margin,
`--ot`), an overtime one goal ends (ITHF 4.8's untimed one, hokejbal's 5 minutes: `--sd`,
won by exactly one goal), a shoot-out (`--so`, the winner's score one goal more, as ice
hockey writes it). A drawn score and whether a draw may stand are the tournament's rule
set's, not the profile's: they are checked where the rule set is known."""

from __future__ import annotations

from dataclasses import dataclass

from timekeeper.rules.profiletypes import Profile

REGULATION, OVERTIME, SUDDEN_DEATH, SHOOTOUT = "regulation", "overtime", "sudden_death", "shootout"
DECISIONS = (REGULATION, OVERTIME, SUDDEN_DEATH, SHOOTOUT)
EXTRA = (OVERTIME, SUDDEN_DEATH, SHOOTOUT)  # a match gone past regulation
OPTION = {OVERTIME: "--ot", SUDDEN_DEATH: "--sd", SHOOTOUT: "--so"}


class DecisionError(ValueError):
    """A decision the profile cannot give; the message says what to type instead."""


@dataclass(frozen=True)
class Decisions:
    """The ways past regulation a profile's match can be decided. The default (no profile
    known: one that no longer loads is the box's to refuse) takes each of them."""

    profile: str = ""
    overtime: bool = True  # an overtime played in full
    sudden_death: bool = True  # an overtime that one goal ends
    shootout: bool = True

    @classmethod
    def of(cls, profile: Profile) -> Decisions:
        extra = [p for p in profile.periods if p.overtime]
        return cls(
            profile.key,
            any(not p.sudden_death for p in extra),
            any(p.sudden_death for p in extra),
            profile.shootout is not None,
        )

    def check(self, decided: str, home: int, away: int, written: bool = False) -> None:
        """Refuses a decision the profile has not (`offered`), or a score it cannot end on:
        a sudden death and a shoot-out end one goal apart."""
        decided = self.offered(decided, written)
        if decided in (SUDDEN_DEATH, SHOOTOUT) and abs(home - away) != 1:
            what = "a sudden death" if decided == SUDDEN_DEATH else "a shoot-out"
            raise DecisionError(
                f"{what} ends on one goal: the winner has exactly one more "
                f"({home}:{away} cannot be)"
            )

    def offered(self, decided: str, written: bool = False) -> str:
        """The decision, if the profile has it; else refused, saying what to type instead.
        `written`: a result the ledger holds already, read again: checked as it was taken
        (its score: one goal for a sudden death and a shoot-out), not against the profile,
        so that a ledger written before the profile was asked still loads."""
        if decided not in DECISIONS:
            raise DecisionError(f"decided is one of {', '.join(DECISIONS)}, not {decided!r}")
        if written:
            return decided
        name = f"{self.profile}'s" if self.profile else "the"
        if decided == OVERTIME and not self.overtime and self.sudden_death:
            raise DecisionError(
                f"{name} overtime is sudden death (one goal ends it): type --sd, not --ot"
            )
        if decided == SUDDEN_DEATH and not self.sudden_death and self.overtime:
            raise DecisionError(f"{name} overtime is played in full: type --ot, not --sd")
        if decided in (OVERTIME, SUDDEN_DEATH) and not (self.overtime or self.sudden_death):
            raise DecisionError(f"{self.profile or 'the profile'} has no overtime{self._else()}")
        if decided == SHOOTOUT and not self.shootout:
            raise DecisionError(f"{self.profile or 'the profile'} has no shoot-out{self._else()}")
        return decided

    def past_regulation(self) -> str:
        """What a match drawn after regulation needs, for a message: "overtime (--ot,
        --sd) or the shoot-out (--so)"."""
        ways = []
        overtime = [
            OPTION[d]
            for d, has in ((OVERTIME, self.overtime), (SUDDEN_DEATH, self.sudden_death))
            if has
        ]
        if overtime:
            ways.append(f"overtime ({', '.join(overtime)})")
        if self.shootout:
            ways.append(f"the shoot-out ({OPTION[SHOOTOUT]})")
        return " or ".join(ways) or "overtime or a shoot-out (its profile has neither)"

    def _else(self) -> str:
        offered = self.overtime or self.sudden_death or self.shootout
        return f": {self.past_regulation()}" if offered else ""


ANY = Decisions()  # no profile known: each way past regulation is taken
