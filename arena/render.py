"""The terminal card table: a game position drawn with rich.

Rendering is generic over the shared view keys (``game``, ``deal``, ``dealer``, ``to_move``,
``hands`` or ``hand`` + ``hand_counts``, ``trumps``, ``scores``, ``history``): it works for a
``full_view()`` (every hand shown) and for an ``observation()`` (only the viewer's hand shown).
Other keys are drawn generically: per-seat lists become columns of the seat table, the rest
become lines under it (piles, trick records, talons...). A game folder may add its own lines
through its ``terminal.py`` (``HOOK`` and ``PHRASES``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena import games
from arena.cards import SUIT_SYMBOLS, SUITS

JSON = dict[str, Any]


@dataclass(frozen=True)
class TableHook:
    """A game's own touches: ``lines(view)`` is drawn under the seat table, in place of the
    generic lines and columns of the view keys listed in ``keys``; ``columns(view, seat)``, if
    given, adds named cells to each seat's row."""

    lines: Callable[[JSON], list[RenderableType]]
    keys: frozenset[str] = frozenset()
    columns: Callable[[JSON, int], dict[str, RenderableType]] | None = None


HOOKS: dict[str, TableHook] = {}
"""Per-game touches, by game name (each game folder's ``terminal.py``: ``load_game_touches``)."""

SHARED_KEYS = frozenset(
    {"game", "deal", "dealer", "to_move", "hands", "hand", "hand_counts", "trumps", "scores",
     "history"}
)  # fmt: skip
QUIET_KEYS = frozenset({"players", "seat"})  # already visible in the seat table
CARD = re.compile(r"^[5-9TJQKA][SHDC]$")
RED_SUITS = "HD"
HIDDEN = "▒"
MAX_VALUE_CHARS = 160


def is_card(value: Any) -> bool:
    """True for a wire-form card such as ``"TH"``."""
    return isinstance(value, str) and CARD.match(value) is not None


def suit_text(suit: str) -> Text:
    """A suit letter as its symbol, red for hearts and diamonds."""
    if suit not in SUITS:
        return Text(str(suit))
    return Text(SUIT_SYMBOLS[SUITS.index(suit)], style="red" if suit in RED_SUITS else "bold")


def card_text(card: str) -> Text:
    """``"TH"`` as ``T♥`` in red; ``"9S"`` as ``9♠``."""
    rank, suit = card[0], card[1]
    style = "bold red" if suit in RED_SUITS else "bold"
    return Text(rank + SUIT_SYMBOLS[SUITS.index(suit)], style=style)


def cards_text(cards: Iterable[str]) -> Text:
    """Cards separated by spaces; ``—`` for none."""
    parts = [card_text(c) if is_card(c) else Text(str(c)) for c in cards]
    return Text(" ").join(parts) if parts else Text("—", style="dim")


def value_text(value: Any) -> Text:
    """Any JSON value, with cards drawn as cards (shortened when very long)."""
    if is_card(value):
        return card_text(value)
    if isinstance(value, list) and value and all(is_card(v) for v in value):
        return cards_text(value)
    if isinstance(value, list) and not value:
        return Text("—", style="dim")
    if isinstance(value, list):
        return Text("[").append(Text(", ").join(value_text(v) for v in value)).append("]")
    if isinstance(value, dict):
        items = (Text(f"{k}=").append(value_text(v)) for k, v in value.items())
        return Text("{").append(Text(", ").join(items)).append("}")
    text = Text("—" if value is None else str(value))
    if len(text) > MAX_VALUE_CHARS:
        text.truncate(MAX_VALUE_CHARS, overflow="ellipsis")
    return text


def seat_label(seat: Any, names: Sequence[str] | None = None) -> str:
    """``"P2"``, or ``"P2 alice"`` when seat names are known."""
    if not isinstance(seat, int) or seat < 0:
        return str(seat)
    if names and seat < len(names):
        return f"P{seat} {names[seat]}"
    return f"P{seat}"


def action_text(action: JSON) -> Text:
    """A wire action such as ``{"type": "beat", "card": "JC"}`` as ``beat J♣``."""
    text = Text().append(str(action.get("type", "?")), style="cyan")
    for key, value in action.items():
        if key == "type" or value is None:
            continue
        text.append(" ")
        text.append(
            value_text(value) if is_card(value) else Text(f"{key}=").append(value_text(value))
        )
    return text


