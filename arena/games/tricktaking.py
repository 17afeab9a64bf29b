"""Pieces shared by the trick-taking games.

A trick is a list of plays, one per seat, in playing order; a play is a seat and a card. The games
decide who wins a trick and what a card is worth; this module only keeps the bookkeeping.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from arena import cards
from arena.cards import Card
from arena.games.base import (
    JSON,
    TERMINAL,
    Action,
    IllegalActionError,
    Result,
    State,
    ranking_from_scores,
    shuffle,
)

PLAY = "play"
OVER = "over"
"""The phase of a finished match."""


@dataclass(slots=True)
class Play:
    """One card laid into a trick. ``flagged`` marks it publicly as a trump."""

    seat: int
    card: Card
    flagged: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "card": cards.to_str(self.card), "trump": self.flagged}


@dataclass(slots=True)
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
    shuffle(rng, deck)
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


class TrickTakingState(State):
    """The plumbing the trick-taking states share: the phase, the seat to act, the deal number,
    the tricks of the deal, match scores and a legal-action cache. Subclasses are dataclasses
    that declare these attributes and implement ``_compute_legal`` and ``_apply``."""

    fixed_action_json = True
    phase: str
    to_move: int
    deal_no: int
    tricks: list[Trick]
    scores: list[int]
    legal_cache: list[Action] | None

    @abstractmethod
    def _compute_legal(self) -> list[Action]:
        """The legal actions of the seat to act (ascending)."""

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Play a legal ``action`` for the seat to act."""

    @abstractmethod
    def _result_detail(self) -> JSON:
        """Game-specific facts for ``Result.detail``."""

    def current_player(self) -> int:
        return TERMINAL if self.phase == OVER else self.to_move

    def is_terminal(self) -> bool:
        return self.phase == OVER

    @property
    def deal_index(self) -> int:
        return self.deal_no

    def legal_actions(self) -> list[Action]:
        legal = self.legal_cache
        if legal is None:
            if self.phase == OVER:
                return []
            legal = self.legal_cache = self._compute_legal()
        return legal[:]

    def apply_action(self, action: Action) -> None:
        legal = self.legal_cache
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(f"action {action} is not legal here ({self.phase})")
        self.legal_cache = None
        self._apply(action)

    def tricks_won(self) -> list[int]:
        """Tricks taken in the current deal, per seat."""
        won = [0] * self.game.players
        for t in self.tricks:
            if t.winner is not None:
                won[t.winner] += 1
        return won

    def result(self) -> Result:
        if not self.is_terminal():
            raise ValueError("the match is not over")
        scores = tuple(float(s) for s in self.scores)
        return Result(ranking_from_scores(scores), scores, self._result_detail())
