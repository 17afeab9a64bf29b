"""Tables that spare Kozyr Boys work on every move: where each seat's cards lie in the shuffled
pack, each seat's ``Play`` of each card, the cards' trick keys and the events of laying cards.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from operator import itemgetter

from arena import cards
from arena.cards import Card
from arena.games.kozyr_boys.rules import BOWER_POINTS, Trumps
from arena.games.tricktaking import Play

PLAYERS = 3
PACK_SIZE = 32
PACKETS = (3, 4, 3)

NEXT = (1, 2, 0)
"""The seat left of each seat."""


def packet_picks() -> tuple[itemgetter[tuple[Card, ...]], ...]:
    """Per place from the dealer's left, the pack positions of that seat's cards: the packets of
    3, 4 and 3 go round three times; the dealer (third place) also takes the two left over."""
    picks: list[list[int]] = [[], [], []]
    at = 0
    for size in PACKETS:
        for place in range(PLAYERS):
            picks[place] += range(at, at + size)
            at += size
    picks[2] += range(at, PACK_SIZE)
    return tuple(itemgetter(*p) for p in picks)


PICKS = packet_picks()


Members = Callable[[Card], bool]


@cache
def play_tables(
    suit: int,
) -> tuple[tuple[tuple[Play, ...], ...], tuple[int, ...], tuple[Members, ...]]:
    """For the trump suit ``suit``: each seat's ``Play`` of each card (never changed once made,
    so a deal shares them), and each card's trick key: its order within its suit, plus 40 for a
    trump. A trick's winner is the card of highest key once 20 is added to the led suit's cards.
    Third, per suit, the test "does this card count as that suit" (a set's ``__contains__``, so
    ``filter`` picks a hand's cards of a suit without a Python call per card).
    """
    trumps = Trumps.of(suit)
    plays = tuple(
        tuple(Play(seat, c, trumps.suits[c] == suit) for c in range(64)) for seat in range(PLAYERS)
    )
    keys = tuple(trumps.strengths[c] + (40 if trumps.suits[c] == suit else 0) for c in range(64))
    members = tuple(
        frozenset(c for c in range(64) if trumps.suits[c] == s).__contains__ for s in range(4)
    )
    return plays, keys, members


PLAY_EVENTS = tuple(
    tuple({"type": "play", "seat": seat, "card": cards.NAMES[c]} for c in range(64))
    for seat in range(PLAYERS)
)
"""Each seat's history event of laying each card. Events are never changed once recorded (an
observation copies them), so every match shares these."""


TRICK_EVENTS = tuple(
    tuple({"type": "trick", "winner": seat, "points": p} for p in range(3 * BOWER_POINTS + 1))
    for seat in range(PLAYERS)
)
"""``TRICK_EVENTS[winner][points]``: the history event of a trick's end (no card is worth more
than a bower, so a trick holds at most three bowers' points). Shared, as ``PLAY_EVENTS``."""
