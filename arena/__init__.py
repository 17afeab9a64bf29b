"""Kozyri Arena's pure engine: games, protocol, runner, replays, ratings and matchmaking.

Nothing in this package imports flask, sqlalchemy, celery or ``web``; a test enforces it.
"""

__version__ = "0.1.0"
