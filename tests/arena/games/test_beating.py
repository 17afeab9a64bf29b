"""The beating rule, pick-up counts, the pile and the action encoding of the beating games."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena import cards
from arena.games import beating
from arena.games.base import IllegalActionError

ALL_CARDS = cards.pack(40)
card_st = st.sampled_from(ALL_CARDS)
suit_st = st.integers(min_value=0, max_value=3)
hand_st = st.sets(card_st, max_size=20).map(cards.mask)

C = cards.parse


@pytest.mark.parametrize(
    ("card", "top", "trump", "expected"),
    [
        ("9C", "7C", "S", True),  # higher card of the same suit
        ("7C", "9C", "S", False),  # lower card of the same suit
        ("9C", "9C", "S", False),  # equal is not higher (cannot occur with one pack)
        ("6S", "AC", "S", True),  # any own trump beats a card of another suit
        ("6S", "AH", "H", False),  # someone else's trump has no power for me
        ("6S", "7S", "S", False),  # my own trump on top: only a higher one of that suit
        ("8S", "7S", "S", True),
        ("KD", "AH", "H", False),  # nothing beats the ace of my own trump
        ("AH", "TD", "S", False),  # a plain card of another suit never beats
        ("TH", "9H", "D", True),  # whose trump the top card is does not matter
    ],
)
def test_beating_rule(card: str, top: str, trump: str, expected: bool) -> None:
    assert beating.beats(C(card), C(top), cards.parse_suit(trump)) is expected


def test_own_trump_ace_cannot_be_beaten_by_its_owner() -> None:
    for suit in range(4):
        ace = cards.make(cards.ACE, suit)
        assert beating.BEAT_MASKS[suit][ace] == 0


@given(card_st, card_st, suit_st)
def test_beat_masks_agree_with_the_rule(card: int, top: int, trump: int) -> None:
    in_mask = bool(beating.BEAT_MASKS[trump][top] >> card & 1)
    assert in_mask == beating.beats(card, top, trump)


@given(hand_st, st.sampled_from([beating.LEAD, beating.BEAT, beating.SECOND]))
def test_card_actions_list_every_card_ascending(hand: int, base: int) -> None:
    actions = beating.card_actions(hand, base)
    assert actions == [base + c for c in cards.unmask(hand)]


@given(hand_st.filter(bool))
def test_lowest_is_a_lowest_rank_card(hand: int) -> None:
    low = beating.lowest(hand)
    assert hand >> low & 1
    assert all(cards.rank_of(low) <= cards.rank_of(c) for c in cards.unmask(hand))


def test_lowest_prefers_side_suits_and_falls_back_to_trumps() -> None:
    hand = cards.mask([C("6S"), C("9H"), C("8D")])
    assert beating.lowest_preferring_side_suits(hand, cards.SPADES) == C("8D")
    only_trumps = cards.mask([C("KS"), C("7S")])
    assert beating.lowest_preferring_side_suits(only_trumps, cards.SPADES) == C("7S")


def test_cheapest_beat_uses_side_suit_before_trump() -> None:
    hand = cards.mask([C("6S"), C("KC"), C("QC"), C("7H")])
    assert beating.cheapest_beat(hand, C("JC"), cards.SPADES) == C("QC")
    assert beating.cheapest_beat(hand, C("AC"), cards.SPADES) == C("6S")
    assert beating.cheapest_beat(hand, C("AS"), cards.SPADES) is None


MODERN = (3, 5, beating.ALL)


@pytest.mark.parametrize(
    ("top", "trump", "pile_size", "expected"),
    [
        ("9C", "S", 10, 3),  # plain top card: three
        ("9S", "S", 10, 5),  # own trump: five
        ("AS", "S", 10, 10),  # ace of own trump: the whole pile
        ("AC", "S", 10, 3),  # another player's ace is a plain card
        ("9C", "S", 2, 2),  # fewer on the pile than the count: the whole pile
        ("9S", "S", 4, 4),
        ("9S", "S", 5, 5),
    ],
)
def test_pickup_count(top: str, trump: str, pile_size: int, expected: int) -> None:
    got = beating.pickup_count(C(top), cards.parse_suit(trump), MODERN, pile_size)
    assert got == expected


def test_whole_pile_counts() -> None:
    counts = (beating.ALL, beating.ALL, beating.ALL)
    assert beating.pickup_count(C("9C"), cards.SPADES, counts, 7) == 7


def test_single_card_beats_is_the_draw_test() -> None:
    assert beating.single_card_beats(cards.mask([C("6S")]), C("AH"), cards.SPADES)
    assert not beating.single_card_beats(cards.mask([C("6S"), C("7S")]), C("AH"), cards.SPADES)
    assert not beating.single_card_beats(cards.mask([C("6H")]), C("AH"), cards.SPADES)
    assert not beating.single_card_beats(0, C("AH"), cards.SPADES)


@given(st.lists(card_st, min_size=1, max_size=30, unique=True), st.data())
def test_pile_take_returns_the_top_and_keeps_the_key_exact(
    start: list[int], data: st.DataObject
) -> None:
    count = data.draw(st.integers(min_value=0, max_value=len(start)))
    pile = beating.Pile(start)
    taken = pile.take(count)
    assert taken == start[len(start) - count :]
    assert pile.cards == start[: len(start) - count]
    assert pile.key == beating.Pile(pile.cards).key


def test_pile_keys_differ_for_different_sequences() -> None:
    a, b = beating.Pile([C("9C"), C("JC")]), beating.Pile([C("JC"), C("9C")])
    assert a.key != b.key
    assert beating.Pile([C("9C")]).key != a.key


@pytest.mark.parametrize(
    "wire",
    [
        {"type": "lead", "card": "9C"},
        {"type": "beat", "card": "JC"},
        {"type": "second", "card": "7H"},
        {"type": "pick_up"},
        {"type": "choose_trump", "suit": "H"},
        {"type": "choose_side", "suit": "C"},
    ],
)
def test_action_json_round_trip(wire: dict[str, str]) -> None:
    action = beating.action_from_json(wire)
    assert beating.action_to_json(action) == wire


def test_take_word_names_the_pick_up() -> None:
    action = beating.action_from_json({"type": "take"}, take_word="take")
    assert action == beating.PICK_UP
    assert beating.action_to_json(action, take_word="take") == {"type": "take"}
    with pytest.raises(IllegalActionError):
        beating.action_from_json({"type": "pick_up"}, take_word="take")


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "lead",
        {"card": "9C"},
        {"type": "lead"},
        {"type": "lead", "card": "XX"},
        {"type": "beat", "card": "JC", "second": "7H"},
        {"type": "choose_trump", "suit": "Z"},
        {"type": "fly"},
    ],
)
def test_malformed_actions_are_rejected_clearly(bad: object) -> None:
    with pytest.raises(IllegalActionError):
        beating.action_from_json(bad)


@pytest.mark.parametrize("bad", [-1, 63, 64 + 4, 193, 204])
def test_non_actions_have_no_wire_form(bad: int) -> None:
    with pytest.raises(IllegalActionError):
        beating.action_to_json(bad)
