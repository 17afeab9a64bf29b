"""Every seed the service draws: match seeds (ladder, validation), tournament deal seeds and the
self-test's position.

They come from the operating system's CSPRNG and have 64 bits: a bot cannot carry a useful table
of the deals it will meet, nor recognise a deal from its own hand, and one published seed tells
nothing about another. There is no default seed anywhere on the service; only a tournament
explicitly given a seed is reproducible (``web.services.tournaments``). Local ``arena`` commands
keep their own reproducible seeds.
"""

from __future__ import annotations

import secrets

SEED_BITS = 64


def new_seed() -> int:
    """A fresh seed, 0 to 2**64 - 1, from the operating system's CSPRNG."""
    return secrets.randbits(SEED_BITS)
