"""Challenge, heuristic: count cards, keep own trumps, and leave the next player stuck.

Whatever card we leave on top, the next player must beat or pick up. So for every card we could
lay (a lead or a second card) we estimate the chance that the next player holds no card beating
it, from the cards we can see: our hand, the pile, and the cards known to be in other hands
because they were picked up in public. Unseen cards are spread over the other hands in proportion
to their hidden card counts.
"""

from kozyri_bot import Bot, beats, next_seat, pack, rank, run, suit

# Weights found by playing against the greedy bot: keeping own trumps and high cards matters more
# than leaving the next player stuck, but both count.
ESCAPE_WEIGHT = 0.3
OWN_TRUMP_VALUE = 1.0
RANK_VALUE = 0.05


def holding_odds(observation, seat, deck):
    """Probability that ``seat`` holds each card, from what we have seen."""
    if "hands" in observation:  # complete information (e.g. challenge)
        return {card: 1.0 for card in observation["hands"][seat]}
    known = observation["known"]
    seen = set(observation["hand"]) | set(observation["pile"])
    seen.update(card for cards in known for card in cards)
    hidden = [n - len(k) for n, k in zip(observation["hand_counts"], known, strict=True)]
    hidden[observation["seat"]] = 0
    share = hidden[seat] / max(1, sum(hidden))
    odds = {card: share for card in deck if card not in seen}
    odds.update({card: 1.0 for card in known[seat]})
    return odds


def keep_value(card, trump):
    """How useful a card is to keep: own trumps beat anything, high cards beat more."""
    return (OWN_TRUMP_VALUE if suit(card) == trump else 0.0) + RANK_VALUE * rank(card)


class HeuristicBot(Bot):
    name = "heuristic"

    def on_hello(self, hello):
        self.deck = pack(hello["params"].get("lowest_rank", 6))

    def choose(self, observation, legal_actions):
        trumps = observation["trumps"]
        mine = trumps[observation["seat"]]
        beat = [a for a in legal_actions if a["type"] == "beat"]
        if beat:  # beating is never worse than taking cards, so do it as cheaply as we can
            return min(beat, key=lambda a: keep_value(a["card"], mine))
        plays = [a for a in legal_actions if a["type"] in ("lead", "second")]
        if not plays:
            return legal_actions[0]
        victim = next_seat(observation)
        odds = holding_odds(observation, victim, self.deck)

        def score(action):
            card = action["card"]
            escape = 1.0
            for other in odds:
                if beats(other, card, trumps[victim]):
                    escape *= 1.0 - odds[other]
            return ESCAPE_WEIGHT * escape - keep_value(card, mine)

        return max(plays, key=score)


if __name__ == "__main__":
    run(HeuristicBot())
