"""Svoi Kozyri tricks: the rulebook's examples, one test per rule and decision, hidden trumps."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import cards
from arena.agents import greedy_agent, play_out, random_agent
from arena.games import make_game
from arena.games.base import TERMINAL, ConfigError, IllegalActionError
from arena.games.tricks.game import SvoiKozyriTricks, TricksState, deal_points
from tests.arena.games.samples import sample_match
from tests.arena.games.wire import play_cards as play

A, B, C, D = range(4)


def game(players: int = 4, variant: str | None = None, **params: object) -> SvoiKozyriTricks:
    made = make_game("svoi-kozyri-tricks", players=players, params=params, variant=variant)
    assert isinstance(made, SvoiKozyriTricks)
    return made


def choose_all(state: TricksState, suits: str) -> None:
    for suit in suits:
        state.apply_json({"type": "choose_trump", "suit": suit})


# ---- the worked example ----------------------------------------------------------------------


def test_example_first_trick_void_discard_is_plain_and_void_trump_wins() -> None:
    state = game().position([["KS", "6C"], ["7S", "6D"], ["9H", "7C"], ["8D", "7D"]], "SHCD")
    play(state, "KS", "7S", "9H", "8D")
    trick = state.tricks[0]
    assert trick.winner == D
    assert [p.flagged for p in trick.plays] == [False, False, False, True]
    assert state.observation(A)["revealed"] == [None, None, None, "D"]
    assert state.current_player() == D
    assert {"type": "reveal", "seat": D, "suit": "D"} in state.history


def later_trick(reveal: str) -> TricksState:
    state = game(reveal=reveal).position(
        [["TS", "8S"], ["6H", "7H"], ["JC", "QC"], ["9H", "AD"]], "SHCD", leader=B
    )
    play(state, "6H", "JC", "9H", "TS")
    return state


def test_example_later_trick_higher_trump_wins_and_both_trumps_are_revealed() -> None:
    state = later_trick("on_use")
    assert state.tricks[0].winner == C
    assert state.observation(B)["revealed"] == ["S", None, "C", None]


def test_reveal_on_win_flags_only_the_winning_trump() -> None:
    state = later_trick("on_win")
    assert state.tricks[0].winner == C
    assert [p.flagged for p in state.tricks[0].plays] == [False, True, False, False]
    assert state.observation(B)["revealed"] == [None, None, "C", None]
    assert state.observation(C)["trumps"][A] is None


def test_reveal_on_win_keeps_a_trump_hidden_until_the_trick_is_complete() -> None:
    state = game(reveal="on_win").position(
        [["8S", "9S"], ["6H", "7H"], ["JC", "QC"], ["9H", "AD"]], "SHCD", leader=B
    )
    play(state, "6H", "JC")
    assert state.observation(A)["trick"]["cards"][1]["trump"] is False
    assert state.observation(A)["trumps"][C] is None


# ---- play rules ------------------------------------------------------------------------------


def test_must_follow_suit_when_able() -> None:
    state = game().position([["KS", "6C"], ["7S", "AH"], ["9H", "7C"], ["8D", "7D"]], "SHCD")
    play(state, "KS")
    assert state.legal_actions_json() == [{"type": "play", "card": "7S"}]
    with pytest.raises(IllegalActionError):
        state.apply_json({"type": "play", "card": "AH"})


def test_a_void_player_may_play_any_card() -> None:
    state = game().position([["KS", "6C"], ["7S", "AH"], ["9H", "7C"], ["8D", "7D"]], "SHCD")
    play(state, "KS", "7S")
    assert {a["card"] for a in state.legal_actions_json()} == {"9H", "7C"}


def test_leading_ones_own_trump_is_an_ordinary_play() -> None:
    state = game().position([["6S", "6C"], ["7S", "6D"], ["9H", "7C"], ["8D", "7D"]], "SHCD")
    play(state, "6S", "7S", "9H", "8D")
    assert [p.flagged for p in state.tricks[0].plays] == [False, False, False, True]
    assert state.tricks[0].winner == D
    assert state.observation(B)["revealed"][A] is None


def test_following_with_a_card_of_ones_trump_suit_is_ordinary() -> None:
    state = game().position([["6H", "6C"], ["7H", "6D"], ["9H", "7C"], ["8H", "7D"]], "SHCD")
    play(state, "6H", "7H", "9H", "8H")
    assert not any(p.flagged for p in state.tricks[0].plays)
    assert state.tricks[0].winner == C


def test_a_low_trump_beats_the_highest_card_of_the_led_suit() -> None:
    state = game().position([["AS", "6H"], ["KS", "6D"], ["6C", "7C"], ["QS", "7D"]], "SHCD")
    play(state, "AS", "KS", "6C", "QS")
    assert state.tricks[0].winner == C


def test_a_void_players_trump_card_cannot_be_a_plain_discard() -> None:
    state = game().position([["AS", "6H"], ["KS", "6D"], ["6C", "7C"], ["QS", "7D"]], "SHCD")
    play(state, "AS", "KS", "7C")
    assert state.trick.plays[-1].flagged
    assert state.observation(A)["revealed"][C] == "C"


def test_equal_trumps_go_to_the_one_played_first() -> None:
    state = game().position([["AS", "6C"], ["9H", "6D"], ["9C", "7C"], ["QS", "7D"]], "SHCD")
    play(state, "AS", "9H", "9C", "QS")
    assert state.tricks[0].winner == B


def test_two_players_may_choose_the_same_trump() -> None:
    state = game().new_state(3)
    choose_all(state, "HHHH")
    assert state.trumps == [cards.HEARTS] * 4
    assert state.phase == "play"


def test_the_winner_of_a_trick_leads_the_next() -> None:
    state = game().position([["KS", "6C"], ["7S", "6D"], ["9H", "7C"], ["8D", "7D"]], "SHCD")
    play(state, "KS", "7S", "9H", "8D")
    assert state.current_player() == D
    assert state.trick.leader == D


# ---- dealing, choosing, scoring and the match --------------------------------------------------


@pytest.mark.parametrize(("players", "size"), [(3, 12), (4, 9), (5, 7)])
def test_all_cards_are_dealt_except_one_dead_card_at_five(players: int, size: int) -> None:
    state = game(players).new_state(11)
    view = state.full_view()
    assert [len(h) for h in view["hands"]] == [size] * players
    dealt = [c for h in view["hands"] for c in h]
    assert (view["dead"] is not None) == (players == 5)
    if view["dead"] is not None:
        dealt.append(view["dead"])
        for seat in range(players):
            assert view["dead"] not in str(state.observation(seat))
    assert sorted(dealt) == sorted(cards.strs(cards.pack(36)))


def test_trumps_are_chosen_from_the_dealers_left_then_that_player_leads() -> None:
    state = game().new_state(5)
    dealer = state.dealer
    order = []
    while state.phase == "choose":
        order.append(state.current_player())
        state.apply_action(state.default_action())
    assert order == [(dealer + i) % 4 for i in range(1, 5)]
    assert state.current_player() == (dealer + 1) % 4


def test_the_dealer_rotates_clockwise_every_deal() -> None:
    state = game(3).new_state(2)
    dealers = []
    while not state.is_terminal():
        if state.deal_index == len(dealers):
            dealers.append(state.dealer)
        state.apply_action(state.default_action())
    assert dealers == [(i + 2) % 3 for i in range(len(dealers))]
    assert len(dealers) >= 2


@pytest.mark.parametrize(("total", "needed"), [(12, 7), (9, 5), (7, 4)])
def test_the_bonus_is_for_more_than_half_the_tricks(total: int, needed: int) -> None:
    units = [[0], [1], [2]]
    assert deal_points([needed, total - needed, 0], units) == [needed + 1, total - needed, 0]
    below = needed - 1
    assert deal_points([below, total - below, 0], units)[0] == below


def test_a_one_card_deal_gives_the_trick_and_the_bonus() -> None:
    state = game().position([["KS"], ["7S"], ["9H"], ["8C"]], "DDDD")
    play(state, "KS", "7S", "9H", "8C")
    assert state.scores == [2, 0, 0, 0]
    assert state.last_deal is not None and state.last_deal.tricks == [1, 0, 0, 0]
    assert state.deal_index == 1 and state.phase == "choose"


@pytest.mark.parametrize(
    ("scores", "over"),
    [
        ([19, 5, 3, 18], False),
        ([20, 5, 3, 18], True),
        ([22, 22, 3, 1], False),
        ([25, 22, 3, 1], True),
    ],
)
def test_the_match_ends_when_one_leader_reaches_the_target(scores: list[int], over: bool) -> None:
    state = game().new_state(0)
    state.scores = scores
    assert state.match_over() is over


def test_a_tie_at_the_deal_cap_is_shared() -> None:
    state = game(max_deals=1).position([["KS"], ["7S"], ["9H"], ["8C"]], "DDDD")
    state.scores = [3, 3, 5, 3]
    play(state, "KS", "7S", "9H", "8C")
    assert state.is_terminal() and state.current_player() == TERMINAL
    assert state.result().ranking == (1, 3, 1, 3)


def test_the_match_plays_on_while_the_leaders_are_tied() -> None:
    state = game(target=1).position(
        [["KS", "6S"], ["AS", "7H"], ["9H", "8H"], ["8C", "9C"]], "DDDD"
    )
    play(state, "KS", "AS", "9H", "8C")
    play(state, "7H", "8H", "9C", "6S")
    assert state.scores == [0, 1, 1, 0]
    assert not state.is_terminal() and state.deal_index == 1


# ---- variants ------------------------------------------------------------------------------


def test_blind_trumps_are_chosen_before_the_hand_is_seen() -> None:
    state = game(variant="blind").new_state(4)
    seat = state.current_player()
    obs = state.observation(seat)
    assert obs["hand"] == [] and obs["hand_counts"] == [0, 0, 0, 0]
    assert state.private_cards(seat) == set()
    assert state.default_action() == state.action_from_json({"type": "choose_trump", "suit": "S"})
    choose_all(state, "SHDC")
    assert len(state.observation(seat)["hand"]) == 9


def test_teams_one_partner_per_team_chooses_and_only_the_partner_sees_it() -> None:
    state = game(variant="teams").new_state(8)
    dealer = state.dealer
    first, second = (dealer + 1) % 4, (dealer + 2) % 4
    assert state.current_player() == first
    assert state.observation(first)["hand"] == []
    choose_all(state, "H")
    assert state.observation((first + 2) % 4)["partner_trump"] == "H"
    assert state.observation((first + 2) % 4)["trump"] == "H"
    assert state.observation(second)["trumps"][first] is None
    assert state.current_player() == second
    choose_all(state, "C")
    assert state.phase == "play" and state.current_player() == first
    assert state.observation(first)["trumps"] == [
        "H" if s % 2 == first % 2 else None for s in range(4)
    ]


def test_teams_score_tricks_and_bonus_per_team() -> None:
    assert deal_points([3, 2, 2, 2], [[0, 2], [1, 3]]) == [6, 4, 6, 4]
    assert deal_points([2, 3, 2, 2], [[0, 2], [1, 3]]) == [4, 6, 4, 6]


def test_teams_a_revealed_trump_is_the_partners_too() -> None:
    state = game(variant="teams").position(
        [["KS", "6C"], ["7S", "6D"], ["AS", "7C"], ["8D", "7D"]], "SDSD"
    )
    play(state, "KS", "7S", "AS", "8D")
    assert state.observation(A)["revealed"] == [None, "D", None, "D"]
    assert state.scores == [0, 0, 0, 0]


def test_teams_need_four_players() -> None:
    with pytest.raises(ConfigError):
        game(3, teams=True)


# ---- hidden information ----------------------------------------------------------------------


def assert_no_trump_leak(state: TricksState) -> None:
    """No seat's observation depends on a trump it may not know."""
    for seat in range(state.players):
        hidden = state.hidden_trumps(seat)
        obs = state.observation(seat)
        for other, _suit in hidden.items():
            assert obs["trumps"][other] is None
            twin = state.clone()
            twin.trumps[other] = (twin.trumps[other] + 1) % 4  # type: ignore[operator]
            if twin.partner(other) is not None:
                twin.trumps[twin.partner(other)] = twin.trumps[other]  # type: ignore[index]
            assert twin.observation(seat) == obs


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    variant=st.sampled_from([None, "blind", "teams", "reveal-on-win"]),
    players=st.integers(3, 5),
)
def test_secret_trumps_never_reach_another_seat(
    seed: int, variant: str | None, players: int
) -> None:
    g = game(4 if variant == "teams" else players, variant)
    state = g.new_state(seed)
    rng = random.Random(seed)
    while not state.is_terminal() and state.deal_index == 0:
        assert_no_trump_leak(state)
        state.apply_action(rng.choice(state.legal_actions()))


