"""The registry of games. Adding a game adds one line to ``_GAMES``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from arena.games.base import ConfigError, Game

_GAMES: dict[str, str] = {
    "svoi-kozyri": "arena.games.svoi_kozyri:SvoiKozyri",
    "challenge": "arena.games.challenge:Challenge",
    "svoi-kozyri-tricks": "arena.games.tricks:SvoiKozyriTricks",
    "kozyr-boys": "arena.games.kozyr_boys:KozyrBoys",
    "svara": "arena.games.svara:Svara",
}


def names() -> list[str]:
    """The registered game names, in registry order."""
    return list(_GAMES)


def game_class(name: str) -> type[Game]:
    """The ``Game`` subclass registered as ``name``."""
    try:
        target = _GAMES[name]
    except KeyError:
        raise ConfigError(f"no game {name!r}; games: {', '.join(_GAMES)}") from None
    module, _, attr = target.partition(":")
    cls: type[Game] = getattr(importlib.import_module(module), attr)
    return cls


def make_game(
    game: str,
    players: int | None = None,
    params: Mapping[str, Any] | None = None,
    variant: str | None = None,
) -> Game:
    """Build a game from its name; ``make_game(**g.config())`` rebuilds ``g``."""
    return game_class(game)(players=players, params=params, variant=variant)
