"""Svoi Kozyri tricks, random: any legal action, chosen uniformly."""

from kozyri_bot import Bot, run


class RandomBot(Bot):
    name = "random"

    def choose(self, observation, legal_actions):
        # An index into legal_actions is a complete answer, for trump choices and plays alike.
        return self.rng.randrange(len(legal_actions))


if __name__ == "__main__":
    run(RandomBot())
