"""Kozyr Boys' terminal table (``arena/games/kozyr_boys/terminal.py``)."""

from __future__ import annotations

from arena.games import make_game
from arena.render import render_table
from tests.arena.test_render import text_of


def test_kozyr_boys_names_trumps_once() -> None:
    shown = text_of(render_table(make_game("kozyr-boys").new_state(1).full_view()))
    assert shown.count("trumps") == 1 and "bowers" in shown and "dealer's leftover" in shown
