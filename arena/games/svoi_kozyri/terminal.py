"""Svoi Kozyri's own touches on the terminal card table (``arena.render``): the pile, the fool of
each deal, who is out and which cards everyone knows.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from arena.render import (
    JSON,
    EventPhrase,
    TableHook,
    card_text,
)
from arena.table_pieces import (
    Names,
    beating_status,
    deal_results_line,
    pile_line,
    who,
)


def svoi_kozyri_lines(view: JSON) -> list[RenderableType]:
    lines: list[RenderableType] = [pile_line(view), beating_status(view)]
    return lines + deal_results_line(view, "loser", "fool of each deal")


def svoi_kozyri_columns(view: JSON, seat: int) -> dict[str, RenderableType]:
    """Whether the seat is out of the deal, and how many of its cards everyone knows."""
    active, known = view.get("active"), view.get("known")
    out = isinstance(active, list) and not active[seat]
    count = len(known[seat]) if isinstance(known, list) else 0
    return {
        "in": Text("out", style="dim") if out else Text("yes"),
        "public": Text(str(count) if count else "—", style="dim" if not count else ""),
    }


def player_out(event: JSON, names: Names) -> Text:
    return who(event, names).append(" has no cards left and is out")


def six_goes_home(event: JSON, names: Names) -> Text:
    text = card_text(event["card"]).append(" goes from ").append(who(event, names, "from"))
    return text.append(" to its owner ").append(who(event, names, "to"))


HOOK = TableHook(
    svoi_kozyri_lines,
    frozenset({"pile", "mode", "turns_left", "deal_results", "deals", "known", "active"}),
    svoi_kozyri_columns,
)
"""What the table shows of this game's own view keys."""

PHRASES: dict[str, EventPhrase] = {
    "out": player_out,
    "transfer": six_goes_home,
}
"""This game's history events that are not somebody's action, in words."""
