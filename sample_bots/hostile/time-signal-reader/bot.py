"""Svara, colluding reader: reads its partner's answer time and stays out of its way.

It notes when it answered; at its next turn, a table that took longer than ``THRESHOLD_S``
meanwhile means ``time-signal-sender`` signalled a strong hand, and it folds (unless its own
hand is very strong). Otherwise it plays its own hand by value.
"""

import time

from kozyri_bot import Bot, run

THRESHOLD_S = 0.03


class Reader(Bot):
    name = "reader"

    def __init__(self):
        super().__init__()
        self.answered = None

    def choose(self, observation, legal_actions):
        waited = None if self.answered is None else time.monotonic() - self.answered
        choice = self.decide(observation, waited is not None and waited > THRESHOLD_S)
        self.answered = time.monotonic()
        return choice

    def decide(self, observation, partner_strong):
        phase = observation["phase"]
        if phase == "dark":
            return {"type": "look"}
        if phase == "svara":
            return {"type": "decline"}
        value = observation["hand_value"]
        if partner_strong and value < 30:
            self.debug = "partner is strong"
            return {"type": "fold"}
        if observation["can_show"] and value >= 22:
            return {"type": "show"}
        return {"type": "call"} if value >= 18 else {"type": "fold"}


if __name__ == "__main__":
    run(Reader())
