"""Svara: hand values, the betting rules, svaras, hidden information and chip conservation."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import cards
from arena.games import make_game
from arena.games.base import TERMINAL, ConfigError, IllegalActionError
from arena.games.svara.game import (
    CALL,
    DECLINE,
    FOLD,
    JOIN,
    LOOK,
    SHOW,
    Phase,
    Svara,
    SvaraState,
)
from arena.games.svara.hands import CLASSIC, HandRules, hand_value, points
from tests.arena.games.samples import sample_match


def value(hand: str, rules: HandRules = CLASSIC) -> float | int:
    return points(hand_value([cards.parse(c) for c in hand.split()], rules))


def new_match(players: int = 3, variant: str | None = None, **params: Any) -> SvaraState:
    game = make_game("svara", players, params, variant)
    assert isinstance(game, Svara)
    return game.new_state(7)


def act(state: SvaraState, *actions: dict[str, Any]) -> None:
    """Play wire actions in order, each by whoever is to move."""
    for action in actions:
        state.apply_json(action)


def seats_of(state: SvaraState) -> list[dict[str, Any]]:
    players: list[dict[str, Any]] = state.full_view()["players"]
    return players


LOOK_J = {"type": "look"}
CALL_J = {"type": "call"}
FOLD_J = {"type": "fold"}
SHOW_J = {"type": "show"}


def dark(amount: int) -> dict[str, Any]:
    return {"type": "dark", "amount": amount}


def raise_to(amount: int) -> dict[str, Any]:
    return {"type": "raise", "amount": amount}


# --- hand values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("6C KH QH", 31),
        ("6C AH KH", 32),
        ("AS AD 9C", 22),
        ("7S 7H 6C", 32.5),
        ("6S 6H 6D", 36),
        ("9H 7S QC", 10),
        ("AS AH AC", 33),
        ("6C AS AH", 33),
        ("6C 6S 6H", 36),
        ("KS KH KD", 32.5),
        ("6C AS 9D", 22),
        ("AS KS QS", 31),
        ("6C 9S 8H", 20),
    ],
)
def test_classic_hand_values(hand: str, expected: float) -> None:
    assert value(hand) == expected


def test_classic_values_are_ordered_as_the_rulebook_says() -> None:
    best_suit = value("6C AH KH")
    assert best_suit < value("9S 9H 9D") < value("AS AH AD") < value("6S 6H 6D")


def test_two_jokers_reading_makes_the_ace_of_diamonds_wild() -> None:
    game = make_game("svara", 3, variant="two-jokers")
    assert isinstance(game, Svara)
    rules = game.hand_rules
    assert value("AD 9S 9H", rules) == 32.5
    assert value("AD 6C KS", rules) == 32.5
    assert value("AD 6C 6S", rules) == 36
    assert value("AD KH QH", rules) == 31
    assert value("AD KH QH") == 20


def test_bulgarian_values() -> None:
    game = make_game("svara", 3, variant="bulgarian")
    assert isinstance(game, Svara)
    rules = game.hand_rules
    assert game.params["pack"] == 32
    assert value("7S 7H 7D", rules) == 34
    assert value("7C 7S 7H", rules) == 34
    assert value("KS KH 7C", rules) == 30
    assert value("AS AH AD", rules) == 33
    assert value("9S 9H 9D", rules) == 27
    assert value("7S 7H 8D", rules) == 23
    assert value("7C AS 8D", rules) == 22
    assert value("7C KH QH", rules) == 31


# --- the worked example --------------------------------------------------------------------------

EXAMPLE_HANDS = [["AS", "AD", "9C"], ["6C", "KH", "QH"], ["8S", "7D", "9H"]]


def example_to_the_show(hands: list[list[str]], deals: int = 100) -> SvaraState:
    """The rulebook's example up to (not including) P0's show."""
    state = new_match(3, deals=deals)
    state.rig_deal(hands, dealer=0)
    assert state.pot == 30 and state.current_player() == 1
    act(state, dark(20))
    assert state.pot == 40 and state.stake == 20 and state.current_player() == 2
    act(state, dark(40))
    assert state.pot == 60 and state.current_player() == 0
    act(state, LOOK_J)
    assert state.phase == Phase.OPEN and state.stake == 40 and state.current_player() == 0
    act(state, raise_to(60))
    act(state, CALL_J)
    assert SHOW not in state.legal_actions()
    act(state, FOLD_J)
    assert state.current_player() == 0 and SHOW in state.legal_actions()
    return state


def test_worked_example_step_by_step() -> None:
    state = example_to_the_show(EXAMPLE_HANDS, deals=1)
    assert state.pot == 180
    act(state, SHOW_J)
    last = state.full_view()["last_deal"]
    showdown = last[-2]
    assert [(h["seat"], h["value"]) for h in showdown["hands"]] == [(0, 22), (1, 31)]
    assert last[-1] == {"type": "win", "seat": 1, "amount": 240, "shown": True}
    assert state.is_terminal() and state.balances == [-130, 160, -30]
    assert state.result().ranking == (3, 1, 2)


def test_worked_example_svara_alternative() -> None:
    hands = [["KH", "QH", "9S"], ["KS", "TS", "8D"], ["8S", "7D", "9H"]]
    state = example_to_the_show(hands)
    act(state, SHOW_J)
    assert state.phase == Phase.SVARA and state.pot == 240
    assert state.current_player() == 2 and state.deal_index == 0
    assert state.legal_actions() == [JOIN, DECLINE]
    assert state.observation(2)["join_price"] == 120
    act(state, {"type": "join"})
    assert state.pot == 360 and state.balances == [-130, -80, -150]
    assert str(state.phase) == "dark" and state.dealer == 0 and state.current_player() == 1
    assert all(len(h) == 3 for h in state.full_view()["hands"])
    public = state.observation(None)
    assert public["svara"] == 1 and public["history"][-1]["type"] == "deal"
    showdown, svara = public["earlier_rounds"][0][-2:]
    assert [h["cards"] for h in showdown["hands"]] == hands[:2]
    assert svara == {"type": "svara", "tied": [0, 1], "pot": 240, "price": 120}


# --- the dark phase ------------------------------------------------------------------------------


def test_dark_chain_stakes_never_go_down_and_cost_half() -> None:
    state = new_match(4, max_stake=60)
    state.rig_deal(state.full_view()["hands"], dealer=3)
    assert state.current_player() == 0
    assert [state.action_to_json(a) for a in state.legal_actions()] == [
        LOOK_J,
        dark(10),
        dark(20),
        dark(30),
        dark(40),
        dark(50),
        dark(60),
    ]
    act(state, dark(30))
    assert state.balances[0] == -25
    darks = [state.action_to_json(a)["amount"] for a in state.legal_actions()[1:]]
    assert darks == [30, 40, 50, 60]


def test_first_look_ends_the_chain_and_everyone_sees() -> None:
    state = new_match(4)
    state.rig_deal(state.full_view()["hands"], dealer=3)
    act(state, dark(20))
    for seat in (1, 2, 3):
        assert state.observation(seat)["hand"] == []
    act(state, LOOK_J)
    view = state.full_view()
    assert [p["status"] for p in view["players"]] == ["dark", "looked", "looked", "looked"]
    assert all(state.observation(s)["hand"] for s in range(4))
    assert state.phase == Phase.OPEN and state.current_player() == 1 and state.stake == 20


def test_open_phase_starts_with_the_first_player_when_everyone_went_dark() -> None:
    state = new_match(3)
    state.rig_deal(state.full_view()["hands"], dealer=0)
    act(state, dark(10), dark(10), dark(30))
    assert state.phase == Phase.OPEN and state.current_player() == 1 and state.stake == 30
    assert [p["status"] for p in seats_of(state)] == ["dark", "dark", "dark"]


def test_stake_is_the_ante_when_nobody_went_dark() -> None:
    state = new_match(3, max_stake=40)
    state.rig_deal(state.full_view()["hands"], dealer=0)
    act(state, LOOK_J)
    legal = [state.action_to_json(a) for a in state.legal_actions()]
    assert legal == [FOLD_J, CALL_J, raise_to(20), raise_to(30), raise_to(40)]
    act(state, CALL_J)
    assert state.balances[1] == -20 and state.stake == 10


# --- the open phase ------------------------------------------------------------------------------


def test_every_turn_costs_the_full_stake_and_there_is_no_equalising() -> None:
    state = new_match(2)
    state.rig_deal(state.full_view()["hands"], dealer=0)
    act(state, dark(40), LOOK_J)
    assert state.current_player() == 0
    act(state, CALL_J, CALL_J)
    assert state.balances == [-50, -70]


def test_no_raise_at_the_maximum_stake() -> None:
    state = new_match(2)
    state.rig_deal(state.full_view()["hands"], dealer=0)
    act(state, dark(100), LOOK_J)
    assert state.legal_actions() == [FOLD, CALL]


def test_show_is_legal_only_after_everyone_active_at_the_start_has_acted() -> None:
    state = new_match(3)
    state.rig_deal(state.full_view()["hands"], dealer=0)
    act(state, LOOK_J, CALL_J)
    assert SHOW not in state.legal_actions()
    act(state, CALL_J)
    assert SHOW not in state.legal_actions()
    act(state, FOLD_J)
    assert state.current_player() == 1 and SHOW in state.legal_actions()


def test_last_player_standing_wins_unseen() -> None:
    state = new_match(3, deals=1)
    state.rig_deal(EXAMPLE_HANDS, dealer=0)
    act(state, LOOK_J, FOLD_J, FOLD_J)
    last = state.full_view()["last_deal"]
    assert last[-1] == {"type": "win", "seat": 0, "amount": 30, "shown": False}
    assert state.balances == [20, -10, -10]
    assert not [e for e in last if e["type"] == "showdown"]


def test_automatic_showdown_after_ten_full_rounds_without_payment() -> None:
    state = new_match(2, deals=1)
    state.rig_deal([["AS", "KS", "QS"], ["9H", "8H", "7D"]], dealer=0)
    act(state, LOOK_J)
    for _ in range(19):
        act(state, CALL_J)
    assert state.deal_index == 0 and state.pot == 20 + 19 * 10
    act(state, CALL_J)
    last = state.full_view()["last_deal"]
    assert last[-2]["type"] == "showdown" and last[-2]["auto"] is True
    assert last[-1] == {"type": "win", "seat": 0, "amount": 220, "shown": True}
    assert state.balances == [110, -110]


def test_raise_changes_the_stake_for_everyone_after() -> None:
    state = new_match(3)
    state.rig_deal(state.full_view()["hands"], dealer=0)
    act(state, LOOK_J, raise_to(50), CALL_J)
    assert state.stake == 50 and state.balances == [-10, -60, -60]


# --- svaras --------------------------------------------------------------------------------------

TIED = [["KH", "QH", "9S"], ["KS", "TS", "8D"], ["8S", "7D", "9H"], ["8C", "7C", "9D"]]


def play_to_a_tie(state: SvaraState) -> None:
    """From a fresh deal: seats 0 and 1 tie at 20; everyone else folds."""
    dealt = [bool(h) for h in state.full_view()["hands"]]
    state.rig_deal([h if d else [] for h, d in zip(TIED, dealt, strict=False)])
    act(state, LOOK_J)
    while state.phase == Phase.OPEN:
        seat = state.current_player()
        if seat in (0, 1):
            act(state, SHOW_J if SHOW in state.legal_actions() else CALL_J)
        else:
            act(state, FOLD_J)


def test_svara_join_and_decline_go_clockwise_from_the_dealers_left() -> None:
    state = new_match(4)
    state.rig_deal(TIED, dealer=1)
    play_to_a_tie(state)
    assert state.phase == Phase.SVARA
    price = state.pot // 2
    assert state.current_player() == 2
    act(state, {"type": "decline"})
    assert state.current_player() == 3
    before = state.balances[3]
    act(state, {"type": "join"})
    assert state.balances[3] == before - price
    statuses = [p["status"] for p in seats_of(state)]
    assert statuses == ["waiting", "waiting", "out", "waiting"]
    assert state.current_player() == 3 and state.dealer == 1
    assert state.full_view()["hands"][2] == []


def test_a_seat_that_sat_out_may_join_the_next_svara() -> None:
    state = new_match(4)
    state.rig_deal(TIED, dealer=1)
    play_to_a_tie(state)
    act(state, {"type": "decline"}, {"type": "join"})
    play_to_a_tie(state)
    assert state.phase == Phase.SVARA and state.current_player() == 2
    assert state.observation(2)["join_price"] == state.pot // 2


def test_an_automatic_showdown_can_end_in_a_svara() -> None:
    state = new_match(2, showdown_rounds=1)
    state.rig_deal(TIED[:2], dealer=0)
    act(state, LOOK_J, CALL_J, CALL_J)
    assert state.phase == Phase.DARK and state.pot == 40
    showdown = state.observation(None)["earlier_rounds"][0][-2]
    assert showdown["auto"] is True and showdown["winners"] == [0, 1]


def test_join_price_is_fixed_at_the_moment_of_the_tie() -> None:
    state = new_match(4)
    state.rig_deal(TIED, dealer=1)
    play_to_a_tie(state)
    pot = state.pot
    act(state, {"type": "join"}, {"type": "join"})
    assert state.pot == pot + 2 * (pot // 2)


def test_svaras_are_capped_and_the_pot_is_split_with_leftovers_clockwise() -> None:
    state = new_match(2, deals=1, svara_cap=5)
    state.rig_deal(TIED[:2], dealer=0)
    act(state, dark(10))
    assert state.pot == 25
    play_tail(state)
    for svara in range(1, 6):
        assert state.phase == Phase.DARK and state.observation(0)["svara"] == svara
        play_to_a_tie(state)
    assert state.is_terminal()
    split = state.full_view()["last_deal"][-1]
    assert split["type"] == "split"
    total = sum(s["amount"] for s in split["shares"])
    assert total % 2 == 1
    shares = {s["seat"]: s["amount"] for s in split["shares"]}
    assert shares[1] == shares[0] + 1
    assert sum(state.balances) == 0


def play_tail(state: SvaraState) -> None:
    """Finish the regular deal of the cap test: the looker calls and both show into a tie."""
    act(state, LOOK_J)
    while state.phase == Phase.OPEN:
        act(state, SHOW_J if SHOW in state.legal_actions() else CALL_J)


def test_no_svara_when_the_cap_is_zero() -> None:
    state = new_match(2, svara_cap=0)
    state.rig_deal(TIED[:2], dealer=0)
    play_to_a_tie(state)
    assert state.deal_index == 1
    assert state.full_view()["last_deal"][-1]["type"] == "split"


# --- the table and the match ---------------------------------------------------------------------


def test_credit_balances_go_negative_and_betting_goes_on() -> None:
    state = new_match(2, deals=3)
    state.rig_deal([["9H", "8H", "7D"], ["AS", "KS", "QS"]], dealer=1)
    act(state, dark(100), LOOK_J, CALL_J, CALL_J, SHOW_J)
    assert state.full_view()["last_deal"][-1]["amount"] == 370
    assert state.balances == [-170, 150]
    assert state.dealer == 0 and state.current_player() == 1
    assert len(state.legal_actions()) == 11


def test_dealer_moves_clockwise_and_the_match_ranks_by_net_chips() -> None:
    state = new_match(3, deals=3)
    dealers = []
    while not state.is_terminal():
        if state.full_view()["history"][-1]["type"] == "deal":
            dealers.append(state.dealer)
        act(state, LOOK_J, FOLD_J, FOLD_J)
    assert [(d - dealers[0]) % 3 for d in dealers] == [0, 1, 2]
    assert state.current_player() == TERMINAL and state.legal_actions() == []
    result = state.result()
    assert sum(result.scores) == 0
    best = max(result.scores)
    assert [r == 1 for r in result.ranking] == [s == best for s in result.scores]


def test_default_action_is_look_then_fold_then_decline() -> None:
    state = new_match(4)
    state.rig_deal(TIED, dealer=1)
    assert state.default_action() == LOOK
    opened = state.clone()
    opened.apply_action(LOOK)
    assert opened.default_action() == FOLD
    play_to_a_tie(state)
    assert state.default_action() == DECLINE


@pytest.mark.parametrize(
    "params",
    [
        {"step": 5},
        {"ante": 15},
        {"max_stake": 95},
        {"pack": 30},
        {"jokers": ["6X"]},
        {"jokers": ["6C", "6C"]},
        {"jokers": ["6D"], "pack": 32},
        {"scoring": "poker"},
    ],
)
def test_bad_configurations_are_refused(params: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        make_game("svara", 3, params)


def test_wire_actions_round_trip_and_malformed_ones_are_refused() -> None:
    state = new_match(3)
    for action in state.legal_actions():
        assert state.action_from_json(state.action_to_json(action)) == action
    for bad in [{"type": "dark"}, {"type": "raise", "amount": "60"}, {"type": "bet"}, "look"]:
        with pytest.raises(IllegalActionError):
            state.action_from_json(bad)
    with pytest.raises(IllegalActionError):
        state.apply_json(raise_to(60))


# --- hidden information --------------------------------------------------------------------------


def dump(obj: object) -> str:
    return orjson.dumps(obj).decode()


def this_round(view: dict[str, Any]) -> str:
    """The view without the rounds before the last shuffle.

    Cards shown at an earlier showdown are public, and the same cards may be dealt again after a
    svara or in the next deal, so only the round in play can leak.
    """
    view.pop("earlier_rounds")
    view.pop("last_deal")
    return dump(view)


def assert_nothing_leaks(state: SvaraState) -> None:
    hands = state.full_view()["hands"]
    seats = [None, *range(state.game.players)]
    views = {seat: this_round(state.observation(seat)) for seat in seats}
    for seat, hand in enumerate(hands):
        private = state.private_cards(seat)
        for viewer, text in views.items():
            own_and_seen = viewer == seat and state.observation(seat)["seen"]
            for card in private if not own_and_seen else ():
                assert f'"{card}"' not in text, (seat, viewer, card)
        if private:
            assert private == set(hand)


def test_unseen_hands_reach_no_observation_not_even_their_own() -> None:
    state = new_match(3)
    state.rig_deal(EXAMPLE_HANDS, dealer=0)
    act(state, dark(20))
    obs = state.observation(1)
    assert obs["hand"] == [] and obs["hand_value"] is None and obs["seen"] is False
    assert_nothing_leaks(state)


def test_folded_hands_are_never_shown() -> None:
    state = new_match(3)
    state.rig_deal(EXAMPLE_HANDS, dealer=0)
    act(state, dark(20), dark(40), LOOK_J, raise_to(60), CALL_J, FOLD_J, SHOW_J)
    text = dump(state.observation(None))
    for card in EXAMPLE_HANDS[2]:
        assert f'"{card}"' not in text
    for card in EXAMPLE_HANDS[0] + EXAMPLE_HANDS[1]:
        assert f'"{card}"' in text


def random_walk(state: SvaraState, rng: random.Random, check: Any) -> None:
    while not state.is_terminal():
        check(state)
        state.apply_action(rng.choice(state.legal_actions()))
    check(state)


def test_random_playouts_leak_nothing() -> None:
    for seed in range(4):
        game = make_game("svara", 2 + seed, {"deals": 6})
        state = game.new_state(seed)
        assert isinstance(state, SvaraState)
        random_walk(state, random.Random(seed), assert_nothing_leaks)


# --- properties ----------------------------------------------------------------------------------


def conserved(state: SvaraState) -> None:
    assert sum(state.balances) + state.pot == 0
    assert sum(p["contribution"] for p in seats_of(state)) == state.pot


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(2, 6),
    variant=st.sampled_from(["classic", "two-jokers", "bulgarian"]),
    seed=st.integers(0, 2**32),
    walk=st.integers(0, 2**32),
)
def test_chips_are_conserved_at_all_times(players: int, variant: str, seed: int, walk: int) -> None:
    state = make_game("svara", players, {"deals": 4, "svara_cap": 2}, variant).new_state(seed)
    assert isinstance(state, SvaraState)
    random_walk(state, random.Random(walk), conserved)
    assert state.pot == 0 and sum(state.result().scores) == 0


@settings(max_examples=20, deadline=None)
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32))
def test_replaying_the_same_actions_gives_the_same_match(players: int, seed: int) -> None:
    game = make_game("svara", players, {"deals": 3})
    first, second = game.new_state(seed), game.new_state(seed)
    rng = random.Random(seed)
    while not first.is_terminal():
        action = game.greedy_action(first, rng)
        first.apply_action(action)
        second.apply_action(action)
    assert first.full_view() == second.full_view()
    assert first.result() == second.result()


def test_greedy_play_finishes_and_plays_only_legal_actions() -> None:
    game = make_game("svara", 4, {"deals": 20})
    state = game.new_state(3)
    rng = random.Random(3)
    showdowns = 0
    while not state.is_terminal():
        action = game.greedy_action(state, rng)
        assert action in state.legal_actions()
        showdowns += action == SHOW
        state.apply_action(action)
    assert showdowns > 0 and sum(state.result().scores) == 0


# --- sample bots ---------------------------------------------------------------------------------


def test_sample_bots_play_a_match_as_real_processes() -> None:
    outcome, kinds = sample_match(make_game("svara", 3, {"deals": 10}), 11)
    assert sum(outcome.result.scores) == 0
    assert {"look", "fold"} <= kinds
