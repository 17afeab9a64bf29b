"""Svara's own touches on the terminal card table (``arena.render``): pot and stake, each seat's
status and chips, svaras and how the last deal ended.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text

from arena.render import (
    JSON,
    EventPhrase,
    TableHook,
    cards_text,
    seat_label,
    value_text,
)
from arena.table_pieces import (
    Names,
    dim,
    seat_names,
    who,
)


def svara_status(player: JSON) -> Text:
    """``dark 40``, ``looked``, ``folded``, ``out``..."""
    status = str(player.get("status"))
    if status == "dark":
        return Text(f"dark {player.get('dark_stake')}")
    return Text(status, style="dim" if status in ("folded", "out") else "")


def svara_columns(view: JSON, seat: int) -> dict[str, RenderableType]:
    players, values = view.get("players"), view.get("hand_values")
    player = players[seat] if isinstance(players, list) else {}
    columns: dict[str, RenderableType] = {
        "status": svara_status(player),
        "in pot": Text(str(player.get("contribution", "")), justify="right"),
    }
    if isinstance(values, list):
        columns["value"] = value_text(values[seat])
    return columns


def svara_deal_end(events: Any) -> Text | None:
    """How the last deal ended: its win or split event (and how many svaras it went through)."""
    if not isinstance(events, list):
        return None
    svaras = sum(1 for e in events if isinstance(e, dict) and e.get("type") == "svara")
    end = next((e for e in reversed(events) if e.get("type") in ("win", "split")), None)
    if end is None:
        return None
    if end["type"] == "win":
        how = "at the showdown" if end.get("shown") else "as everyone else folded"
        text = f"P{end['seat']} won {end['amount']} {how}"
    else:
        text = "pot split: " + ", ".join(f"P{s['seat']} {s['amount']}" for s in end["shares"])
    return Text(text + (f" after {svaras} svara(s)" if svaras else ""))


def svara_lines(view: JSON) -> list[RenderableType]:
    parts = [f"phase {view.get('phase')}", f"pot {view.get('pot')}", f"stake {view.get('stake')}"]
    if view.get("can_show"):
        parts.append("show allowed")
    if view.get("svara"):
        parts.append(f"svara round {view['svara']}")
    lines: list[RenderableType] = [Text(" · ".join(parts))]
    if "join_price" in view:
        tied = seat_names(view.get("tied"))
        lines.append(Text(f"svara: {tied} tied; others may join for {view['join_price']}"))
    last = svara_deal_end(view.get("last_deal"))
    if last is not None:
        lines.append(dim("last deal: ").append(last))
    return lines


def antes(event: JSON, names: Names) -> Text:
    return Text(f"everyone antes {event['amount']}: the pot is {event['pot']}")


def showdown(event: JSON, names: Names) -> Text:
    text = Text("automatic showdown: " if event.get("auto") else "showdown: ", style="bold")
    shown = [
        Text(seat_label(h["seat"], names) + " ").append(cards_text(h["cards"]))
        + Text(f" ({h['value']})")
        for h in event["hands"]
    ]
    return text.append(Text(", ").join(shown))


def pot_won(event: JSON, names: Names) -> Text:
    how = "" if event.get("shown") else " (everyone else folded)"
    return who(event, names).append(f" wins the pot of {event['amount']}{how}")


def svara_called(event: JSON, names: Names) -> Text:
    tied = " and ".join(seat_label(s, names) for s in event["tied"])
    return Text(f"svara between {tied}: the pot of {event['pot']} stays; ", style="bold").append(
        f"the others may join for {event['price']}"
    )


def pot_split(event: JSON, names: Names) -> Text:
    shares = ", ".join(f"{seat_label(s['seat'], names)} {s['amount']}" for s in event["shares"])
    return Text(f"the pot is split: {shares}")


def svara_new_deal(event: JSON, names: Names) -> Text:
    number = f" {event['deal']}" if "deal" in event else ""
    text = Text(f"deal{number}, dealer ", style="bold").append(who(event, names, "dealer"))
    if event.get("svara"):
        dealt = ", ".join(seat_label(s, names) for s in event["players"])
        text.append(f" (svara round {event['svara']}: {dealt})")
    return text


HOOK = TableHook(
    svara_lines,
    frozenset({"players", "balances", "hand_values", "earlier_rounds", "last_deal", "limits"})
    | frozenset({"deals", "phase", "svara", "pot", "stake", "can_show", "join_price", "tied"})
    | frozenset({"seen", "hand_value"}),
    svara_columns,
)
"""What the table shows of this game's own view keys."""

PHRASES: dict[str, EventPhrase] = {
    "deal": svara_new_deal,
    "ante": antes,
    "showdown": showdown,
    "win": pot_won,
    "svara": svara_called,
    "split": pot_split,
}
"""This game's history events that are not somebody's action, in words."""
