"""Svoi Kozyri ("one's own trumps"), the modern beating game for 2-4 players.

Each player has a trump suit of their own. Players beat the top card of one shared pile and lay a
second card of free choice on top, or pick up cards from the pile; whoever is left holding cards
is the fool. A match is a series of deals; fewest fools wins. The rulebook is
``seeds/svoi-kozyri.md``.

Hands are bitmasks of ``1 << card``; the beating rule, the pile and the action encoding live in
``arena.games.beating``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from arena import cards
from arena.cards import ACE, Suit
from arena.games import beating
from arena.games.base import (
    JSON,
    Action,
    ConfigError,
    EventLog,
    Game,
    IllegalActionError,
    Result,
    State,
    deal_rng,
    ranking_from_scores,
    shuffle,
)
from arena.games.beating import (
    BEAT,
    CARD_EVENTS,
    CHOOSE,
    CHOOSE_TRUMP,
    EV_BEAT,
    EV_LEAD,
    EV_PICK_UP,
    EV_SECOND,
    EXIT,
    LEAD,
    LEAD_MODE,
    OVER,
    PICK_UP,
    RESPOND,
    RESPONSES,
    SECOND,
    SECOND_MODE,
    BeatingState,
    Pile,
)
from arena.games.svoi_kozyri.spec import SPEC

MODE_NAMES = ("choose_trump", "lead", "respond", "lead_after_exit", "second", "over")

PACK_SIZE = 36

EV_TRANSFER, EV_OUT, EV_CHOOSE = range(4, 7)


_LEAD_ACTIONS, _SECOND_ACTIONS = (beating.ACTION_TABLES[b] for b in (LEAD, SECOND))
_BITS = tuple(1 << c for c in range(64))


class SvoiKozyri(Game):
    """The rules object of Svoi Kozyri."""

    spec = SPEC

    def validate(self) -> None:
        p = self.params
        self.pickup_counts: tuple[Any, Any, Any] = (
            p["pickup_plain"],
            p["pickup_own_trump"],
            p["pickup_own_trump_ace"],
        )
        self.choose_trumps: bool = p["trump_assignment"] == "choose"
        self.exit_lead_only: bool = p["exit_beat_next"] == "lead_only"
        self.draw_rule: bool = p["draw_rule"]
        self.turn_cap: int = p["turn_cap"]
        self.pickup_limits: tuple[int, int, int] = tuple(  # type: ignore[assignment]
            PACK_SIZE if c == beating.ALL else int(c) for c in self.pickup_counts
        )
        """The pick-up counts with "all" as the whole pack (a pile never holds more)."""
        self.deals: int = p["deals"]

    def new_state(self, seed: int) -> SvoiKozyriState:
        return SvoiKozyriState(self, seed)

    def greedy_action(self, state: State, rng: random.Random) -> Action:
        assert isinstance(state, SvoiKozyriState)
        return state.greedy_action()

    def position(
        self,
        hands: Sequence[Sequence[str]],
        pile: Sequence[str] = (),
        to_move: int = 0,
        mode: str = "",
        trumps: Sequence[str] | None = None,
        dealer: int | None = None,
        seed: int = 0,
    ) -> SvoiKozyriState:
        """A deal set up by hand, for tests, puzzles and examples.

        ``hands`` lists each seat's cards (wire form); seats with no cards are out. ``pile`` is
        bottom to top. ``mode`` defaults to "lead" on an empty pile, else "respond". Trumps
        default to the seat order S H D C. The match still has ``deals`` deals: later ones are
        dealt from ``seed`` as usual. Cards not named anywhere are simply not in play.
        """
        state = SvoiKozyriState(self, seed)
        state.set_position(hands, pile, to_move, mode, trumps, dealer)
        return state


class SvoiKozyriState(BeatingState):
    """A match of Svoi Kozyri in progress."""

    mode_names = MODE_NAMES

    __slots__ = (
        "_active",
        "_cap",
        "_dealer",
        "_fools",
        "_hands",
        "_history",
        "_index",
        "_known",
        "_legal",
        "_limits",
        "_mode",
        "_n",
        "_next",
        "_once",
        "_pile",
        "_responses",
        "_results",
        "_to_move",
        "_trumps",
        "_turns",
        "_twice",
        "game",
        "seed",
    )

    def __init__(self, game: SvoiKozyri, seed: int) -> None:
        self.game: SvoiKozyri = game
        self.seed = seed
        self._n = game.players
        self._cap = game.turn_cap
        self._limits = game.pickup_limits
        self._fools = [0] * self._n
        self._results: list[JSON] = []
        self._index = 0
        self._dealer = 0
        self._start_deal(first=True)

    # ----- dealing -------------------------------------------------------------------------

    def _start_deal(self, first: bool = False) -> None:
        """Shuffle and deal the current deal; then trumps are chosen, or sixes move at once."""
        n = self._n
        rng = deal_rng(self.seed, self._index)
        deck = cards.pack(PACK_SIZE)
        shuffle(rng, deck)
        if first:
            self._dealer = rng.randrange(n)
        self._hands = [0] * n
        for i, card in enumerate(deck):
            self._hands[(self._dealer + 1 + i) % n] |= 1 << card
        # The cards each seat was seen to receive (pick-ups, sixes handed over). Playing a card
        # does not clear its bit: only ``known & hand`` counts, and a card comes back into a
        # hand only by a pick-up, which shows it again.
        self._known = [0] * n
        self._pile = Pile()
        self._history: list[tuple[int, ...]] = []
        self._once: dict[tuple[int, ...], int] = {}
        self._twice: set[tuple[int, ...]] = set()
        self._turns = 0
        self._legal: list[Action] | None = None
        self._active = [True] * n
        self._link_seats()
        if self.game.choose_trumps:
            self._trumps = [-1] * n
            self._mode = CHOOSE
            self._to_move = (self._dealer + 1) % n
        else:
            self._trumps = list(range(n))
            self._begin_play()

    def _begin_play(self) -> None:
        """Hand over the sixes, then the player left of the dealer leads."""
        self._transfer_sixes()
        self._responses = [RESPONSES[t] for t in self._trumps]
        self._mode = LEAD_MODE
        self._to_move = (self._dealer + 1) % self._n
        self._note_position()

    def _transfer_sixes(self) -> None:
        """Every six of a suit another player owns goes to that owner, as a public event."""
        owner = {suit: seat for seat, suit in enumerate(self._trumps)}
        for step in range(1, self._n + 1):
            giver = (self._dealer + step) % self._n
            for card in cards.unmask(self._hands[giver] & beating.RANK_MASKS[6]):
                receiver = owner.get(card >> 4, giver)
                if receiver != giver:
                    self._hands[giver] ^= 1 << card
                    self._hands[receiver] |= 1 << card
                    self._known[receiver] |= 1 << card
                    self._history.append((EV_TRANSFER, giver, card, receiver))

    def set_position(
        self,
        hands: Sequence[Sequence[str]],
        pile: Sequence[str],
        to_move: int,
        mode: str,
        trumps: Sequence[str] | None,
        dealer: int | None,
    ) -> None:
        """Replace the current deal by an explicit position (see ``SvoiKozyri.position``)."""
        if len(hands) != self._n:
            raise ConfigError(f"{len(hands)} hands for {self._n} players")
        self._hands = [cards.mask(cards.parse(c) for c in hand) for hand in hands]
        self._pile = Pile([cards.parse(c) for c in pile])
        if trumps is not None:
            self._trumps = [cards.parse_suit(s) for s in trumps]
        else:
            self._trumps = list(range(self._n))
        self._responses = [RESPONSES[t] for t in self._trumps]
        self._active = [h != 0 for h in self._hands]
        self._link_seats()
        self._known = [0] * self._n
        self._history = []
        self._once = {}
        self._twice = set()
        self._turns = 0
        self._legal = None
        self._dealer = (to_move - 1) % self._n if dealer is None else dealer
        self._to_move = to_move
        mode = mode or ("respond" if self._pile.cards else "lead")
        self._mode = MODE_NAMES.index(mode)
        self._note_position()

    # ----- legal actions -----------------------------------------------------------------

    def _trump(self, seat: int) -> Suit:
        return self._trumps[seat]

    def _other_legal(self) -> list[Action]:
        if self._mode == EXIT:
            out = beating.card_actions(self._hands[self._to_move], LEAD)
            if not self.game.exit_lead_only:
                out += beating.card_actions(self._beating_cards(), BEAT)
            return out
        taken = set(self._trumps)
        return [CHOOSE_TRUMP + s for s in range(4) if s not in taken]

    def legal_actions(self) -> list[Action]:
        # ``_compute_legal`` and ``card_actions`` inlined for the three modes of nearly every
        # move: each suit's ranks are ten bits of a hand, looked up in tables of action tuples.
        # Nothing is cached: ``apply_action`` checks a card against the hand's bits.
        mode = self._mode
        seat = self._to_move
        if mode == RESPOND:
            mask, low, low_shift, high, high_shift = self._responses[seat][self._pile.cards[-1]]
            beat = self._hands[seat] & mask
            return [*low[beat >> low_shift & 1023], *high[beat >> high_shift]]
        if mode in (LEAD_MODE, SECOND_MODE):
            hand = self._hands[seat]
            s, h, d, c = _LEAD_ACTIONS if mode == LEAD_MODE else _SECOND_ACTIONS
            return [
                *s[hand >> 5 & 1023],
                *h[hand >> 21 & 1023],
                *d[hand >> 37 & 1023],
                *c[hand >> 53 & 1023],
            ]
        return self._compute_legal()

    def apply_action(self, action: Action) -> None:
        # The moves of play (``_play_card``, ``_pick_up``, ``_guard_deal``) in one body: a
        # method call per step is a tenth of a move's cost. A card's legality is read from the
        # hand's bits (and the beating mask) instead of a search of the legal list.
        seat = self._to_move
        hands = self._hands
        pile = self._pile
        mode = self._mode
        if action < PICK_UP:  # a negative action has no mode's kind, so it is refused below
            card = action & 63
            kind = action >> 6  # the range (lead, beat, second) is the event kind
            hand = hands[seat]
            if mode == RESPOND:
                legal = kind == EV_BEAT and hand & self._responses[seat][pile.cards[-1]][0]
            elif mode == LEAD_MODE:
                legal = kind == EV_LEAD and hand
            elif mode == SECOND_MODE:
                legal = kind == EV_SECOND and hand
            else:
                legal = _BITS[card] if action in self._compute_legal() else 0
            if not legal or not legal >> card & 1:
                raise IllegalActionError(self._illegal_message(action))
            hand ^= _BITS[card]
            hands[seat] = hand
            pile.cards.append(card)
            pile.key = pile.key << 6 | card
            self._history.append(CARD_EVENTS[action][seat])
            if kind == EV_BEAT and hand:
                mode = self._mode = SECOND_MODE
            else:
                if not hand and self._goes_out(seat):
                    return
                mode = self._mode = EXIT if kind == EV_BEAT else RESPOND
                seat = self._to_move = self._next[seat]
        elif action == PICK_UP and mode == RESPOND:
            stack = pile.cards
            top = stack[-1]
            plain, own, own_ace = self._limits
            count = plain if top >> 4 != self._trumps[seat] else own_ace if top & 15 == ACE else own
            if count > len(stack):
                count = len(stack)
            taken = stack[-count:]
            del stack[-count:]
            pile.key >>= 6 * count
            picked = sum(map(_BITS.__getitem__, taken))
            hands[seat] |= picked
            self._known[seat] |= picked
            self._history.append((EV_PICK_UP, seat, *taken))
            mode = self._mode = RESPOND if stack else LEAD_MODE
            seat = self._to_move = self._next[seat]
        elif action in self._compute_legal():
            self._choose(seat, action)
            return
        else:
            raise IllegalActionError(self._illegal_message(action))
        turns = self._turns = self._turns + 1
        if turns >= self._cap:
            self._end_by_counts("turn_cap")
            return
        # The key of ``_note_position`` (``seat`` and ``mode`` are the new ones), built without
        # unpacking: cheaper, per table size.
        n = self._n
        key: tuple[int, ...]
        if n == 4:
            key = (pile.key, seat, mode, hands[0], hands[1], hands[2])
        elif n == 3:
            key = (pile.key, seat, mode, hands[0], hands[1])
        else:
            key = (pile.key, seat, mode, *hands[:-1])
        # ``turns`` is new to ``_once`` (it grows every move), so the key was there already if
        # ``setdefault`` hands back another value: one hash of the key for a new position.
        if self._once.setdefault(key, turns) != turns:
            twice = self._twice
            if key in twice:
                self._end_by_counts("repetition")
            else:
                twice.add(key)

    def _note_position(self) -> int:
        """Count one more occurrence of the current position; return how many there have been
        (3 at most: the third ends the deal). Positions seen once are in ``_once``, those seen
        twice also in ``_twice``.

        The last hand is left out of the key: no card leaves play during a deal, so it is
        whatever the pile and the other hands do not hold."""
        key = (self._pile.key, self._to_move, self._mode, *self._hands[:-1])
        if key not in self._once:
            self._once[key] = self._turns
            return 1
        if key not in self._twice:
            self._twice.add(key)
            return 2
        return 3

    # ----- moves ---------------------------------------------------------------------------

    def _choose(self, seat: int, action: Action) -> None:
        suit = action - CHOOSE_TRUMP
        self._trumps[seat] = suit
        self._history.append((EV_CHOOSE, seat, suit))
        nxt = (seat + 1) % self._n
        if nxt == (self._dealer + 1) % self._n:
            self._begin_play()
        else:
            self._to_move = nxt

    def _link_seats(self) -> None:
        """``_next[seat]``: the active seat after ``seat``, for every seat (after a change of
        who is active; with nobody active, nobody moves on)."""
        seats = range(self._n)
        self._next = [self._next_active(s) for s in seats] if any(self._active) else [*seats]

    def _next_active(self, seat: int) -> int:
        n = self._n
        active = self._active
        nxt = (seat + 1) % n
        while not active[nxt]:
            nxt = (nxt + 1) % n
        return nxt

    def _goes_out(self, seat: int) -> bool:
        """Drop ``seat`` (empty hand); return True if that ended the deal."""
        self._active[seat] = False
        self._link_seats()
        self._history.append((EV_OUT, seat))
        left = [s for s in range(self._n) if self._active[s]]
        if len(left) > 1:
            return False
        last = left[0]
        top = self._pile.cards[-1]
        draw = self.game.draw_rule and beating.single_card_beats(
            self._hands[last], top, self._trumps[last]
        )
        self._end_deal(None if draw else last, "draw" if draw else "out")
        return True

    # ----- termination guards --------------------------------------------------------------

    def _end_by_counts(self, reason: str) -> None:
        """The single player holding the most cards loses; a tie for most is a draw."""
        counts = [h.bit_count() for h in self._hands]
        most = max(counts)
        holders = [s for s in range(self._n) if counts[s] == most]
        self._end_deal(holders[0] if len(holders) == 1 else None, reason)

    def _end_deal(self, loser: int | None, reason: str) -> None:
        self._results.append(
            {"deal": self._index, "dealer": self._dealer, "loser": loser, "reason": reason}
        )
        if loser is not None:
            self._fools[loser] += 1
            self._dealer = loser
        if self._index + 1 >= self.game.deals:
            self._mode = OVER
            self._legal = []
            return
        self._index += 1
        self._start_deal()

    def result(self) -> Result:
        fools = self._fools
        return Result(
            ranking=ranking_from_scores(fools, higher_is_better=False),
            scores=tuple(float(len(self._results) - f) for f in fools),
            detail={"fools": list(fools), "deals": [dict(r) for r in self._results]},
        )

    # ----- views ---------------------------------------------------------------------------

    def _event_json(self, event: tuple[int, ...]) -> JSON:
        shared = self._shared_event_json(event)
        if shared is not None:
            return shared
        kind, seat = event[0], event[1]
        if kind == EV_TRANSFER:
            return {
                "type": "transfer",
                "card": cards.to_str(event[2]),
                "from": seat,
                "to": event[3],
            }
        if kind == EV_CHOOSE:
            return {"type": "choose_trump", "seat": seat, "suit": cards.SUITS[event[2]]}
        return {"type": "out", "seat": seat}

    def _public(self, events: bool = True) -> JSON:
        over = self._mode == OVER
        return {
            "game": SPEC.name,
            "players": self._n,
            "deal": self._index,
            "deals": self.game.deals,
            "dealer": self._dealer,
            "to_move": None if over else self._to_move,
            "mode": MODE_NAMES[self._mode],
            "trumps": [cards.SUITS[t] if t >= 0 else None for t in self._trumps],
            "hand_counts": [h.bit_count() for h in self._hands],
            "active": list(self._active),
            "pile": cards.strs(self._pile.cards),
            "known": [
                cards.mask_strs(k & h) for k, h in zip(self._known, self._hands, strict=True)
            ],
            "history": [self._event_json(e) for e in self._history] if events else None,
            "fools": list(self._fools),
            "turns_left": self.game.turn_cap - self._turns,
            "deal_results": [dict(r) for r in self._results],
        }

    def observation(self, seat: int | None) -> JSON:
        return self._observation(seat, True)

    def observation_parts(self, seat: int | None) -> tuple[JSON, EventLog]:
        return self._observation(seat, False), EventLog(self._history, self._event_json)

    def _observation(self, seat: int | None, events: bool) -> JSON:
        obs = self._public(events)
        obs["seat"] = seat
        if seat is not None:
            hidden = self._mode == CHOOSE
            obs["hand"] = [] if hidden else cards.mask_strs(self._hands[seat])
        return obs

    def full_view(self) -> JSON:
        return self._full_view(True)

    def full_view_parts(self) -> JSON:
        return self._full_view(False)

    def _full_view(self, events: bool) -> JSON:
        view = self._public(events)
        view["hands"] = [cards.strs(cards.unmask(h)) for h in self._hands]
        return view

    def private_cards(self, seat: int) -> set[str]:
        return set(cards.strs(cards.unmask(self._hands[seat] & ~self._known[seat])))

    def action_from_json(self, obj: Any) -> Action:
        action = super().action_from_json(obj)
        if action >= beating.CHOOSE_SIDE:
            raise IllegalActionError("svoi-kozyri has no choose_side action")
        return action
