"""Svoi Kozyri: every rule of the rulebook, its edges, the worked example and random playouts."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import cards
from arena.agents import greedy_agent, play_out
from arena.games import make_game
from arena.games.base import TERMINAL, ConfigError, IllegalActionError, deal_rng
from arena.games.svoi_kozyri.game import SvoiKozyri, SvoiKozyriState
from tests.arena.games.wire import beat, lead, play, second

PACK = set(cards.strs(cards.pack(36)))


def game(players: int = 4, variant: str | None = None, **params: Any) -> SvoiKozyri:
    g = make_game("svoi-kozyri", players, params, variant)
    assert isinstance(g, SvoiKozyri)
    return g


PICK = {"type": "pick_up"}


def legal(state: SvoiKozyriState) -> list[dict[str, Any]]:
    return state.legal_actions_json()


def hand(state: SvoiKozyriState, seat: int) -> set[str]:
    return set(state.full_view()["hands"][seat])


def deal_results(state: SvoiKozyriState) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = state.full_view()["deal_results"]
    return results


# ----- setup ---------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_two_to_four_players(players: int) -> None:
    assert game(players).new_state(1).current_player() in range(players)


@pytest.mark.parametrize("players", [1, 5])
def test_other_table_sizes_are_refused(players: int) -> None:
    with pytest.raises(ConfigError):
        game(players)


@pytest.mark.parametrize(("players", "trumps"), [(2, "SH"), (3, "SHD"), (4, "SHDC")])
def test_seat_k_owns_suit_k(players: int, trumps: str) -> None:
    assert game(players).new_state(5).full_view()["trumps"] == list(trumps)


def undo_transfers(state: SvoiKozyriState) -> list[set[str]]:
    """The hands as dealt, before the sixes moved."""
    view = state.full_view()
    hands = [set(h) for h in view["hands"]]
    for event in view["history"]:
        if event["type"] == "transfer":
            hands[event["to"]].remove(event["card"])
            hands[event["from"]].add(event["card"])
    return hands


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_is_one_card_at_a_time_from_the_dealers_left(players: int) -> None:
    seed = 11
    state = game(players).new_state(seed)
    deck = cards.pack(36)
    rng = deal_rng(seed, 0)
    rng.shuffle(deck)
    dealer = rng.randrange(players)
    assert state.full_view()["dealer"] == dealer
    expected: list[set[str]] = [set() for _ in range(players)]
    for i, card in enumerate(deck):
        expected[(dealer + 1 + i) % players].add(cards.to_str(card))
    assert undo_transfers(state) == expected
    assert all(len(h) == 36 // players for h in expected)


def test_first_dealer_is_random_from_the_seed_and_left_of_dealer_leads() -> None:
    dealers: Counter[int] = Counter()
    for seed in range(40):
        view = game(4).new_state(seed).full_view()
        dealers[view["dealer"]] += 1
        assert view["to_move"] == (view["dealer"] + 1) % 4
        assert view["mode"] == "lead"
    assert set(dealers) == {0, 1, 2, 3}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_sixes_go_to_the_owner_of_their_suit(players: int) -> None:
    for seed in range(6):
        state = game(players).new_state(seed)
        view = state.full_view()
        for suit in range(4):
            six = cards.to_str(cards.make(6, suit))
            holder = next(s for s in range(players) if six in view["hands"][s])
            dealt_to = next(s for s, h in enumerate(undo_transfers(state)) if six in h)
            owner = suit if suit < players else dealt_to  # unowned sixes stay put
            assert holder == owner


def test_transfers_are_public_events_and_known_cards() -> None:
    state = game(4).new_state(3)
    transfers = [e for e in state.observation(None)["history"] if e["type"] == "transfer"]
    assert transfers, "seed 3 should move at least one six"
    for event in transfers:
        assert set(event) == {"type", "card", "from", "to"}
        assert event["card"] in state.observation(None)["known"][event["to"]]
        assert event["card"] not in state.private_cards(event["to"])


# ----- play ----------------------------------------------------------------------------------


def test_lead_then_respond_with_beats_or_pick_up() -> None:
    state = game(2).position([["9C", "7D"], ["JC", "6H", "7S", "8C"]], to_move=0)
    assert legal(state) == [lead("7D"), lead("9C")]
    play(state, lead("9C"))
    # Seat 1 (trump H): a higher club or any heart beats; picking up is always allowed.
    assert legal(state) == [beat("6H"), beat("JC"), PICK]


def test_pick_up_is_legal_even_when_one_could_beat() -> None:
    state = game(2).position([["AS", "7D"], ["QC", "KH"]], pile=["9C", "TC"], to_move=1)
    assert PICK in legal(state)
    play(state, PICK)
    assert hand(state, 1) == {"QC", "KH", "9C", "TC"}


def test_beat_then_second_card_are_two_decisions_of_the_same_player() -> None:
    state = game(3).position([["9C", "7D"], ["JC", "8H", "7S"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"), beat("JC"))
    assert state.current_player() == 1
    assert state.full_view()["mode"] == "second"
    assert legal(state) == [second("7S"), second("8H")]
    play(state, second("8H"))
    assert state.current_player() == 2
    assert state.full_view()["pile"] == ["9C", "JC", "8H"]


def test_no_second_decision_when_the_beat_used_the_last_card() -> None:
    state = game(3).position([["9C", "7D"], ["JC"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"), beat("JC"))
    assert state.current_player() == 2
    assert state.full_view()["active"] == [True, False, True]


def test_following_suit_is_never_required() -> None:
    state = game(2).position([["9C", "7D"], ["JC", "6H"]], to_move=0)
    play(state, lead("9C"), beat("6H"))  # a trump, though a higher club was in hand
    assert state.full_view()["mode"] == "second"


def test_illegal_actions_raise_and_change_nothing() -> None:
    state = game(2).position([["9C", "7D"], ["JC", "6H", "5D"]], to_move=0)
    before = state.full_view()
    for wire in (lead("JC"), beat("9C"), PICK, second("9C"), {"type": "choose_trump", "suit": "S"}):
        with pytest.raises(IllegalActionError):
            state.apply_json(wire)
    assert state.full_view() == before


def pick_up_from(pile: list[str], picker_trump: str, variant: str | None = None) -> list[str]:
    """What seat 1 picks up from ``pile``; returns the pile left behind."""
    g = game(2, variant)
    trumps = ["C" if picker_trump != "C" else "D", picker_trump]
    state = g.position([["AC", "AD"], ["5S"]], pile=pile, to_move=1, trumps=trumps)
    play(state, PICK)
    rest: list[str] = state.full_view()["pile"]
    assert hand(state, 1) == {"5S"} | set(pile[len(rest) :])
    return rest


PILE7 = ["7C", "8C", "9C", "TC", "JC", "QC", "KC"]


def test_plain_top_card_picks_up_three() -> None:
    assert pick_up_from([*PILE7, "9H"], "S") == PILE7[:5]


def test_own_trump_top_card_picks_up_five() -> None:
    assert pick_up_from([*PILE7, "9S"], "S") == PILE7[:3]


def test_ace_of_own_trump_picks_up_the_whole_pile() -> None:
    assert pick_up_from([*PILE7, "AS"], "S") == []


def test_a_pile_smaller_than_the_count_is_taken_whole() -> None:
    assert pick_up_from(["7C", "9H"], "S") == []
    assert pick_up_from(["7C", "8C", "9C", "9S"], "S") == []


def test_classic_variant_always_takes_the_whole_pile() -> None:
    assert pick_up_from([*PILE7, "9H"], "S", variant="classic") == []


def test_pick_up_counts_are_parameters() -> None:
    g = game(2, pickup_plain=1, pickup_own_trump=2, pickup_own_trump_ace=4)
    assert g.pickup_counts == (1, 2, 4)
    state = g.position([["AC", "AD"], ["5S"]], pile=PILE7, to_move=1, trumps=["D", "S"])
    play(state, PICK)
    assert state.full_view()["pile"] == PILE7[:-1]


def test_after_a_pick_up_the_next_player_faces_the_new_top() -> None:
    state = game(3).position(
        [["AC"], ["5S", "6S"], ["8C", "KH"]], pile=["7C", "9C", "TD", "QD"], to_move=1
    )
    play(state, PICK)
    view = state.full_view()
    assert (view["to_move"], view["mode"], view["pile"]) == (2, "respond", ["7C"])
    assert legal(state) == [beat("8C"), PICK]


def test_after_the_whole_pile_is_picked_up_the_next_player_leads() -> None:
    state = game(3).position([["AC"], ["5S", "6S"], ["8C", "KH"]], pile=["TH", "QH"], to_move=1)
    play(state, PICK)
    assert (state.full_view()["mode"], state.current_player()) == ("lead", 2)


def test_players_out_of_cards_are_skipped() -> None:
    state = game(4).position([["9C"], [], ["JC", "7D"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"))
    assert state.current_player() == 2  # seat 1 is out


def test_going_out_on_a_beat_lets_the_next_player_lead_or_beat_but_not_pick_up() -> None:
    state = game(4).position([["9C", "7D"], ["JC"], ["QC", "8H"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"), beat("JC"))
    view = state.full_view()
    assert (view["to_move"], view["mode"]) == (2, "lead_after_exit")
    assert legal(state) == [lead("8H"), lead("QC"), beat("QC")]  # seat 2's trump is D
    play(state, lead("8H"))  # laid on top of JC; the next player responds as usual
    assert state.full_view()["pile"] == ["9C", "JC", "8H"]
    assert (state.current_player(), PICK in legal(state)) == (3, True)


def test_going_out_on_a_beat_twice_in_a_row() -> None:
    state = game(4).position([["9C", "7D"], ["JC"], ["QC"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"), beat("JC"), beat("QC"))  # two others are still left each time
    assert state.full_view()["active"] == [True, False, False, True]
    assert state.full_view()["mode"] == "lead_after_exit"
    assert state.current_player() == 3


def test_exit_beat_next_lead_only_variant() -> None:
    g = game(4, exit_beat_next="lead_only")
    state = g.position([["9C", "7D"], ["JC"], ["QC", "8H"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"), beat("JC"))
    assert legal(state) == [lead("8H"), lead("QC")]


def test_going_out_on_a_second_card_is_an_ordinary_turn_for_the_next() -> None:
    state = game(4).position([["9C", "7D"], ["JC", "8H"], ["QC", "9H"], ["AD", "KD"]], to_move=0)
    play(state, lead("9C"), beat("JC"), second("8H"))
    assert state.full_view()["mode"] == "respond"
    assert PICK in legal(state)


# ----- the end of a deal ---------------------------------------------------------------------


def test_a_lone_player_with_many_cards_loses() -> None:
    state = game(2, deals=2).position([["9C"], ["7C", "8D", "TH"]], to_move=0, dealer=1)
    play(state, lead("9C"))
    assert deal_results(state) == [{"deal": 0, "dealer": 1, "loser": 1, "reason": "out"}]
    assert state.full_view()["fools"] == [0, 1]
    assert state.full_view()["dealer"] == 1  # the loser deals the next deal
    assert state.deal_index == 1


def draw_position(last: list[str], **params: Any) -> SvoiKozyriState:
    """Seat 0 sheds its last card (9C); seat 1 (trump H) is left with ``last``."""
    return game(2, deals=2, **params).position([["9C"], last], to_move=0, dealer=0)


def test_draw_when_the_last_single_card_beats_the_top() -> None:
    for last in (["JC"], ["6H"]):
        state = draw_position(last)
        play(state, lead("9C"))
        assert deal_results(state)[0]["loser"] is None
        assert deal_results(state)[0]["reason"] == "draw"
        assert state.full_view()["fools"] == [0, 0]
        assert state.full_view()["dealer"] == 0  # after a draw the same dealer deals again


def test_no_draw_when_the_single_card_cannot_beat_or_there_are_two() -> None:
    for last in (["7C"], ["AD"], ["JC", "QC"]):
        state = draw_position(last)
        play(state, lead("9C"))
        assert deal_results(state)[0]["loser"] == 1


def test_draw_rule_can_be_switched_off() -> None:
    state = draw_position(["JC"], draw_rule=False)
    play(state, lead("9C"))
    assert deal_results(state)[0]["loser"] == 1


def test_draw_test_uses_the_second_card_as_top() -> None:
    state = game(2, deals=2).position([["9C", "8D"], ["JC"]], pile=["7C"], to_move=0)
    play(state, beat("9C"), second("8D"))
    assert deal_results(state)[0]["reason"] == "out"  # JC cannot beat 8D for trump H
    state = game(2, deals=2).position([["9C", "8D"], ["9D"]], pile=["7C"], to_move=0)
    play(state, beat("9C"), second("8D"))
    assert deal_results(state)[0]["reason"] == "draw"


def test_draw_test_uses_a_last_card_beat_as_top() -> None:
    state = game(3, deals=2).position([["9C"], ["JC"], ["QC"]], pile=["7C"], to_move=0)
    play(state, beat("9C"))
    # Seat 0 went out on a beat with two others left: seat 1 may beat with its last card.
    play(state, beat("JC"))
    assert deal_results(state)[0] == {"deal": 0, "dealer": 2, "loser": None, "reason": "draw"}


def play_until_deal_ends(state: SvoiKozyriState, actions: list[dict[str, Any]]) -> None:
    for wire in actions:
        assert state.deal_index == 0
        state.apply_json(wire)


def test_turn_cap_the_player_with_most_cards_loses() -> None:
    clubs = ["7C", "8C", "9C", "TC", "JC"]
    state = game(2, deals=2, turn_cap=10).position([[*clubs, "QC"], ["AH"]], to_move=0)
    play_until_deal_ends(state, [a for c in clubs for a in (lead(c), PICK)])
    assert deal_results(state)[0]["reason"] == "turn_cap"
    assert deal_results(state)[0]["loser"] == 1  # 6 cards against 1


def test_turn_cap_tie_for_most_is_a_draw() -> None:
    mine = ["7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC", "7D", "8D", "9D"]
    state = game(2, deals=2, turn_cap=10).position([mine, ["AH"]], to_move=0)
    play_until_deal_ends(state, [a for c in mine[:5] for a in (lead(c), PICK)])
    assert deal_results(state)[0] == {"deal": 0, "dealer": 1, "loser": None, "reason": "turn_cap"}


def test_turn_cap_counts_down_in_the_observation() -> None:
    state = game(2).position([["7C", "8C"], ["AH", "KH"]], to_move=0)
    before = state.observation(0)["turns_left"]
    play(state, lead("7C"))
    assert state.observation(0)["turns_left"] == before - 1 == 999


def position_key(view: dict[str, Any]) -> tuple[Any, ...]:
    return (tuple(map(tuple, view["hands"])), tuple(view["pile"]), view["to_move"], view["mode"])


CYCLE_HANDS = [["7C", "KD"], ["9C", "7D", "8C", "AD"]]
# Seat 0 leads 7C; seat 1 beats with 9C and lays 7D; seat 0 picks up all three; seat 1 leads 8C;
# seat 0 beats with 9C and lays 7D; seat 1 picks up all three: the opening position is back.
CYCLE = [lead("7C"), beat("9C"), second("7D"), PICK, lead("8C"), beat("9C"), second("7D"), PICK]


def test_third_repetition_ends_the_deal_with_most_cards_losing() -> None:
    state = game(2, deals=2).position(CYCLE_HANDS, to_move=0)
    play_until_deal_ends(state, CYCLE)
    assert state.deal_index == 0  # second occurrence: play goes on
    play_until_deal_ends(state, CYCLE)
    assert deal_results(state)[0] == {"deal": 0, "dealer": 1, "loser": 1, "reason": "repetition"}


def test_repetition_is_detected_exactly_at_the_third_occurrence() -> None:
    g = game(2, deals=1)
    endings: Counter[str] = Counter()
    # Mostly follow the cycle, sometimes stray: positions repeat in many different ways.
    for seed in range(40):
        state = g.position(CYCLE_HANDS, to_move=0)
        rng = random.Random(seed)
        seen: Counter[tuple[Any, ...]] = Counter()
        seen[position_key(state.full_view())] += 1
        step = 0
        while not state.is_terminal():
            scripted = state.action_from_json(CYCLE[step % len(CYCLE)])
            options = state.legal_actions()
            sticks = scripted in options and rng.random() < 0.9
            state.apply_action(scripted if sticks else rng.choice(options))
            step += 1
            view = state.full_view()
            if state.is_terminal():
                break
            seen[position_key(view)] += 1
            assert max(seen.values()) < 3
        ending = view["deal_results"][0]
        endings[ending["reason"]] += 1
        if ending["reason"] == "repetition":
            # The move recreated, for the third time, a position seen twice (the terminal view
            # no longer shows who was to move, so compare the cards).
            cards_now = position_key(view)[:2]
            assert any(k[:2] == cards_now and n == 2 for k, n in seen.items())
            counts = [len(h) for h in view["hands"]]
            most = max(counts)
            assert ending["loser"] == (counts.index(most) if counts.count(most) == 1 else None)
    assert endings["repetition"] > 0


# ----- trump choice --------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_choose_variant_players_pick_in_turn_from_the_dealers_left(players: int) -> None:
    state = game(players, variant="choose").new_state(4)
    dealer = state.full_view()["dealer"]
    assert state.full_view()["mode"] == "choose_trump"
    order, picks = [], ["C", "D", "H", "S"]
    for pick in picks[:players]:
        order.append(state.current_player())
        options = [a["suit"] for a in legal(state)]
        assert pick in options and len(options) == 4 - len(order) + 1
        play(state, {"type": "choose_trump", "suit": pick})
    assert order == [(dealer + 1 + k) % players for k in range(players)]
    trumps = state.full_view()["trumps"]
    assert [trumps[s] for s in order] == picks[:players]
    assert state.full_view()["mode"] == "lead"
    assert state.current_player() == (dealer + 1) % players


def test_choose_variant_hides_hands_until_trumps_are_chosen() -> None:
    state = game(3, variant="choose").new_state(8)
    seat = state.current_player()
    assert state.observation(seat)["hand"] == []
    assert state.observation(seat)["trumps"] == [None, None, None]


def test_choose_variant_sixes_follow_the_chosen_trumps() -> None:
    state = game(2, variant="choose").new_state(2)
    play(state, {"type": "choose_trump", "suit": "C"}, {"type": "choose_trump", "suit": "D"})
    view = state.full_view()
    first = (view["dealer"] + 1) % 2
    assert "6C" in view["hands"][first]
    assert "6D" in view["hands"][1 - first]


# ----- the worked example --------------------------------------------------------------------


def test_worked_example_of_the_rulebook() -> None:
    n, e, s, w = 0, 1, 2, 3
    state = game(4).position(
        [
            ["7S", "AH", "KC"],
            ["9C", "TH", "8S", "QS"],
            ["JC", "7H", "9S", "QD", "AD"],
            ["6C", "KD", "8D"],
        ],
        to_move=e,
        dealer=n,
        trumps=["S", "H", "D", "C"],
    )
    play(state, lead("9C"))
    play(state, beat("JC"), second("7H"))
    assert state.current_player() == w
    play(state, beat("6C"), second("KD"))
    assert state.current_player() == n
    play(state, PICK)
    assert hand(state, n) >= {"KD", "6C", "7H"}
    assert state.full_view()["pile"] == ["9C", "JC"]
    play(state, beat("TH"), second("8S"))
    play(state, beat("9S"), second("QD"))
    play(state, PICK)
    assert hand(state, w) >= {"QD", "9S", "8S"}
    assert state.full_view()["pile"] == ["9C", "JC", "TH"]
    play(state, beat("7S"), second("AH"))
    assert state.current_player() == e
    assert [a for a in legal(state) if a["type"] == "beat"] == []
    play(state, PICK)
    assert hand(state, e) == {"QS", "9C", "JC", "TH", "7S", "AH"}
    view = state.full_view()
    assert (view["pile"], view["to_move"], view["mode"]) == ([], s, "lead")


# ----- match ---------------------------------------------------------------------------------


def test_match_of_n_deals_ranks_by_fewest_fools() -> None:
    g = game(4, deals=3)
    state = g.new_state(9)
    play_out(state, [greedy_agent] * 4, random.Random(0))
    result = state.result()
    fools = result.detail["fools"]
    assert sum(fools) == sum(1 for d in result.detail["deals"] if d["loser"] is not None)
    assert len(result.detail["deals"]) == 3
    for seat in range(4):
        better = sum(1 for f in fools if f < fools[seat])
        assert result.ranking[seat] == 1 + better
    assert state.current_player() == TERMINAL and state.legal_actions() == []


def test_tied_fools_share_a_place() -> None:
    state = game(3, deals=1).position([["9C"], ["7C", "8D"], ["TH"]], to_move=0)
    play(state, lead("9C"), PICK, lead("TH"))  # seat 2 goes out; seat 1 is the fool
    assert state.result().ranking == (1, 3, 1)
    assert state.result().detail["fools"] == [0, 1, 0]
    drawn = game(2, deals=1).position([["9C"], ["JC"]], to_move=0)
    play(drawn, lead("9C"))
    assert drawn.result().ranking == (1, 1)


def test_default_action_picks_up_else_leads_lowest() -> None:
    state = game(2).position([["9C", "7D", "KS"], ["JC", "6H"]], to_move=0)
    assert state.action_to_json(state.default_action()) == lead("7D")
    play(state, lead("9C"))
    assert state.action_to_json(state.default_action()) == PICK
    play(state, beat("JC"))
    assert state.action_to_json(state.default_action()) == second("6H")


def test_greedy_beats_cheaply_and_sheds_low_side_cards() -> None:
    g = game(2)
    state = g.position([["9C", "7S", "KS"], ["JC", "QC", "6H", "7H", "8D"]], to_move=0)
    rng = random.Random(0)
    assert state.action_to_json(g.greedy_action(state, rng)) == lead("9C")  # 7S is its trump
    play(state, lead("9C"))
    assert state.action_to_json(g.greedy_action(state, rng)) == beat("JC")
    play(state, beat("JC"))
    assert state.action_to_json(g.greedy_action(state, rng)) == second("8D")


def test_greedy_picks_up_only_when_it_cannot_beat() -> None:
    g = game(2)
    state = g.position([["AS"], ["JC", "QC"]], pile=["9S"], to_move=1)
    assert state.action_to_json(g.greedy_action(state, random.Random(0))) == PICK


def test_greedy_deals_are_short() -> None:
    g = game(4, deals=20)
    state = g.new_state(1)
    actions = play_out(state, [greedy_agent] * 4, random.Random(1))
    assert len(actions) / 20 < 120  # beats and second cards are separate decisions


# ----- observation ---------------------------------------------------------------------------


def test_observation_fields() -> None:
    state = game(4).new_state(2)
    obs = state.observation(1)
    for key in (
        "game",
        "deal",
        "dealer",
        "to_move",
        "hand",
        "hand_counts",
        "trumps",
        "active",
        "pile",
        "mode",
        "history",
        "fools",
        "turns_left",
        "known",
    ):
        assert key in obs
    assert set(obs["hand"]) == hand(state, 1)
    assert "hand" not in state.observation(None)
    assert "hands" not in obs


def test_picked_up_cards_are_public() -> None:
    state = game(3).position(
        [["AC", "KC"], ["5S", "6S"], ["8C", "KH"]], pile=["TH", "QH"], to_move=1
    )
    assert state.private_cards(1) == {"5S", "6S"}
    play(state, PICK)
    assert state.private_cards(1) == {"5S", "6S"}
    assert set(state.observation(2)["known"][1]) == {"TH", "QH"}
    assert state.observation(2)["history"][-1] == {
        "type": "pick_up",
        "seat": 1,
        "cards": ["TH", "QH"],
    }


def test_a_known_card_stops_being_known_once_played() -> None:
    state = game(3).position(
        [["AC", "KC"], ["5S", "6S"], ["8C", "KH"]], pile=["TH", "QH"], to_move=1
    )
    play(state, PICK, lead("8C"), beat("KC"), second("AC"), beat("TH"))
    assert state.observation(2)["known"][1] == ["QH"]
    assert state.private_cards(1) == {"5S", "6S"}


# ----- properties over random playouts -------------------------------------------------------


def check_invariants(state: SvoiKozyriState) -> None:
    view = state.full_view()
    held = [c for h in view["hands"] for c in h] + view["pile"]
    assert len(held) == 36 and set(held) == PACK
    assert view["hand_counts"] == [len(h) for h in view["hands"]]
    for seat in range(state.game.players):
        obs = state.observation(seat)
        text = repr(obs)
        for other in range(state.game.players):
            if other != seat:
                for card in state.private_cards(other):
                    assert f"'{card}'" not in text
        assert state.private_cards(seat) <= set(obs["hand"])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    players=st.integers(min_value=2, max_value=4),
    variant=st.sampled_from(["modern", "classic", "choose"]),
    exit_rule=st.sampled_from(["lead_or_beat", "lead_only"]),
)
def test_random_playouts_conserve_cards_and_never_leak(
    seed: int, players: int, variant: str, exit_rule: str
) -> None:
    g = game(players, variant, deals=2, turn_cap=150, exit_beat_next=exit_rule)
    state = g.new_state(seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.full_view()["mode"] != "choose_trump":
            check_invariants(state)
        actions = state.legal_actions()
        assert actions == sorted(actions) and actions
        assert state.default_action() in actions
        assert state.greedy_action() in actions
        action = rng.choice(actions)
        assert state.action_from_json(state.action_to_json(action)) == action
        state.apply_action(action)
    assert len(state.result().ranking) == players


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), players=st.integers(2, 4))
def test_same_seed_and_actions_replay_the_same_match(seed: int, players: int) -> None:
    g = game(players, deals=3, turn_cap=200)
    a, b = g.new_state(seed), g.new_state(seed)
    rng = random.Random(seed)
    while not a.is_terminal():
        action = rng.choice(a.legal_actions())
        a.apply_action(action)
        b.apply_action(action)
    assert a.full_view() == b.full_view()
    assert a.result() == b.result()


def test_random_playouts_terminate_at_default_settings() -> None:
    state = game(4, deals=2).new_state(7)
    rng = random.Random(7)
    steps = 0
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
        steps += 1
    assert steps <= 2 * 1000


def test_clone_is_independent() -> None:
    state = game(3).new_state(1)
    copy = state.clone()
    state.apply_action(state.legal_actions()[0])
    assert copy.full_view() != state.full_view()
    assert copy.full_view() == game(3).new_state(1).full_view()