EventPhrase = Callable[[JSON, Sequence[str] | None], Text]

PHRASES: dict[str, EventPhrase] = {}
"""Plain-language forms of history events that are not actions (a trick taken, a player out...),
by event type (each game folder's ``terminal.py``: ``load_game_touches``)."""


def event_text(event: JSON, names: Sequence[str] | None = None) -> Text:
    """A public history event: in words if a game taught us how, else its seat (if any), then
    the action-like rest."""
    load_game_touches()
    phrase = PHRASES.get(str(event.get("type")))
    if phrase is not None:
        try:
            return phrase(event, names)
        except (KeyError, TypeError, ValueError):
            pass  # an event of another shape under the same name: show it as it is
    rest = {k: v for k, v in event.items() if k != "seat"}
    text = Text()
    if "seat" in event:
        text.append(seat_label(event["seat"], names) + " ", style="yellow")
    return text.append(action_text(rest))


def player_count(view: JSON) -> int:
    """How many seats a view describes."""
    for key in ("hands", "hand_counts", "scores", "trumps"):
        value = view.get(key)
        if isinstance(value, list):
            return len(value)
    return 0


def is_seat_value(value: Any, seat: int) -> bool:
    """Whether ``value`` reads as seat ``seat``'s entry rather than as a card or trick on a pile."""
    if isinstance(value, dict):
        return value.get("seat") == seat
    return not is_card(value)


def without_seat(value: Any) -> Any:
    """A per-seat dict without its redundant ``seat`` entry."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != "seat"}
    return value


def per_seat_keys(view: JSON, players: int) -> list[str]:
    """Non-shared keys holding one value per seat (lists of seat length that are not a pile)."""
    keys = []
    for key, value in view.items():
        if key in SHARED_KEYS or not isinstance(value, list) or len(value) != players:
            continue
        if players and all(is_seat_value(v, seat) for seat, v in enumerate(value)):
            keys.append(key)
    return keys


def hand_cell(view: JSON, seat: int, viewer: int | None) -> Text:
    """A seat's hand: shown if the view holds it, else as face-down cards."""
    hands = view.get("hands")
    if isinstance(hands, list) and seat < len(hands):
        return cards_text(hands[seat])
    if viewer == seat and isinstance(view.get("hand"), list):
        return cards_text(view["hand"])
    counts = view.get("hand_counts")
    count = counts[seat] if isinstance(counts, list) and seat < len(counts) else None
    if count is None:
        return Text("?", style="dim")
    return Text(f"{HIDDEN} ×{count}", style="dim")


def trump_cell(trumps: Any, seat: int) -> Text:
    if isinstance(trumps, list) and seat < len(trumps):
        value = trumps[seat]
        return suit_text(value) if isinstance(value, str) else value_text(value)
    return Text("")


def seat_table(
    view: JSON, names: Sequence[str] | None, viewer: int | None, hook: TableHook | None = None
) -> Table:
    """One row per seat: who, trump, hand, score, the game's own columns and any other per-seat
    values."""
    players = player_count(view)
    handled = hook.keys if hook else frozenset()
    extra = [k for k in per_seat_keys(view, players) if k not in handled]
    own = [hook.columns(view, seat) for seat in range(players)] if hook and hook.columns else []
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="dim")
    table.add_column("seat")
    per_seat_trumps = isinstance(view.get("trumps"), list)
    if per_seat_trumps:
        table.add_column("trump")
    table.add_column("hand")
    has_scores = isinstance(view.get("scores"), list)
    if has_scores:
        table.add_column("score", justify="right")
    for key in [*(own[0] if own else {}), *extra]:
        table.add_column(key.replace("_", " "))
    for seat in range(players):
        row = seat_row(view, seat, names, viewer, per_seat_trumps, has_scores, extra)
        if own:
            row[len(row) - len(extra) : len(row) - len(extra)] = list(own[seat].values())
        table.add_row(*row)
    return table


