"""Fixtures shared by the whole suite (keep this small; area fixtures live in their folders)."""

from __future__ import annotations

import pytest

from tests.arena import toy_game


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> str:
    """Register the toy test game for one test; return its name."""
    toy_game.register(monkeypatch)
    return toy_game.NAME
