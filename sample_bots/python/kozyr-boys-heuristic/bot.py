"""Kozyr Boys, heuristic: bank loose points in the discard and take rich tricks cheaply.

The discard's points belong to the dealer as soon as he takes one trick, so a lone ten or king
that would likely be caught is better buried than played; emptying a suit also lets us trump it.
In play the bot takes a trick when it is worth it and otherwise sheds its cheapest card.
"""

from kozyri_bot import Bot, rank, run, suit

POINTS = {14: 11, 10: 10, 13: 4, 12: 3, 11: 2}
PLAIN_ORDER = {14: 8, 10: 7, 13: 6, 12: 5, 11: 4, 9: 3, 8: 2, 7: 1}


class Trumps:
    """What the trump suit makes of each card (the observation names the two bowers)."""

    def __init__(self, observation):
        self.suit = observation["trumps"]
        self.right, self.left = observation["bowers"]

    def suit_of(self, card):
        return self.suit if card == self.left else suit(card)

    def points(self, card):
        return 12 if card in (self.right, self.left) else POINTS.get(rank(card), 0)

    def strength(self, card):
        """Higher is stronger: trumps above every plain card, bowers above all."""
        if card == self.right:
            return 40
        if card == self.left:
            return 39
        return PLAIN_ORDER[rank(card)] + (20 if self.suit_of(card) == self.suit else 0)

    def beats(self, card, best):
        """Does ``card`` take the trick from ``best`` (the card winning it so far)?"""
        mine, theirs = self.suit_of(card), self.suit_of(best)
        if mine != theirs:
            return mine == self.suit  # only a trump beats a card of another suit
        return self.strength(card) > self.strength(best)

    def cheapness(self, card):
        return self.points(card), self.strength(card)


class HeuristicBot(Bot):
    name = "heuristic"

    def choose(self, observation, legal_actions):
        trumps = Trumps(observation)
        if legal_actions[0]["type"] == "discard":
            return max(legal_actions, key=lambda a: self.discard_value(observation, trumps, a))
        cards = [a["card"] for a in legal_actions]
        plays = observation["trick"]["cards"]
        card = self.follow(trumps, cards, plays) if plays else self.lead(trumps, cards)
        return {"type": "play", "card": card}

    def discard_value(self, observation, trumps, action):
        gone = action["cards"]
        left = [c for c in observation["hand"] if c not in gone]
        voids = {suit(c) for c in gone} - {trumps.suit_of(c) for c in left}
        # Points banked now, plus a bonus for every plain suit we empty (we can trump it later).
        return sum(trumps.points(c) for c in gone) + 8 * len(voids - {trumps.suit})

    def lead(self, trumps, cards):
        if trumps.right in cards:
            return trumps.right  # nothing beats it, and it pulls two trumps from the others
        aces = [c for c in cards if rank(c) == 14 and trumps.suit_of(c) != trumps.suit]
        if aces:
            return aces[0]
        return min(cards, key=trumps.cheapness)

    def follow(self, trumps, cards, plays):
        best = plays[0]["card"]
        for play in plays[1:]:
            if trumps.beats(play["card"], best):
                best = play["card"]
        winners = [c for c in cards if trumps.beats(c, best)]
        worth = sum(trumps.points(p["card"]) for p in plays)
        last = len(plays) == 2
        if winners and (worth >= 10 or last):
            return min(winners, key=trumps.cheapness)  # take it with the cheapest winning card
        return min(cards, key=trumps.cheapness)


if __name__ == "__main__":
    run(HeuristicBot())
