"""Svara's terminal table (``arena/games/svara/terminal.py``)."""

from __future__ import annotations

from arena.games import make_game
from arena.render import render_table
from tests.arena.test_render import text_of


def test_svara_columns_and_deal_summary() -> None:
    state = make_game("svara").new_state(1)
    view = {**state.full_view(), "last_deal": [{"type": "win", "seat": 2, "amount": 90}]}
    shown = text_of(render_table(view))
    header = next(line for line in shown.splitlines() if "seat" in line)
    assert "status" in header and "in pot" in header and "players" not in header
    assert "last deal: P2 won 90 as everyone else folded" in shown
    assert "phase dark · pot 30 · stake 0" in shown
