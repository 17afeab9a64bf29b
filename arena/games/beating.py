"""What the beating games share: the beating rule, the pile, actions.

These games play cards onto one face-up pile. A card beats the top card when it is a higher card of
the same suit, or a card of the mover's own trump suit laid on a card of another suit. Nobody has
to follow suit, and it does not matter who played the top card or whose trump it is.

Actions are small ints, so legal action lists are cheap to build and naturally ascending:

=============  ==========================  ====================================
range          meaning                     wire form
=============  ==========================  ====================================
0..63          lead card ``c``             ``{"type": "lead", "card": "9C"}``
64..127        beat with card ``c - 64``   ``{"type": "beat", "card": "JC"}``
128..191       second card ``c - 128``     ``{"type": "second", "card": "7H"}``
192            pick up / take              ``{"type": "pick_up"}`` (``"take"``)
196..199       choose a trump suit         ``{"type": "choose_trump", "suit": "H"}``
200..203       choose a side suit          ``{"type": "choose_side", "suit": "C"}``
=============  ==========================  ====================================
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from arena import cards
from arena.cards import Card, Suit
from arena.games.base import JSON, TERMINAL, Action, IllegalActionError, State

LEAD = 0
BEAT = 64
SECOND = 128
PICK_UP = 192
CHOOSE_TRUMP = 196
CHOOSE_SIDE = 200

ALL = "all"
"""A pick-up count meaning "the whole pile"."""

CHOOSE, LEAD_MODE, RESPOND, EXIT, SECOND_MODE, OVER = range(6)
"""Modes: who does what next. ``EXIT`` follows a player going out on a beat, where a game allows."""

EV_LEAD, EV_BEAT, EV_SECOND, EV_PICK_UP = range(4)
"""History event kinds both games share; each game numbers its own kinds from 4 up. An event is
a tuple ``(kind, seat, *payload)``: cheap to record, turned into JSON only when observed. The
card events are numbered as their action ranges: ``action >> 6`` is the kind."""

_CARD_EVENTS = {EV_LEAD: "lead", EV_BEAT: "beat", EV_SECOND: "second"}

MAX_SEATS = 4

CARD_EVENTS = tuple(
    tuple((action >> 6, seat, action & 63) for seat in range(MAX_SEATS))
    for action in range(PICK_UP)
)
"""``CARD_EVENTS[action][seat]``: the history event of ``seat`` playing the card action
``action`` (its kind is ``action >> 6``). Events are tuples, never changed, so every match shares
these instead of building one per move."""

_CARD_KINDS = {"lead": LEAD, "beat": BEAT, "second": SECOND}
_SUIT_KINDS = {"choose_trump": CHOOSE_TRUMP, "choose_side": CHOOSE_SIDE}


def beats(card: Card, top: Card, trump: Suit) -> bool:
    """True if ``card`` beats ``top`` for a player whose own trump suit is ``trump``."""
    if card >> 4 == top >> 4:
        return (card & 15) > (top & 15)
    return card >> 4 == trump


def _suit_above(card: Card) -> int:
    """The mask of the cards of ``card``'s suit that rank above it."""
    suit_base = card & ~15
    return sum(1 << (suit_base + r) for r in range((card & 15) + 1, cards.ACE + 1))


def _build_beat_masks() -> tuple[tuple[int, ...], ...]:
    full_suit = [sum(1 << (s * 16 + r) for r in range(5, cards.ACE + 1)) for s in range(4)]
    table = []
    for trump in range(4):
        row = []
        for top in range(64):
            above = _suit_above(top)
            row.append(above if top >> 4 == trump else above | full_suit[trump])
        table.append(tuple(row))
    return tuple(table)


BEAT_MASKS = _build_beat_masks()
"""``BEAT_MASKS[trump][top]``: every card that beats ``top`` for the owner of ``trump``."""

SUIT_MASKS = tuple(sum(1 << (s * 16 + r) for r in range(5, cards.ACE + 1)) for s in range(4))
RANK_MASKS = {r: sum(1 << (s * 16 + r) for s in range(4)) for r in range(5, cards.ACE + 1)}


