"""Svoi Kozyri tricks, heuristic: a strong trump, cheap wins, and trumps kept for when they pay.

A card of our trump suit only trumps when we are void in the led suit, so a good trump is a suit
we hold many high cards of, and a good lead is a short side suit we would like to be rid of.
The bot reads the trick from public information only: the cards and their "trump" marks.
"""

from kozyri_bot import Bot, rank, run, suit


def winning_play(trick):
    """The play currently taking the trick: the highest marked trump, else the highest card of
    the led suit (an unmarked trump under reveal "on_win" cannot be seen, so we ignore it)."""
    plays = trick["cards"]
    trumps = [p for p in plays if p["trump"]]
    if trumps:
        return max(trumps, key=lambda p: (rank(p["card"]), -plays.index(p)))
    led = suit(plays[0]["card"])
    return max((p for p in plays if suit(p["card"]) == led), key=lambda p: rank(p["card"]))


def trump_strength(hand, s):
    """Length counts double; aces, kings and queens add their weight."""
    mine = [rank(c) for c in hand if suit(c) == s]
    return 2 * len(mine) + sum(max(0, r - 11) for r in mine)


class HeuristicBot(Bot):
    name = "heuristic"

    def choose(self, observation, legal_actions):
        if legal_actions[0]["type"] == "choose_trump":
            return self.choose_trump(observation)
        cards = [a["card"] for a in legal_actions]
        trick = observation["trick"]
        if not trick["cards"]:
            return {"type": "play", "card": self.lead(observation, cards)}
        return {"type": "play", "card": self.follow(observation, cards, trick)}

    def choose_trump(self, observation):
        hand = observation["hand"]
        if not hand:  # blind, or a team trump chosen before the deal: nothing to go on
            return {"type": "choose_trump", "suit": self.rng.choice("SHDC")}
        best = max("SHDC", key=lambda s: trump_strength(hand, s))
        return {"type": "choose_trump", "suit": best}

    def lead(self, observation, cards):
        trump = observation["trump"]
        aces = [c for c in cards if rank(c) == 14]
        if aces:  # an ace wins unless someone is void and trumps it
            return aces[0]
        side = [c for c in cards if suit(c) != trump] or cards
        shortest = min({suit(c) for c in side}, key=lambda s: sum(suit(c) == s for c in side))
        # Emptying a short suit makes our trumps live for the rest of the deal.
        return min((c for c in side if suit(c) == shortest), key=rank)

    def follow(self, observation, cards, trick):
        lowest = min(cards, key=rank)
        best = winning_play(trick)
        if best["seat"] == observation.get("partner"):
            return lowest  # the partner is winning: keep our good cards
        led = suit(trick["cards"][0]["card"])
        trump = observation["trump"]
        if suit(cards[0]) == led:  # following suit: win as cheaply as we can, else play low
            if best["trump"]:
                return lowest
            winners = [c for c in cards if rank(c) > rank(best["card"])]
            return min(winners, key=rank) if winners else lowest
        # Void: trump with the cheapest card that beats the trick, otherwise discard low.
        ours = [c for c in cards if suit(c) == trump]
        floor = rank(best["card"]) if best["trump"] else 0
        winners = [c for c in ours if rank(c) > floor]
        if winners:
            return min(winners, key=rank)
        others = [c for c in cards if suit(c) != trump]
        return min(others or cards, key=rank)


if __name__ == "__main__":
    run(HeuristicBot())
