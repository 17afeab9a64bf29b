"""Svara, heuristic: bet by hand value.

The referee puts our hand's value in the observation (``hand_value``, in points) once we have
seen our cards, so the bot only has to decide how much a value is worth. A hand good enough
against one opponent is not good enough against four, so the bar rises with every player still
in. We rarely bet in the dark: that pays half a stake for a hand we have not seen.
"""

from kozyri_bot import Bot, run


def by_type(legal_actions, kind):
    return [a for a in legal_actions if a["type"] == kind]


class HeuristicBot(Bot):
    name = "heuristic"

    def choose(self, observation, legal_actions):
        phase = observation["phase"]
        if phase == "dark":
            return self.dark(legal_actions)
        if phase == "svara":
            return self.svara(observation)
        return self.open(observation, legal_actions)

    def dark(self, legal_actions):
        darks = by_type(legal_actions, "dark")
        # Now and then a cheap dark bet, so opponents cannot read every dark bet as a bluff.
        if darks and self.rng.random() < 0.1:
            return darks[0]
        return {"type": "look"}

    def svara(self, observation):
        # Joining costs half the pot blind; it pays only when few players share the pot.
        in_svara = len(observation["tied"])
        if in_svara == 2 and observation["join_price"] <= 2 * observation["limits"]["ante"]:
            return {"type": "join"}
        return {"type": "decline"}

    def open(self, observation, legal_actions):
        value = observation["hand_value"]
        seat = observation["seat"]
        opponents = sum(
            1
            for p in observation["players"]
            if p["seat"] != seat and p["status"] in ("dark", "looked")
        )
        bar = 18 + 2 * opponents  # the value we want before paying to stay in
        raises = by_type(legal_actions, "raise")
        can_show = observation["can_show"]
        turns = observation["players"][seat]["open_turns"]
        self.debug = f"value {value}, bar {bar}, stake {observation['stake']}"
        if value >= 27 and raises and turns < 2:
            return raises[min(1, len(raises) - 1)]  # a modest raise keeps callers in
        if can_show and (value >= bar + 3 or (value >= bar and turns >= 3)):
            return {"type": "show"}
        if value >= bar:
            return {"type": "call"}
        if observation["stake"] <= observation["limits"]["ante"] and value >= bar - 3:
            return {"type": "call"}  # cheap to stay in against a limp
        return {"type": "fold"}


if __name__ == "__main__":
    run(HeuristicBot())
