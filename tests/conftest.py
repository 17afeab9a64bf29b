"""Fixtures shared by the whole suite (keep this small; area fixtures live in their folders)."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests.arena import toy_game

# The machine running the suite may be busy: a property test's examples are judged by what they
# find, never by how long one took (Hypothesis's default is a 200 ms deadline per example).
settings.register_profile("arena", deadline=None)
settings.load_profile("arena")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> str:
    """Register the toy test game for one test; return its name."""
    toy_game.register(monkeypatch)
    return toy_game.NAME
