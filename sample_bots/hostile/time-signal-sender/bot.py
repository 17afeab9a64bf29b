"""Svara, colluding sender: tells its partner through its answer time how strong its hand is.

Once it has looked at its cards it plays the same moves with a middling hand as with a strong
one (it calls), so its moves tell nothing; but it answers at once with a middling hand and only
after ``DELAY_S`` with a strong one. ``time-signal-reader`` at the same table times its own
turns and folds when its partner signalled strength, leaving the pot to it. Answer times are
public; the collusion report of the site (``arena.collusion``) is what catches this pair.
"""

import time

from kozyri_bot import Bot, run

STRONG = 21
"""Hand value (in points) from which the hand is signalled as strong."""
DELAY_S = 0.05


class Sender(Bot):
    name = "sender"

    def choose(self, observation, legal_actions):
        phase = observation["phase"]
        if phase == "dark":
            return {"type": "look"}
        if phase == "svara":
            return {"type": "join"} if len(observation["tied"]) == 2 else {"type": "decline"}
        value = observation["hand_value"]
        if value < 18:
            return {"type": "fold"}
        if value >= STRONG:
            time.sleep(DELAY_S)  # the signal: the same move as with a middling hand, but slower
            turns = observation["players"][observation["seat"]]["open_turns"]
            if observation["can_show"] and turns >= 2:
                return {"type": "show"}
        return {"type": "call"}


if __name__ == "__main__":
    run(Sender())
