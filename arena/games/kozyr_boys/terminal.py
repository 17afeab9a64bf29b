"""Kozyr Boys' own touches on the terminal card table (``arena.render``): trumps and bowers, the
dealer's leftover and discards, the tricks.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from arena.render import (
    JSON,
    EventPhrase,
    TableHook,
    card_text,
    cards_text,
    is_card,
    suit_text,
)
from arena.table_pieces import (
    Names,
    deal_over,
    dim,
    joined,
    new_deal,
    numbers,
    trick_lines,
    trick_taken,
    who,
)


def kozyr_boys_lines(view: JSON) -> list[RenderableType]:
    """Trumps and bowers, the dealer's two extra cards, the trick, the last deal's points."""
    trumps = view.get("trumps")
    head = Text("trumps ").append(suit_text(trumps) if isinstance(trumps, str) else Text("?"))
    if is_card(view.get("turned")):
        head.append(" (turned ").append(card_text(view["turned"])).append(")")
    if isinstance(view.get("bowers"), list):
        head.append(" · bowers ").append(cards_text(view["bowers"]))
    lines: list[RenderableType] = [joined([head, dim(f"phase {view.get('phase')}")])]
    if isinstance(view.get("leftover"), list):
        extra = dim("dealer's leftover: ").append(cards_text(view["leftover"]))
        extra.append(dim(" · discarded: ")).append(cards_text(view.get("discards") or []))
        lines.append(extra)
    lines += trick_lines(view)
    last = view.get("last_deal")
    if isinstance(last, dict):
        line = dim(f"deal {last.get('deal')} gave: ").append(f"points {numbers(last['points'])}")
        line.append(f" (tricks {numbers(last.get('tricks'))}, discard {last['discard_points']})")
        lines.append(line)
    return lines


def card_turned(event: JSON, names: Names) -> Text:
    return Text("turned up: ").append(card_text(event["card"]))


def dealer_discards(event: JSON, names: Names) -> Text:
    if "cards" in event:
        raise KeyError("cards")  # an action, not the face-down history event
    return who(event, names).append(" discards two cards face down")


HOOK = TableHook(
    kozyr_boys_lines,
    frozenset({"trick", "tricks", "phase", "turned", "bowers", "leftover", "discards"})
    | frozenset({"last_deal", "deals", "first_dealer", "trumps"}),
)
"""What the table shows of this game's own view keys."""

PHRASES: dict[str, EventPhrase] = {
    "trick": trick_taken,
    "deal_end": deal_over,
    "deal": new_deal,
    "turn": card_turned,
    "discard": dealer_discards,
}
"""This game's history events that are not somebody's action, in words."""
