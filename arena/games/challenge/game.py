"""Challenge (Besicovitch's game): two-player Svoi Kozyri with open, mirrored hands.

Both hands lie face up and are mirror images of each other, so the game is one of complete
information from a symmetric start. A player beats the top card and lays a second card, or takes
the whole pile; the first to empty their hand wins. A match is pairs of deals from the same cards
with the seats swapped. The rulebook is ``seeds/challenge.md``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena import cards
from arena.cards import Card, Suit
from arena.games import beating
from arena.games.base import (
    JSON,
    Action,
    ConfigError,
    EventLog,
    Game,
    GameSpec,
    IllegalActionError,
    Param,
    Result,
    State,
    deal_rng,
    ranking_from_scores,
    shuffle,
)
from arena.games.beating import (
    CARD_EVENTS,
    CHOOSE,
    CHOOSE_SIDE,
    CHOOSE_TRUMP,
    EV_BEAT,
    EV_LEAD,
    EV_PICK_UP,
    EV_SECOND,
    LEAD_MODE,
    OVER,
    PICK_UP,
    RESPOND,
    RESPONSES,
    SECOND,
    SECOND_MODE,
    BeatingState,
)

MODE_NAMES = ("choose", "lead", "respond", "lead_after_exit", "second", "over")
"""Challenge never uses ``lead_after_exit``: a player who empties their hand has won."""

TAKE_WORD = "take"

_LEAD_ACTIONS, _SECOND_ACTIONS = (beating.ACTION_TABLES[b] for b in (beating.LEAD, SECOND))

# Default suits: the dealer owns spades (trump) and clubs, the opponent hearts (trump) and
# diamonds; the mirror swaps spades with hearts and clubs with diamonds.
DEFAULT_SUITS = (cards.SPADES, cards.CLUBS, cards.HEARTS, cards.DIAMONDS)

EV_CHOOSE_TRUMP, EV_CHOOSE_SIDE = range(4, 6)

SPEC = GameSpec(
    name="challenge",
    title="Challenge (Besicovitch's game)",
    min_players=2,
    max_players=2,
    default_players=2,
    params=(
        Param(
            "deals",
            2,
            "deals in a match: pairs of the same cards with seats swapped",
            minimum=2,
            maximum=1000,
        ),
        Param(
            "lowest_rank",
            7,
            "lowest rank in the pack: 9/8/7/6/5 = 24/28/32/36/40 cards",
            minimum=5,
            maximum=9,
        ),
        Param(
            "trump_assignment",
            "fixed",
            "fixed: dealer S+C, opponent H+D; choose: the dealer picks trump and side suit, "
            "the opponent picks a trump from the other two",
            kind="str",
            choices=("fixed", "choose"),
        ),
        Param(
            "after_take",
            "opponent_leads",
            "who leads onto the empty pile after a take",
            kind="str",
            choices=("opponent_leads", "taker_leads"),
        ),
        Param(
            "first_lead",
            "dealer",
            "who leads first in a deal",
            kind="str",
            choices=("dealer", "opponent"),
        ),
        Param(
            "draw_rule",
            False,
            "a player left with one card that beats the top card draws",
            kind="bool",
        ),
        Param(
            "turn_cap", 2000, "actions per deal before fewer cards wins", minimum=10, maximum=100000
        ),
    ),
    variants={
        "standard": {},
        "choose": {"trump_assignment": "choose"},
        "taker-leads": {"after_take": "taker_leads"},
        "beginner": {"lowest_rank": 9},
        "cambridge": {"lowest_rank": 6},
        "expert": {"lowest_rank": 5},
    },
    default_variant="standard",
    rulebook="seeds/challenge.md",
)


def mirror_mask(hand: int, sigma: Sequence[Suit]) -> int:
    """The bitmask ``hand`` with every suit ``s`` moved to ``sigma[s]``."""
    out = 0
    for s in range(4):
        out |= (hand >> (16 * s) & 0xFFFF) << (16 * sigma[s])
    return out


def mirrored_deal(deck: Sequence[Card], suits: Sequence[Suit]) -> tuple[int, int]:
    """The (dealer, opponent) hands built from a shuffled ``deck``.

    ``suits`` is (dealer trump, dealer side, opponent trump, opponent side). The dealer keeps his
    own-suit cards among the first half of the deck (A); the opponent gets their mirror images;
    the rest of the dealer's suits (B) goes to the opponent and their mirror to the dealer.
    """
    d_trump, d_side, o_trump, o_side = suits
    sigma = [0, 1, 2, 3]
    sigma[d_trump], sigma[o_trump] = o_trump, d_trump
    sigma[d_side], sigma[o_side] = o_side, d_side
    own = beating.SUIT_MASKS[d_trump] | beating.SUIT_MASKS[d_side]
    pack = cards.mask(deck)
    kept = cards.mask(deck[: len(deck) // 2]) & own
    rest = pack & own & ~kept
    dealer = kept | mirror_mask(rest, sigma)
    return dealer, mirror_mask(dealer, sigma)


class Challenge(Game):
    """The rules object of Challenge."""

    spec = SPEC

    def validate(self) -> None:
        p = self.params
        if p["deals"] % 2:
            raise ConfigError("challenge deals come in seat-swapped pairs: deals must be even")
        self.deals: int = p["deals"]
        self.pack_size: int = 4 * (cards.ACE + 1 - p["lowest_rank"])
        self.choose_suits: bool = p["trump_assignment"] == "choose"
        self.taker_leads: bool = p["after_take"] == "taker_leads"
        self.dealer_leads: bool = p["first_lead"] == "dealer"
        self.draw_rule: bool = p["draw_rule"]
        self.turn_cap: int = p["turn_cap"]

    def new_state(self, seed: int) -> ChallengeState:
        return ChallengeState(self, seed)

    def greedy_action(self, state: State, rng: random.Random) -> Action:
        assert isinstance(state, ChallengeState)
        return state.greedy_action()

    def position(
        self,
        hands: Sequence[Sequence[str]],
        pile: Sequence[str] = (),
        to_move: int = 0,
        mode: str = "",
        trumps: Sequence[str] = ("S", "H"),
        dealer: int = 0,
        seed: int = 0,
        side_suits: Sequence[str] | None = None,
    ) -> ChallengeState:
        """A deal set up by hand (tests, puzzles, examples).

        ``hands`` are the two seats' cards, ``pile`` bottom to top, ``trumps`` and ``side_suits``
        per seat (side suits only label the table; by default the two suits left over). ``mode``
        defaults to "lead" on an empty pile, else "respond". Later deals are dealt from ``seed``.
        """
        state = ChallengeState(self, seed)
        sides = side_suits or [s for s in cards.SUITS if s not in trumps]
        state.set_position(hands, pile, to_move, mode, [*trumps, *sides], dealer)
        return state


class ChallengeState(BeatingState):
    """A match of Challenge in progress."""

    mode_names = MODE_NAMES
    take_word = TAKE_WORD

    __slots__ = (
        "_dealer",
        "_hands",
        "_history",
        "_index",
        "_legal",
        "_mode",
        "_once",
        "_pile",
        "_points",
        "_responses",
        "_results",
        "_suits",
        "_to_move",
        "_turns",
        "_twice",
        "game",
        "seed",
    )

    def __init__(self, game: Challenge, seed: int) -> None:
        self.game: Challenge = game
        self.seed = seed
        self._points = [0.0, 0.0]
        self._results: list[JSON] = []
        self._index = 0
        self._start_deal()

    # ----- dealing -------------------------------------------------------------------------

    def _start_deal(self) -> None:
        """Reset the table; deal at once, or after the suits are chosen."""
        self._dealer = self._index % 2
        self._hands = [0, 0]
        self._pile = beating.Pile()
        self._history: list[tuple[int, ...]] = []
        self._once: dict[tuple[int, ...], int] = {}
        self._twice: set[tuple[int, ...]] = set()
        self._turns = 0
        self._legal: list[Action] | None = None
        if self.game.choose_suits:
            self._suits: list[Suit] = []
            self._mode = CHOOSE
            self._to_move = self._dealer
        else:
            self._suits = list(DEFAULT_SUITS)
            self._deal()

    def _deal(self) -> None:
        """Deal mirrored hands; both deals of a pair use the same shuffle."""
        deck = cards.pack(self.game.pack_size)
        shuffle(deal_rng(self.seed, self._index - self._index % 2), deck)
        dealer_hand, opponent_hand = mirrored_deal(deck, self._suits)
        self._link_responses()
        self._hands[self._dealer] = dealer_hand
        self._hands[1 - self._dealer] = opponent_hand
        self._mode = LEAD_MODE
        self._to_move = self._dealer if self.game.dealer_leads else 1 - self._dealer
        self._note_position()

    def set_position(
        self,
        hands: Sequence[Sequence[str]],
        pile: Sequence[str],
        to_move: int,
        mode: str,
        suits: Sequence[str],
        dealer: int,
    ) -> None:
        """Replace the current deal by an explicit position (see ``Challenge.position``).

        ``suits`` are seat 0's trump, seat 1's trump, seat 0's side suit, seat 1's side suit.
        """
        if len(hands) != 2 or len(suits) != 4:
            raise ConfigError("challenge positions have two hands, two trumps, two side suits")
        self._hands = [cards.mask(cards.parse(c) for c in hand) for hand in hands]
        self._pile = beating.Pile([cards.parse(c) for c in pile])
        t0, t1, s0, s1 = (cards.parse_suit(s) for s in suits)
        self._suits = [t0, s0, t1, s1] if dealer == 0 else [t1, s1, t0, s0]
        self._dealer = dealer
        self._link_responses()
        self._to_move = to_move
        self._mode = MODE_NAMES.index(mode or ("respond" if self._pile.cards else "lead"))
        self._history = []
        self._once = {}
        self._twice = set()
        self._turns = 0
        self._legal = None
        self._note_position()

    def _link_responses(self) -> None:
        """``_responses[seat]``: the response table of the seat's trump (once the suits are set)."""
        self._responses = [RESPONSES[self._trump(seat)] for seat in (0, 1)]

    def _trump(self, seat: int) -> Suit:
        return self._suits[0 if seat == self._dealer else 2]

    def legal_actions(self) -> list[Action]:
        # The modes of nearly every move looked up in tables, as in Svoi Kozyri; nothing is
        # cached: ``apply_action`` checks a card against the hand's bits.
        mode = self._mode
        if mode == RESPOND:
            seat = self._to_move
            mask, low, low_shift, high, high_shift = self._responses[seat][self._pile.cards[-1]]
            beat = self._hands[seat] & mask
            return [*low[beat >> low_shift & 1023], *high[beat >> high_shift]]
        if mode in (LEAD_MODE, SECOND_MODE):
            hand = self._hands[self._to_move]
            s, h, d, c = _LEAD_ACTIONS if mode == LEAD_MODE else _SECOND_ACTIONS
            return [
                *s[hand >> 5 & 1023],
                *h[hand >> 21 & 1023],
                *d[hand >> 37 & 1023],
                *c[hand >> 53 & 1023],
            ]
        return self._compute_legal()

    def apply_action(self, action: Action) -> None:
        # ``_play_card`` and ``_guard_deal`` in one body; a card's legality is read from the
        # hand's bits (and the beating mask) instead of a search of the legal list.
        seat = self._to_move
        hands = self._hands
        pile = self._pile
        mode = self._mode
        if action < PICK_UP:  # a negative action has no mode's kind, so it is refused below
            card = action & 63
            kind = action >> 6  # the range (lead, beat, second) is the event kind
            hand = hands[seat]
            legal = 0
            if mode == RESPOND:
                if kind == EV_BEAT:
                    legal = hand & self._responses[seat][pile.cards[-1]][0]
            elif mode == LEAD_MODE:
                legal = hand if kind == EV_LEAD else 0
            elif mode == SECOND_MODE:
                legal = hand if kind == EV_SECOND else 0
            if not legal >> card & 1:
                raise IllegalActionError(self._illegal_message(action))
            hand ^= 1 << card
            hands[seat] = hand
            pile.cards.append(card)
            pile.key = pile.key << 6 | card
            self._history.append(CARD_EVENTS[action][seat])
            if not hand:
                self._hand_emptied(seat)  # the deal is over
                return
            if kind == EV_BEAT:
                mode = self._mode = SECOND_MODE
            else:
                mode = self._mode = RESPOND
                seat = self._to_move = 1 - seat
        elif action == PICK_UP and mode == RESPOND:
            self._pick_up(seat)
            seat, mode = self._to_move, self._mode
        elif action in self._compute_legal():
            self._choose(seat, action)
            return
        else:
            raise IllegalActionError(self._illegal_message(action))
        turns = self._turns = self._turns + 1
        if turns >= self.game.turn_cap:
            self._end_at_cap()
            return
        # ``_note_position``'s key, built without unpacking. ``turns`` is new to ``_once`` (it
        # grows every move), so the key was there already if ``setdefault`` hands back another
        # value: one hash of the key for a new position.
        key = (pile.key, seat, mode, hands[0])
        if self._once.setdefault(key, turns) != turns:
            twice = self._twice
            if key in twice:
                self._end_deal(None, "repetition")
            else:
                twice.add(key)

    def _other_legal(self) -> list[Action]:
        base = CHOOSE_SIDE if len(self._suits) == 1 else CHOOSE_TRUMP
        return [base + s for s in range(4) if s not in self._suits]

    # ----- moves ---------------------------------------------------------------------------

    def _play_card(self, seat: int, card: Card, kind: int) -> None:
        hand = self._hands[seat] ^ (1 << card)
        self._hands[seat] = hand
        self._pile.push(card)
        self._history.append((kind, seat, card))
        if not hand:
            self._hand_emptied(seat)
        elif kind == EV_BEAT:
            self._mode = SECOND_MODE
        else:
            self._mode = RESPOND
            self._to_move = 1 - seat

    def _hand_emptied(self, seat: int) -> None:
        """``seat`` wins, unless the draw rule saves the other player."""
        other = 1 - seat
        top = self._pile.cards[-1]
        draw = self.game.draw_rule and beating.single_card_beats(
            self._hands[other], top, self._trump(other)
        )
        self._end_deal(None if draw else seat, "draw" if draw else "out")

    def _pick_up(self, seat: int) -> None:
        taken = self._pile.take(len(self._pile))
        self._hands[seat] |= cards.mask(taken)
        self._history.append((EV_PICK_UP, seat, *taken))
        self._mode = LEAD_MODE
        self._to_move = seat if self.game.taker_leads else 1 - seat

    def _choose(self, seat: int, action: Action) -> None:
        """Dealer: trump, then side suit; opponent: trump. The last suit is the opponent's side."""
        if action >= CHOOSE_SIDE:
            self._suits.append(action - CHOOSE_SIDE)
            self._history.append((EV_CHOOSE_SIDE, seat, action - CHOOSE_SIDE))
            self._to_move = 1 - seat
            return
        self._suits.append(action - CHOOSE_TRUMP)
        self._history.append((EV_CHOOSE_TRUMP, seat, action - CHOOSE_TRUMP))
        if len(self._suits) == 3:
            self._suits.append(next(s for s in range(4) if s not in self._suits))
            self._deal()

    # ----- termination ---------------------------------------------------------------------

    def _guard_deal(self) -> None:
        """Third repetition of a position draws; at the cap, fewer cards wins."""
        self._turns += 1
        if self._turns >= self.game.turn_cap:
            self._end_at_cap()
        elif self._note_position() >= 3:
            self._end_deal(None, "repetition")

    def _note_position(self) -> int:
        """Count one more occurrence of the current position; return how many there have been
        (3 at most: the third ends the deal). Positions seen once are in ``_once`` (with the
        turn of the first sighting), those seen twice also in ``_twice``.

        The second hand is left out of the key: no card leaves play during a deal, so it is
        whatever the pile and the first hand do not hold."""
        key = (self._pile.key, self._to_move, self._mode, self._hands[0])
        if key not in self._once:
            self._once[key] = self._turns
            return 1
        if key not in self._twice:
            self._twice.add(key)
            return 2
        return 3

    def _end_at_cap(self) -> None:
        """The turn cap: fewer cards wins."""
        a, b = (h.bit_count() for h in self._hands)
        self._end_deal(None if a == b else (0 if a < b else 1), "turn_cap")

    def _end_deal(self, winner: int | None, reason: str) -> None:
        self._results.append(
            {"deal": self._index, "dealer": self._dealer, "winner": winner, "reason": reason}
        )
        if winner is None:
            self._points[0] += 0.5
            self._points[1] += 0.5
        else:
            self._points[winner] += 1.0
        if self._index + 1 >= self.game.deals:
            self._mode = OVER
            self._legal = []
            return
        self._index += 1
        self._start_deal()

    def result(self) -> Result:
        return Result(
            ranking=ranking_from_scores(self._points),
            scores=tuple(self._points),
            detail={"deals": [dict(r) for r in self._results]},
        )

    # ----- views ---------------------------------------------------------------------------

    def _event_json(self, event: tuple[int, ...]) -> JSON:
        shared = self._shared_event_json(event)
        if shared is not None:
            return shared
        kind, seat = event[0], event[1]
        word = "choose_trump" if kind == EV_CHOOSE_TRUMP else "choose_side"
        return {"type": word, "seat": seat, "suit": cards.SUITS[event[2]]}

    def _seat_suits(self) -> tuple[list[str | None], list[str | None]]:
        trumps: list[str | None] = [None, None]
        sides: list[str | None] = [None, None]
        d = self._dealer
        chosen = [cards.SUITS[s] for s in self._suits] + [None] * (4 - len(self._suits))
        trumps[d], sides[d], trumps[1 - d], sides[1 - d] = chosen
        return trumps, sides

    def full_view(self) -> JSON:
        return self._view(True)

    def full_view_parts(self) -> JSON:
        return self._view(False)

    def _view(self, events: bool) -> JSON:
        over = self._mode == OVER
        trumps, sides = self._seat_suits()
        return {
            "game": SPEC.name,
            "players": 2,
            "deal": self._index,
            "deals": self.game.deals,
            "dealer": self._dealer,
            "to_move": None if over else self._to_move,
            "mode": MODE_NAMES[self._mode],
            "trumps": trumps,
            "side_suits": sides,
            "hands": [cards.mask_strs(h) for h in self._hands],
            "hand_counts": [h.bit_count() for h in self._hands],
            "pile": cards.strs(self._pile.cards),
            "history": [self._event_json(e) for e in self._history] if events else None,
            "points": list(self._points),
            "turns_left": self.game.turn_cap - self._turns,
            "deal_results": [dict(r) for r in self._results],
        }

    def observation(self, seat: int | None) -> JSON:
        """Everything is face up: every seat (and a spectator) sees the whole table."""
        return self._observation(seat, True)

    def observation_parts(self, seat: int | None) -> tuple[JSON, EventLog]:
        return self._observation(seat, False), EventLog(self._history, self._event_json)

    def _observation(self, seat: int | None, events: bool) -> JSON:
        obs = self._view(events)
        obs["seat"] = seat
        if seat is not None:
            obs["hand"] = obs["hands"][seat]
        return obs

    def private_cards(self, seat: int) -> set[str]:
        return set()
