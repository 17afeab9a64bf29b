"""Svoi Kozyri, heuristic: count cards, keep own trumps, and leave the next player stuck.

Every card we lay on top (a lead, or the second card after a beat) is what the next player must
beat or else pick up: 3 cards, or 5 if it is of their own trump, or the whole pile for the ace of
their own trump. So each card we could lay is worth the chance that the next player holds nothing
that beats it, times what they would then pick up, less what the card is worth to keep.

The chance comes from counting: we see our hand and the pile, and every picked-up card is public
(the observation's ``known``), so the cards left unseen are spread over the other hands in
proportion to how many unknown cards each holds. When we beat, we choose the beating card with the
second card in mind: the best pair (cheap beat, nasty second card) wins. At a table of three or
four, a card the next player can beat only with one of their own trumps is worth a little too:
they spend a trump they will miss later.
"""

from kozyri_bot import Bot, beats, next_seat, pack, rank, run, suit

# Weights found by playing against the greedy bot at 2, 3 and 4 players (400 matches each).
# Keeping what beats matters most; sticking the next player with cards is the tie-breaker that
# wins the two-player endings, where every deal is decided.
STUCK_WEIGHT = 0.05  # per card the next player is expected to pick up
TRUMP_DRAIN = 0.15  # the next player can beat only with one of their own trumps (3+ players)
OWN_TRUMP_VALUE = 1.0  # own trumps beat anything of another suit: keep them
RANK_VALUE = 0.1  # higher cards beat more of their suit
GOING_OUT = 10.0  # emptying our hand ends our part in the deal: nothing is worth more


def holding_odds(observation, seat, deck):
    """Probability that ``seat`` holds each card we cannot see, from what the table has seen."""
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
        params = hello["params"]
        self.deck = pack(params.get("lowest_rank", 6))
        self.pickup = {
            "plain": params.get("pickup_plain", 3),
            "trump": params.get("pickup_own_trump", 5),
            "ace": params.get("pickup_own_trump_ace", "all"),
        }

    def pickup_size(self, card, trump, pile_size):
        """How many cards the next player takes if ``card`` (on a pile of ``pile_size``) stands."""
        if suit(card) != trump:
            count = self.pickup["plain"]
        else:
            count = self.pickup["ace" if rank(card) == 14 else "trump"]
        return pile_size if count == "all" else min(count, pile_size)

    def choose(self, observation, legal_actions):
        trumps = observation["trumps"]
        mine = trumps[observation["seat"]]
        hand = observation["hand"]
        victim = next_seat(observation)
        odds = holding_odds(observation, victim, self.deck)
        pile = len(observation["pile"])
        # With three or more still in, a trump the next player spends on us is one they lack
        # later against someone else; head to head it was found to cost more than it gains.
        crowded = sum(observation.get("active") or [True] * len(trumps)) > 2

        def lacks(card, beater):
            """Probability that the next player holds no card for which ``beater`` is true."""
            chance = 1.0
            for other, p in odds.items():
                if beater(other):
                    chance *= 1.0 - p
            return chance

        def lay_value(card, pile_size):
            """What laying ``card`` on top is worth to us, less what the card is worth to keep."""
            theirs = trumps[victim]
            free = lacks(card, lambda other: beats(other, card, theirs))
            value = STUCK_WEIGHT * free * self.pickup_size(card, theirs, pile_size)
            if crowded and suit(card) != theirs:  # no higher card of the suit, yet they can beat
                higher = lacks(card, lambda o: suit(o) == suit(card) and rank(o) > rank(card))
                value += TRUMP_DRAIN * higher * (1.0 - free)
            return value - keep_value(card, mine)

        def beat_value(card):
            """Beat with ``card``, then lay the best second card (or go out)."""
            rest = [c for c in hand if c != card]
            if not rest:
                return GOING_OUT
            best = max(lay_value(c, pile + 2) for c in rest)
            return best - keep_value(card, mine)

        beat = [a for a in legal_actions if a["type"] == "beat"]
        if beat:  # beating is never worse than taking cards
            choice = max(beat, key=lambda a: beat_value(a["card"]))
            self.debug = f"beat for {beat_value(choice['card']):.2f}"
            return choice
        plays = [a for a in legal_actions if a["type"] in ("lead", "second")]
        if plays:
            return max(plays, key=lambda a: lay_value(a["card"], pile + 1))
        return legal_actions[0]  # pick up (or a trump choice in the "choose" variant)


if __name__ == "__main__":
    run(HeuristicBot())
