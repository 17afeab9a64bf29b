"""Svoi Kozyri, the trick-taking game: every player plays with a secret trump suit of their own.

Rules: ``seeds/svoi-kozyri-tricks.md``. A match is a series of deals played to a target score.
Each deal: the cards are dealt, every player (or, with teams, one partner per team) secretly
chooses a trump suit, then the hands are played out trick by trick.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena import cards
from arena.cards import Card, Suit
from arena.games.base import (
    JSON,
    TERMINAL,
    Action,
    ConfigError,
    EventLog,
    Game,
    GameSpec,
    IllegalActionError,
    Param,
    State,
    deal_rng,
    secret_action,
)
from arena.games.tricktaking import (
    OVER,
    Play,
    Trick,
    TrickTakingState,
    hand_strs,
    next_seat,
    parse_card_action,
    seats_from,
    shuffled_pack,
)

PACK_SIZE = 36
CHOOSE = 64
"""Action ``CHOOSE + suit`` chooses a trump suit; actions below it play the card of that number."""

CHOOSE_PHASE, PLAY_PHASE = "choose", "play"

SPEC = GameSpec(
    name="svoi-kozyri-tricks",
    title="Svoi Kozyri: tricks with secret trumps",
    min_players=3,
    max_players=5,
    default_players=4,
    params=(
        Param("target", 20, "points that end the match, checked after each deal", minimum=1),
        Param("max_deals", 60, "deals after which a tie for the lead is shared", minimum=1),
        Param(
            "reveal",
            "on_use",
            "which trumping cards are flagged: every one (on_use) or only the winner (on_win)",
            kind="str",
            choices=("on_use", "on_win"),
        ),
        Param("blind", False, "trumps are chosen before the hand is seen", kind="bool"),
        Param("teams", False, "two teams of partners sitting opposite (4 players)", kind="bool"),
    ),
    variants={
        "blind": {"blind": True},
        "teams": {"teams": True, "players": 4},
        "reveal-on-win": {"reveal": "on_win"},
    },
    rulebook="seeds/svoi-kozyri-tricks.md",
)


class SvoiKozyriTricks(Game):
    """3-5 players, 36 cards, one secret trump suit per player (or per team)."""

    spec = SPEC

    @classmethod
    def length_params(cls, deals: int) -> JSON:
        """A match is played to a target score, so a length in deals caps it."""
        return {"max_deals": deals}

    def validate(self) -> None:
        if self.params["teams"] and self.players != 4:
            raise ConfigError("svoi-kozyri-tricks with teams is for exactly 4 players")
        self.flag_on_use: bool = self.params["reveal"] == "on_use"
        self.teams: bool = bool(self.params["teams"])  # two teams of partners sitting opposite

    def units(self) -> list[list[int]]:
        """The scoring units: partners opposite with teams, otherwise every seat alone."""
        if self.teams:
            return [[0, 2], [1, 3]]
        return [[seat] for seat in range(self.players)]

    def hand_size(self) -> int:
        return PACK_SIZE // self.players

    def action_seen_by(self, action: JSON, actor: int, viewer: int | None) -> JSON:
        """A trump choice is secret: only the chooser and (with teams) the partner know it."""
        if action.get("type") != "choose_trump" or viewer == actor:
            return action
        if self.teams and viewer is not None and viewer % 2 == actor % 2:
            return action
        return secret_action(action)

    def new_state(self, seed: int) -> TricksState:
        return TricksState(self, seed)

    def position(
        self,
        hands: Sequence[Sequence[str]],
        trumps: Sequence[str],
        leader: int = 0,
        revealed: Sequence[int] = (),
        seed: int = 0,
    ) -> TricksState:
        """A deal set up by hand, for tests and examples: play starts with ``leader`` to lead.

        ``hands`` lists each seat's cards (all the same length), ``trumps`` each seat's suit,
        ``revealed`` the seats whose trump is already public. Later deals come from ``seed``.
        """
        if len(hands) != self.players or len(trumps) != self.players:
            raise ConfigError(f"a position needs {self.players} hands and trumps")
        state = TricksState(self, seed)
        state.hands = [sorted(cards.parse(c) for c in hand) for hand in hands]
        state.trumps = [cards.parse_suit(t) for t in trumps]
        state.revealed = [seat in revealed for seat in range(self.players)]
        state.dealer = (leader - 1) % self.players
        state.choosers, state.phase, state.to_move = [], PLAY_PHASE, leader
        state.trick, state.dead = Trick(leader), None
        state.history = [{"type": "deal", "deal": 0, "dealer": state.dealer}]
        return state

    def greedy_action(self, state: State, rng: random.Random) -> Action:
        assert isinstance(state, TricksState)
        if state.phase == CHOOSE_PHASE:
            return CHOOSE + strongest_suit(state.visible_hand(state.current_player()))
        return greedy_play(state)


@dataclass
class DealRecord:
    """What the finished deal gave: tricks and points per seat (numbers only, no cards)."""

    deal: int
    tricks: list[int]
    points: list[int]

    def to_json(self) -> JSON:
        return {"deal": self.deal, "tricks": self.tricks, "points": self.points}


PLAY_EVENTS = tuple(
    tuple({"type": "play", "seat": seat, "card": cards.NAMES[c]} for c in range(64))
    for seat in range(SPEC.max_players)
)
"""Each seat's history event of laying each card. Events are never changed once recorded (an
observation copies them), so every match shares these."""

TRICK_EVENTS = tuple({"type": "trick", "winner": seat} for seat in range(SPEC.max_players))
"""Each seat's history event of winning a trick, shared as ``PLAY_EVENTS``."""

