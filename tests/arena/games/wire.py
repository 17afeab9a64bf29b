"""Wire-form actions as the game tests write them: beating games (svoi-kozyri, challenge) and
trick games (svoi-kozyri-tricks, kozyr-boys)."""

from __future__ import annotations

from typing import Any

from arena.games.base import State


def play(state: State, *wire: dict[str, Any]) -> None:
    """Apply each wire action in turn; an illegal one raises as the referee would."""
    for action in wire:
        state.apply_json(action)


def lead(card: str) -> dict[str, str]:
    return {"type": "lead", "card": card}


def beat(card: str) -> dict[str, str]:
    return {"type": "beat", "card": card}


def second(card: str) -> dict[str, str]:
    return {"type": "second", "card": card}


def play_cards(state: State, *cards: str) -> None:
    """Play each card in turn in a trick game (``{"type": "play", "card": ...}``)."""
    for card in cards:
        state.apply_json({"type": "play", "card": card})
