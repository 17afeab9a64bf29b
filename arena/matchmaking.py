"""Who plays whom: ladder matchmaking, seat rotation, mirrored deals and tournament pairings.

Everything here is a pure function over plain data and an explicit ``random.Random``, so the
ladder scheduler, local tournaments and the rating simulation make the same choices from the
same inputs.

Ladder matchmaking (``pick_table``) works in three steps:

1. ``pick_seed``: choose the bot that most needs games. Usually the most uncertain one (highest
   ``sigma``), which is the bot whose next result teaches the ladder the most; sometimes the bot
   with the fewest games or the one idle longest, so that no bot starves.
2. ``fill_table``: fill its table with bots near it in ``mu``: close games are the informative
   ones, and they make top bots meet each other. Never two bots of one author at one table.
3. ``seat_table``: give each bot the seat it has sat in least (seat rotation).

``mirrored_seatings`` turns one table into ``n`` seatings with the seats rotated; played on one
seed, they deal the same cards to every seat once, which cancels most of the luck of the deal.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
H = TypeVar("H", bound=Hashable)

SEED_BY_GAMES = 0.15
"""Share of picks that go to a bot with the fewest games (newcomers get placed quickly)."""
SEED_BY_IDLE = 0.05
"""Share of picks that go to the bot idle longest (nobody starves)."""
NEAREST_SPREAD = 0
"""Opponents are drawn from the ``players - 1 + NEAREST_SPREAD`` eligible bots nearest in mu."""


class NoTableError(ValueError):
    """Not enough eligible bots (of distinct authors) to fill a table."""


@dataclass(frozen=True)
class Candidate:
    """A bot as the matchmaker sees it.

    ``last_played`` is any increasing clock (a timestamp or a match counter); smaller means
    longer ago. ``author`` groups bots that must never share a table.
    """

    bot: str
    author: str
    mu: float
    sigma: float
    games: int = 0
    last_played: float = 0.0


# --- ladder -------------------------------------------------------------------------------


def pick_seed(candidates: Sequence[Candidate], rng: random.Random) -> Candidate:
    """The bot that most needs a game now (see the module docstring for the policy)."""
    if not candidates:
        raise NoTableError("no bots to schedule")
    roll = rng.random()
    if roll < SEED_BY_GAMES:
        fewest = min(c.games for c in candidates)
        return rng.choice([c for c in candidates if c.games == fewest])
    if roll < SEED_BY_GAMES + SEED_BY_IDLE:
        return min(candidates, key=lambda c: (c.last_played, c.bot))
    top = max(c.sigma for c in candidates)
    return rng.choice([c for c in candidates if math.isclose(c.sigma, top, rel_tol=1e-9)])


def fill_table(
    seed: Candidate, candidates: Sequence[Candidate], players: int, rng: random.Random
) -> list[Candidate]:
    """``seed`` plus ``players - 1`` bots near it in mu, all of distinct authors.

    Opponents are drawn at random from the ``players - 1 + NEAREST_SPREAD`` nearest eligible bots.
    The default spread 0 takes simply the nearest: in ``bench/ladder_sim.py`` that found the true
    order fastest, and the seed bot changing with sigma already varies the tables.
    """
    table = [seed]
    authors = {seed.author}
    pool = sorted(
        (c for c in candidates if c.bot != seed.bot and c.author != seed.author),
        key=lambda c: (abs(c.mu - seed.mu), c.bot),
    )
    while len(table) < players:
        eligible = [c for c in pool if c.author not in authors]
        if not eligible:
            raise NoTableError(f"cannot seat {players} bots of distinct authors")
        width = players - len(table) + NEAREST_SPREAD
        pick = rng.choice(eligible[:width])
        table.append(pick)
        authors.add(pick.author)
        pool.remove(pick)
    return table


def seat_table(
    bots: Sequence[H], seat_counts: Mapping[H, Sequence[int]], rng: random.Random
) -> list[H]:
    """An order of ``bots`` (seat k gets element k) that puts bots where they sat least.

    ``seat_counts[bot][k]`` is how often ``bot`` has sat in seat k (missing means never). Ties
    between equally good orders are broken by ``rng``.
    """
    n = len(bots)

    def cost(order: Sequence[H]) -> int:
        return sum(_count(seat_counts, bot, seat) for seat, bot in enumerate(order))

    if n > 6:  # 7! orders is already too many to try; a shuffle rotates well enough
        order = list(bots)
        rng.shuffle(order)
        return order
    orders = list(itertools.permutations(bots))
    best = min(cost(o) for o in orders)
    return list(rng.choice([o for o in orders if cost(o) == best]))


def _count(seat_counts: Mapping[H, Sequence[int]], bot: H, seat: int) -> int:
    counts = seat_counts.get(bot, ())
    return counts[seat] if seat < len(counts) else 0


def pick_table(
    candidates: Sequence[Candidate],
    players: int,
    rng: random.Random,
    seat_counts: Mapping[str, Sequence[int]] | None = None,
) -> list[str]:
    """One ladder table: the bot ids in seat order (seed bot, nearest opponents, rotated)."""
    seed = pick_seed(candidates, rng)
    table = fill_table(seed, candidates, players, rng)
    return seat_table([c.bot for c in table], seat_counts or {}, rng)


PLACEMENT_SPREAD = 3
"""Opponents a newcomer meets across the ladder (strong, middle, weak) before converging."""
PLACEMENT_BRACKET = 1.0
"""After the spread, a newcomer's opponents sit from ``mu + PLACEMENT_BRACKET * sigma`` down to
``mu - PLACEMENT_BRACKET * sigma`` of its current estimate."""


def spread_tables(players: int) -> int:
    """Placement tables that seat a newcomer against the whole ladder: enough for
    ``PLACEMENT_SPREAD`` opponents."""
    return -(-PLACEMENT_SPREAD // max(1, players - 1))


def placement_table(
    newcomer: Candidate,
    candidates: Sequence[Candidate],
    players: int,
    table_index: int,
    rng: random.Random,
) -> list[Candidate]:
    """The opponents of a newcomer's placement table number ``table_index`` (0 first), with the
    newcomer first: all of distinct authors.

    The first ``spread_tables(players)`` tables span the ladder: their opponents sit at evenly
    spaced places of the order by mu, from the strongest down to the weakest (with 4 seats the
    first table is the best, the middle and the last bot). The newcomer's own rating says
    nothing yet, so these tables measure it against the whole field. Every later table brackets
    its current estimate (``bracket_targets``): the bots nearest ``mu + sigma``, ``mu`` and
    ``mu - sigma`` with 4 seats, so that it meets a bot it should lose to, its peer and a bot it
    should beat, and every result says on which side of them it belongs. With 2 seats the one
    opponent alternates above, at and below the estimate, table after table. The choice is
    deterministic; ``rng`` is taken for a signature like ``fill_table``'s.
    """
    spread = spread_tables(players)
    pool = sorted(
        (c for c in candidates if c.bot != newcomer.bot and c.author != newcomer.author),
        key=lambda c: (-c.mu, c.bot),
    )
    wanted = players - 1
    if table_index >= spread:
        targets = bracket_targets(newcomer, wanted, table_index - spread)
        return _seat_nearest(newcomer, pool, targets, lambda c: c.mu, players)
    position = {c.bot: float(i) for i, c in enumerate(pool)}  # each bot's place in the order
    slots = max(1, spread * wanted)
    places = []
    for k in range(wanted):
        slot = table_index * wanted + k
        # The k-th of ``slots`` evenly spaced places from the top (0) to the bottom (1).
        where = slot / (slots - 1) if slots > 1 else 0.5
        places.append(where * (len(pool) - 1))
    return _seat_nearest(newcomer, pool, places, lambda c: position[c.bot], players)


def bracket_targets(newcomer: Candidate, opponents: int, round_index: int) -> list[float]:
    """The mu each of ``opponents`` bracketing opponents should have: evenly spaced from
    ``mu + PLACEMENT_BRACKET * sigma`` down to ``mu - PLACEMENT_BRACKET * sigma``. A single
    opponent takes the three in turn (``round_index`` counts the bracketing tables so far)."""
    width = PLACEMENT_BRACKET * newcomer.sigma
    if opponents == 1:
        return [newcomer.mu + width * (1 - round_index % 3)]
    return [newcomer.mu + width * (1 - 2 * k / (opponents - 1)) for k in range(opponents)]


def _seat_nearest(
    newcomer: Candidate,
    pool: Sequence[Candidate],
    targets: Sequence[float],
    where: Callable[[Candidate], float],
    players: int,
) -> list[Candidate]:
    """``newcomer`` and, for each target in turn, the eligible bot whose ``where`` is nearest
    it: never one bot twice, never two of one author."""
    table = [newcomer]
    authors = {newcomer.author}
    for target in targets:
        eligible = [c for c in pool if c.author not in authors]
        if not eligible:
            raise NoTableError(f"cannot seat {players} bots of distinct authors")
        pick = min(eligible, key=lambda c: (abs(where(c) - target), c.bot))
        table.append(pick)
        authors.add(pick.author)
    return table


def mirrored_seatings(bots: Sequence[T]) -> list[list[T]]:
    """``n`` seatings of ``n`` bots, each rotated one seat further: every bot sits everywhere.

    Played on one seed, seating ``r`` gives seat ``k`` to ``bots[(k - r) % n]``, so the same hands
    are dealt to every bot once.
    """
    n = len(bots)
    return [[bots[(seat - r) % n] for seat in range(n)] for r in range(n)]


# --- tournaments: round robin ---------------------------------------------------------------

MAX_FULL_ROUND_ROBIN = 1000
"""Above this many combinations, round robins use a balanced design instead of every one."""


def round_robin_tables(bots: int, players: int, tables: int) -> list[tuple[int, ...]]:
    """``tables`` tables (tuples of bot indices) for a round robin of ``bots`` bots.

    When every combination of ``players`` bots fits, whole cycles of all combinations are used
    (ordered so that any prefix is close to balanced). Otherwise a balanced design: every bot
    plays as often as possible equally, and pairs meet as evenly as possible.
    """
    if players > bots:
        raise ValueError(f"{bots} bots cannot fill a table of {players}")
    total = math.comb(bots, players)
    if total <= min(tables, MAX_FULL_ROUND_ROBIN):
        cycle = _balanced_order(list(itertools.combinations(range(bots), players)))
        return [cycle[i % total] for i in range(tables)]
    return balanced_tables(bots, players, tables)


def _balanced_order(combos: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Reorder combinations so that bots' appearance counts stay level along the way."""
    seen: Counter[int] = Counter()
    left = list(combos)
    ordered: list[tuple[int, ...]] = []
    while left:
        best = min(range(len(left)), key=lambda i: (sum(seen[b] for b in left[i]), i))
        combo = left.pop(best)
        seen.update(combo)
        ordered.append(combo)
    return ordered


