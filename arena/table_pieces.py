"""Pieces of the terminal card table (``arena.render``) that several games use: short text
helpers, the pile of the beating games, the tricks of the trick-taking games, and the words for
history events that more than one game records. Each game folder's ``terminal.py`` builds its
own touches from these.

No game is named here: "tricks" below is the trick-taking view key and the plain noun.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from arena.render import (
    JSON,
    card_text,
    cards_text,
    is_card,
    seat_label,
    value_text,
)

Names = Sequence[str] | None


def dim(text: str) -> Text:
    return Text(text, style="dim")


def joined(parts: Sequence[Text | str]) -> Text:
    """Parts separated by `` · ``."""
    return Text(" · ").join(Text(p) if isinstance(p, str) else p for p in parts)


def numbers(values: Any) -> str:
    """``[3, 0, 5]`` as ``3 0 5``."""
    return " ".join(str(v) for v in values) if isinstance(values, list) else str(values)


def seat_names(seats: Any) -> str:
    return "+".join(f"P{s}" for s in seats) if isinstance(seats, list) else str(seats)


# --- the beating games ------------------------------------------------------------------------


def pile_line(view: JSON) -> Text:
    """The pile bottom to top, with its size and the top card picked out."""
    pile = view.get("pile")
    if not isinstance(pile, list) or not pile:
        return dim("pile: empty")
    line = dim(f"pile ({len(pile)}): ")
    if len(pile) > 1:
        line.append(cards_text(pile[:-1])).append("  ")
    return line.append("top ", style="dim").append(value_text(pile[-1]))


def beating_status(view: JSON) -> Text:
    """``mode respond · 994 turns left`` and, on a finished match, ``match over``."""
    parts = [f"mode {view.get('mode')}"]
    if isinstance(view.get("turns_left"), int):
        parts.append(f"{view['turns_left']} turns left in the deal")
    return dim(" · ".join(parts))


def deal_outcome(record: JSON, role: str) -> str:
    """``d3 P2`` (the seat named by ``role``), ``d4 draw``; the reason unless it is "out"."""
    seat = record.get(role)
    text = f"d{record.get('deal')} " + ("draw" if seat is None else f"P{seat}")
    reason = record.get("reason")
    return text if reason in (None, "out", "draw") else f"{text} ({reason})"


def deal_results_line(view: JSON, role: str, label: str) -> list[RenderableType]:
    results = view.get("deal_results")
    if not isinstance(results, list) or not results:
        return []
    shown = [deal_outcome(r, role) for r in results if isinstance(r, dict)]
    return [dim(f"{label}: ").append(", ".join(shown))]


# --- the trick-taking games -------------------------------------------------------------------


def trick_text(trick: JSON) -> Text:
    """``P0 6♥  P1 K♥*  → P1``: each seat's card (``*`` marks a trump), then the winner if known."""
    plays = []
    for play in trick.get("cards") or []:
        card = play.get("card")
        shown = card_text(card) if is_card(card) else Text("?")
        plays.append(
            Text(f"P{play.get('seat')} ").append(shown).append("*" if play.get("trump") else "")
        )
    text = Text("  ").join(plays) if plays else dim("—")
    if trick.get("winner") is not None:
        text.append(f"  → P{trick['winner']}", style="yellow")
    return text


def trick_lines(view: JSON) -> list[RenderableType]:
    """The trick in play and the last trick taken."""
    lines: list[RenderableType] = []
    trick = view.get("trick")
    if isinstance(trick, dict):
        leader = trick.get("leader")
        label = "trick" if leader is None else f"trick (led by P{leader})"
        lines.append(dim(f"{label}: ").append(trick_text(trick)))
    tricks = view.get("tricks")
    if isinstance(tricks, list) and tricks and isinstance(tricks[-1], dict):
        lines.append(dim(f"last of {len(tricks)} tricks: ").append(trick_text(tricks[-1])))
    return lines


# --- history events in words ------------------------------------------------------------------


def who(event: JSON, names: Names, key: str = "seat") -> Text:
    return Text(seat_label(event[key], names), style="yellow")


def trick_taken(event: JSON, names: Names) -> Text:
    text = Text("→ ").append(who(event, names, "winner")).append(" takes the trick")
    return text.append(f" ({event['points']} points)") if event.get("points") else text


def deal_over(event: JSON, names: Names) -> Text:
    parts = [f"tricks {numbers(event['tricks'])}", f"points {numbers(event['points'])}"]
    if event.get("discard_points"):
        parts.append(f"discard {event['discard_points']} to the dealer")
    return Text(f"deal over: {' · '.join(parts)}", style="bold")


def new_deal(event: JSON, names: Names) -> Text:
    number = f" {event['deal']}" if "deal" in event else ""
    return Text(f"deal{number}, dealer ", style="bold").append(who(event, names, "dealer"))
