"""The table of a Svara deal (rulebook: ``seeds/svara.md``): where the deal stands, each seat's
status in it, and the chips on credit (balances, this deal's contributions and the pot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Phase(StrEnum):
    """Where a deal stands: the dark chain, open betting, a svara decision, or the match over."""

    DARK = "dark"
    OPEN = "open"
    SVARA = "svara"
    OVER = "over"


class Status(StrEnum):
    """A seat's place in the deal in play."""

    OUT = "out"  # not dealt in (a svara it did not join)
    WAITING = "waiting"  # dealt in, has not seen its cards nor gone dark yet
    DARK = "dark"  # bet in the dark
    LOOKED = "looked"  # saw its cards without betting dark
    FOLDED = "folded"


ACTIVE = (Status.DARK, Status.LOOKED)
"""The statuses of seats still contesting the pot."""


@dataclass
class Chips:
    """Chips on credit: each seat's net balance, what it has put in this deal, and the pot."""

    balances: list[int]
    contributions: list[int]
    pot: int = 0

    @classmethod
    def for_seats(cls, players: int) -> Chips:
        """An empty table for ``players`` seats."""
        return cls([0] * players, [0] * players)

    def pay(self, seat: int, amount: int) -> None:
        """Move ``amount`` from ``seat``'s balance into the pot."""
        self.balances[seat] -= amount
        self.contributions[seat] += amount
        self.pot += amount

    def win(self, seat: int) -> int:
        """Give the whole pot to ``seat``; returns what it won."""
        won, self.pot = self.pot, 0
        self.balances[seat] += won
        return won

    def split(self, winners: Sequence[int], order: Sequence[int]) -> dict[int, int]:
        """Share the pot equally among ``winners``; odd chips go one at a time in ``order``."""
        share, leftover = divmod(self.pot, len(winners))
        shares = dict.fromkeys(winners, share)
        for s in [s for s in order if s in shares][:leftover]:
            shares[s] += 1
        for s, amount in shares.items():
            self.balances[s] += amount
        self.pot = 0
        return shares

    def end_deal(self) -> None:
        """Start counting contributions afresh for the next deal."""
        self.contributions = [0] * len(self.contributions)


@dataclass
class SvaraCall:
    """A svara being decided: the tied seats, the price to join, who is undecided, who joined."""

    tied: list[int] = field(default_factory=list)
    price: int = 0
    undecided: list[int] = field(default_factory=list)
    joined: list[int] = field(default_factory=list)

    def next_to_decide(self) -> int | None:
        """The next seat to choose between joining and declining, or None when all have."""
        return self.undecided.pop(0) if self.undecided else None

    def players(self) -> list[int]:
        """Who plays the svara's new deal: the tied seats, then those who joined."""
        return self.tied + self.joined
