"""What Svoi Kozyri is called and how a match of it can be set up: its parameters and variants
(the rules themselves are in ``game.py``)."""

from __future__ import annotations

from arena.games import beating
from arena.games.base import GameSpec, Param

_PICKUP_CHOICES = (beating.ALL,)

SPEC = GameSpec(
    name="svoi-kozyri",
    title="Svoi Kozyri",
    min_players=2,
    max_players=4,
    default_players=4,
    params=(
        Param("deals", 8, "deals in a match", minimum=1, maximum=1000),
        Param(
            "trump_assignment",
            "seat",
            "seat: seat k owns suit k of S H D C; choose: players pick in turn before each deal",
            kind="str",
            choices=("seat", "choose"),
        ),
        Param(
            "pickup_plain",
            3,
            "cards picked up from a top card not of one's own trump",
            minimum=1,
            maximum=36,
            choices=_PICKUP_CHOICES,
        ),
        Param(
            "pickup_own_trump",
            5,
            "cards picked up from a top card of one's own trump",
            minimum=1,
            maximum=36,
            choices=_PICKUP_CHOICES,
        ),
        Param(
            "pickup_own_trump_ace",
            beating.ALL,
            "cards picked up from one's own trump ace",
            minimum=1,
            maximum=36,
            choices=_PICKUP_CHOICES,
        ),
        Param(
            "exit_beat_next",
            "lead_or_beat",
            "after a player goes out on a beat, the next player may lead or beat (not pick up), "
            "or only lead",
            kind="str",
            choices=("lead_or_beat", "lead_only"),
        ),
        Param(
            "draw_rule",
            True,
            "a last player whose single card beats the top card draws",
            kind="bool",
        ),
        Param(
            "turn_cap",
            1000,
            "actions per deal before the deal is decided by card counts",
            minimum=10,
            maximum=100000,
        ),
    ),
    variants={
        "modern": {},
        "classic": {
            "pickup_plain": beating.ALL,
            "pickup_own_trump": beating.ALL,
            "pickup_own_trump_ace": beating.ALL,
        },
        "choose": {"trump_assignment": "choose"},
    },
    default_variant="modern",
    rulebook="seeds/svoi-kozyri.md",
)
