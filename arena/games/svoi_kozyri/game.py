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
    BEAT,
    CHOOSE,
    CHOOSE_TRUMP,
    EV_BEAT,
    EV_PICK_UP,
    EXIT,
    LEAD,
    LEAD_MODE,
    OVER,
    RESPOND,
    SECOND_MODE,
    BeatingState,
    Pile,
)

MODE_NAMES = ("choose_trump", "lead", "respond", "lead_after_exit", "second", "over")

PACK_SIZE = 36

EV_TRANSFER, EV_OUT, EV_CHOOSE = range(4, 7)

_PICKUP_CHOICES = (beating.ALL,)

SPEC = GameSpec(
    name="svoi-kozyri",
    title="Svoi Kozyri",
    min_players=2,
    max_players=4,
    default_players=4,
    params=(
        Param("deals", 8, "deals in a match", minimum=1, maximum=1000),
        Param(
            "trump_assignment",
            "seat",
            "seat: seat k owns suit k of S H D C; choose: players pick in turn before each deal",
            kind="str",
            choices=("seat", "choose"),
        ),
        Param(
            "pickup_plain",
            3,
            "cards picked up from a top card not of one's own trump",
            minimum=1,
            maximum=36,
            choices=_PICKUP_CHOICES,
        ),
        Param(
            "pickup_own_trump",
            5,
            "cards picked up from a top card of one's own trump",
            minimum=1,
            maximum=36,
            choices=_PICKUP_CHOICES,
        ),
        Param(
            "pickup_own_trump_ace",
            beating.ALL,
            "cards picked up from one's own trump ace",
            minimum=1,
            maximum=36,
            choices=_PICKUP_CHOICES,
        ),
        Param(
            "exit_beat_next",
            "lead_or_beat",
            "after a player goes out on a beat, the next player may lead or beat (not pick up), "
            "or only lead",
            kind="str",
            choices=("lead_or_beat", "lead_only"),
        ),
        Param(
            "draw_rule",
            True,
            "a last player whose single card beats the top card draws",
            kind="bool",
        ),
        Param(
            "turn_cap",
            1000,
            "actions per deal before the deal is decided by card counts",
            minimum=10,
            maximum=100000,
        ),
    ),
    variants={
        "modern": {},
        "classic": {
            "pickup_plain": beating.ALL,
            "pickup_own_trump": beating.ALL,
            "pickup_own_trump_ace": beating.ALL,
        },
        "choose": {"trump_assignment": "choose"},
    },
    default_variant="modern",
    rulebook="seeds/svoi-kozyri.md",
)


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
        "_dealer",
        "_fools",
        "_hands",
        "_history",
        "_index",
        "_known",
        "_legal",
        "_mode",
        "_n",
        "_pile",
        "_results",
        "_seen",
        "_to_move",
        "_trumps",
        "_turns",
        "game",
        "seed",
    )

    def __init__(self, game: SvoiKozyri, seed: int) -> None:
        self.game: SvoiKozyri = game
        self.seed = seed
        self._n = game.players
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
        self._known = [0] * n
        self._pile = Pile()
        self._history: list[tuple[int, ...]] = []
        self._seen: dict[tuple[int, ...], int] = {}
        self._turns = 0
        self._legal: list[Action] | None = None
        self._active = [True] * n
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
        self._active = [h != 0 for h in self._hands]
        self._known = [0] * self._n
        self._history = []
        self._seen = {}
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

    # ----- moves ---------------------------------------------------------------------------

    def _play_card(self, seat: int, card: Card, kind: int) -> None:
        """Lay ``card`` on the pile (a lead, a beat or a second card) and pass the turn on."""
        hand = self._hands[seat] ^ (1 << card)
        self._hands[seat] = hand
        self._known[seat] &= hand
        pile = self._pile  # ``Pile.push`` inlined: this runs for most moves
        pile.cards.append(card)
        pile.key = pile.key << 6 | card
        self._history.append((kind, seat, card))
        if not hand and self._goes_out(seat):
            return
        if kind == EV_BEAT:
            if hand:
                self._mode = SECOND_MODE
                return
            self._mode = EXIT
        else:
            self._mode = RESPOND
        n, active = self._n, self._active  # ``_next_active`` inlined
        nxt = (seat + 1) % n
        while not active[nxt]:
            nxt = (nxt + 1) % n
        self._to_move = nxt

    def _pick_up(self, seat: int) -> None:
        pile = self._pile
        top = pile.cards[-1]
        count = beating.pickup_count(top, self._trumps[seat], self.game.pickup_counts, len(pile))
        taken = pile.take(count)
        picked = cards.mask(taken)
        self._hands[seat] |= picked
        self._known[seat] |= picked
        self._history.append((EV_PICK_UP, seat, *taken))
        self._mode = RESPOND if pile.cards else LEAD_MODE
        self._to_move = self._next_active(seat)

    def _choose(self, seat: int, action: Action) -> None:
        suit = action - CHOOSE_TRUMP
        self._trumps[seat] = suit
        self._history.append((EV_CHOOSE, seat, suit))
        nxt = (seat + 1) % self._n
        if nxt == (self._dealer + 1) % self._n:
            self._begin_play()
        else:
            self._to_move = nxt

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

    def _guard_deal(self) -> None:
        """End the deal at the turn cap or on the third occurrence of a position."""
        turns = self._turns = self._turns + 1
        if turns >= self.game.turn_cap:
            self._end_by_counts("turn_cap")
            return
        # ``_note_position`` inlined: this runs after nearly every move.
        key = (self._pile.key, self._to_move, self._mode, *self._hands)
        seen = self._seen
        count = seen[key] = seen.get(key, 0) + 1
        if count >= 3:
            self._end_by_counts("repetition")

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
            "known": [cards.mask_strs(k) for k in self._known],
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
        view = self._public()
        view["hands"] = [cards.strs(cards.unmask(h)) for h in self._hands]
        return view

    def private_cards(self, seat: int) -> set[str]:
        return set(cards.strs(cards.unmask(self._hands[seat] & ~self._known[seat])))

    def action_from_json(self, obj: Any) -> Action:
        action = super().action_from_json(obj)
        if action >= beating.CHOOSE_SIDE:
            raise IllegalActionError("svoi-kozyri has no choose_side action")
        return action