def test_spectators_see_no_hand_and_no_secret_trump() -> None:
    state = game().new_state(1)
    choose_all(state, "SHDC")
    obs = state.observation(None)
    assert "hand" not in obs and obs["trumps"] == [None] * 4


def test_private_cards_are_the_seats_own_hand() -> None:
    state = game().new_state(9)
    choose_all(state, "SSSS")
    for seat in range(4):
        assert state.private_cards(seat) == set(state.observation(seat)["hand"])
        for other in range(4):
            if other != seat:
                assert not state.private_cards(seat) & set(str(state.observation(other)))


# ---- wire forms, defaults, whole matches ------------------------------------------------------


def test_action_json_round_trip_and_malformed_actions() -> None:
    state = game().new_state(0)
    for action in state.legal_actions():
        assert state.action_from_json(state.action_to_json(action)) == action
    assert state.action_to_json(state.legal_actions()[1]) == {"type": "choose_trump", "suit": "H"}
    for bad in [{"type": "choose_trump", "suit": "X"}, {"type": "play", "card": "1Z"}, "9C", {}]:
        with pytest.raises(IllegalActionError):
            state.action_from_json(bad)


def test_default_chooses_the_longest_suit_and_plays_the_lowest_legal_card() -> None:
    state = game().new_state(0)
    hand = [cards.parse(c) for c in state.observation(state.current_player())["hand"]]
    longest = Counter(cards.suit_of(c) for c in hand).most_common(1)[0][1]
    chosen = state.default_action() - 64
    assert sum(1 for c in hand if cards.suit_of(c) == chosen) == longest
    state = game().position(
        [["KS", "6C"], ["7S", "AH"], ["9H", "7C"], ["8D", "7D"]], "SHCD", leader=C
    )
    assert state.action_to_json(state.default_action()) == {"type": "play", "card": "7C"}


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1_000_000), players=st.integers(3, 5))
def test_random_matches_end_with_consistent_scores(seed: int, players: int) -> None:
    state = game(players).new_state(seed)
    played = 0
    while not state.is_terminal():
        view = state.full_view()
        in_play = [c for h in view["hands"] for c in h] + [
            p["card"] for p in view["trick"]["cards"]
        ]
        in_play += [p["card"] for t in view["tricks"] for p in t["cards"]]
        assert len(set(in_play)) == len(in_play) == 36 // players * players
        state.apply_action(random.Random(seed + played).choice(state.legal_actions()))
        played += 1
    result = state.result()
    assert max(result.scores) >= 20 and result.ranking.count(1) == 1


def test_same_seed_and_actions_replay_the_same_match() -> None:
    g = game(5, variant="reveal-on-win")
    first, second = g.new_state(77), g.new_state(77)
    actions = play_out(first, [greedy_agent, random_agent] * 3, random.Random(1))
    for action in actions:
        second.apply_action(action)
    assert first.full_view() == second.full_view()
    assert first.result() == second.result()


# ---- sample bots ---------------------------------------------------------------------------


def test_sample_bots_play_a_match_as_real_processes() -> None:
    outcome, kinds = sample_match(game(3, target=8), 5)
    assert max(outcome.result.scores) >= 8
    assert kinds == {"choose_trump", "play"}
