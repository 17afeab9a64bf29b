"""Svara, the three-card betting game.

The folder holds everything that is this game's own: its rules (``game.py``, with hand values
in ``hands.py``, action codes in ``actions.py``, phases and chips in ``table.py``), its terminal
table (``terminal.py``) and the replay viewer's adapter (``viewer.js``); see
``docs/adding-a-game.md``.
"""

from arena.games.svara.game import Svara

GAME = Svara
"""The game this folder holds (``arena.games`` finds it here)."""

ORDER = 50
"""Its place in the list of games (smallest first)."""