def balanced_tables(bots: int, players: int, tables: int) -> list[tuple[int, ...]]:
    """A greedy balanced design: each table takes bots with the fewest games, and among those
    the ones that met the table's members least."""
    games: Counter[int] = Counter()
    met: Counter[tuple[int, int]] = Counter()
    out: list[tuple[int, ...]] = []
    for _ in range(tables):
        table = [min(range(bots), key=lambda b: (games[b], b))]
        while len(table) < players:
            rest = [b for b in range(bots) if b not in table]
            table.append(min(rest, key=lambda b: (games[b], _met_with(met, b, table), b)))
        games.update(table)
        met.update(_pairs(table))
        out.append(tuple(sorted(table)))
    return out


def _pairs(table: Iterable[int]) -> list[tuple[int, int]]:
    return [(a, b) if a < b else (b, a) for a, b in itertools.combinations(table, 2)]


def _met_with(met: Mapping[tuple[int, int], int], bot: int, table: Iterable[int]) -> int:
    return sum(met.get((min(bot, o), max(bot, o)), 0) for o in table)


# --- tournaments: Swiss ---------------------------------------------------------------------


@dataclass(frozen=True)
class SwissRound:
    """One Swiss round: the tables (bot indices, best-scored first) and the bots with a bye."""

    tables: list[tuple[int, ...]]
    byes: list[int]


