"""The trick-taking Svoi Kozyri's own touches on the terminal card table (``arena.render``): phase,
target and teams, the dead card, the tricks and the trumps revealed.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from arena.render import (
    JSON,
    EventPhrase,
    TableHook,
    card_text,
    is_card,
    suit_text,
)
from arena.table_pieces import (
    Names,
    deal_over,
    dim,
    new_deal,
    numbers,
    seat_names,
    trick_lines,
    trick_taken,
    who,
)


def tricks_lines(view: JSON) -> list[RenderableType]:
    """Svoi Kozyri tricks: phase and target, teams, the dead card, tricks, the last deal."""
    parts = [f"phase {view.get('phase')}", f"target {view.get('target')} points"]
    teams = view.get("teams")
    if isinstance(teams, list):
        parts.append("teams " + " vs ".join(seat_names(t) for t in teams))
    if view.get("hands_visible") is False:
        parts.append("hands not yet seen (trumps chosen blind)")
    lines: list[RenderableType] = [dim(" · ".join(parts))]
    if is_card(view.get("dead")):
        lines.append(dim("dead card: ").append(card_text(view["dead"])))
    lines += trick_lines(view)
    last = view.get("last_deal")
    if isinstance(last, dict):
        lines.append(
            dim(f"deal {last.get('deal')} gave: ").append(
                f"tricks {numbers(last.get('tricks'))} · points {numbers(last.get('points'))}"
            )
        )
    return lines


def revealed_column(view: JSON, seat: int) -> dict[str, RenderableType]:
    """The trump everyone knows of (``—`` while it is secret)."""
    revealed = view.get("revealed")
    suit = revealed[seat] if isinstance(revealed, list) else None
    return {"public trump": suit_text(suit) if isinstance(suit, str) else dim("—")}


def trump_revealed(event: JSON, names: Names) -> Text:
    return who(event, names).append("'s trump is ").append(suit_text(event["suit"]))


HOOK = TableHook(
    tricks_lines,
    frozenset(
        {"trick", "tricks", "phase", "target", "teams", "hands_visible", "dead", "trumping"}
        | {"last_deal", "revealed", "partner", "partner_trump", "trump"}
    ),
    revealed_column,
)
"""What the table shows of this game's own view keys."""

PHRASES: dict[str, EventPhrase] = {
    "trick": trick_taken,
    "reveal": trump_revealed,
    "deal_end": deal_over,
    "deal": new_deal,
}
"""This game's history events that are not somebody's action, in words."""
