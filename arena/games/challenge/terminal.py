"""Challenge's own touches on the terminal card table (``arena.render``): the pile, the winner of
each deal and each seat's side suit.
"""

from __future__ import annotations

from rich.console import RenderableType

from arena.render import (
    JSON,
    EventPhrase,
    TableHook,
    suit_text,
)
from arena.table_pieces import (
    beating_status,
    deal_results_line,
    dim,
    pile_line,
)


def challenge_lines(view: JSON) -> list[RenderableType]:
    lines: list[RenderableType] = [pile_line(view), beating_status(view)]
    return lines + deal_results_line(view, "winner", "winner of each deal")


def challenge_columns(view: JSON, seat: int) -> dict[str, RenderableType]:
    sides = view.get("side_suits")
    side = sides[seat] if isinstance(sides, list) else None
    return {"side suit": suit_text(side) if isinstance(side, str) else dim("—")}


HOOK = TableHook(
    challenge_lines,
    frozenset({"pile", "mode", "turns_left", "deal_results", "deals", "side_suits"}),
    challenge_columns,
)
"""What the table shows of this game's own view keys."""

PHRASES: dict[str, EventPhrase] = {}
"""This game's history events that are not somebody's action, in words."""
