"""The toy test game "High card", a game folder of its own (``tests/fixtures/games/toy_high_card``).

It is registered the way any game folder outside ``arena/games`` is: by naming the folder that
holds it in ``ARENA_GAMES_PATH``. ``register(monkeypatch)`` does that for one test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.games import PATH_ENV

GAMES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "games"
"""The folder holding the toy game folder."""

NAME = "toy-high-card"


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the toy game known to the registry (and to processes started) for one test."""
    monkeypatch.setenv(PATH_ENV, str(GAMES_DIR))
