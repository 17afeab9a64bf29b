"""Kozyr Boys (Réunion): three players, 32 cards, two jacks on top of the trumps.

Rules: ``seeds/kozyr-boys.md``. A match is three deals, each player dealing once. In each deal the
dealer takes the two cards left over (the top one, turned up, sets trumps) and discards two face
down; then ten tricks are played for card points.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena import cards
from arena.cards import Card
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
    Result,
    State,
    deal_rng,
    ranking_from_scores,
    secret_action,
)
from arena.games.kozyr_boys.rules import (
    Trumps,
    deal_points,
    deal_units,
    discard_pairs,
    final_units,
)
from arena.games.kozyr_boys.tables import (
    NEXT,
    PACK_SIZE,
    PICKS,
    PLAY_EVENTS,
    PLAYERS,
    TRICK_EVENTS,
    Members,
    play_tables,
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

DISCARD = 64
"""Action ``DISCARD + 64 * low + high`` discards the pair of cards ``low < high``; lower actions
play the card of that number."""

PAIR_ACTIONS = {(low, high): DISCARD + 64 * low + high for low in range(64) for high in range(64)}
"""The discard action of each pair of cards (``low < high`` in a legal pair)."""

DISCARD_PHASE, PLAY_PHASE = "discard", "play"
DISCARD_RULES = ("seed", "no_aces_bowers", "one_ten")


SPEC = GameSpec(
    name="kozyr-boys",
    title="Kozyr Boys (Réunion)",
    min_players=PLAYERS,
    max_players=PLAYERS,
    default_players=PLAYERS,
    params=(
        Param(
            "discard_rule",
            "seed",
            "what the dealer may not discard: aces and trumps (seed), aces and bowers "
            "(no_aces_bowers), or aces, bowers and more than one ten (one_ten)",
            kind="str",
            choices=DISCARD_RULES,
        ),
        Param(
            "settlement",
            "points",
            "points: the match is won on points; units: side payments in units decide it",
            kind="str",
            choices=("points", "units"),
        ),
        Param("rounds", 1, "times each player deals (3 deals per round)", minimum=1, maximum=20),
    ),
    variants={
        "aces-bowers": {"discard_rule": "no_aces_bowers"},
        "one-ten": {"discard_rule": "one_ten"},
        "units": {"settlement": "units"},
    },
    rulebook="seeds/kozyr-boys.md",
)


class KozyrBoys(Game):
    """Réunion for three players: three deals, each player dealing once."""

    spec = SPEC

    @classmethod
    def length_params(cls, deals: int) -> JSON:
        """A match is played in rounds in which each of the three players deals once."""
        if deals % PLAYERS:
            raise ConfigError(
                f"{cls.spec.name} is played in rounds of {PLAYERS} deals: --deals must be "
                f"{PLAYERS}, {2 * PLAYERS}, ..."
            )
        return {"rounds": deals // PLAYERS}

    def new_state(self, seed: int) -> KozyrBoysState:
        return KozyrBoysState(self, seed)

    def action_seen_by(self, action: JSON, actor: int, viewer: int | None) -> JSON:
        """The dealer's discard is laid aside face down: the others learn only that he discarded."""
        if action.get("type") == "discard" and viewer != actor:
            return secret_action(action)
        return action

    def position(
        self,
        hands: Sequence[Sequence[str]],
        turned: str,
        dealer: int = 0,
        discards: Sequence[str] = (),
        second: str | None = None,
        seed: int = 0,
    ) -> KozyrBoysState:
        """A deal set up by hand, for tests and examples.

        Without ``discards`` the dealer's hand should hold 12 cards (the turned one among them)
        and the deal starts with his discard; with them, play starts left of the dealer.
        ``second`` is the other leftover card (by default the dealer's last card that is not the
        turned one). Later deals come from ``seed``.
        """
        state = KozyrBoysState(self, seed)
        state.hands = [sorted(cards.parse(c) for c in hand) for hand in hands]
        state.dealer, state.turned = dealer, cards.parse(turned)
        state._set_trumps(Trumps.of(cards.suit_of(state.turned)))
        others = [c for c in state.hands[dealer] if c != state.turned]
        state.second = cards.parse(second) if second else others[-1]
        state.discards = sorted(cards.parse(c) for c in discards)
        state.trick = Trick(next_seat(dealer, PLAYERS))
        state.phase = PLAY_PHASE if discards else DISCARD_PHASE
        state.to_move = state.trick.leader if discards else dealer
        state.history = [{"type": "deal", "deal": 0, "dealer": dealer}]
        return state

    def greedy_action(self, state: State, rng: random.Random) -> Action:
        assert isinstance(state, KozyrBoysState)
        if state.phase == DISCARD_PHASE:
            return state.default_action()
        return greedy_play(state)


