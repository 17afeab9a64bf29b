"""Each game's own touches on the terminal card table (see ``arena.render``).

The generic table draws every view key it does not know as a column or a line, which is complete
but long-winded. Here each game says how to show its keys compactly: a status line, the pile or
the trick in play and the last trick, the result of the last deal, and a few short seat columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from arena.render import (
    JSON,
    EventPhrase,
    TableHook,
    card_text,
    cards_text,
    is_card,
    seat_label,
    suit_text,
    value_text,
)


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


def challenge_lines(view: JSON) -> list[RenderableType]:
    lines: list[RenderableType] = [pile_line(view), beating_status(view)]
    return lines + deal_results_line(view, "winner", "winner of each deal")


def challenge_columns(view: JSON, seat: int) -> dict[str, RenderableType]:
    sides = view.get("side_suits")
    side = sides[seat] if isinstance(sides, list) else None
    return {"side suit": suit_text(side) if isinstance(side, str) else dim("—")}


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


# --- svara -----------------------------------------------------------------------------------


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


HOOKS: dict[str, TableHook] = {
    "svoi-kozyri": TableHook(
        svoi_kozyri_lines,
        frozenset({"pile", "mode", "turns_left", "deal_results", "deals", "known", "active"}),
        svoi_kozyri_columns,
    ),
    "challenge": TableHook(
        challenge_lines,
        frozenset({"pile", "mode", "turns_left", "deal_results", "deals", "side_suits"}),
        challenge_columns,
    ),
    "svoi-kozyri-tricks": TableHook(
        tricks_lines,
        frozenset(
            {"trick", "tricks", "phase", "target", "teams", "hands_visible", "dead", "trumping"}
            | {"last_deal", "revealed", "partner", "partner_trump", "trump"}
        ),
        revealed_column,
    ),
    "kozyr-boys": TableHook(
        kozyr_boys_lines,
        frozenset({"trick", "tricks", "phase", "turned", "bowers", "leftover", "discards"})
        | frozenset({"last_deal", "deals", "first_dealer", "trumps"}),
    ),
    "svara": TableHook(
        svara_lines,
        frozenset({"players", "balances", "hand_values", "earlier_rounds", "last_deal", "limits"})
        | frozenset({"deals", "phase", "svara", "pot", "stake", "can_show", "join_price", "tied"})
        | frozenset({"seen", "hand_value"}),
        svara_columns,
    ),
}
"""The touches of every registered game, by game name."""


# --- history events in words ------------------------------------------------------------------

Names = Sequence[str] | None


def who(event: JSON, names: Names, key: str = "seat") -> Text:
    return Text(seat_label(event[key], names), style="yellow")


def trick_taken(event: JSON, names: Names) -> Text:
    text = Text("→ ").append(who(event, names, "winner")).append(" takes the trick")
    return text.append(f" ({event['points']} points)") if event.get("points") else text


def trump_revealed(event: JSON, names: Names) -> Text:
    return who(event, names).append("'s trump is ").append(suit_text(event["suit"]))


def deal_over(event: JSON, names: Names) -> Text:
    parts = [f"tricks {numbers(event['tricks'])}", f"points {numbers(event['points'])}"]
    if event.get("discard_points"):
        parts.append(f"discard {event['discard_points']} to the dealer")
    return Text(f"deal over: {' · '.join(parts)}", style="bold")


def player_out(event: JSON, names: Names) -> Text:
    return who(event, names).append(" has no cards left and is out")


def six_goes_home(event: JSON, names: Names) -> Text:
    text = card_text(event["card"]).append(" goes from ").append(who(event, names, "from"))
    return text.append(" to its owner ").append(who(event, names, "to"))


def new_deal(event: JSON, names: Names) -> Text:
    number = f" {event['deal']}" if "deal" in event else ""
    text = Text(f"deal{number}, dealer ", style="bold").append(who(event, names, "dealer"))
    if event.get("svara"):
        dealt = ", ".join(seat_label(s, names) for s in event["players"])
        text.append(f" (svara round {event['svara']}: {dealt})")
    return text


def card_turned(event: JSON, names: Names) -> Text:
    return Text("turned up: ").append(card_text(event["card"]))


def dealer_discards(event: JSON, names: Names) -> Text:
    if "cards" in event:
        raise KeyError("cards")  # an action, not the face-down history event
    return who(event, names).append(" discards two cards face down")


def showdown(event: JSON, names: Names) -> Text:
    text = Text("automatic showdown: " if event.get("auto") else "showdown: ", style="bold")
    shown = [
        Text(seat_label(h["seat"], names) + " ").append(cards_text(h["cards"]))
        + Text(f" ({h['value']})")
        for h in event["hands"]
    ]
    return text.append(Text(", ").join(shown))


def antes(event: JSON, names: Names) -> Text:
    return Text(f"everyone antes {event['amount']}: the pot is {event['pot']}")


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


PHRASES: dict[str, EventPhrase] = {
    "trick": trick_taken,
    "reveal": trump_revealed,
    "deal_end": deal_over,
    "out": player_out,
    "transfer": six_goes_home,
    "deal": new_deal,
    "turn": card_turned,
    "discard": dealer_discards,
    "ante": antes,
    "showdown": showdown,
    "win": pot_won,
    "svara": svara_called,
    "split": pot_split,
}
"""History events that are not somebody's action, in words (``arena.render.event_text``)."""
