"""Challenge, greedy: beat as cheaply as possible, shed low side-suit cards, take only if stuck."""

from kozyri_bot import Bot, rank, run, suit


class GreedyBot(Bot):
    name = "greedy"

    def choose(self, observation, legal_actions):
        trump = observation["trumps"][observation["seat"]]

        def cost(action):
            # Own trumps are worth keeping: they beat anything of another suit.
            card = action["card"]
            return (suit(card) == trump, rank(card))

        beats = [a for a in legal_actions if a["type"] == "beat"]
        if beats:
            return min(beats, key=cost)
        plays = [a for a in legal_actions if a["type"] in ("lead", "second")]
        if plays:
            return min(plays, key=cost)
        return legal_actions[0]  # take the pile (or a suit choice in the "choose" variant)


if __name__ == "__main__":
    run(GreedyBot())