NEXT = {n: tuple((seat + 1) % n for seat in range(n)) for n in range(1, SPEC.max_players + 1)}
"""Per table size, the seat left of each seat."""


@dataclass
class TricksState(TrickTakingState):
    """One match of Svoi Kozyri tricks in progress."""

    game: SvoiKozyriTricks
    seed: int
    deal_no: int = 0
    dealer: int = 0
    hands: list[list[Card]] = field(default_factory=list)
    dead: Card | None = None
    trumps: list[Suit | None] = field(default_factory=list)
    revealed: list[bool] = field(default_factory=list)
    choosers: list[int] = field(default_factory=list)
    phase: str = CHOOSE_PHASE
    to_move: int = 0
    trick: Trick = field(default_factory=lambda: Trick(0))
    trumping: list[bool] = field(default_factory=list)
    tricks: list[Trick] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    last_deal: DealRecord | None = None
    history: list[JSON] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.scores = [0] * self.game.players
        self._deal()

    # ---- dealing and choosing -------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.game.players

    def _deal(self) -> None:
        n = self.game.players
        self.dealer = (self.deal_no + n - 1) % n
        deck = shuffled_pack(PACK_SIZE, deal_rng(self.seed, self.deal_no))
        size = PACK_SIZE // n
        order = seats_from(next_seat(self.dealer, n), n)
        hands: list[list[Card]] = [[]] * n
        for i, seat in enumerate(order):
            hands[seat] = sorted(deck[i * size : (i + 1) * size])
        self.hands = hands
        self.dead = deck[-1] if n * size < PACK_SIZE else None
        self.trumps = [None] * n
        self.revealed = [False] * n
        self.choosers = order[:2] if self.game.teams else order[:]  # as ``_choosers`` gives
        self.phase, self.to_move = CHOOSE_PHASE, self.choosers[0]
        self.trick, self.trumping, self.tricks = Trick(order[0], []), [], []
        self.history = [{"type": "deal", "deal": self.deal_no, "dealer": self.dealer}]

    def _choosers(self) -> list[int]:
        """Who chooses, in order: everyone from the dealer's left, or one partner per team."""
        order = seats_from(next_seat(self.dealer, self.players), self.players)
        return order[:2] if self.game.teams else order

    def hands_visible(self) -> bool:
        """False while a blind or team trump is being chosen: the cards are not yet seen."""
        blind = self.game.params["blind"] or self.game.teams
        return not (blind and self.phase == CHOOSE_PHASE)

    def visible_hand(self, seat: int) -> list[Card]:
        """The cards ``seat`` can see in their own hand now."""
        return list(self.hands[seat]) if self.hands_visible() else []

    def partner(self, seat: int) -> int | None:
        return (seat + 2) % 4 if self.game.teams else None

    def _choose(self, suit: Suit) -> None:
        seat = self.choosers.pop(0)
        self.trumps[seat] = suit
        mate = self.partner(seat)
        if mate is not None:
            self.trumps[mate] = suit
        self.history.append({"type": "choose_trump", "seat": seat})
        if self.choosers:
            self.to_move = self.choosers[0]
        else:
            self.phase, self.to_move = PLAY_PHASE, self.trick.leader

    # ---- play ----------------------------------------------------------------------------

    def led_suit(self) -> Suit | None:
        return cards.suit_of(self.trick.plays[0].card) if self.trick.plays else None

    def legal_cards(self, seat: int) -> list[Card]:
        """Follow the led suit if you can; otherwise any card (ascending, as hands are held)."""
        hand = self.hands[seat]
        plays = self.trick.plays
        if not plays:
            return hand[:]
        # A held hand is ascending and a suit's cards are consecutive numbers: one slice.
        led = plays[0].card & ~15
        return hand[bisect_left(hand, led) : bisect_left(hand, led + 16)] or hand[:]

    def is_trumping(self, seat: int, card: Card) -> bool:
        """A card trumps when it is of the player's trump, off the led suit, and they are void."""
        led = self.led_suit()
        if led is None or cards.suit_of(card) != self.trumps[seat] or card_suit_is(card, led):
            return False
        return not any(cards.suit_of(c) == led for c in self.hands[seat])

    def _reveal(self, seat: int) -> None:
        """Make ``seat``'s trump (and, with teams, the partner's: the same suit) public."""
        mate = self.partner(seat)
        for who in (seat,) if mate is None else (seat, mate):
            if not self.revealed[who]:
                self.revealed[who] = True
                suit = cards.suit_str(self.trumps[who])  # type: ignore[arg-type]
                self.history.append({"type": "reveal", "seat": who, "suit": suit})

    def _finish_trick(self) -> None:
        trick, trumping = self.trick, self.trumping
        plays = trick.plays
        index = trick_winner([p.card for p in plays], trumping)
        win = plays[index]
        seat = trick.winner = win.seat
        if trumping[index] and not win.flagged:
            win.flagged = True
            self._reveal(seat)
        self.history.append(TRICK_EVENTS[seat])
        self.tricks.append(trick)
        self.trick, self.trumping = Trick(seat, []), []
        self.to_move = seat
        if not self.hands[seat]:
            self._finish_deal()

    # ---- scoring ---------------------------------------------------------------------------

    def _finish_deal(self) -> None:
        won = self.tricks_won()
        points = deal_points(won, self.game.units())
        self.scores = [s + p for s, p in zip(self.scores, points, strict=True)]
        self.last_deal = DealRecord(self.deal_no, won, points)
        self.history.append({"type": "deal_end", "tricks": won, "points": points})
        if self.match_over():
            self.phase, self.to_move = OVER, TERMINAL
        else:
            self.deal_no += 1
            self._deal()

    def match_over(self) -> bool:
        """Someone reached the target with a total nobody else shares, or the deal cap is hit."""
        if self.deal_no + 1 >= self.game.params["max_deals"]:
            return True
        best = max(self.scores)
        if best < self.game.params["target"]:
            return False
        leaders = {tuple(u) for u in self.game.units() if self.scores[u[0]] == best}
        return len(leaders) == 1

    # ---- the State API ----------------------------------------------------------------------

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        if phase == PLAY_PHASE:
            # ``legal_cards`` inlined: this runs once per move.
            hand = self.hands[self.to_move]
            plays = self.trick.plays
            if not plays:
                return hand[:]
            led = plays[0].card & ~15
            return hand[bisect_left(hand, led) : bisect_left(hand, led + 16)] or hand[:]
        if phase == CHOOSE_PHASE:
            return list(_CHOICES)
        return []

    def legal_actions(self) -> list[Action]:
        # Nothing is cached in play: ``apply_action`` checks a card against the hand and the
        # led suit itself.
        if self.phase != PLAY_PHASE:
            return self._compute_legal()
        hand = self.hands[self.to_move]  # ``legal_cards`` inlined: this runs once per move
        plays = self.trick.plays
        if not plays:
            return hand[:]
        led = plays[0].card & ~15
        return hand[bisect_left(hand, led) : bisect_left(hand, led + 16)] or hand[:]

    def apply_action(self, action: Action) -> None:
        # A card's play (``_apply``) in one body: a method call per move is a tenth of its cost.
        if self.phase != PLAY_PHASE:
            if action not in self._compute_legal():
                raise IllegalActionError(f"action {action} is not legal here ({self.phase})")
            self._choose(action - CHOOSE)
            return
        seat = self.to_move
        hand = self.hands[seat]
        plays = self.trick.plays
        trumps = False
        if plays:
            led = plays[0].card & ~15
            if action & ~15 != led:
                # Off the led suit: legal only when void in it (the hand is ascending and a
                # suit's cards are consecutive numbers). Then the card trumps if of the own suit:
                # ``is_trumping`` without its void test.
                at = bisect_left(hand, led)
                if at < len(hand) and hand[at] < led + 16:
                    raise IllegalActionError(f"action {action} is not legal here ({self.phase})")
                trumps = action >> 4 == self.trumps[seat]
        try:
            hand.remove(action)
        except ValueError:
            raise IllegalActionError(f"action {action} is not legal here ({self.phase})") from None
        flagged = trumps and self.game.flag_on_use
        plays.append(Play(seat, action, flagged))
        self.trumping.append(trumps)
        self.history.append(PLAY_EVENTS[seat][action])
        if flagged:
            self._reveal(seat)
        players = self.game.players
        if len(plays) < players:
            self.to_move = NEXT[players][seat]
        else:
            self._finish_trick()

    def _apply(self, action: Action) -> None:
        """Choose a trump, or lay a legal card (the action is the card) for the seat to act."""
        self.apply_action(action)

    def _result_detail(self) -> JSON:
        return {"deals": self.deal_no + 1, "target": self.game.params["target"]}

    def action_to_json(self, action: Action) -> JSON:
        if action >= CHOOSE:
            return {"type": "choose_trump", "suit": cards.suit_str(action - CHOOSE)}
        return {"type": "play", "card": cards.to_str(action)}

    def action_from_json(self, obj: Any) -> Action:
        if isinstance(obj, dict) and obj.get("type") == "choose_trump":
            try:
                return CHOOSE + cards.parse_suit(obj.get("suit"))  # type: ignore[arg-type]
            except cards.CardError as err:
                raise IllegalActionError(str(err)) from None
        return parse_card_action(obj)

    def default_action(self) -> Action:
        """Choose the suit of most cards; play the lowest legal card."""
        if self.phase == CHOOSE_PHASE:
            return CHOOSE + most_cards_suit(self.visible_hand(self.to_move))
        return min(self.legal_actions(), key=lowest_key)

    def private_cards(self, seat: int) -> set[str]:
        return set(cards.strs(self.visible_hand(seat)))

    def known_trumps(self, seat: int | None) -> list[str | None]:
        """Each seat's trump as ``seat`` knows it: own, partner's and the revealed ones."""
        mine = {seat, self.partner(seat)} if seat is not None else set()
        return [
            cards.suit_str(t) if t is not None and (self.revealed[s] or s in mine) else None
            for s, t in enumerate(self.trumps)
        ]

    def hidden_trumps(self, seat: int) -> dict[int, str]:
        """The chosen trumps of other seats that ``seat`` must not know yet (for leak checks)."""
        known = self.known_trumps(seat)
        return {
            s: cards.suit_str(t)
            for s, t in enumerate(self.trumps)
            if t is not None and known[s] is None
        }

    def _public(self, events: bool = True) -> JSON:
        return {
            "game": self.game.name,
            "players": self.players,
            "deal": self.deal_no,
            "dealer": self.dealer,
            "to_move": None if self.to_move == TERMINAL else self.to_move,
            "phase": self.phase,
            "hand_counts": [len(self.visible_hand(s)) for s in range(self.players)],
            "revealed": self.known_trumps(None),
            "trick": self.trick.to_json(),
            "tricks": [t.to_json() for t in self.tricks],
            "tricks_won": self.tricks_won(),
            "scores": list(self.scores),
            "target": self.game.params["target"],
            "teams": self.game.units() if self.game.teams else None,
            "last_deal": self.last_deal.to_json() if self.last_deal else None,
            "history": [dict(e) for e in self.history] if events else None,
        }

    def observation(self, seat: int | None) -> JSON:
        return self._observation(seat, True)

    def observation_parts(self, seat: int | None) -> tuple[JSON, EventLog]:
        return self._observation(seat, False), EventLog(self.history, dict)

    def _observation(self, seat: int | None, events: bool) -> JSON:
        obs = self._public(events)
        obs["seat"] = seat
        obs["trumps"] = self.known_trumps(seat)
        if seat is not None:
            obs["hand"] = hand_strs(self.visible_hand(seat))
            obs["trump"] = obs["trumps"][seat]
            mate = self.partner(seat)
            if mate is not None:
                obs["partner"] = mate
                obs["partner_trump"] = obs["trumps"][mate]
        return obs

    def full_view(self) -> JSON:
        return self._full_view(True)

    def full_view_parts(self) -> JSON:
        return self._full_view(False)

    def _full_view(self, events: bool) -> JSON:
        view = self._public(events)
        view["hands"] = [hand_strs(h) for h in self.hands]
        view["hands_visible"] = self.hands_visible()
        view["trumps"] = [None if t is None else cards.suit_str(t) for t in self.trumps]
        view["dead"] = None if self.dead is None else cards.to_str(self.dead)
        view["trumping"] = list(self.trumping)
        return view