def place_points(ranking: Sequence[int]) -> list[float]:
    """Swiss points per seat: ``players - position``, tied seats sharing their positions' mean.

    ``(1, 2, 3, 4)`` gives ``3, 2, 1, 0``; ``(1, 1, 3, 4)`` gives ``2.5, 2.5, 1, 0``.
    """
    n = len(ranking)
    shared = Counter(ranking)
    return [n - (place + (shared[place] - 1) / 2) for place in ranking]


def bye_points(players: int) -> float:
    """What a bye is worth: the points of an average place."""
    return (players - 1) / 2


def swiss_round(
    scores: Sequence[float],
    players: int,
    met: Mapping[tuple[int, int], int],
    byes: Mapping[int, int],
    window: int = 3,
) -> SwissRound:
    """Pair one Swiss round of ``len(scores)`` bots into tables of ``players``.

    Bots are ordered by score (ties by index, i.e. entry order). When the count does not divide,
    the lowest-scored bots among those with the fewest byes sit out. Tables are then built
    greedily: take the best unseated bot and add, from the next few unseated bots, the one that
    met the table least, nearest in the order first. Greedy pairing can paint itself into a
    corner at the end of the list, so it is tried top-down and bottom-up with a few reaches, and
    the pairing with the fewest repeat meetings (then the closest scores) wins. ``met`` counts
    past meetings per pair ``(low, high)``; ``byes`` counts past byes per bot.
    """
    n = len(scores)
    if players > n:
        raise ValueError(f"{n} bots cannot fill a table of {players}")
    order = sorted(range(n), key=lambda b: (-scores[b], b))
    sit_out = sorted(order, key=lambda b: (byes.get(b, 0), scores[b], -b))[: n % players]
    left = [b for b in order if b not in sit_out]
    tries = []
    for reach in (window * players, 2 * window * players, n):
        tries.append(_greedy_tables(left, players, met, reach))
        tries.append([t[::-1] for t in _greedy_tables(left[::-1], players, met, reach)][::-1])

    best = min(tries, key=lambda tables: _swiss_cost(tables, scores, met))
    return SwissRound(tables=_repair(best, scores, met), byes=sorted(sit_out))


