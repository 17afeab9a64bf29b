"""Kozyr Boys (Réunion): the rulebook's example, one test per rule and decision, hidden cards."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import cards
from arena.agents import greedy_agent, play_out, random_agent
from arena.games import make_game
from arena.games.base import TERMINAL, IllegalActionError
from arena.games.kozyr_boys.game import KozyrBoys, KozyrBoysState
from arena.games.kozyr_boys.rules import (
    Trumps,
    deal_points,
    deal_units,
    discard_pairs,
    final_units,
)
from tests.arena.games.samples import sample_match
from tests.arena.games.wire import play_cards as play

P0, P1, P2 = range(3)
HEARTS = Trumps(cards.HEARTS)


def game(variant: str | None = None, **params: object) -> KozyrBoys:
    made = make_game("kozyr-boys", params=params, variant=variant)
    assert isinstance(made, KozyrBoys)
    return made


def legal_cards(state: KozyrBoysState) -> set[str]:
    return {a["card"] for a in state.legal_actions_json()}


def parsed(*names: str) -> list[int]:
    return [cards.parse(n) for n in names]


# ---- the worked example ----------------------------------------------------------------------


def example() -> KozyrBoysState:
    """Trumps hearts (9H turned), P0 deals and has discarded KC and QS; P1 leads."""
    return game().position(
        [["JD", "9H", "8D"], ["AS", "KD", "7D"], ["7H", "QD", "TC"]],
        turned="9H",
        dealer=P0,
        discards=["KC", "QS"],
    )


def test_example_a_void_player_must_trump_and_the_left_bower_wins() -> None:
    state = example()
    assert state.current_player() == P1
    play(state, "AS")
    assert legal_cards(state) == {"7H"}
    play(state, "7H")
    assert legal_cards(state) == {"JD", "9H"}
    play(state, "JD")
    assert state.tricks[0].winner == P0
    assert state.card_points() == [23, 0, 0]


def test_example_the_left_bower_is_not_a_diamond() -> None:
    state = example()
    play(state, "AS", "7H", "JD")
    play(state, "8D")
    assert legal_cards(state) == {"KD", "7D"}
    state = game().position(
        [["JD", "9H", "8S"], ["KD", "AS", "7S"], ["7H", "QC", "TC"]], "9H", P0, ["KC", "QS"]
    )
    play(state, "KD", "7H")
    assert legal_cards(state) == {"JD", "9H"}


def test_example_deal_result() -> None:
    assert deal_points([4, 6, 0], [63, 70, 0], last=P1, dealer=P0, discard=7) == [85, 95, -30]


# ---- cards and values ------------------------------------------------------------------------


def test_the_bowers_top_the_trumps_then_a_t_k_q_9_8_7() -> None:
    order = parsed("JH", "JD", "AH", "TH", "KH", "QH", "9H", "8H", "7H")
    assert sorted(order, key=HEARTS.strength, reverse=True) == order
    plain = parsed("AS", "TS", "KS", "QS", "JS", "9S", "8S", "7S")
    assert sorted(plain, key=HEARTS.strength, reverse=True) == plain


def test_left_bowers_pair_by_colour() -> None:
    assert [cards.to_str(Trumps(s).left) for s in range(4)] == ["JC", "JD", "JH", "JS"]


def test_card_points_add_up_to_140_and_150_with_the_last_trick() -> None:
    values = {cards.to_str(c): HEARTS.points(c) for c in cards.pack(32)}
    assert values["JH"] == values["JD"] == 12
    assert (values["AS"], values["TS"], values["KS"], values["QS"], values["JS"]) == (
        11,
        10,
        4,
        3,
        2,
    )
    assert values["9S"] == values["8C"] == values["7H"] == 0
    assert sum(values.values()) == 140


def test_the_highest_trump_wins_otherwise_the_highest_of_the_led_suit() -> None:
    assert HEARTS.winner(parsed("AS", "7H", "TS")) == 1
    assert HEARTS.winner(parsed("AS", "7H", "JD")) == 2
    assert HEARTS.winner(parsed("KS", "AC", "TS")) == 2
    assert HEARTS.winner(parsed("JD", "AH", "JH")) == 2


# ---- deal and discard -------------------------------------------------------------------------


def test_deal_3_4_3_leaves_two_cards_for_the_dealer() -> None:
    state = game().new_state(42)
    view = state.full_view()
    dealer = state.dealer
    assert [len(h) for h in view["hands"]] == [12 if s == dealer else 10 for s in range(3)]
    assert set(view["leftover"]) <= set(view["hands"][dealer])
    assert view["turned"] == view["leftover"][0] and view["trumps"] == view["turned"][1]
    dealt = [c for h in view["hands"] for c in h]
    assert sorted(dealt) == sorted(cards.strs(cards.pack(32)))


def test_the_first_dealer_is_drawn_and_each_player_deals_once() -> None:
    firsts = set()
    for seed in range(12):
        state = game().new_state(seed)
        firsts.add(state.dealer)
        dealers = []
        while not state.is_terminal():
            if state.deal_index == len(dealers):
                dealers.append(state.dealer)
            state.apply_action(state.default_action())
        assert sorted(dealers) == [0, 1, 2]
        assert dealers[1] == (dealers[0] + 1) % 3
    assert firsts == {0, 1, 2}


def test_the_dealer_discards_first_then_his_left_neighbour_leads() -> None:
    state = game().new_state(3)
    assert state.current_player() == state.dealer and state.phase == "discard"
    state.apply_action(state.default_action())
    assert state.current_player() == (state.dealer + 1) % 3
    assert len(state.hands[state.dealer]) == 10 and len(state.discards) == 2


SEED_HAND = ["AS", "JH", "JD", "AH", "9H", "KC", "QS", "8S", "7D", "TC", "AD", "KH"]


def pair_names(hand: list[str], rule: str) -> set[frozenset[str]]:
    return {frozenset(cards.strs(p)) for p in discard_pairs(parsed(*hand), HEARTS, rule)}


def test_discard_seed_rule_forbids_aces_and_trumps() -> None:
    allowed = set().union(*pair_names(SEED_HAND, "seed"))
    assert allowed == {"KC", "QS", "8S", "7D", "TC"}


def test_discard_seed_rule_falls_back_to_minor_trumps() -> None:
    hand = ["AS", "AC", "AD", "AH", "JH", "JD", "KH", "QH", "9H", "8H", "7H", "TC"]
    allowed = set().union(*pair_names(hand, "seed"))
    assert allowed == {"TC", "KH", "QH", "9H", "8H", "7H"}


def test_discard_variant_forbids_aces_and_bowers_only() -> None:
    allowed = set().union(*pair_names(SEED_HAND, "no_aces_bowers"))
    assert allowed == {"KC", "QS", "8S", "7D", "TC", "9H", "KH"}


def test_discard_variant_allows_at_most_one_ten() -> None:
    hand = ["TS", "TH", "AD", "AH", "JH", "JD", "KH", "AC", "9H", "8H", "7H", "TC"]
    pairs = pair_names(hand, "one_ten")
    assert frozenset({"TS", "TC"}) not in pairs and frozenset({"TS", "KH"}) in pairs
    assert frozenset({"TS", "TC"}) in pair_names(hand, "no_aces_bowers")


def test_discard_action_wire_form_and_illegal_discards() -> None:
    state = game().position([SEED_HAND, [], []], turned="9H", dealer=P0)
    action = state.action_from_json({"type": "discard", "cards": ["QS", "KC"]})
    assert action in state.legal_actions()
    assert state.action_to_json(action) == {"type": "discard", "cards": ["QS", "KC"]}
    for bad in (["AS", "KC"], ["JD", "KC"]):
        with pytest.raises(IllegalActionError):
            state.apply_json({"type": "discard", "cards": bad})
    for malformed in (["KC"], ["KC", "KC"], ["KC", "ZZ"], "KC"):
        with pytest.raises(IllegalActionError):
            state.action_from_json({"type": "discard", "cards": malformed})


def test_default_discard_is_the_two_lowest_point_legal_cards() -> None:
    state = game().position([SEED_HAND, [], []], turned="9H", dealer=P0)
    assert state.action_to_json(state.default_action()) == {
        "type": "discard",
        "cards": ["8S", "7D"],
    }


# ---- play ------------------------------------------------------------------------------------


def test_must_follow_suit_then_must_trump_then_anything() -> None:
    state = game().position(
        [["AS", "KS", "QC"], ["8S", "7H", "TC"], ["9D", "8D", "AC"]], "9H", P2, ["KC", "QS"]
    )
    assert state.current_player() == P0
    play(state, "KS")
    assert legal_cards(state) == {"8S"}
    play(state, "8S")
    assert legal_cards(state) == {"9D", "8D", "AC"}


def test_no_duty_to_overtrump() -> None:
    state = game().position(
        [["AS", "KS", "QC"], ["AH", "7H", "TC"], ["8H", "8D", "AC"]], "9H", P2, ["KC", "QS"]
    )
    play(state, "AS", "AH")
    assert legal_cards(state) == {"8H"}
    state = game().position(
        [["AS", "KS", "QC"], ["8C", "7H", "TC"], ["8H", "8D", "AC"]], "9H", P2, ["KC", "QS"]
    )
    play(state, "AS")
    assert legal_cards(state) == {"7H"}


def test_the_turned_card_is_public_but_the_second_leftover_is_the_dealers_alone() -> None:
    state = game().new_state(17)
    dealer = state.dealer
    turned, second = state.full_view()["leftover"]
    for seat in (None, (dealer + 1) % 3, (dealer + 2) % 3):
        obs = state.observation(seat)
        assert obs["turned"] == turned
        assert second not in str(obs) and "leftover" not in obs
    assert state.observation(dealer)["leftover"] == [turned, second]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000), variant=st.sampled_from([None, "aces-bowers", "one-ten"]))
def test_the_dealers_discards_never_reach_another_seat(seed: int, variant: str | None) -> None:
    state = game(variant).new_state(seed)
    rng = random.Random(seed)
    state.apply_action(rng.choice(state.legal_actions()))
    discards = state.full_view()["discards"]
    hidden = set(discards) | {state.full_view()["leftover"][1]}
    while not state.is_terminal() and state.deal_index == 0:
        for seat in (None, *[s for s in range(3) if s != state.dealer]):
            obs = state.observation(seat)
            del obs["bowers"]  # names the two jacks as a rule fact, not where they are
            text = str(obs)
            assert not {c for c in hidden if c in text} - played_cards(state)
        assert state.observation(state.dealer)["discards"] == discards
        state.apply_action(rng.choice(state.legal_actions()))


def played_cards(state: KozyrBoysState) -> set[str]:
    plays = [*state.trick.plays] + [p for t in state.tricks for p in t.plays]
    return {cards.to_str(p.card) for p in plays} | {cards.to_str(state.turned)}


def test_private_cards_exclude_the_turned_card_and_include_the_discards() -> None:
    state = game().position([SEED_HAND, [], []], turned="9H", dealer=P0)
    assert "9H" not in state.private_cards(P0) and "AS" in state.private_cards(P0)
    state.apply_json({"type": "discard", "cards": ["QS", "KC"]})
    assert {"QS", "KC"} <= state.private_cards(P0)


# ---- scoring and the match -------------------------------------------------------------------


def test_last_trick_bonus_and_discard_to_the_dealer() -> None:
    assert deal_points([5, 3, 2], [60, 40, 33], last=P2, dealer=P1, discard=7) == [60, 47, 43]


def test_a_dealer_without_a_trick_loses_his_discard_and_pays() -> None:
    assert deal_points([6, 0, 4], [80, 0, 53], last=P0, dealer=P1, discard=7) == [105, -30, 68]


def test_two_players_without_a_trick_pay_pair_by_pair() -> None:
    assert deal_points([0, 10, 0], [0, 133, 0], last=P1, dealer=P0, discard=7) == [-15, 173, -15]


def test_a_played_deal_scores_to_the_card_total() -> None:
    state = game().new_state(5)
    dealer = state.dealer
    play_out_deal(state)
    record = state.deals[0]
    lost = 0 if record.tricks[dealer] else record.discard_points
    assert sum(record.points) == 150 - lost
    assert state.scores == record.points and state.deal_index == 1


def play_out_deal(state: KozyrBoysState) -> None:
    while state.deal_index == 0:
        state.apply_action(state.default_action())


def test_the_match_is_three_deals_and_ties_share() -> None:
    state = game().new_state(6)
    play_out(state, [greedy_agent, random_agent, greedy_agent], random.Random(6))
    assert state.is_terminal() and state.current_player() == TERMINAL
    assert len(state.deals) == 3
    assert list(state.result().scores) == [
        float(sum(col)) for col in zip(*(d.points for d in state.deals), strict=True)
    ]
    rounds = game(rounds=2).new_state(6)
    play_out(rounds, [random_agent] * 3, random.Random(6))
    assert len(rounds.deals) == 6


def test_the_default_play_is_the_lowest_legal_card() -> None:
    state = game().position(
        [["AS", "KS", "7S"], ["8S", "7H", "TC"], ["9D", "8D", "AC"]], "9H", P2, ["KC", "QS"]
    )
    assert state.action_to_json(state.default_action()) == {"type": "play", "card": "7S"}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1_000_000))
def test_random_matches_conserve_cards_and_points(seed: int) -> None:
    state = game().new_state(seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        view = state.full_view()
        where = [c for h in view["hands"] for c in h] + view["discards"]
        where += [p["card"] for t in [*view["tricks"], view["trick"]] for p in t["cards"]]
        assert sorted(where) == sorted(cards.strs(cards.pack(32)))
        state.apply_action(rng.choice(state.legal_actions()))
    for record in state.deals:
        lost = 0 if record.tricks[record.dealer] else record.discard_points
        assert sum(record.points) == 150 - lost


def test_same_seed_and_actions_replay_the_same_match() -> None:
    first, second = game().new_state(99), game().new_state(99)
    actions = play_out(first, [greedy_agent, random_agent, random_agent], random.Random(3))
    for action in actions:
        second.apply_action(action)
    assert first.full_view() == second.full_view()


def test_a_discarded_turned_card_stays_public_and_out_of_the_private_cards() -> None:
    state = game("aces-bowers").position([SEED_HAND, [], []], turned="9H", dealer=P0)
    state.apply_json({"type": "discard", "cards": ["9H", "KC"]})
    assert state.discards == parsed("9H", "KC")
    assert state.private_cards(P0) >= {"KC"} and "9H" not in state.private_cards(P0)
    assert state.observation(P1)["turned"] == "9H"


# ---- sample bots ---------------------------------------------------------------------------


def test_sample_bots_play_a_match_as_real_processes() -> None:
    _, kinds = sample_match(game(), 8)
    assert kinds == {"discard", "play"}


# ---- the units settlement -------------------------------------------------------------------


def test_units_a_trickless_player_pays_each_other_player_a_unit() -> None:
    assert deal_units([0, 6, 4], []) == [-2, 1, 1]
    assert deal_units([0, 10, 0], []) == [-1, 2, -1]


def test_units_losing_the_left_bower_to_the_right_bower_costs_a_unit() -> None:
    assert deal_units([3, 3, 4], [(2, 0)]) == [-1, 0, 1]


def test_units_end_of_match_payments_go_to_the_winner() -> None:
    assert final_units([250, 149, 51]) == [3.0, -1.0, -2.0]
    assert final_units([300, 99, 49]) == [5.0, -2.0, -3.0]
    assert final_units([450, 0, 150]) == [4.0, -4.0, 0.0]
    assert final_units([200, 200, 50]) == [1.0, 1.0, -2.0]


def test_units_the_no_trick_payment_is_in_units_not_points() -> None:
    assert deal_points([6, 0, 4], [80, 0, 53], 0, 1, 7, no_trick_points=False) == [90, 0, 53]


def test_units_right_bower_capturing_the_left_is_recorded() -> None:
    state = game("units").position(
        [["JH", "9H", "8S"], ["JD", "AS", "7S"], ["7H", "QC", "TC"]], "9H", P2, ["KC", "QS"]
    )
    play(state, "JH", "JD", "7H")
    assert state.captures == [(P0, P1)]


def test_units_decide_the_match_and_points_go_to_the_detail() -> None:
    state = game("units").new_state(12)
    play_out(state, [greedy_agent, random_agent, greedy_agent], random.Random(12))
    result = state.result()
    assert result.detail["points"] == state.scores
    assert sum(result.scores) == 0
    assert list(result.scores) == state.observation(None)["units"]
    assert "units" not in game().new_state(12).observation(None)
