"""Any game, random, in Python: a uniformly random legal action in every game of the platform.

The generator is seeded from the game and the seat, so the same match (same seed, same bots)
plays out the same way again. The kit (kozyri_bot, on PYTHONPATH) does the protocol.
"""

import random

from kozyri_bot import Bot, log, run


class AnyGameRandom(Bot):
    name = "any-game-random-python"

    def __init__(self):
        super().__init__()
        self.generator = random.Random(0)  # seeded from the game and seat in on_hello

    def on_hello(self, hello):
        self.generator = random.Random(f"{hello['game']}/{hello['players']}/{hello['seat']}")
        log(f"playing {hello['game']} in seat {hello['seat']} of {hello['players']}")

    def choose(self, observation, legal_actions):
        index = self.generator.randrange(len(legal_actions))
        self.debug = f"{index + 1} of {len(legal_actions)}"
        return index


run(AnyGameRandom())
