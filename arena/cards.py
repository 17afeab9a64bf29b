"""Cards, suits, ranks and packs.

A card is a small int: ``suit * 16 + rank``, suits S=0, H=1, D=2, C=3, ranks 5..14 (ace = 14).
Small ints keep hands cheap as bitmasks (``1 << card``) and as dictionary keys. On the wire and in
replays a card is two characters, rank then suit: ``"TH"`` is the ten of hearts, ``"6C"`` the six of
clubs.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

Card = int
Suit = int

SUITS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
RANKS = "56789TJQKA"
SPADES, HEARTS, DIAMONDS, CLUBS = 0, 1, 2, 3
ACE, KING, QUEEN, JACK, TEN = 14, 13, 12, 11, 10

PACK_SIZES = (24, 28, 32, 36, 40)
_LOWEST_RANK = {24: 9, 28: 8, 32: 7, 36: 6, 40: 5}


class CardError(ValueError):
    """A card, suit or pack could not be parsed or built."""


def make(rank: int, suit: Suit) -> Card:
    """The card of ``rank`` (5..14) and ``suit`` (0..3)."""
    return suit * 16 + rank


def suit_of(card: Card) -> Suit:
    return card >> 4


def rank_of(card: Card) -> int:
    return card & 15


def to_str(card: Card) -> str:
    """``"TH"`` for the ten of hearts."""
    return RANKS[(card & 15) - 5] + SUITS[card >> 4]


NAMES = tuple(RANKS[(c & 15) - 5] + SUITS[c >> 4] if 5 <= c & 15 <= ACE else "" for c in range(64))
"""``NAMES[card]`` is ``to_str(card)`` for every card, looked up rather than built."""


def pretty(card: Card) -> str:
    """``"T♥"`` for the ten of hearts: for terminals and pages, never for the wire."""
    return RANKS[(card & 15) - 5] + SUIT_SYMBOLS[card >> 4]


def parse(text: str) -> Card:
    """Parse the two-character notation (``"TH"``, ``"6c"``; ``"10H"`` is accepted for the ten)."""
    if not isinstance(text, str):
        raise CardError(f"a card is a string like 'TH', got {text!r}")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise CardError(f"not a card: {text!r} (expected rank 5-9/T/J/Q/K/A then suit S/H/D/C)")
    return make(RANKS.index(t[0]) + 5, SUITS.index(t[1]))


def parse_suit(text: str) -> Suit:
    """Parse a suit letter (``"H"``) or symbol (``"♥"``)."""
    if isinstance(text, str) and len(text) == 1:
        if text.upper() in SUITS:
            return SUITS.index(text.upper())
        if text in SUIT_SYMBOLS:
            return SUIT_SYMBOLS.index(text)
    raise CardError(f"not a suit: {text!r} (expected S, H, D or C)")


def suit_str(suit: Suit) -> str:
    return SUITS[suit]


def lowest_rank(size: int) -> int:
    """The lowest rank in a pack of ``size`` cards (24 → 9, 36 → 6, 40 → 5)."""
    try:
        return _LOWEST_RANK[size]
    except KeyError:
        raise CardError(f"no pack of {size} cards; sizes are {PACK_SIZES}") from None


def pack(size: int = 36) -> list[Card]:
    """A full pack in a fixed order (suit by suit, low to high): shuffle it with a seeded RNG."""
    packed = _PACKS.get(size)
    if packed is None:
        low = lowest_rank(size)
        packed = _PACKS[size] = tuple(
            make(rank, suit) for suit in range(4) for rank in range(low, ACE + 1)
        )
    return list(packed)


_PACKS: dict[int, tuple[Card, ...]] = {}
"""Each pack size's order, built once: every deal starts from a fresh copy."""


def mask(cards: Iterable[Card]) -> int:
    """The bitmask of a set of cards."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def unmask(m: int) -> list[Card]:
    """The cards of a bitmask, in ascending card order."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


_NAMES = {make(r, s): to_str(make(r, s)) for s in range(4) for r in range(5, 15)}
"""``to_str`` of every card, by card."""


def strs(cards: Iterable[Card]) -> list[str]:
    return [_NAMES[c] for c in cards]


def mask_strs(m: int) -> list[str]:
    """``strs(unmask(m))``, remembered for the masks seen lately (a fresh list each time)."""
    return list(_mask_names(m))


@lru_cache(maxsize=1 << 12)
def _mask_names(m: int) -> tuple[str, ...]:
    return tuple(strs(unmask(m)))


def sort_hand(cards: Iterable[Card]) -> list[Card]:
    """Cards sorted by suit (S H D C), then rank high to low: how a hand is shown."""
    return sorted(cards, key=lambda c: (c >> 4, -(c & 15)))
