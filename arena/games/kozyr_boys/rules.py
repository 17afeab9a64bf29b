"""The card rules of Kozyr Boys (Réunion), apart from the match itself: what the trump suit makes
of each card, what the dealer may discard, and how a deal and a match are scored.

Pure functions over cards and per-seat numbers, so the rulebook's examples can be checked alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from arena import cards
from arena.cards import ACE, JACK, TEN, Card, Suit

POINTS = {ACE: 11, TEN: 10, 13: 4, 12: 3, JACK: 2}
BOWER_POINTS = 12
PLAIN_ORDER = {ACE: 8, TEN: 7, 13: 6, 12: 5, JACK: 4, 9: 3, 8: 2, 7: 1}
"""Rank order of a plain suit (and of the trump suit below the bowers): A T K Q J 9 8 7."""
LAST_TRICK_BONUS = 10
NO_TRICK_PENALTY = 30
NO_TRICK_GIFT = 15
UNITS_TARGET = 150
UNIT_STEPS = ((0, 4), (50, 3), (100, 2), (UNITS_TARGET, 1))
"""(total below or at which, units paid): at most 0 points pays 4, under 50 pays 3, ..."""


def left_bower_suit(trump: Suit) -> Suit:
    """The other suit of the trump's colour: spades with clubs, hearts with diamonds."""
    return 3 - trump


@dataclass(frozen=True)
class Trumps:
    """The trump suit of a deal and what it makes of each card.

    ``suits[card]`` is the suit the card counts as (the left bower's is the trump suit),
    ``values[card]`` its points and ``strengths[card]`` its order within its suit. Play asks
    these questions for every card, so they are tables, built once per trump suit (``of``).
    """

    suit: Suit
    right: Card = field(init=False, repr=False, compare=False)
    left: Card = field(init=False, repr=False, compare=False)
    suits: tuple[Suit, ...] = field(init=False, repr=False, compare=False)
    values: tuple[int, ...] = field(init=False, repr=False, compare=False)
    strengths: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        right, left = cards.make(JACK, self.suit), cards.make(JACK, left_bower_suit(self.suit))
        tables = {
            "right": right,
            "left": left,
            "suits": tuple(self.suit if c == left else c >> 4 for c in range(64)),
            "values": tuple(
                BOWER_POINTS if c in (right, left) else POINTS.get(c & 15, 0) for c in range(64)
            ),
            "strengths": tuple(
                20 if c == right else 19 if c == left else PLAIN_ORDER.get(c & 15, 0)
                for c in range(64)
            ),
        }
        for name, value in tables.items():
            object.__setattr__(self, name, value)

    @staticmethod
    @cache
    def of(suit: Suit) -> Trumps:
        """The (shared, immutable) tables of trump suit ``suit``."""
        return Trumps(suit)

    def suit_of(self, card: Card) -> Suit:
        """The suit a card counts as: the left bower belongs to the trump suit."""
        return self.suits[card]

    def is_trump(self, card: Card) -> bool:
        return self.suits[card] == self.suit

    def is_bower(self, card: Card) -> bool:
        return card == self.right or card == self.left

    def strength(self, card: Card) -> int:
        """Order within a suit: the bowers top the trumps, then A T K Q (J) 9 8 7."""
        return self.strengths[card]

    def points(self, card: Card) -> int:
        """The card points of ``card``."""
        return self.values[card]

    def winner(self, played: Sequence[Card]) -> int:
        """Index of the winning card: the highest trump, else the highest of the led suit."""
        suits, strengths = self.suits, self.strengths
        suit = self.suit if self.suit in [suits[c] for c in played] else suits[played[0]]
        best = -1
        for i, card in enumerate(played):
            if suits[card] == suit and (best < 0 or strengths[card] > strengths[played[best]]):
                best = i
        return best

    def legal_plays(self, hand: Sequence[Card], led: Card | None) -> list[Card]:
        """Follow the led suit; else play a trump; else anything. In the order of ``hand`` (a
        held hand is ascending, so the plays are too)."""
        if led is None:
            return list(hand)
        suits, want = self.suits, self.suits[led]
        follow = [c for c in hand if suits[c] == want]
        if follow:
            return follow
        trump = self.suit
        return [c for c in hand if suits[c] == trump] or list(hand)

    def low_key(self, card: Card) -> tuple[int, int, int, int]:
        """Order for "the lowest card": points, then non-trumps first, then rank, then suit."""
        return self.points(card), self.is_trump(card), self.strength(card), cards.suit_of(card)


def discard_pairs(hand: Sequence[Card], trumps: Trumps, rule: str) -> list[tuple[Card, Card]]:
    """The pairs of cards the dealer may discard under ``rule``."""
    no_aces = [c for c in hand if c & 15 != ACE]
    suits, trump, right, left = trumps.suits, trumps.suit, trumps.right, trumps.left
    allowed = []
    if rule == "seed":
        allowed = [c for c in no_aces if suits[c] != trump]
    if len(allowed) < 2:
        # Under the seed rule with too few plain cards, the minor trumps (not a bower, not the
        # ace) become discardable; the other rules always allow them.
        allowed = [c for c in no_aces if c != right and c != left]
    pairs = list(itertools.combinations(sorted(allowed), 2))
    if rule == "one_ten":
        pairs = [p for p in pairs if not (p[0] & 15 == TEN and p[1] & 15 == TEN)]
    return pairs


def deal_points(
    tricks: Sequence[int],
    taken: Sequence[int],
    last: int,
    dealer: int,
    discard: int,
    no_trick_points: bool = True,
) -> list[int]:
    """A deal's points per seat: card points taken, the last trick bonus, the discard (to the
    dealer, unless he took no trick), and the no-trick payments (-30, +15 to each other).

    With ``no_trick_points`` off (the units settlement) a trickless player pays in units instead.
    """
    points = list(taken)
    points[last] += LAST_TRICK_BONUS
    if tricks[dealer]:
        points[dealer] += discard
    if not no_trick_points:
        return points
    for seat, count in enumerate(tricks):
        if not count:
            points = [
                p - NO_TRICK_PENALTY if s == seat else p + NO_TRICK_GIFT
                for s, p in enumerate(points)
            ]
    return points


def deal_units(tricks: Sequence[int], captures: Sequence[tuple[int, int]]) -> list[int]:
    """A deal's side payments: a trickless player pays one unit to each other player, and
    whoever loses the left bower to the right bower pays one unit to the winner of that trick.

    ``captures`` lists (winner, loser) seat pairs.
    """
    units = [0] * len(tricks)
    for seat, count in enumerate(tricks):
        if not count:
            units = [u - (len(tricks) - 1) if s == seat else u + 1 for s, u in enumerate(units)]
    for winner, loser in captures:
        units[winner] += 1
        units[loser] -= 1
    return units


def final_units(totals: Sequence[int]) -> list[float]:
    """The end-of-match payments: every player below 150 points pays the winner 1 unit, below
    100 pays 2, below 50 pays 3, with no points at all 4. Tied winners share what is paid."""
    best = max(totals)
    winners = [s for s, t in enumerate(totals) if t == best]
    units = [0.0] * len(totals)
    for seat, total in enumerate(totals):
        if seat in winners:
            continue
        owed = next((pay for bound, pay in UNIT_STEPS if _below(total, bound)), 0)
        units[seat] -= owed
        for winner in winners:
            units[winner] += owed / len(winners)
    return units


def _below(total: int, bound: int) -> bool:
    """Zero is its own step ("no points at all"); the others are strict bounds."""
    return total <= 0 if bound == 0 else total < bound
