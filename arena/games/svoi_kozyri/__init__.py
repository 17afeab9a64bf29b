"""Svoi Kozyri, the beating game.

The folder holds everything that is this game's own: its rules (``game.py``), its terminal
table (``terminal.py``) and the replay viewer's adapter (``viewer.js``); see
``docs/adding-a-game.md``.
"""

from arena.games.svoi_kozyri.game import SvoiKozyri

GAME = SvoiKozyri
"""The game this folder holds (``arena.games`` finds it here)."""

ORDER = 10
"""Its place in the list of games (smallest first)."""
