"""Challenge (Besicovitch's game): mirrored deals, beat or take, the guards and match scoring."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import cards
from arena.games import make_game
from arena.games.base import TERMINAL, ConfigError, IllegalActionError, deal_rng
from arena.games.challenge.game import Challenge, ChallengeState, mirrored_deal
from tests.arena.games.wire import beat, lead, play, second

TAKE = {"type": "take"}


def game(variant: str | None = None, **params: Any) -> Challenge:
    g = make_game("challenge", 2, params, variant)
    assert isinstance(g, Challenge)
    return g


def choose(kind: str, suit: str) -> dict[str, str]:
    return {"type": f"choose_{kind}", "suit": suit}


def hands(state: ChallengeState) -> list[set[str]]:
    return [set(h) for h in state.full_view()["hands"]]


def results(state: ChallengeState) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = state.full_view()["deal_results"]
    return out


SIGMA = str.maketrans("SHCD", "HSDC")


def mirror(hand: set[str]) -> set[str]:
    return {c.translate(SIGMA) for c in hand}


# ----- setup ---------------------------------------------------------------------------------


def test_two_players_only() -> None:
    assert game().players == 2
    with pytest.raises(ConfigError):
        make_game("challenge", 3)


def test_deals_come_in_pairs() -> None:
    with pytest.raises(ConfigError):
        game(deals=3)
    assert game(deals=4).deals == 4


@pytest.mark.parametrize(("lowest", "size"), [(9, 24), (8, 28), (7, 32), (6, 36), (5, 40)])
def test_each_pack_size_deals_mirrored_halves(lowest: int, size: int) -> None:
    for seed in range(5):
        state = game(lowest_rank=lowest).new_state(seed)
        dealer, opponent = hands(state)
        assert len(dealer) == len(opponent) == size // 2
        assert dealer | opponent == set(cards.strs(cards.pack(size)))
        assert opponent == mirror(dealer)


def test_default_pack_is_32_cards() -> None:
    dealer, opponent = hands(game().new_state(0))
    assert len(dealer | opponent) == 32


def test_default_suits() -> None:
    view = game().new_state(0).full_view()
    assert (view["trumps"], view["side_suits"]) == (["S", "H"], ["C", "D"])


def test_deal_procedure_follows_the_first_half_of_the_shuffle() -> None:
    seed = 21
    deck = cards.pack(32)
    deal_rng(seed, 0).shuffle(deck)
    first_half = set(cards.strs(deck[:16]))
    dealer, _ = hands(game().new_state(seed))
    own = {c for c in dealer if c[1] in "SC"}
    assert own == {c for c in first_half if c[1] in "SC"}  # A: kept from the first half
    others = set(cards.strs(cards.pack(32))) - first_half
    rest = {c for c in others if c[1] in "SC"}  # B: the rest of the dealer's suits
    assert dealer == own | mirror(rest)


def test_mirrored_deal_with_other_suits() -> None:
    deck = cards.pack(24)
    random.Random(1).shuffle(deck)
    spades, clubs, diamonds, hearts = 0, 3, 2, 1
    dealer, opponent = mirrored_deal(deck, (spades, clubs, diamonds, hearts))
    d, o = set(cards.strs(cards.unmask(dealer))), set(cards.strs(cards.unmask(opponent)))
    assert o == {c.translate(str.maketrans("SDCH", "DSHC")) for c in d}


def test_second_deal_of_a_pair_swaps_the_seats_over_the_same_cards() -> None:
    state = game(deals=4).new_state(5)
    first = hands(state)
    assert state.full_view()["dealer"] == 0
    while state.deal_index == 0:
        state.apply_action(state.greedy_action())
    assert state.full_view()["dealer"] == 1
    assert hands(state) == [first[1], first[0]]
    assert state.full_view()["trumps"] == ["H", "S"]
    while state.deal_index == 1:
        state.apply_action(state.greedy_action())
    assert hands(state) != first  # the next pair is a new shuffle


def test_choose_variant() -> None:
    state = game("choose").new_state(3)
    assert state.current_player() == 0
    assert len(state.legal_actions()) == 4
    play(state, choose("trump", "D"))
    assert [a["suit"] for a in state.legal_actions_json()] == ["S", "H", "C"]
    assert state.legal_actions_json()[0]["type"] == "choose_side"
    play(state, choose("side", "H"))
    assert state.current_player() == 1
    assert [a["suit"] for a in state.legal_actions_json()] == ["S", "C"]
    play(state, choose("trump", "C"))
    view = state.full_view()
    assert (view["trumps"], view["side_suits"]) == (["D", "C"], ["H", "S"])
    dealer, opponent = hands(state)
    assert opponent == {c.translate(str.maketrans("DCHS", "CDSH")) for c in dealer}
    assert (view["mode"], view["to_move"]) == ("lead", 0)


# ----- play ----------------------------------------------------------------------------------


def test_dealer_leads_first_by_default_and_opponent_in_the_variant() -> None:
    assert game().new_state(0).current_player() == 0
    assert game(first_lead="opponent").new_state(0).current_player() == 1


def test_an_empty_pile_must_be_led_on() -> None:
    state = game().position([["7S", "9D"], ["8H"]], to_move=0)
    assert state.legal_actions_json() == [lead("7S"), lead("9D")]


def test_beat_then_second_card_or_take_the_whole_pile() -> None:
    state = game().position([["7S", "9D", "TC"], ["8H", "JD", "AS"]], pile=["7C", "8D"], to_move=1)
    # Seat 1 (trump H) faces 8D: a higher diamond or any heart beats it; taking is always legal.
    assert state.legal_actions_json() == [beat("8H"), beat("JD"), TAKE]
    play(state, beat("JD"))
    assert state.current_player() == 1
    assert state.legal_actions_json() == [second("AS"), second("8H")]
    play(state, second("AS"))
    assert (state.current_player(), state.full_view()["pile"]) == (0, ["7C", "8D", "JD", "AS"])
    play(state, TAKE)
    assert hands(state)[0] == {"7S", "9D", "TC", "7C", "8D", "JD", "AS"}
    assert state.full_view()["pile"] == []


def test_after_a_take_the_opponent_leads() -> None:
    state = game().position([["7S", "9D"], ["8H", "JD"]], pile=["7C"], to_move=0)
    play(state, TAKE)
    assert (state.current_player(), state.full_view()["mode"]) == (1, "lead")


def test_after_a_take_the_taker_leads_in_the_variant() -> None:
    state = game("taker-leads").position([["7S", "9D"], ["8H", "JD"]], pile=["7C"], to_move=0)
    play(state, TAKE)
    assert (state.current_player(), state.full_view()["mode"]) == (0, "lead")


def test_own_trump_on_top_needs_a_higher_card_of_it() -> None:
    state = game().position(
        [["7S", "9D"], ["8S", "AH", "TS"]], pile=["9S"], to_move=1, trumps=["H", "S"]
    )
    assert state.legal_actions_json() == [beat("TS"), TAKE]


def test_win_by_emptying_the_hand_with_a_second_card() -> None:
    state = game().position([["9C", "7D"], ["9D", "KH", "AC"]], pile=["8C"], to_move=0)
    play(state, beat("9C"), second("7D"))
    assert results(state)[0] == {"deal": 0, "dealer": 0, "winner": 0, "reason": "out"}


def test_win_by_a_last_card_beat_without_a_second_card() -> None:
    state = game().position([["7D", "9S"], ["JS"]], pile=[], to_move=0)
    play(state, lead("9S"))
    play(state, beat("JS"))
    assert results(state)[0]["winner"] == 1
    assert state.deal_index == 1


def test_no_draw_rule_by_default() -> None:
    state = game().position([["7D"], ["9D"]], to_move=0)
    play(state, lead("7D"))
    assert results(state)[0]["winner"] == 0  # 9D would beat, but there is no draw rule


def test_draw_rule_variant() -> None:
    state = game(draw_rule=True).position([["7D"], ["9D"]], to_move=0)
    play(state, lead("7D"))
    assert results(state)[0] == {"deal": 0, "dealer": 0, "winner": None, "reason": "draw"}
    assert state.full_view()["points"] == [0.5, 0.5]


def test_illegal_actions_are_refused() -> None:
    state = game().position([["7S", "9D"], ["8H"]], to_move=0)
    for wire in (TAKE, beat("7S"), lead("8H"), {"type": "pick_up"}):
        with pytest.raises(IllegalActionError):
            state.apply_json(wire)


# ----- guards and scoring --------------------------------------------------------------------

CYCLE_HANDS = [["7C", "KD"], ["9C", "7D", "8C", "AD"]]
# Seat 0 (trump S) leads 7C; seat 1 (trump H) beats with 9C and lays 7D; seat 0 takes; seat 1
# leads 8C; seat 0 beats with 9C and lays 7D; seat 1 takes: the opening position is back.
CYCLE = [lead("7C"), beat("9C"), second("7D"), TAKE, lead("8C"), beat("9C"), second("7D"), TAKE]


def test_third_repetition_is_a_draw() -> None:
    state = game().position(CYCLE_HANDS, to_move=0)
    play(state, *CYCLE)
    assert state.deal_index == 0  # the second occurrence: play goes on
    play(state, *CYCLE)
    assert results(state)[0] == {"deal": 0, "dealer": 0, "winner": None, "reason": "repetition"}


def test_turn_cap_fewer_cards_wins() -> None:
    clubs = ["7C", "8C", "9C", "TC", "JC"]
    state = game(turn_cap=10).position([[*clubs, "QC"], ["AH"]], to_move=0)
    play(state, *[a for c in clubs for a in (lead(c), TAKE)])
    assert results(state)[0] == {"deal": 0, "dealer": 0, "winner": 0, "reason": "turn_cap"}


def test_turn_cap_equal_counts_draw() -> None:
    mine = ["7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC", "7D", "8D", "9D"]
    state = game(turn_cap=10).position([mine, ["AH"]], to_move=0)
    play(state, *[a for c in mine[:5] for a in (lead(c), TAKE)])
    assert results(state)[0]["winner"] is None


def test_default_turn_cap_is_2000() -> None:
    assert game().new_state(0).full_view()["turns_left"] == 2000


def test_match_scoring_win_one_draw_half() -> None:
    state = game(draw_rule=True).position([["7D"], ["8S"]], to_move=0)
    play(state, lead("7D"))  # seat 0 wins deal 0
    assert state.full_view()["points"] == [1.0, 0.0]
    while not state.is_terminal():
        state.apply_action(state.greedy_action())
    result = state.result()
    assert sum(result.scores) == 2.0
    if result.scores[0] == result.scores[1]:
        assert result.ranking == (1, 1)
    else:
        assert result.ranking == ((1, 2) if result.scores[0] > result.scores[1] else (2, 1))
    assert state.current_player() == TERMINAL


# ----- the worked example --------------------------------------------------------------------


def test_worked_example_of_the_rulebook() -> None:
    g = game(lowest_rank=9)
    dealer = ["KS", "QS", "JS", "JC", "TC", "9C", "AD", "TD", "9D", "AH", "KH", "QH"]
    opponent = ["KD", "QD", "JD", "JH", "TH", "9H", "AC", "KC", "QC", "AS", "TS", "9S"]
    state = g.position([dealer, opponent], to_move=0, trumps=["S", "D"], side_suits=["C", "H"])
    assert state.full_view()["side_suits"] == ["C", "H"]
    assert hands(state)[1] == {c.translate(str.maketrans("SDCH", "DSHC")) for c in dealer}
    play(state, lead("TC"))
    play(state, beat("QC"), second("9S"))
    assert [a for a in state.legal_actions_json() if a["type"] == "beat"] == [
        beat("JS"),
        beat("QS"),
        beat("KS"),
    ]
    play(state, beat("JS"), second("9D"))
    play(state, TAKE)
    assert hands(state)[1] >= {"TC", "QC", "9S", "JS", "9D"}
    assert len(hands(state)[1]) == 12 - 2 + 5
    view = state.full_view()
    assert (view["to_move"], view["mode"], view["pile"]) == (0, "lead", [])


# ----- views and properties ------------------------------------------------------------------


def test_everything_is_public() -> None:
    state = game().new_state(4)
    assert state.private_cards(0) == state.private_cards(1) == set()
    obs = state.observation(1)
    assert obs["hands"] == state.full_view()["hands"]
    assert obs["hand"] == obs["hands"][1]
    assert state.observation(None)["hands"] == obs["hands"]


def test_default_action_takes_else_leads_lowest() -> None:
    state = game().position([["9C", "7D", "KS"], ["JC", "8H"]], to_move=0)
    assert state.action_to_json(state.default_action()) == lead("7D")
    play(state, lead("9C"))
    assert state.action_to_json(state.default_action()) == TAKE


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    variant=st.sampled_from(["standard", "choose", "taker-leads", "beginner", "expert"]),
)
def test_random_playouts_conserve_cards_and_replay(seed: int, variant: str) -> None:
    g = game(variant, turn_cap=300)
    state, twin = g.new_state(seed), g.new_state(seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        view = state.full_view()
        if view["mode"] != "choose":
            held = [c for h in view["hands"] for c in h] + view["pile"]
            assert len(held) == len(set(held)) == g.pack_size
        actions = state.legal_actions()
        assert actions == sorted(actions) and actions
        assert state.default_action() in actions and state.greedy_action() in actions
        action = rng.choice(actions)
        assert state.action_from_json(state.action_to_json(action)) == action
        state.apply_action(action)
        twin.apply_action(action)
    assert state.full_view() == twin.full_view()
    assert sum(state.result().scores) == g.deals