def _build_action_tables() -> dict[int, tuple[tuple[tuple[int, ...], ...], ...]]:
    """Per action base and suit, the action tuple of every 10-bit rank pattern of that suit."""
    patterns = [tuple(5 + i for i in range(10) if v >> i & 1) for v in range(1024)]
    return {
        base: tuple(
            tuple(tuple(base + s * 16 + r for r in ranks) for ranks in patterns) for s in range(4)
        )
        for base in (LEAD, BEAT, SECOND)
    }


ACTION_TABLES = _build_action_tables()
"""``ACTION_TABLES[base][suit][pattern]``: the actions of the cards of ``suit`` whose ranks are the
set bits of ``pattern`` (bit 0 is rank 5), as a tuple."""

SUIT_SHIFTS = (5, 21, 37, 53)
"""Where each suit's ten rank bits (ranks 5 up) start in a hand."""

ActionTable = tuple[tuple[Action, ...], ...]
Response = tuple[int, ActionTable, int, ActionTable, int]


_TAKES = tuple(tuple((*actions, PICK_UP) for actions in ACTION_TABLES[BEAT][s]) for s in range(4))
_NO_BEATS: ActionTable = ((),) * 1024


def _response_row(trump: Suit, top: Card) -> Response:
    """How a player with ``trump`` answers ``top``: the mask of the cards that beat it, then
    the action table and shift of the lower suit that can beat (a table of nothing if both
    are the trump), then those of the higher one, whose table ends with the pick-up."""
    low, high = sorted((top >> 4, trump))
    if low == high:
        return BEAT_MASKS[trump][top], _NO_BEATS, 0, _TAKES[high], SUIT_SHIFTS[high]
    beats = ACTION_TABLES[BEAT]
    return BEAT_MASKS[trump][top], beats[low], SUIT_SHIFTS[low], _TAKES[high], SUIT_SHIFTS[high]


RESPONSES = tuple(tuple(_response_row(t, top) for top in range(64)) for t in range(4))
"""``RESPONSES[trump][top]``: ``_response_row(trump, top)``. The legal answers are
``[*lower[beat >> shift & 1023], *higher[beat >> higher_shift]]``, ``beat`` being the hand
masked: only the mask's two suits can beat, so the higher one needs no mask after its shift."""


def card_actions(hand: int, base: int) -> list[Action]:
    """The actions ``base + card`` for every card of the bitmask ``hand``, ascending."""
    t = ACTION_TABLES[base]
    out: list[Action] = []
    v = hand >> 5 & 1023
    if v:
        out.extend(t[0][v])
    v = hand >> 21 & 1023
    if v:
        out.extend(t[1][v])
    v = hand >> 37 & 1023
    if v:
        out.extend(t[2][v])
    v = hand >> 53 & 1023
    if v:
        out.extend(t[3][v])
    return out


def lowest(hand: int) -> Card:
    """The lowest-ranked card of a non-empty bitmask (ties go to the first suit in S H D C)."""
    for rank in range(5, cards.ACE + 1):
        m = hand & RANK_MASKS[rank]
        if m:
            return (m & -m).bit_length() - 1
    raise ValueError("lowest() of an empty hand")


def lowest_preferring_side_suits(hand: int, trump: Suit) -> Card:
    """The lowest card that is not of ``trump``, or the lowest trump if that is all there is."""
    side = hand & ~SUIT_MASKS[trump]
    return lowest(side if side else hand)


def cheapest_beat(hand: int, top: Card, trump: Suit) -> Card | None:
    """The cheapest card of ``hand`` beating ``top``: the lowest non-trump first, else a trump."""
    can = hand & BEAT_MASKS[trump][top]
    return lowest_preferring_side_suits(can, trump) if can else None


def single_card_beats(hand: int, top: Card, trump: Suit) -> bool:
    """The draw test: ``hand`` is exactly one card and that card beats ``top``."""
    return hand != 0 and hand & (hand - 1) == 0 and bool(hand & BEAT_MASKS[trump][top])


def pickup_count(top: Card, trump: Suit, counts: tuple[Any, Any, Any], pile_size: int) -> int:
    """How many cards a player with ``trump`` picks up from a pile of ``pile_size`` under ``top``.

    ``counts`` is (plain, own trump, own-trump ace); each an int or ``ALL``. A pile with fewer
    cards than the count is taken whole.
    """
    plain, own, own_ace = counts
    if top >> 4 != trump:
        n = plain
    elif top & 15 == cards.ACE:
        n = own_ace
    else:
        n = own
    return pile_size if n == ALL or n > pile_size else int(n)


