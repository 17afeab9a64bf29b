"""Pieces shared by the trick-taking games (``svoi-kozyri-tricks``, ``kozyr-boys``).

A trick is a list of plays, one per seat, in playing order; a play is a seat and a card. The games
decide who wins a trick and what a card is worth; this module only keeps the bookkeeping.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arena import cards
from arena.cards import Card
from arena.games.base import IllegalActionError

PLAY = "play"


@dataclass
class Play:
    """One card laid into a trick. ``flagged`` marks it publicly as a trump."""

    seat: int
    card: Card
    flagged: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "card": cards.to_str(self.card), "trump": self.flagged}


@dataclass
class Trick:
    """A trick: the leader, the plays in order and, once complete, the winner."""

    leader: int
    plays: list[Play] = field(default_factory=list)
    winner: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "leader": self.leader,
            "cards": [p.to_json() for p in self.plays],
            "winner": self.winner,
        }


def next_seat(seat: int, players: int) -> int:
    """The seat to the left (clockwise) of ``seat``."""
    return (seat + 1) % players


def seats_from(first: int, players: int) -> list[int]:
    """All seats clockwise, starting at ``first``."""
    return [(first + i) % players for i in range(players)]


def shuffled_pack(size: int, rng: random.Random) -> list[Card]:
    """A pack of ``size`` cards shuffled by ``rng`` (Fisher–Yates)."""
    deck = cards.pack(size)
    rng.shuffle(deck)
    return deck


def hand_strs(hand: Iterable[Card]) -> list[str]:
    """A hand in wire form, sorted the way a player holds it."""
    return cards.strs(cards.sort_hand(hand))


def parse_card_action(obj: Any) -> Card:
    """The card of a ``{"type": "play", "card": "9C"}`` wire action."""
    if not isinstance(obj, dict) or obj.get("type") != PLAY:
        raise IllegalActionError(f'expected {{"type": "play", "card": ...}}, got {obj!r}')
    try:
        return cards.parse(obj.get("card"))  # type: ignore[arg-type]
    except cards.CardError as err:
        raise IllegalActionError(str(err)) from None
