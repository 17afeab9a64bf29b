"""Matchmaking: ladder tables, seat rotation, mirrored seatings, round robin and Swiss pairings."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import matchmaking as mm
from arena.matchmaking import Candidate, NoTableError


@st.composite
def ladders(draw: st.DrawFn) -> tuple[list[Candidate], int]:
    players = draw(st.integers(2, 5))
    authors = draw(st.integers(players, 8))
    n = draw(st.integers(players, 16))
    bots = [
        Candidate(
            bot=f"bot{i}",
            author=f"author{i % authors}",
            mu=draw(st.floats(0, 50)),
            sigma=draw(st.floats(0.5, 9)),
            games=draw(st.integers(0, 100)),
            last_played=draw(st.integers(0, 1000)),
        )
        for i in range(n)
    ]
    return bots, players


@settings(max_examples=150, deadline=None)
@given(ladders(), st.integers(0, 2**32))
def test_table_never_seats_two_bots_of_one_author(
    ladder: tuple[list[Candidate], int], seed: int
) -> None:
    bots, players = ladder
    table = mm.pick_table(bots, players, random.Random(seed))
    by_id = {c.bot: c for c in bots}
    assert len(table) == players
    assert len(set(table)) == players
    assert len({by_id[b].author for b in table}) == players


def test_one_author_alone_cannot_fill_a_table() -> None:
    bots = [Candidate(f"b{i}", "same", 25, 8) for i in range(6)]
    with pytest.raises(NoTableError):
        mm.pick_table(bots, 2, random.Random(0))


def test_table_is_the_seed_and_its_nearest_in_mu() -> None:
    bots = [Candidate(f"b{i}", f"a{i}", mu=float(i), sigma=1.0) for i in range(10)]
    bots[5] = Candidate("b5", "a5", mu=5.0, sigma=9.0)  # most uncertain: the seed
    seed = bots[5]
    table = mm.fill_table(seed, bots, 3, random.Random(1))
    assert table[0] == seed
    assert {c.bot for c in table[1:]} <= {"b4", "b6"} | (
        {"b3", "b7"} if mm.NEAREST_SPREAD else set()
    )


def _ladder_run(
    n: int, players: int, matches: int, seed: int
) -> tuple[Counter[str], dict[str, list[int]]]:
    """Schedule ``matches`` tables on a ladder with drifting ratings; count games and seats."""
    rng = random.Random(seed)
    bots = {f"b{i}": Candidate(f"b{i}", f"a{i}", rng.uniform(10, 40), 8.0) for i in range(n)}
    games: Counter[str] = Counter()
    seats: dict[str, list[int]] = {}
    for clock in range(1, matches + 1):
        table = mm.pick_table(list(bots.values()), players, rng, seats)
        for seat, bot in enumerate(table):
            old = bots[bot]
            games[bot] += 1
            seats.setdefault(bot, [0] * players)[seat] += 1
            bots[bot] = Candidate(
                bot, old.author, old.mu + rng.gauss(0, 1), old.sigma * 0.97, old.games + 1, clock
            )
    return games, seats


@settings(max_examples=15, deadline=None)
@given(st.integers(5, 14), st.integers(2, 4), st.integers(0, 2**32))
def test_every_bot_gets_games_and_seats_rotate(n: int, players: int, seed: int) -> None:
    matches = 25 * n
    games, seats = _ladder_run(n, players, matches, seed)
    fair = matches * players / n
    assert len(games) == n
    assert min(games.values()) >= fair / 3, games
    for bot, counts in seats.items():
        assert max(counts) - min(counts) <= 3, (bot, counts)


def test_seat_table_puts_bots_where_they_sat_least() -> None:
    counts = {"a": [5, 0, 5], "b": [0, 5, 5], "c": [5, 5, 0]}
    assert mm.seat_table(["a", "b", "c"], counts, random.Random(0)) == ["b", "a", "c"]


@given(st.lists(st.integers(), min_size=1, max_size=7, unique=True))
def test_mirrored_seatings_cover_every_seat(bots: list[int]) -> None:
    seatings = mm.mirrored_seatings(bots)
    n = len(bots)
    assert len(seatings) == n
    for seat in range(n):
        assert sorted(s[seat] for s in seatings) == sorted(bots)
    for s in seatings:
        assert sorted(s) == sorted(bots)
    # consecutive seatings are one rotation apart, so the seat order around the table is kept
    for a, b in itertools.pairwise(seatings):
        assert b == a[-1:] + a[:-1]


def test_full_round_robin_plays_every_combination_equally() -> None:
    tables = mm.round_robin_tables(6, 3, 2 * math.comb(6, 3))
    assert Counter(tables) == Counter({t: 2 for t in itertools.combinations(range(6), 3)})


def test_round_robin_prefix_is_balanced() -> None:
    tables = mm.round_robin_tables(6, 3, 8)
    games = Counter(b for t in tables for b in t)
    assert max(games.values()) - min(games.values()) <= 1


@given(st.integers(5, 40), st.integers(2, 5), st.integers(1, 60))
def test_balanced_design_levels_games(n: int, players: int, tables: int) -> None:
    if players > n:
        return
    design = mm.balanced_tables(n, players, tables)
    assert len(design) == tables
    games = Counter(b for t in design for b in t)
    counts = [games.get(b, 0) for b in range(n)]
    assert max(counts) - min(counts) <= 1
    assert all(len(set(t)) == players for t in design)


def test_balanced_design_spreads_meetings() -> None:
    design = mm.balanced_tables(16, 4, 20)  # 5 tables per round, 4 rounds
    met = Counter(p for t in design for p in itertools.combinations(t, 2))
    assert max(met.values()) == 1  # 120 pairs of 16 bots: nobody needs to meet twice yet


def test_place_points_share_ties() -> None:
    assert mm.place_points([1, 2, 3, 4]) == [3, 2, 1, 0]
    assert mm.place_points([1, 1, 3, 4]) == [2.5, 2.5, 1, 0]
    assert mm.place_points([2, 1, 2]) == [0.5, 2, 0.5]
    assert sum(mm.place_points([1, 1, 1, 1])) == 6


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 23), st.integers(2, 5), st.integers(0, 2**32))
def test_swiss_round_seats_everyone_once_with_byes(n: int, players: int, seed: int) -> None:
    if players > n:
        return
    rng = random.Random(seed)
    scores = [float(rng.randint(0, 6)) for _ in range(n)]
    byes = {b: rng.randint(0, 1) for b in range(n)}
    pairing = mm.swiss_round(scores, players, {}, byes)
    seated = [b for t in pairing.tables for b in t]
    assert len(pairing.byes) == n % players
    assert sorted(seated + pairing.byes) == list(range(n))
    assert all(len(t) == players for t in pairing.tables)
    # byes go to bots with the fewest byes so far
    if pairing.byes:
        assert max(byes[b] for b in pairing.byes) <= min(byes[b] for b in seated)


def test_swiss_groups_by_score() -> None:
    scores = [0, 9, 1, 8, 2, 7, 3, 6]
    pairing = mm.swiss_round(scores, 4, {}, {})
    assert pairing.tables == [(1, 3, 5, 7), (6, 4, 2, 0)]


def test_swiss_avoids_repeat_tables() -> None:
    n, players = 8, 2
    met: Counter[tuple[int, int]] = Counter()
    scores = [0.0] * n
    for _ in range(4):
        pairing = mm.swiss_round(scores, players, met, {})
        for a, b in pairing.tables:
            met[(min(a, b), max(a, b))] += 1
            scores[min(a, b)] += 1  # the lower index always wins: scores spread out
    assert max(met.values()) == 1


def test_swiss_rounds_grow_with_the_field() -> None:
    assert mm.swiss_rounds_for(4, 4) < mm.swiss_rounds_for(64, 4)


def _ladder(n: int = 20) -> list[mm.Candidate]:
    """``n`` bots of distinct authors, b0 the strongest (mu 40) down to the weakest (mu 21)."""
    return [mm.Candidate(f"b{i}", f"a{i}", 40.0 - i, 1.0, 50) for i in range(n)]


def test_placement_first_table_spans_the_ladder() -> None:
    bots = _ladder()
    newcomer = mm.Candidate("new", "someone", 25.0, 8.3)
    table = mm.placement_table(newcomer, [*bots, newcomer], 4, 0, random.Random(3))
    # The newcomer's mu (25) sits near the bottom, yet it meets the best, the middle, the worst.
    assert [c.bot for c in table] == ["new", "b0", "b10", "b19"]


def test_placement_spread_takes_several_tables_at_two_seats() -> None:
    bots = _ladder()
    newcomer = mm.Candidate("new", "someone", 25.0, 8.3)
    assert mm.spread_tables(2) == 3
    met = [mm.placement_table(newcomer, bots, 2, t, random.Random(t))[1].bot for t in range(3)]
    assert met == ["b0", "b10", "b19"]


def test_placement_brackets_the_current_estimate() -> None:
    bots = _ladder()
    # After the spread the newcomer's mu says it is about as good as b5 (mu 35), give or take
    # its sigma (4): it meets the bots at mu + sigma, mu and mu - sigma.
    placed = mm.Candidate("new", "someone", 35.2, 4.0)
    table = mm.placement_table(placed, bots, 4, 1, random.Random(5))
    assert [c.bot for c in table] == ["new", "b1", "b5", "b9"]
    # The bracket narrows as the estimate firms up.
    firmer = mm.Candidate("new", "someone", 35.2, 2.0)
    table = mm.placement_table(firmer, bots, 4, 2, random.Random(5))
    assert [c.bot for c in table] == ["new", "b3", "b5", "b7"]


def test_placement_bracket_at_the_top_still_seats_distinct_bots() -> None:
    bots = _ladder()
    # Above the strongest bot (mu 40): mu + sigma (45) takes b0; mu (42) would too, so b1
    # stands in; mu - sigma (39) would take b1, so b2: still the three strongest, no repeat.
    top = mm.Candidate("new", "someone", 42.0, 3.0)
    table = mm.placement_table(top, bots, 4, 1, random.Random(2))
    assert [c.bot for c in table] == ["new", "b0", "b1", "b2"]


def test_placement_bracket_with_one_opponent_takes_turns() -> None:
    bots = _ladder()
    placed = mm.Candidate("new", "someone", 30.0, 3.0)
    spread = mm.spread_tables(2)
    met = [
        mm.placement_table(placed, bots, 2, spread + t, random.Random(t))[1].bot for t in range(4)
    ]
    # Above (mu 33), at (30), below (27), then above again.
    assert met == ["b7", "b10", "b13", "b7"]


def test_placement_bracket_keeps_authors_apart() -> None:
    bots = _ladder()
    own = mm.Candidate("b5", "someone", 35.0, 1.0)  # the newcomer author's own bot at its mu
    placed = mm.Candidate("new", "someone", 35.0, 4.0)
    table = mm.placement_table(placed, [*bots[:5], own, *bots[6:]], 4, 1, random.Random(1))
    assert [c.bot for c in table] == ["new", "b1", "b4", "b9"]


def test_placement_keeps_authors_apart_and_says_when_it_cannot() -> None:
    bots = _ladder()
    # The strongest bot is the newcomer author's own: the next best stands in for it.
    own = mm.Candidate("b0", "someone", 40.0, 1.0)
    newcomer = mm.Candidate("new", "someone", 25.0, 8.3)
    table = mm.placement_table(newcomer, [own, *bots[1:]], 4, 0, random.Random(1))
    assert [c.bot for c in table] == ["new", "b1", "b10", "b19"]
    with pytest.raises(mm.NoTableError):
        mm.placement_table(newcomer, bots[:2], 4, 0, random.Random(1))
