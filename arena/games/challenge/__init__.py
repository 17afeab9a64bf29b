"""Challenge, two-player Svoi Kozyri with open mirrored hands.

The folder holds everything that is this game's own: its rules (``game.py``), its terminal
table (``terminal.py``) and the replay viewer's adapter (``viewer.js``); see
``docs/adding-a-game.md``.
"""

from arena.games.challenge.game import Challenge

GAME = Challenge
"""The game this folder holds (``arena.games`` finds it here)."""

ORDER = 20
"""Its place in the list of games (smallest first)."""
