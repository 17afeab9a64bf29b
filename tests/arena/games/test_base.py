"""Declared game parameters: which values fit, and what a refusal says."""

from __future__ import annotations

from typing import Any

import pytest

from arena.games import make_game
from arena.games.base import ConfigError, Param, deal_rng, shuffle

WORD = Param("seating", "seat", "who picks trumps", kind="str", choices=("seat", "choose"))
COUNT = Param("pickup", 3, "cards taken", minimum=1, maximum=6, choices=("all",))
FLAG = Param("draw", True, "draws allowed", kind="bool")


@pytest.mark.parametrize(("param", "value"), [(WORD, "choose"), (COUNT, 6), (COUNT, "all")])
def test_fitting_values_pass_unchanged(param: Param, value: Any) -> None:
    assert param.check(value) == value


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        (WORD, "zzz", "parameter 'seating' must be one of 'seat', 'choose', got 'zzz'"),
        (COUNT, "x", "parameter 'pickup' must be int or 'all', got 'x'"),
        (COUNT, True, "parameter 'pickup' must be int or 'all', got True"),
        (COUNT, 7, "parameter 'pickup' must be <= 6, got 7"),
        (COUNT, 0, "parameter 'pickup' must be >= 1, got 0"),
        (FLAG, 3, "parameter 'draw' must be bool, got 3"),
    ],
)
def test_a_refusal_names_the_values_that_fit(param: Param, value: Any, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        param.check(value)
    assert str(refused.value) == message


def test_a_wrong_table_size_names_the_sizes_that_fit() -> None:
    with pytest.raises(ConfigError, match=r"^challenge is for 2 players, not 3$"):
        make_game("challenge", 3)
    with pytest.raises(ConfigError, match=r"^svoi-kozyri is for 2-4 players, not 9$"):
        make_game("svoi-kozyri", 9)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 24, 32, 36, 40, 64, 129])
def test_shuffle_gives_the_order_of_random_shuffle(size: int) -> None:
    for seed in range(40):
        mine, theirs = list(range(size)), list(range(size))
        shuffle(deal_rng(seed, size), mine)
        deal_rng(seed, size).shuffle(theirs)
        assert mine == theirs


def test_shuffle_leaves_the_generator_where_random_shuffle_does() -> None:
    for seed in range(200):
        mine, theirs = deal_rng(seed, 0), deal_rng(seed, 0)
        shuffle(mine, list(range(36)))
        theirs.shuffle(list(range(36)))
        assert mine.getstate() == theirs.getstate()