def _swiss_cost(
    tables: Sequence[Sequence[int]], scores: Sequence[float], met: Mapping[tuple[int, int], int]
) -> tuple[int, float]:
    """Repeat meetings, then the total score spread within tables (lower is better)."""
    repeats = sum(_met_with(met, t[i], t[:i]) for t in tables for i in range(1, len(t)))
    spread = sum(max(scores[b] for b in t) - min(scores[b] for b in t) for t in tables)
    return repeats, spread


def _repair(
    tables: list[tuple[int, ...]], scores: Sequence[float], met: Mapping[tuple[int, int], int]
) -> list[tuple[int, ...]]:
    """Swap bots between tables while a swap removes a repeat meeting (a few passes at most)."""
    current = [list(t) for t in tables]
    for _ in range(len(current) * 4):
        best = _swiss_cost(current, scores, met)
        improved = False
        for a, b in itertools.combinations(range(len(current)), 2):
            for i, j in itertools.product(range(len(current[a])), range(len(current[b]))):
                trial = [list(t) for t in current]
                trial[a][i], trial[b][j] = current[b][j], current[a][i]
                if _swiss_cost(trial, scores, met)[0] < best[0]:
                    current, improved = trial, True
                    break
            if improved:
                break
        if not improved:
            break
    return [tuple(t) for t in current]


def _greedy_tables(
    order: Sequence[int], players: int, met: Mapping[tuple[int, int], int], reach: int
) -> list[tuple[int, ...]]:
    left = list(order)
    tables: list[tuple[int, ...]] = []
    while left:
        table = [left.pop(0)]
        while len(table) < players:
            near = left[:reach]
            pick = min(range(len(near)), key=lambda i: (_met_with(met, near[i], table), i))
            table.append(left.pop(pick))
        tables.append(tuple(table))
    return tables


def swiss_rounds_for(bots: int, players: int) -> int:
    """A sensible number of Swiss rounds: enough to separate ``bots`` bots (log base players)."""
    return max(1, math.ceil(math.log(max(bots, 2), max(players, 2))) + 1)