class Pile:
    """The face-up pile, bottom to top, with an exact int key of its sequence.

    Every card is below 64, so six bits per card spell the sequence; no real card is 0, so the
    key never confuses piles of different lengths.
    """

    __slots__ = ("cards", "key")

    def __init__(self, start: list[Card] | None = None) -> None:
        self.cards: list[Card] = []
        self.key = 0
        for card in start or ():
            self.push(card)

    def push(self, card: Card) -> None:
        self.cards.append(card)
        self.key = self.key << 6 | card

    def take(self, count: int) -> list[Card]:
        """Remove and return the top ``count`` cards (bottom to top order)."""
        taken = self.cards[-count:] if count else []
        del self.cards[len(self.cards) - count :]
        self.key >>= 6 * count
        return taken

    def __len__(self) -> int:
        return len(self.cards)


def action_to_json(action: Action, take_word: str = "pick_up") -> dict[str, Any]:
    """The wire form of an action (``take_word`` names the pick-up action of the game)."""
    if 0 <= action < PICK_UP and 5 <= action & 15 <= cards.ACE:
        kind = ("lead", "beat", "second")[action >> 6]
        return {"type": kind, "card": cards.to_str(action & 63)}
    if action == PICK_UP:
        return {"type": take_word}
    if CHOOSE_TRUMP <= action < CHOOSE_TRUMP + 4:
        return {"type": "choose_trump", "suit": cards.SUITS[action - CHOOSE_TRUMP]}
    if CHOOSE_SIDE <= action < CHOOSE_SIDE + 4:
        return {"type": "choose_side", "suit": cards.SUITS[action - CHOOSE_SIDE]}
    raise IllegalActionError(f"no such action: {action}")


