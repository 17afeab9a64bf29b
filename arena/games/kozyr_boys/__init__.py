"""Kozyr Boys, three players and two jacks on top of the trumps.

The folder holds everything that is this game's own: its rules (``game.py``, with the card
rules and scoring in ``rules.py``), its terminal
table (``terminal.py``) and the replay viewer's adapter (``viewer.js``); see
``docs/adding-a-game.md``.
"""

from arena.games.kozyr_boys.game import KozyrBoys

GAME = KozyrBoys
"""The game this folder holds (``arena.games`` finds it here)."""

ORDER = 40
"""Its place in the list of games (smallest first)."""