_CHOICES = tuple(CHOOSE + suit for suit in range(4))
"""The trump choices: every suit, whatever others chose."""


def deal_points(won: Sequence[int], units: Sequence[Sequence[int]]) -> list[int]:
    """Points per seat for a deal: a point per trick of the seat's unit (the seat, or its team),
    plus one for the unit that took more than half of the tricks."""
    points = [0] * len(won)
    for unit in units:
        taken = sum(won[s] for s in unit)
        for seat in unit:
            points[seat] = taken + (1 if 2 * taken > sum(won) else 0)
    return points


def card_suit_is(card: Card, suit: Suit) -> bool:
    return cards.suit_of(card) == suit


def trick_winner(played: Sequence[Card], trumping: Sequence[bool]) -> int:
    """Index of the winning play: the highest trumping card (earliest among equal ranks),
    otherwise the highest card of the led suit."""
    best, rank = -1, -1
    if True in trumping:
        for i, card in enumerate(played):
            if trumping[i] and card & 15 > rank:
                best, rank = i, card & 15
        return best
    led = played[0] >> 4
    for i, card in enumerate(played):
        if card >> 4 == led and card & 15 > rank:
            best, rank = i, card & 15
    return best


def lowest_key(card: Card) -> tuple[int, int]:
    """Order for "the lowest card": by rank, then suit order S, H, D, C."""
    return cards.rank_of(card), cards.suit_of(card)