def action_from_json(obj: Any, take_word: str = "pick_up") -> Action:
    """Parse a wire action of a beating game; legality is checked by ``apply_action``."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise IllegalActionError(f'an action is an object with a "type", got {obj!r}')
    kind = obj["type"]
    try:
        if kind in _CARD_KINDS:
            if kind == "beat" and obj.get("second") is not None:
                raise IllegalActionError(
                    'the second card is its own action: {"type": "second", "card": ...}'
                )
            return _CARD_KINDS[kind] + cards.parse(obj.get("card"))  # type: ignore[arg-type]
        if kind in _SUIT_KINDS:
            return _SUIT_KINDS[kind] + cards.parse_suit(obj.get("suit"))  # type: ignore[arg-type]
    except cards.CardError as err:
        raise IllegalActionError(str(err)) from None
    if kind == take_word:
        return PICK_UP
    known = [*_CARD_KINDS, take_word, *_SUIT_KINDS]
    raise IllegalActionError(f"unknown action type {kind!r} (types: {', '.join(known)})")


class BeatingState(State):
    """The machinery both beating games share: modes, cached legal actions, the move dispatch,
    the repetition count, the default and greedy policies and the wire forms of actions.

    A subclass deals, keeps the seats' trumps (``_trump``) and decides what ends a deal.
    """

    mode_names: ClassVar[tuple[str, ...]]
    take_word: ClassVar[str] = "pick_up"
    fixed_action_json = True

    _hands: list[int]
    _pile: Pile
    _mode: int
    _to_move: int
    _index: int
    _turns: int
    _legal: list[Action] | None
    _seen: dict[tuple[int, ...], int]
    _history: list[tuple[int, ...]]

    def current_player(self) -> int:
        return TERMINAL if self._mode == OVER else self._to_move

    def is_terminal(self) -> bool:
        return self._mode == OVER

    @property
    def deal_index(self) -> int:
        return self._index

    def legal_actions(self) -> list[Action]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal[:]

    def _compute_legal(self) -> list[Action]:
        mode = self._mode
        if mode == RESPOND:
            seat = self._to_move  # ``_beating_cards`` inlined: responses are most moves
            beating = self._hands[seat] & BEAT_MASKS[self._trump(seat)][self._pile.cards[-1]]
            out = card_actions(beating, BEAT)
            out.append(PICK_UP)
            return out
        if mode == LEAD_MODE:
            return card_actions(self._hands[self._to_move], LEAD)
        if mode == SECOND_MODE:
            return card_actions(self._hands[self._to_move], SECOND)
        return [] if mode == OVER else self._other_legal()

    def _beating_cards(self) -> int:
        """The mover's cards that beat the top card."""
        seat = self._to_move
        return self._hands[seat] & BEAT_MASKS[self._trump(seat)][self._pile.cards[-1]]

    def apply_action(self, action: Action) -> None:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action not in legal:
            raise IllegalActionError(self._illegal_message(action))
        self._legal = None
        seat = self._to_move
        deal = self._index
        if action < PICK_UP:
            # The card is the low six bits; the range (lead, beat, second) is the event kind.
            self._play_card(seat, action & 63, action >> 6)
        elif action == PICK_UP:
            self._pick_up(seat)
        else:
            self._choose(seat, action)
            return
        if self._index == deal and self._mode != OVER:
            self._guard_deal()

    def _illegal_message(self, action: Action) -> str:
        try:
            shown: Any = self.action_to_json(action)
        except IllegalActionError:
            shown = action
        mode = self.mode_names[self._mode]
        return f"{shown} is not legal for seat {self._to_move} in mode {mode!r}"

    def _note_position(self) -> int:
        """Count one more occurrence of the current position; return how many there have been.

        A position is every hand, the pile in order, the seat to move and the mode.
        """
        key = (self._pile.key, self._to_move, self._mode, *self._hands)
        seen = self._seen.get(key, 0) + 1
        self._seen[key] = seen
        return seen

    @abstractmethod
    def _trump(self, seat: int) -> Suit:
        """The own trump suit of ``seat``."""

    @abstractmethod
    def _other_legal(self) -> list[Action]:
        """Legal actions in the game's own modes (choosing suits, leading after an exit)."""

    def _play_card(self, seat: int, card: Card, kind: int) -> None:
        """Lay ``card`` on the pile as a lead, beat or second card (``kind`` is the event).

        Called by ``apply_action``; a state that moves in its own ``apply_action`` has none."""
        raise NotImplementedError

    def _pick_up(self, seat: int) -> None:
        """Move cards from the pile into the hand of ``seat``.

        Called by ``apply_action``; a state that moves in its own ``apply_action`` has none."""
        raise NotImplementedError

    @abstractmethod
    def _choose(self, seat: int, action: Action) -> None:
        """Apply a choice of suit."""

    def _guard_deal(self) -> None:
        """After a move that did not end the deal: apply the turn cap and the repetition rule.

        Called by ``apply_action``; a state that moves in its own ``apply_action`` has none."""
        raise NotImplementedError

    def default_action(self) -> Action:
        """Pick up if allowed, else lead (or lay as second card) the lowest card; when choosing,
        the first free suit."""
        legal = self.legal_actions()
        if PICK_UP in legal:
            return PICK_UP
        if self._mode == CHOOSE:
            return legal[0]
        base = SECOND if self._mode == SECOND_MODE else LEAD
        return base + lowest(self._hands[self._to_move])

    def greedy_action(self) -> Action:
        """Beat as cheaply as possible, shed low side-suit cards, pick up only when stuck."""
        mode = self._mode
        if mode in (CHOOSE, OVER):
            return self.default_action()
        seat = self._to_move
        hand = self._hands[seat]
        trump = self._trump(seat)
        if mode == RESPOND:
            card = cheapest_beat(hand, self._pile.cards[-1], trump)
            return PICK_UP if card is None else BEAT + card
        base = SECOND if mode == SECOND_MODE else LEAD
        return base + lowest_preferring_side_suits(hand, trump)

    def _shared_event_json(self, event: tuple[int, ...]) -> JSON | None:
        """The JSON of a lead, beat, second card or pick-up event; ``None`` for others."""
        kind, seat = event[0], event[1]
        if kind in _CARD_EVENTS:
            return {"type": _CARD_EVENTS[kind], "seat": seat, "card": cards.to_str(event[2])}
        if kind == EV_PICK_UP:
            return {"type": self.take_word, "seat": seat, "cards": cards.strs(event[2:])}
        return None

    def action_to_json(self, action: Action) -> JSON:
        return action_to_json(action, self.take_word)

    def action_from_json(self, obj: Any) -> Action:
        return action_from_json(obj, self.take_word)
