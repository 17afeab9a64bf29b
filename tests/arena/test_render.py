"""The terminal card table."""

from __future__ import annotations

import random

import pytest
from rich.console import Console, RenderableType

from arena import render
from arena.games import make_game, names
from arena.games.base import JSON
from arena.render import action_text, card_text, event_text, render_result, render_table


def text_of(renderable: RenderableType, color: bool = False) -> str:
    console = Console(width=120, record=True, force_terminal=color, color_system="standard")
    console.print(renderable)
    return console.export_text(styles=color)


def test_cards_show_suit_symbols_and_red_suits() -> None:
    assert card_text("TH").plain == "T♥" and card_text("9S").plain == "9♠"
    assert "red" in str(card_text("QD").style) and "red" not in str(card_text("QC").style)
    colored = text_of(card_text("AH"), color=True)
    assert "A♥" in colored and "\x1b[" in colored


def test_actions_and_events_read_naturally() -> None:
    assert action_text({"type": "beat", "card": "JC"}).plain == "beat J♣"
    assert action_text({"type": "raise", "amount": 20}).plain == "raise amount=20"
    assert action_text({"type": "beat", "card": "JC", "second": None}).plain == "beat J♣"
    event = {"type": "pick_up", "seat": 2, "cards": ["8H", "TH"]}
    assert event_text(event, ["a", "b", "c"]).plain == "P2 c pick_up cards=8♥ T♥"


def toy_position(toy: str) -> tuple[JSON, JSON]:
    state = make_game(toy, players=3).new_state(11)
    state.apply_action(state.legal_actions()[0])
    return state.full_view(), state.observation(2)


def test_full_view_shows_every_hand(toy: str) -> None:
    full, _ = toy_position(toy)
    shown = text_of(render_table(full, names=["ann", "bob", "cy"]))
    for hand in full["hands"]:
        for card in hand:
            assert render.card_text(card).plain in shown
    assert "▶ P1 bob" in shown and "deal 0" in shown and "to move P1" in shown
    assert "P0 ann lay" in shown


def test_observation_hides_other_hands(toy: str) -> None:
    full, obs = toy_position(toy)
    shown = text_of(render_table(obs, viewer=2))
    assert "P2 (you)" in shown
    assert "▒ ×2" in shown and "▒ ×3" in shown
    for card in full["hands"][1]:
        assert render.card_text(card).plain not in shown
    for card in full["hands"][2]:
        assert render.card_text(card).plain in shown


def test_per_seat_values_become_columns_and_the_rest_lines() -> None:
    view: JSON = {
        "game": "demo",
        "to_move": 0,
        "hands": [["AS"], ["KH"]],
        "trumps": ["S", "H"],
        "fools": [3, 1],
        "pile": ["7S", "9S"],
        "history": [{"type": "lead", "seat": 1, "card": "7S"}] * 9,
    }
    shown = text_of(render_table(view, events=2))
    header = next(line for line in shown.splitlines() if "seat" in line)
    assert "trump" in header and "fools" in header
    assert "pile: 7♠ 9♠" in shown
    assert "last 2 of 9 events" in shown and shown.count("P1 lead 7♠") == 2