@dataclass
class DealRecord:
    """What a finished deal gave, per seat (numbers only, so no card leaks into the next deal)."""

    deal: int
    dealer: int
    tricks: list[int]
    card_points: list[int]
    discard_points: int
    points: list[int]
    units: list[int] | None = None

    def to_json(self) -> JSON:
        record = {
            "deal": self.deal,
            "dealer": self.dealer,
            "tricks": self.tricks,
            "card_points": self.card_points,
            "discard_points": self.discard_points,
            "points": self.points,
        }
        return record if self.units is None else {**record, "units": self.units}


@dataclass
class KozyrBoysState(TrickTakingState):
    """One match of Kozyr Boys in progress."""

    game: KozyrBoys
    seed: int
    deal_no: int = 0
    first_dealer: int = 0
    dealer: int = 0
    hands: list[list[Card]] = field(default_factory=list)
    turned: Card = 0
    second: Card = 0
    discards: list[Card] = field(default_factory=list)
    trumps: Trumps = field(default_factory=lambda: Trumps.of(0))
    phase: str = DISCARD_PHASE
    to_move: int = 0
    trick: Trick = field(default_factory=lambda: Trick(0))
    tricks: list[Trick] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    deals: list[DealRecord] = field(default_factory=list)
    history: list[JSON] = field(default_factory=list)
    units: list[float] = field(default_factory=list)
    captures: list[tuple[int, int]] = field(default_factory=list)
    legal_cache: list[Action] | None = field(default=None, repr=False)
    play_table: tuple[tuple[Play, ...], ...] = field(default=(), repr=False)
    trick_keys: tuple[int, ...] = field(default=(), repr=False)
    suit_members: tuple[Members, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self.scores = [0] * PLAYERS
        self.units = [0.0] * PLAYERS
        self._deal()

    # ---- dealing and discarding ------------------------------------------------------------

    def _deal(self) -> None:
        rng = deal_rng(self.seed, self.deal_no)
        if self.deal_no == 0:
            self.first_dealer = rng.randrange(PLAYERS)  # the first dealer is drawn by lot
        self.dealer = (self.first_dealer + self.deal_no) % PLAYERS
        deck = shuffled_pack(PACK_SIZE, rng)
        order = seats_from(next_seat(self.dealer, PLAYERS), PLAYERS)
        hands: list[list[Card]] = [[], [], []]
        for seat, pick in zip(order, PICKS, strict=True):
            hands[seat] = sorted(pick(deck))
        self.hands = hands
        self.turned, self.second = deck[-2:]
        self._set_trumps(Trumps.of(self.turned >> 4))
        self.discards, self.tricks, self.captures = [], [], []
        self.phase, self.to_move = DISCARD_PHASE, self.dealer
        self.trick = Trick(order[0])
        turned = cards.to_str(self.turned)
        self.history = [{"type": "deal", "deal": self.deal_no, "dealer": self.dealer}]
        self.history.append({"type": "turn", "card": turned})

    def _set_trumps(self, trumps: Trumps) -> None:
        """Set the deal's trumps, with each seat's ``Play`` of each card and the trick keys."""
        self.trumps = trumps
        self.play_table, self.trick_keys, self.suit_members = play_tables(trumps.suit)

    def _discard(self, pair: tuple[Card, Card]) -> None:
        for card in pair:
            self.hands[self.dealer].remove(card)
        self.discards = sorted(pair)
        self.history.append({"type": "discard", "seat": self.dealer})
        self.phase, self.to_move = PLAY_PHASE, self.trick.leader

    # ---- play ------------------------------------------------------------------------------

    def legal_cards(self) -> list[Card]:
        led = self.trick.plays[0].card if self.trick.plays else None
        return self.trumps.legal_plays(self.hands[self.to_move], led)

    def _finish_trick(self) -> None:
        trick, trumps = self.trick, self.trumps
        plays = trick.plays
        first, second, third = plays
        c0, c1, c2 = first.card, second.card, third.card
        suits, keys = trumps.suits, self.trick_keys
        led = suits[c0]
        k1 = keys[c1] + 20 if suits[c1] == led else keys[c1]
        k2 = keys[c2] + 20 if suits[c2] == led else keys[c2]
        best = keys[c0] + 20
        win = first
        if k1 > best:
            best, win = k1, second
        if k2 > best:
            win = third
        winner = trick.winner = win.seat
        right, left = trumps.right, trumps.left
        if (c0 == right or c1 == right or c2 == right) and (c0 == left or c1 == left or c2 == left):
            loser = first if c0 == left else second if c1 == left else third
            self.captures.append((winner, loser.seat))
        values = trumps.values
        points = values[c0] + values[c1] + values[c2]
        self.history.append(TRICK_EVENTS[winner][points])
        self.tricks.append(trick)
        self.trick, self.to_move = Trick(winner, []), winner
        if not self.hands[winner]:
            self._finish_deal()

    # ---- scoring ---------------------------------------------------------------------------

    def card_points(self) -> list[int]:
        """Card points taken in tricks so far this deal, per seat (public: tricks are face up)."""
        taken = [0] * PLAYERS
        values = self.trumps.values
        for t in self.tricks:
            first, second, third = t.plays
            taken[t.winner] += values[first.card] + values[second.card] + values[third.card]  # type: ignore[index]
        return taken

    def deal_record(self) -> DealRecord:
        """Score the finished deal."""
        won, taken = self.tricks_won(), self.card_points()
        discard = sum(self.trumps.points(c) for c in self.discards)
        last = self.tricks[-1].winner
        assert last is not None
        if not self.in_units():
            points = deal_points(won, taken, last, self.dealer, discard)
            return DealRecord(self.deal_no, self.dealer, won, taken, discard, points)
        points = deal_points(won, taken, last, self.dealer, discard, no_trick_points=False)
        units = deal_units(won, self.captures)
        return DealRecord(self.deal_no, self.dealer, won, taken, discard, points, units)

    def in_units(self) -> bool:
        """Whether the match is settled in units (the ``units`` settlement)."""
        return bool(self.game.params["settlement"] == "units")

    def _finish_deal(self) -> None:
        record = self.deal_record()
        self.deals.append(record)
        self.scores = [s + p for s, p in zip(self.scores, record.points, strict=True)]
        self.units = [u + p for u, p in zip(self.units, record.units or [0] * PLAYERS, strict=True)]
        self.history.append({"type": "deal_end", **record.to_json()})
        if self.deal_no + 1 >= PLAYERS * self.game.params["rounds"]:
            if self.in_units():
                self.units = [
                    u + f for u, f in zip(self.units, final_units(self.scores), strict=True)
                ]
            self.phase, self.to_move = OVER, TERMINAL
        else:
            self.deal_no += 1
            self._deal()

    # ---- the State API ----------------------------------------------------------------------

    def legal_pairs(self) -> list[tuple[Card, Card]]:
        rule = self.game.params["discard_rule"]
        return discard_pairs(self.hands[self.dealer], self.trumps, rule)

    def _compute_legal(self) -> list[Action]:
        if self.phase == PLAY_PHASE:
            plays = self.trick.plays  # ``legal_cards`` inlined: this runs once per move
            return self.trumps.legal_plays(
                self.hands[self.to_move], plays[0].card if plays else None
            )
        if self.phase == DISCARD_PHASE:
            # The pairs come in (low, high) order, so their actions ascend.
            return list(map(PAIR_ACTIONS.__getitem__, self.legal_pairs()))
        return []

    def legal_actions(self) -> list[Action]:
        legal = self.legal_cache
        if legal is None:
            if self.phase != PLAY_PHASE:
                if self.phase == OVER:
                    return []
                legal = self.legal_cache = self._compute_legal()
                return legal[:]
            hand = self.hands[self.to_move]  # ``Trumps.legal_plays`` inlined: once per move
            plays = self.trick.plays
            if plays:
                trumps, members = self.trumps, self.suit_members
                legal = [*filter(members[trumps.suits[plays[0].card]], hand)]
                if not legal:
                    legal = [*filter(members[trumps.suit], hand)] or hand[:]
            else:
                legal = hand[:]
            self.legal_cache = legal
        return legal[:]

    def apply_action(self, action: Action) -> None:
        legal = self.legal_cache
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(f"action {action} is not legal here ({self.phase})")
        self.legal_cache = None
        if action >= DISCARD:
            self._discard(divmod(action - DISCARD, 64))
            return
        seat = self.to_move  # ``_apply`` inlined: a card's play is most moves
        self.hands[seat].remove(action)
        plays = self.trick.plays
        plays.append(self.play_table[seat][action])
        self.history.append(PLAY_EVENTS[seat][action])
        if len(plays) < PLAYERS:
            self.to_move = NEXT[seat]
        else:
            self._finish_trick()

    def _apply(self, action: Action) -> None:
        """Discard a pair, or lay a legal card (the action is the card) for the seat to act."""
        self.legal_cache = [action]
        self.apply_action(action)

    def _result_detail(self) -> JSON:
        detail: JSON = {"deals": [d.to_json() for d in self.deals]}
        if self.in_units():
            detail["points"] = list(self.scores)
        return detail

    def result(self) -> Result:
        """Ranked by points, or by units with the ``units`` settlement (points in the detail)."""
        if not self.in_units() or not self.is_terminal():
            return super().result()
        units = tuple(self.units)
        return Result(ranking_from_scores(units), units, self._result_detail())

    def action_to_json(self, action: Action) -> JSON:
        if action >= DISCARD:
            low, high = divmod(action - DISCARD, 64)
            return {"type": "discard", "cards": cards.strs((low, high))}
        return {"type": "play", "card": cards.to_str(action)}

    def action_from_json(self, obj: Any) -> Action:
        if isinstance(obj, dict) and obj.get("type") == "discard":
            return DISCARD + 64 * min(pair := parse_pair(obj)) + max(pair)
        return parse_card_action(obj)

    def default_action(self) -> Action:
        """Discard the two lowest-point legal cards; play the lowest legal card."""
        if self.phase == DISCARD_PHASE:
            key = self.trumps.low_key
            low, high = min(self.legal_pairs(), key=lambda p: sorted(map(key, p))[::-1])
            return DISCARD + 64 * low + high
        return min(self.legal_cards(), key=self.trumps.low_key)

    def private_cards(self, seat: int) -> set[str]:
        """The hand (less the turned card, which all saw) and, for the dealer, the discards."""
        mine = list(self.hands[seat])
        if seat == self.dealer:
            mine += self.discards
        return set(cards.strs(c for c in mine if c != self.turned))

    def _public(self, events: bool = True) -> JSON:
        return {
            "game": self.game.name,
            "players": PLAYERS,
            "deal": self.deal_no,
            "deals": PLAYERS * self.game.params["rounds"],
            "dealer": self.dealer,
            "to_move": None if self.to_move == TERMINAL else self.to_move,
            "phase": self.phase,
            "hand_counts": [len(h) for h in self.hands],
            "turned": cards.to_str(self.turned),
            "trumps": cards.suit_str(self.trumps.suit),
            "bowers": cards.strs((self.trumps.right, self.trumps.left)),
            "trick": self.trick.to_json(),
            "tricks": [t.to_json() for t in self.tricks],
            "tricks_won": self.tricks_won(),
            "card_points": self.card_points(),
            "scores": list(self.scores),
            "last_deal": self.deals[-1].to_json() if self.deals else None,
            "history": [dict(e) for e in self.history] if events else None,
            **({"units": list(self.units)} if self.in_units() else {}),
        }

    def observation(self, seat: int | None) -> JSON:
        return self._observation(seat, True)

    def observation_parts(self, seat: int | None) -> tuple[JSON, EventLog]:
        return self._observation(seat, False), EventLog(self.history, dict)

    def _observation(self, seat: int | None, events: bool) -> JSON:
        obs = self._public(events)
        obs["seat"] = seat
        if seat is not None:
            obs["hand"] = hand_strs(self.hands[seat])
        if seat == self.dealer:
            obs["leftover"] = cards.strs((self.turned, self.second))
            obs["discards"] = cards.strs(self.discards)
        return obs

    def full_view(self) -> JSON:
        return self._full_view(True)

    def full_view_parts(self) -> JSON:
        return self._full_view(False)

    def _full_view(self, events: bool) -> JSON:
        view = self._public(events)
        view["hands"] = [hand_strs(h) for h in self.hands]
        view["leftover"] = cards.strs((self.turned, self.second))
        view["discards"] = cards.strs(self.discards)
        view["first_dealer"] = self.first_dealer
        return view


def parse_pair(obj: JSON) -> tuple[Card, Card]:
    """The two distinct cards of a ``{"type": "discard", "cards": [..]}`` wire action."""
    given = obj.get("cards")
    if not isinstance(given, list) or len(given) != 2:
        raise IllegalActionError(f"a discard names exactly two cards, got {given!r}")
    try:
        first, second = (cards.parse(c) for c in given)
    except cards.CardError as err:
        raise IllegalActionError(str(err)) from None
    if first == second:
        raise IllegalActionError("a discard names two different cards")
    return first, second


def greedy_play(state: KozyrBoysState) -> Action:
    """Take a trick worth points (or the last seat's cheap win) with the cheapest winning card;
    otherwise play low."""
    options = state.legal_cards()
    trumps = state.trumps
    played = [p.card for p in state.trick.plays]
    winners = [c for c in options if played and trumps.winner([*played, c]) == len(played)]
    worth = sum(trumps.points(c) for c in played)
    if winners and (worth >= 10 or len(played) == PLAYERS - 1):
        return min(winners, key=trumps.low_key)
    return min(options, key=trumps.low_key)
