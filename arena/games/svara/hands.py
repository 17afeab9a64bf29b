"""Svara hand values (rulebook: ``seeds/svara.md``).

Values are kept in half points, because three of a kind is worth 32.5, so that all arithmetic
stays in ints; ``points`` turns them back into the number players say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from arena import cards
from arena.cards import ACE, Card
from arena.games.base import ConfigError

HAND_SIZE = 3


@dataclass(frozen=True)
class HandRules:
    """What a hand is worth: which cards are jokers and which combination table applies.

    ``scoring`` is ``"classic"`` (666 = 36, AAA = 33, other triples 32.5) or ``"bulgarian"``
    (777 = 34, other triples three times the card's points, two sevens 23).
    """

    jokers: frozenset[Card]
    scoring: str = "classic"


CLASSIC = HandRules(jokers=frozenset({cards.parse("6C")}))


def parse_jokers(raw: object, pack_size: int) -> frozenset[Card]:
    """The jokers named by a ``jokers`` parameter (like ``["6C"]``): distinct cards of the pack."""
    if not isinstance(raw, list) or not all(isinstance(j, str) for j in raw):
        raise ConfigError("jokers must be a list of cards like ['6C']")
    try:
        jokers = [cards.parse(j) for j in raw]
    except cards.CardError as exc:
        raise ConfigError(str(exc)) from None
    if len(set(jokers)) != len(jokers) or not set(jokers) <= set(cards.pack(pack_size)):
        raise ConfigError("jokers must be distinct cards of the pack")
    return frozenset(jokers)


def card_points(card: Card) -> int:
    """A card's points in suit totals: ace 11, king to ten 10, nine to five at face value."""
    rank = cards.rank_of(card)
    if rank == ACE:
        return 11
    return min(rank, 10)


def _suit_total(hand: Sequence[Card], rules: HandRules) -> int:
    """The best single-suit sum, each joker adding 11 to it (in half points)."""
    jokers = sum(1 for c in hand if c in rules.jokers)
    by_suit = [0, 0, 0, 0]
    for c in hand:
        if c not in rules.jokers:
            by_suit[cards.suit_of(c)] += card_points(c)
    return 2 * (max(by_suit) + 11 * jokers)


def _triple_total(hand: Sequence[Card], rules: HandRules) -> int:
    """The best three of a kind the hand makes, jokers standing in for any rank (half points)."""
    if len(hand) != HAND_SIZE:
        return 0
    ranks = {cards.rank_of(c) for c in hand}
    made = [r for r in ranks if all(cards.rank_of(c) == r or c in rules.jokers for c in hand)]
    return max((_triple_value(r, rules) for r in made), default=0)


def _triple_value(rank: int, rules: HandRules) -> int:
    """The value of three of a kind of ``rank`` (in half points)."""
    if rules.scoring == "bulgarian":
        return 68 if rank == 7 else 6 * card_points(cards.make(rank, 0))
    if rank == 6:
        return 72
    return 66 if rank == ACE else 65


def _pair_value(hand: Sequence[Card], rules: HandRules) -> int:
    """Two aces (a joker counting as an ace) are 22; in bulgarian scoring two sevens are 23."""
    value = 0
    if sum(1 for c in hand if cards.rank_of(c) == ACE or c in rules.jokers) >= 2:
        value = 44
    if rules.scoring == "bulgarian" and sum(1 for c in hand if cards.rank_of(c) == 7) >= 2:
        value = 46
    return value


def hand_value(hand: Sequence[Card], rules: HandRules = CLASSIC) -> int:
    """The value of a hand in half points: the best of three of a kind, two aces and suit totals.

    >>> hand_value([cards.parse(c) for c in ("6C", "KH", "QH")])
    62
    """
    return _value(tuple(sorted(hand)), rules)


@lru_cache(maxsize=1 << 16)
def _value(hand: tuple[Card, ...], rules: HandRules) -> int:
    """The value of a sorted hand; remembered, since a pack makes only thousands of hands."""
    return max(_triple_total(hand, rules), _pair_value(hand, rules), _suit_total(hand, rules))


def points(half_points: int) -> float | int:
    """Half points as the number a player would say: 65 -> 32.5, 62 -> 31."""
    return half_points // 2 if half_points % 2 == 0 else half_points / 2