def most_cards_suit(hand: Sequence[Card]) -> Suit:
    """The suit with most cards; ties go to the higher rank total, then suit order S, H, D, C."""

    def weight(suit: Suit) -> tuple[int, int, int]:
        mine = [cards.rank_of(c) for c in hand if cards.suit_of(c) == suit]
        return len(mine), sum(mine), -suit

    return max(range(4), key=weight)


def strongest_suit(hand: Sequence[Card]) -> Suit:
    """The heuristic's trump: length plus a bonus for the high cards (A, K, Q) of the suit."""

    def strength(suit: Suit) -> tuple[int, int]:
        mine = [cards.rank_of(c) for c in hand if cards.suit_of(c) == suit]
        return 2 * len(mine) + sum(max(0, r - 11) for r in mine), -suit

    return max(range(4), key=strength)


def greedy_play(state: TricksState) -> Action:
    """Win the trick as cheaply as possible when a card can still win it, else play low."""
    seat = state.current_player()
    options = state.legal_cards(seat)
    winners = [c for c in options if _would_lead_trick(state, seat, c)]
    if winners and state.trick.plays:
        return min(winners, key=lowest_key)
    return min(options, key=lowest_key)


def _would_lead_trick(state: TricksState, seat: int, card: Card) -> bool:
    """Whether ``card`` would be winning the trick so far, judged from public flags only."""
    played = [p.card for p in state.trick.plays] + [card]
    trumping = [p.flagged for p in state.trick.plays] + [state.is_trumping(seat, card)]
    return trick_winner(played, trumping) == len(played) - 1
