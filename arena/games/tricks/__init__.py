"""Svoi Kozyri, the trick-taking game.

The folder holds everything that is this game's own: its rules (``game.py``), its terminal
table (``terminal.py``) and the replay viewer's adapter (``viewer.js``); see
``docs/adding-a-game.md``.
"""

from arena.games.tricks.game import SvoiKozyriTricks

GAME = SvoiKozyriTricks
"""The game this folder holds (``arena.games`` finds it here)."""

ORDER = 30
"""Its place in the list of games (smallest first)."""
