"""Svara's actions (rulebook: ``seeds/svara.md``): integer codes and their wire forms.

Simple actions are small codes; a dark bet of stake *s* is ``DARK_BASE + s`` and a raise to *x*
is ``RAISE_BASE + x``, so legal actions sort in the order players think of them.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import JSON, Action, IllegalActionError

LOOK, FOLD, CALL, SHOW, JOIN, DECLINE = range(6)
DARK_BASE = 10_000
RAISE_BASE = 20_000
MAX_STAKE_LIMIT = 5_000
"""Stakes stay below ``DARK_BASE``, so an amount never spills into the next code range."""
_SIMPLE = {"look": LOOK, "fold": FOLD, "call": CALL, "show": SHOW, "join": JOIN, "decline": DECLINE}
_SIMPLE_NAMES = {v: k for k, v in _SIMPLE.items()}


def action_to_json(action: Action) -> JSON:
    """The wire form of ``action``: ``{"type": "call"}``, ``{"type": "raise", "amount": 60}``."""
    if action in _SIMPLE_NAMES:
        return {"type": _SIMPLE_NAMES[action]}
    if DARK_BASE <= action < RAISE_BASE:
        return {"type": "dark", "amount": action - DARK_BASE}
    if RAISE_BASE <= action < RAISE_BASE + DARK_BASE:
        return {"type": "raise", "amount": action - RAISE_BASE}
    raise IllegalActionError(f"no such action: {action!r}")


def action_from_json(obj: Any) -> Action:
    """The code of a wire action; ``IllegalActionError`` if it is not one (legality aside)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise IllegalActionError(f'an action is an object with a "type", got {obj!r}')
    kind = obj["type"]
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind not in ("dark", "raise"):
        known = ", ".join([*_SIMPLE, "dark", "raise"])
        raise IllegalActionError(f"unknown action type {kind!r} (types: {known})")
    amount = obj.get("amount")
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount < DARK_BASE:
        raise IllegalActionError(f'"{kind}" needs a positive int "amount", got {amount!r}')
    return (DARK_BASE if kind == "dark" else RAISE_BASE) + amount
