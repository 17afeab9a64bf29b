"""Svara: a three-card betting game for 2-6 players (rulebook: ``seeds/svara.md``).

Each deal everyone antes, gets three cards and bets: first a chain of "dark" bets made without
looking, then open betting where every turn costs the current stake. The best hand value takes the
pot; a tie for the best ("svara") keeps the pot for a new deal among the tied players and whoever
pays half the pot to join. Balances are on credit (they may go negative), so there are no all-ins
and no side pots. A match is ``deals`` deals; seats are ranked by net chips.

Hand values live in ``arena.games.svara.hands``, action codes in ``arena.games.svara.actions``,
phases, seat statuses and chips in ``arena.games.svara.table``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from functools import cache
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
    shuffle,
)
from arena.games.svara import actions as svara_actions
from arena.games.svara.actions import (
    CALL,
    DARK_BASE,
    DECLINE,
    FOLD,
    JOIN,
    LOOK,
    MAX_STAKE_LIMIT,
    RAISE_BASE,
    SHOW,
)
from arena.games.svara.hands import HAND_SIZE, HandRules, hand_value, parse_jokers, points
from arena.games.svara.table import ACTIVE, Chips, Phase, Status, SvaraCall

# --- The game -----------------------------------------------------------------------------------


SPEC = GameSpec(
    name="svara",
    title="Svara",
    min_players=2,
    max_players=6,
    default_players=3,
    params=(
        Param("deals", 100, "deals in a match (a svara's new deal is part of its deal)", minimum=1),
        Param("ante", 10, "the ante, which is also the minimum stake", minimum=2),
        Param("max_stake", 100, "the highest stake", minimum=2, maximum=MAX_STAKE_LIMIT),
        Param(
            "step",
            10,
            "stakes are multiples of this (even, so a dark half-bet is whole)",
            minimum=2,
        ),
        Param("pack", 36, "pack size: 24, 28, 32, 36 or 40 cards", minimum=24, maximum=40),
        Param(
            "jokers",
            ["6C"],
            "the joker cards (worth 11, completing any three of a kind)",
            kind="json",
        ),
        Param(
            "scoring",
            "classic",
            "combination table: classic or bulgarian",
            kind="str",
            choices=("classic", "bulgarian"),
        ),
        Param(
            "showdown_rounds",
            10,
            "open rounds after which hands are shown without payment",
            minimum=1,
        ),
        Param("svara_cap", 5, "svaras in a row after which the pot is split", minimum=0),
    ),
    variants={
        "classic": {},
        "two-jokers": {"jokers": ["6C", "AD"]},
        "bulgarian": {"pack": 32, "jokers": ["7C"], "scoring": "bulgarian"},
    },
    default_variant="classic",
    rulebook="seeds/svara.md",
)


class Svara(Game):
    """Svara on credit: antes, a dark chain, open betting, showdowns and svaras."""

    spec = SPEC

    def validate(self) -> None:
        p = self.params
        step = p["step"]
        if step % 2:
            raise ConfigError("step must be even so that a dark half-bet is a whole number")
        for name in ("ante", "max_stake"):
            if p[name] % step:
                raise ConfigError(f"{name} must be a multiple of step ({step})")
        if p["max_stake"] < p["ante"]:
            raise ConfigError("max_stake must be at least the ante")
        if p["pack"] not in cards.PACK_SIZES or p["pack"] < HAND_SIZE * self.players:
            raise ConfigError(f"pack must be one of {cards.PACK_SIZES} with 3 cards per player")
        self.hand_rules = HandRules(parse_jokers(p["jokers"], p["pack"]), p["scoring"])

    def new_state(self, seed: int) -> SvaraState:
        return SvaraState(self, seed)

    def greedy_action(self, state: State, rng: random.Random) -> Action:
        """Look, bet by hand value, show with a good hand, decline svaras."""
        assert isinstance(state, SvaraState)
        return state.greedy(rng)


class SvaraState(State):
    """A match of Svara in progress."""

    game: Svara
    fixed_action_json = True

    def __init__(self, game: Svara, seed: int) -> None:
        n = game.players
        self.game = game
        self.seed = seed
        self._n = n
        self._ante: int = game.params["ante"]
        self._max: int = game.params["max_stake"]
        self._step: int = game.params["step"]
        self._showdown_rounds: int = game.params["showdown_rounds"]
        self._chips = Chips.for_seats(n)
        self._deal = 0
        self._dealer = deal_rng(seed, -1).randrange(n)
        self._history: list[JSON] = []
        self._earlier_rounds: list[list[JSON]] = []
        self._last_deal: list[JSON] | None = None
        self._call = SvaraCall()
        self._legal: list[Action] | None = None
        self._start_deal()

    # --- deals --------------------------------------------------------------------------------

    def _start_deal(self) -> None:
        """Ante and deal a fresh deal to every seat."""
        self._rng = deal_rng(self.seed, self._deal)
        self._svaras = 0
        self._history = []
        self._earlier_rounds = []
        for seat in range(self._n):
            self._chips.pay(seat, self._ante)
        self._history.append({"type": "ante", "amount": self._ante, "pot": self._chips.pot})
        self._deal_cards(list(range(self._n)))

    def _deal_cards(self, participants: Iterable[int]) -> None:
        """Shuffle and deal three cards each, one at a time, from the dealer's left."""
        dealt = set(participants)
        order = [s for s in self._clockwise_from_left() if s in dealt]
        pack = cards.pack(self.game.params["pack"])
        shuffle(self._rng, pack)
        self._hands: list[list[Card]] = [[] for _ in range(self._n)]
        dealt_in = len(order)
        # One card at a time around the table: the k-th seat gets cards k, k + m, k + 2m.
        for k, seat in enumerate(order):
            self._hands[seat] = pack[k : HAND_SIZE * dealt_in : dealt_in]
        self._status = [Status.WAITING if s in dealt else Status.OUT for s in range(self._n)]
        self._seen = [False] * self._n
        self._revealed = [False] * self._n
        self._dark_stake: list[int | None] = [None] * self._n
        self._stake = 0
        self._open_turns = [0] * self._n
        self._open_start: list[int] = []
        # Seats active when open betting began that have not acted since (a show needs none).
        self._waiting_to_act = 0
        self._phase = Phase.DARK
        self._to_move = order[0]
        self._history.append(
            {"type": "deal", "dealer": self._dealer, "players": order, "svara": self._svaras}
        )

    def _clockwise_from_left(self) -> list[int]:
        return [(self._dealer + 1 + i) % self._n for i in range(self._n)]

    def _finish_deal(self) -> None:
        """Move on to the next deal, or end the match."""
        self._last_deal = [e for events in self._earlier_rounds for e in events] + self._history
        self._chips.end_deal()
        if self._deal + 1 >= self.game.params["deals"]:
            self._phase = Phase.OVER
            self._to_move = TERMINAL
            return
        self._deal += 1
        self._dealer = (self._dealer + 1) % self._n
        self._start_deal()

    # --- the dark phase -----------------------------------------------------------------------

    def _apply_dark(self, seat: int, stake: int) -> None:
        self._chips.pay(seat, stake // 2)
        self._stake = stake
        self._status[seat] = Status.DARK
        self._dark_stake[seat] = stake
        self._history.append({"type": "dark", "seat": seat, "amount": stake, "paid": stake // 2})
        following = self._next_in_deal(seat)
        if self._status[following] == Status.DARK:
            self._open(following)
        else:
            self._to_move = following

    def _apply_look(self, seat: int) -> None:
        self._history.append({"type": "look", "seat": seat})
        self._open(seat)

    def _next_in_deal(self, seat: int) -> int:
        """The next seat clockwise that still plays this deal (dark or open phase)."""
        for i in range(1, self._n + 1):
            s = (seat + i) % self._n
            if self._status[s] not in (Status.OUT, Status.FOLDED):
                return s
        return seat

    # --- the open phase -----------------------------------------------------------------------

    def _open(self, starter: int) -> None:
        """End the dark chain: everyone sees their cards and open betting starts at ``starter``."""
        for s in range(self._n):
            if self._status[s] == Status.WAITING:
                self._status[s] = Status.LOOKED
            if self._status[s] != Status.OUT:
                self._seen[s] = True
        if self._stake == 0:
            self._stake = self._ante
        self._open_start = self._active()
        self._waiting_to_act = len(self._open_start)
        self._phase = Phase.OPEN
        self._to_move = starter

    def _active(self) -> list[int]:
        return [s for s in range(self._n) if self._status[s] in ACTIVE]

    def can_show(self) -> bool:
        """Whether a show is legal: everyone active when open betting began has acted since."""
        return self._phase == Phase.OPEN and not self._waiting_to_act

    def _apply_open(self, seat: int, action: Action) -> None:
        if action == FOLD:
            self._status[seat] = Status.FOLDED
            self._history.append({"type": "fold", "seat": seat})
            active = self._active()
            if len(active) == 1:
                self._award(active[0], shown=False)
                return
        elif action == SHOW:
            self._chips.pay(seat, self._stake)
            self._history.append({"type": "show", "seat": seat, "amount": self._stake})
            self._showdown(auto=False)
            return
        else:
            if action != CALL:
                self._stake = action - RAISE_BASE
            self._chips.pay(seat, self._stake)
            kind = "call" if action == CALL else "raise"
            self._history.append({"type": kind, "seat": seat, "amount": self._stake})
        turns = self._open_turns[seat] = self._open_turns[seat] + 1
        if turns == 1:
            self._waiting_to_act -= 1
        following = self._next_in_deal(seat)
        if self._open_turns[following] >= self._showdown_rounds:
            self._showdown(auto=True)
        else:
            self._to_move = following

    # --- the end of a deal --------------------------------------------------------------------

    def _award(self, seat: int, shown: bool) -> None:
        won = self._chips.win(seat)
        self._history.append({"type": "win", "seat": seat, "amount": won, "shown": shown})
        self._finish_deal()

    def _showdown(self, auto: bool) -> None:
        """Reveal every active hand; the best takes the pot, a tie for the best is a svara."""
        rules = self.game.hand_rules
        active = self._active()
        values = {s: hand_value(self._hands[s], rules) for s in active}
        best = max(values.values())
        winners = [s for s in active if values[s] == best]
        for s in active:
            self._revealed[s] = True
        hands = [
            {"seat": s, "cards": cards.strs(self._hands[s]), "value": points(values[s])}
            for s in active
        ]
        self._history.append({"type": "showdown", "auto": auto, "hands": hands, "winners": winners})
        if len(winners) == 1:
            self._award(winners[0], shown=True)
        elif self._svaras >= self.game.params["svara_cap"]:
            self._split(winners)
        else:
            self._begin_svara(winners)

    def _split(self, winners: list[int]) -> None:
        """Share the pot equally; odd chips go one at a time clockwise from the dealer's left."""
        shares = self._chips.split(winners, self._clockwise_from_left())
        self._history.append(
            {"type": "split", "shares": [{"seat": s, "amount": a} for s, a in shares.items()]}
        )
        self._finish_deal()

    def _begin_svara(self, tied: list[int]) -> None:
        self._svaras += 1
        undecided = [s for s in self._clockwise_from_left() if s not in tied]
        self._call = SvaraCall(tied, self._chips.pot // 2, undecided)
        self._history.append(
            {"type": "svara", "tied": tied, "pot": self._chips.pot, "price": self._call.price}
        )
        # A new round of the deal: the pack is shuffled again, so the cards shown so far are
        # kept apart from the events of the round in play.
        self._earlier_rounds.append(self._history)
        self._history = []
        self._phase = Phase.SVARA
        self._next_joiner()

    def _next_joiner(self) -> None:
        seat = self._call.next_to_decide()
        if seat is not None:
            self._to_move = seat
        else:
            self._deal_cards(self._call.players())

    def _apply_svara(self, seat: int, action: Action) -> None:
        if action == JOIN:
            self._chips.pay(seat, self._call.price)
            self._call.joined.append(seat)
            self._history.append({"type": "join", "seat": seat, "amount": self._call.price})
        else:
            self._history.append({"type": "decline", "seat": seat})
        self._next_joiner()

    # --- the State API ------------------------------------------------------------------------

    def current_player(self) -> int:
        return self._to_move

    def is_terminal(self) -> bool:
        return self._phase == Phase.OVER

    @property
    def deal_index(self) -> int:
        return self._deal

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def pot(self) -> int:
        return self._chips.pot

    @property
    def stake(self) -> int:
        """The current stake (0 in the dark phase until someone goes dark)."""
        return self._stake

    @property
    def balances(self) -> list[int]:
        """Net chips per seat since the match began (on credit, so possibly negative)."""
        return list(self._chips.balances)

    @property
    def dealer(self) -> int:
        return self._dealer

    def hand(self, seat: int) -> list[Card]:
        """The cards ``seat`` holds in the deal in play (empty if not dealt in)."""
        return list(self._hands[seat])

    def legal_actions(self) -> list[Action]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal[:]

    def _compute_legal(self) -> list[Action]:
        """The legal actions, from tables of the bets each stake allows (built once per stake)."""
        phase = self._phase
        if phase == Phase.OPEN:
            bets = _open_bets(self._stake, self._max, self._step)
            return bets[1] if self.can_show() else bets[0]
        if phase == Phase.DARK:
            return _dark_bets(max(self._ante, self._stake), self._max, self._step)
        if phase == Phase.SVARA:
            return [JOIN, DECLINE]
        return []

    def apply_action(self, action: Action) -> None:
        legal = self._legal
        if legal is None:
            legal = self._compute_legal()
        if action not in legal:
            raise IllegalActionError(f"action {action!r} is not legal now")
        self._legal = None
        seat = self._to_move
        if self._phase == Phase.DARK:
            if action == LOOK:
                self._apply_look(seat)
            else:
                self._apply_dark(seat, action - DARK_BASE)
        elif self._phase == Phase.OPEN:
            self._apply_open(seat, action)
        else:
            self._apply_svara(seat, action)

    def default_action(self) -> Action:
        legal = self.legal_actions()
        for action in (LOOK, FOLD, DECLINE):
            if action in legal:
                return action
        raise IllegalActionError("the match is over")

    def result(self) -> Result:
        if not self.is_terminal():
            raise IllegalActionError("the match is not over")
        scores = tuple(float(b) for b in self._chips.balances)
        detail = {"balances": list(self._chips.balances), "deals": self._deal + 1}
        return Result(ranking_from_scores(scores), scores, detail)

    def private_cards(self, seat: int) -> set[str]:
        if self._revealed[seat]:
            return set()
        return set(cards.strs(self._hands[seat]))

    # --- wire forms ---------------------------------------------------------------------------

    def action_to_json(self, action: Action) -> JSON:
        return svara_actions.action_to_json(action)

    def action_from_json(self, obj: Any) -> Action:
        return svara_actions.action_from_json(obj)

    # --- views --------------------------------------------------------------------------------

    def _seat_view(self, seat: int) -> JSON:
        return {
            "seat": seat,
            "status": str(self._status[seat]),
            "seen": self._seen[seat],
            "dark_stake": self._dark_stake[seat],
            "contribution": self._chips.contributions[seat],
            "open_turns": self._open_turns[seat],
        }

    def _public_view(self, events: bool = True) -> JSON:
        to_move = None if self._to_move == TERMINAL else self._to_move
        view: JSON = {
            "game": "svara",
            "deal": self._deal,
            "deals": self.game.params["deals"],
            "dealer": self._dealer,
            "to_move": to_move,
            "phase": str(self._phase),
            "svara": self._svaras,
            "pot": self._chips.pot,
            "stake": self._stake,
            "limits": {"ante": self._ante, "max_stake": self._max, "step": self._step},
            "can_show": self.can_show(),
            "hand_counts": [len(h) for h in self._hands],
            "players": [self._seat_view(s) for s in range(self._n)],
            "balances": list(self._chips.balances),
            "scores": list(self._chips.balances),
            "history": list(self._history) if events else None,
            "earlier_rounds": [list(events) for events in self._earlier_rounds],
            "last_deal": self._last_deal,
        }
        if self._phase == Phase.SVARA:
            view["join_price"] = self._call.price
            view["tied"] = list(self._call.tied)
        return view

    def observation(self, seat: int | None) -> JSON:
        return self._observation(seat, True)

    def observation_parts(self, seat: int | None) -> tuple[JSON, EventLog]:
        return self._observation(seat, False), EventLog(self._history, dict)

    def _observation(self, seat: int | None, events: bool) -> JSON:
        view = self._public_view(events)
        if seat is not None:
            seen = self._seen[seat]
            hand = cards.sort_hand(self._hands[seat]) if seen else []
            view["seat"] = seat
            view["seen"] = seen
            view["hand"] = cards.strs(hand)
            view["hand_value"] = points(hand_value(hand, self.game.hand_rules)) if seen else None
        return view

    def full_view(self) -> JSON:
        return self._full_view(True)

    def full_view_parts(self) -> JSON:
        return self._full_view(False)

    def _full_view(self, events: bool) -> JSON:
        view = self._public_view(events)
        view["hands"] = [cards.strs(cards.sort_hand(h)) for h in self._hands]
        view["hand_values"] = [
            points(hand_value(h, self.game.hand_rules)) if h else None for h in self._hands
        ]
        return view

    # --- the built-in heuristic ---------------------------------------------------------------

    def greedy(self, rng: random.Random) -> Action:
        """A simple policy: look, then bet, call or fold by hand value; decline svaras."""
        if self._phase != Phase.OPEN:
            return self.default_action()
        value = points(hand_value(self._hands[self._to_move], self.game.hand_rules))
        raise_to = RAISE_BASE + self._stake + self._step
        legal = self.legal_actions()
        if value >= 25 and SHOW in legal:
            return SHOW
        if value >= 30 and raise_to in legal and rng.random() < 0.5:
            return raise_to
        if value >= 20 or (value >= 15 and self._stake <= self._ante):
            return CALL
        return FOLD

    def rig_deal(self, hands: Sequence[Sequence[str]], dealer: int | None = None) -> None:
        """Replace the hands (and optionally the dealer) of the deal in play, for rule tests.

        Allowed only before anyone has acted in the deal; ``hands`` has one entry per seat (empty
        for seats not dealt in), so who is dealt in stays the same.
        """
        if not self._history or self._history[-1]["type"] != "deal":
            raise IllegalActionError("a deal can be rigged only before its first action")
        parsed = [[cards.parse(c) for c in h] for h in hands]
        if [len(h) for h in parsed] != [len(h) for h in self._hands]:
            raise IllegalActionError("rigged hands must match who is dealt in")
        self._hands = parsed
        self._legal = None
        if dealer is not None:
            self._dealer = dealer
            self._history[-1]["dealer"] = dealer
            order = [s for s in self._clockwise_from_left() if self._status[s] != Status.OUT]
            self._history[-1]["players"] = order
            self._to_move = order[0]


@cache
def _dark_bets(low: int, high: int, step: int) -> list[Action]:
    """Look, or go dark at any stake from ``low`` to ``high`` (shared: callers copy it)."""
    return [LOOK, *(DARK_BASE + s for s in range(low, high + 1, step))]


@cache
def _open_bets(stake: int, high: int, step: int) -> tuple[list[Action], list[Action]]:
    """Fold, call and the raises above ``stake``: without and with the show (shared: callers
    copy them)."""
    raises = [RAISE_BASE + x for x in range(stake + step, high + 1, step)]
    return [FOLD, CALL, *raises], [FOLD, CALL, SHOW, *raises]