def seat_row(
    view: JSON,
    seat: int,
    names: Sequence[str] | None,
    viewer: int | None,
    trumps: bool,
    scores: bool,
    extra: list[str],
) -> list[RenderableType]:
    marker = "▶ " if view.get("to_move") == seat else "  "
    label = Text(marker + seat_label(seat, names), style="bold" if marker.strip() else "")
    if viewer == seat:
        label.append(" (you)", style="green")
    row: list[RenderableType] = [label]
    if trumps:
        row.append(trump_cell(view["trumps"], seat))
    row.append(hand_cell(view, seat, viewer))
    if scores:
        row.append(value_text(view["scores"][seat]))
    row.extend(value_text(without_seat(view[key][seat])) for key in extra)
    return row


def header(view: JSON, names: Sequence[str] | None) -> Text:
    """``<game> · deal 2 · dealer P1 · to move P3``."""
    parts = [Text(str(view.get("game", "game")), style="bold")]
    if "deal" in view:
        parts.append(Text(f"deal {view['deal']}"))
    if "dealer" in view:
        parts.append(Text(f"dealer {seat_label(view['dealer'], names)}"))
    to_move = view.get("to_move")
    if isinstance(to_move, int):
        parts.append(Text("match over" if to_move < 0 else f"to move {seat_label(to_move, names)}"))
    return Text(" · ").join(parts)


def zone_lines(view: JSON, players: int, handled: frozenset[str]) -> list[RenderableType]:
    """Lines for the non-shared, non-per-seat keys: piles, trick records, talons and the like."""
    skip = SHARED_KEYS | QUIET_KEYS | handled | set(per_seat_keys(view, players))
    lines: list[RenderableType] = []
    trumps = view.get("trumps")
    if trumps is not None and not isinstance(trumps, list) and "trumps" not in handled:
        shown = suit_text(trumps) if isinstance(trumps, str) else value_text(trumps)
        lines.append(Text("trumps: ").append(shown))
    for key, value in view.items():
        if key not in skip:
            label = Text(f"{key.replace('_', ' ')}: ", style="dim")
            lines.append(Text.assemble(label, value_text(value)))
    return lines


def history_lines(view: JSON, names: Sequence[str] | None, events: int) -> list[RenderableType]:
    history = view.get("history")
    if not isinstance(history, list) or not history or events <= 0:
        return []
    shown = [e for e in history[-events:] if isinstance(e, dict)]
    title = Text(f"last {len(shown)} of {len(history)} events", style="dim")
    return [title, *(Text("  ").append(event_text(e, names)) for e in shown)]


def render_table(
    view: JSON,
    names: Sequence[str] | None = None,
    viewer: int | None = None,
    events: int = 6,
) -> Panel:
    """The card table for a ``full_view()`` or an ``observation(viewer)``."""
    load_game_touches()
    hook = HOOKS.get(str(view.get("game")))
    parts: list[RenderableType] = [seat_table(view, names, viewer, hook)]
    parts.extend(zone_lines(view, player_count(view), hook.keys if hook else frozenset()))
    if hook:
        parts.extend(hook.lines(view))
    parts.extend(history_lines(view, names, events))
    return Panel(Group(*parts), title=header(view, names), title_align="left", expand=False)


def render_result(result: JSON, names: Sequence[str] | None = None) -> Table:
    """The final standings: place, seat and score, best first."""
    table = Table(title="Result", box=None, header_style="dim")
    for column in ("place", "seat", "score"):
        table.add_column(column)
    ranking, scores = result.get("ranking", []), result.get("scores", [])
    for seat in sorted(range(len(ranking)), key=lambda s: (ranking[s], s)):
        score = scores[seat] if seat < len(scores) else None
        table.add_row(Text(str(ranking[seat])), Text(seat_label(seat, names)), value_text(score))
    return table


def load_game_touches() -> None:
    """Add to ``HOOKS`` and ``PHRASES`` the ``HOOK`` and ``PHRASES`` of the ``terminal.py`` of
    each registered game not seen yet (the registry may grow: ``ARENA_GAMES_PATH``)."""
    for name in games.names():
        if name in _TOUCHED:
            continue
        _TOUCHED.add(name)
        module = games.part(name, "terminal")
        if module is not None:
            HOOKS.setdefault(name, module.HOOK)
            PHRASES.update(module.PHRASES)


_TOUCHED: set[str] = set()
"""The games whose touches ``load_game_touches`` has added."""