def test_game_hooks_add_lines_and_replace_generic_ones() -> None:
    view: JSON = {"game": "demo-hook", "hands": [[], []], "pot": 70}
    hook = render.TableHook(lambda v: [f"{len(v['hands'])} hands"], frozenset({"pot"}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(render.HOOKS, "demo-hook", hook)
        shown = text_of(render_table(view))
        assert "2 hands" in shown and "pot" not in shown
    shown = text_of(render_table(view))
    assert "2 hands" not in shown and "pot: 70" in shown


def test_tricks_show_who_played_what() -> None:
    played = [{"seat": 2, "card": "7S", "trump": True}, {"seat": 0, "card": "9H", "trump": False}]
    view: JSON = {
        "game": "kozyr-boys",
        "hands": [["AS"], ["KH"], []],
        "trick": {"leader": 2, "cards": played, "winner": None},
        "tricks": [{"leader": 0, "cards": played[::-1], "winner": 2}],
    }
    shown = text_of(render_table(view))
    assert "trick (led by P2): P2 7♠*  P0 9♥" in shown
    assert "last of 1 tricks: P0 9♥  P2 7♠*  → P2" in shown
    assert "leader=" not in shown


def test_result_lists_best_first() -> None:
    shown = text_of(render_result({"ranking": [2, 1, 2], "scores": [1, 5, 1]}, ["a", "b", "c"]))
    rows = [line.split() for line in shown.splitlines() if line.strip()[:1].isdigit()]
    assert [row[:3] for row in rows] == [["1", "P1", "b"], ["2", "P0", "a"], ["2", "P2", "c"]]


@pytest.mark.parametrize("name", names())
def test_real_games_render_mid_match(name: str) -> None:
    try:
        state = make_game(name).new_state(3)
    except ModuleNotFoundError as exc:
        pytest.skip(f"{name} is not available yet: {exc}")
    rng = random.Random(3)
    for _ in range(8):
        if state.is_terminal():
            break
        state.apply_action(state.game.greedy_action(state, rng))
    seat = 1
    full = text_of(render_table(state.full_view()))
    own = text_of(render_table(state.observation(seat), viewer=seat))
    assert name in full and "(you)" in own
    for card in state.private_cards(0):
        assert render.card_text(card).plain in full
    other_row = next(line for line in own.splitlines() if line[2:6].strip(" ▶") == "P0")
    if name != "challenge":  # every card of challenge is face up
        assert "▒ ×" in other_row
    assert not any(render.card_text(c).plain in other_row for c in state.private_cards(0))


def test_the_pile_shows_its_top_card() -> None:
    view: JSON = {"game": "svoi-kozyri", "hands": [["AS"], ["KH"]], "pile": ["7S", "9S", "JH"]}
    assert "pile (3): 7♠ 9♠  top J♥" in text_of(render_table(view))
    assert "pile (1): top 7♠" in text_of(render_table({**view, "pile": ["7S"]}))
    assert "pile: empty" in text_of(render_table({**view, "pile": []}))


GAME_VIEW_SIZE = 30
"""Lines a game's table may take mid-match, hands included: the games' hooks keep it compact."""


@pytest.mark.parametrize("name", names())
def test_every_game_has_a_compact_table(name: str) -> None:
    state = make_game(name).new_state(5)
    rng = random.Random(5)
    for _ in range(60):
        state.apply_action(state.game.greedy_action(state, rng))
    shown = text_of(render_table(state.full_view()))
    assert len(shown.splitlines()) <= GAME_VIEW_SIZE, shown
    assert "{" not in shown.split("events")[0], shown  # no raw JSON dicts above the history
    generic = {line.strip("│ ").split(":")[0] for line in shown.splitlines() if ": " in line}
    assert not generic & {k.replace("_", " ") for k in state.full_view()} - {
        "pile",
        "trick",
        "last deal",
    }


def test_events_that_are_not_actions_read_as_sentences() -> None:
    names = ["ann", "bob", "cy"]
    said = {
        "trick": (
            {"type": "trick", "winner": 1, "points": 23},
            "→ P1 bob takes the trick (23 points)",
        ),
        "reveal": ({"type": "reveal", "seat": 2, "suit": "D"}, "P2 cy's trump is ♦"),
        "out": ({"type": "out", "seat": 0}, "P0 ann has no cards left and is out"),
        "transfer": (
            {"type": "transfer", "card": "6H", "from": 2, "to": 1},
            "6♥ goes from P2 cy to its owner P1 bob",
        ),
        "win": (
            {"type": "win", "seat": 0, "amount": 90, "shown": False},
            "P0 ann wins the pot of 90 (everyone else folded)",
        ),
    }
    for event, words in said.values():
        assert event_text(event, names).plain == words
    action_shaped = {"type": "discard", "seat": 1, "cards": ["7S", "8S"]}
    assert event_text(action_shaped).plain == "P1 discard cards=7♠ 8♠"
