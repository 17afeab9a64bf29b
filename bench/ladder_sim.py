"""Ladder simulation: how fast do ratings find the true order of bots?

Twenty simulated bots of known strength play 4-seat matches. A seat's performance in a match is
``strength + deal luck of the seat + play noise``; places follow performance. Deal luck is what
the cards give a seat; play noise is the bot's own variance. With mirrored deals a table plays the
same deal luck ``n`` times with the seats rotated, so every bot gets every seat's cards once.

For random pairing and for ``arena.matchmaking``, with and without mirrored deals, the script
prints the Kendall tau between the true order and the rated order (``mu - 3 sigma``) after 100,
300, 1000 and 3000 matches: the median over several repetitions. Every match counts, so a
mirrored group of four tables costs four matches.

    .venv/bin/python bench/ladder_sim.py [--reps 21] [--seed 1]

The last line is ``tau1000=<median for our matchmaking with mirrored deals>``.

``--part placement`` measures placement instead: 19 bots settle on a mirrored ladder
(``WARMUP`` matches of our matchmaking), then a new bot of a given strength (true rank 1-4
strong, 9-12 middle, 17-20 weak) plays its placement tables alone, as the web scheduler seats
them (table ``t`` is chosen from the ratings after table ``t - ahead``). Side by side on the same
ladder and the same deals: the placement until now (the spread table, then the nearest in mu;
two tables queued ahead; 10 matches), ours with the same 10 matches (the spread, then
bracketing the estimate; one table ahead), and ours as the product runs it (24 matches). It
prints the median distance between the new bot's rank by ``mu`` after placement and its true
rank among the 20; for ours also the tolerant distance (places beyond the bots within
``NEAR_EQUAL`` of its true strength) and, as a yardstick, the strict distance of the settled
bot next to it in truth.

    .venv/bin/python bench/ladder_sim.py --part placement [--reps 41] [--placement-matches 24]

It does so on two ladder shapes (``SHAPES``). Its last two lines are
``placement_worst_tolerant=<largest median tolerant distance of ours>`` and
``placement_worst=<largest median distance of ours>``.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena import matchmaking, ratings
from arena.matchmaking import Candidate
from arena.ratings import Rating

BOTS = 20
PLAYERS = 4
CHECKPOINTS = (100, 300, 1000, 3000)
STRENGTH_SPREAD = 2.5
"""True strengths are evenly spaced over this range (neighbours ~0.13 apart)."""
LUCK_SD = 1.6
PLAY_SD = 1.2
"""Together a seat's noise has a standard deviation of 2 around its strength."""

Table = list[int]


@dataclass
class Ladder:
    """The simulated ladder: true strengths, current ratings and bookkeeping."""

    strengths: list[float]
    rng: random.Random
    ratings: list[Rating] = field(default_factory=list)
    games: list[int] = field(default_factory=list)
    last_played: list[int] = field(default_factory=list)
    seat_counts: dict[str, list[int]] = field(default_factory=dict)
    matches: int = 0

    def __post_init__(self) -> None:
        n = len(self.strengths)
        self.ratings = [Rating() for _ in range(n)]
        self.games = [0] * n
        self.last_played = [0] * n

    def play(self, seating: Table, luck: Sequence[float]) -> None:
        """Play one match and rate it."""
        perf = [
            self.strengths[b] + luck[s] + self.rng.gauss(0, PLAY_SD) for s, b in enumerate(seating)
        ]
        ranking = [1 + sum(1 for o in perf if o > p) for p in perf]
        new = ratings.rate_match([self.ratings[b] for b in seating], ranking)
        self.matches += 1
        for seat, (bot, r) in enumerate(zip(seating, new, strict=True)):
            self.ratings[bot] = r
            self.games[bot] += 1
            self.last_played[bot] = self.matches
            self.seat_counts.setdefault(str(bot), [0] * PLAYERS)[seat] += 1

    def candidates(self) -> list[Candidate]:
        return [
            Candidate(str(b), f"author{b}", r.mu, r.sigma, self.games[b], self.last_played[b])
            for b, r in enumerate(self.ratings)
        ]


Pairing = Callable[[Ladder], Table]


def random_pairing(ladder: Ladder) -> Table:
    return ladder.rng.sample(range(len(ladder.strengths)), PLAYERS)


def our_matchmaking(ladder: Ladder) -> Table:
    table = matchmaking.pick_table(ladder.candidates(), PLAYERS, ladder.rng, ladder.seat_counts)
    return [int(b) for b in table]


def kendall_tau(truth: Sequence[float], rated: Sequence[float]) -> float:
    """Kendall's tau-a between two scorings of the same items."""
    n = len(truth)
    total = 0
    for i in range(n):
        for j in range(i + 1, n):
            a = (truth[i] > truth[j]) - (truth[i] < truth[j])
            b = (rated[i] > rated[j]) - (rated[i] < rated[j])
            total += a * b
    return total / (n * (n - 1) / 2)


def simulate(pairing: Pairing, mirrored: bool, seed: int) -> list[float]:
    """One ladder run; the tau at each checkpoint."""
    rng = random.Random(seed)
    strengths = [STRENGTH_SPREAD * i / (BOTS - 1) for i in range(BOTS)]
    rng.shuffle(strengths)
    ladder = Ladder(strengths, rng)
    taus: list[float] = []
    while len(taus) < len(CHECKPOINTS):
        table = pairing(ladder)
        luck = [rng.gauss(0, LUCK_SD) for _ in range(PLAYERS)]
        seatings = matchmaking.mirrored_seatings(table) if mirrored else [table]
        for seating in seatings:
            ladder.play(seating, luck)
            if ladder.matches == CHECKPOINTS[len(taus)]:
                taus.append(kendall_tau(strengths, [ratings.display(r) for r in ladder.ratings]))
                if len(taus) == len(CHECKPOINTS):
                    break
    return taus


WARMUP = 1000
"""Matches the 19 settled bots play before a newcomer arrives."""
PLACEMENT_MATCHES = 24
"""As ``PLACEMENT_MATCHES`` in ``web/config.py``: six mirrored tables of 4."""
QUEUED_AHEAD = 1
"""As ``PLACEMENT_AHEAD`` in ``web/services/ladders.py``: tables chosen before results come in."""
BEFORE_MATCHES = 10
BEFORE_AHEAD = 2
"""The placement until now: 10 matches (three mirrored tables), two tables queued ahead."""
NEAR_EQUAL = 0.1
"""True strengths closer than this (a twentieth of a seat's noise) count as equal for the
tolerant distance: no placement, and no ladder, orders them (see ``tolerant_distance``)."""
STRENGTHS = {"strong": (1, 4), "middle": (9, 12), "weak": (17, 20)}
"""True rank bands (1 is best) of the newcomer."""
SHAPES = ("even", "crowded")
"""Ladders of evenly spaced strengths, and ladders crowded at the bottom (the 12 weakest bots
within the lowest fifth of the range, as when house bots that play at random fill a ladder):
there the newcomer's starting mu sits among the weak."""


def true_strengths(shape: str) -> list[float]:
    """The 20 strengths, best first."""
    if shape == "even":
        return [STRENGTH_SPREAD * (BOTS - 1 - i) / (BOTS - 1) for i in range(BOTS)]
    top, crowd = BOTS - 12, 12
    upper = [STRENGTH_SPREAD * (1 - 0.8 * i / top) for i in range(top)]
    lower = [STRENGTH_SPREAD * 0.2 * (crowd - 1 - i) / (crowd - 1) for i in range(crowd)]
    return upper + lower


Choice = Callable[[matchmaking.Candidate, list[Candidate], int, random.Random], list[Candidate]]


def before_choice(
    newcomer: Candidate, pool: list[Candidate], table_index: int, rng: random.Random
) -> list[Candidate]:
    """The placement until now: the spread tables, then the bots nearest the newcomer's mu."""
    if table_index < matchmaking.spread_tables(PLAYERS):
        return matchmaking.placement_table(newcomer, pool, PLAYERS, table_index, rng)
    return matchmaking.fill_table(newcomer, pool, PLAYERS, rng)


def our_choice(
    newcomer: Candidate, pool: list[Candidate], table_index: int, rng: random.Random
) -> list[Candidate]:
    """The product's: ``placement_table`` (the spread, then bracketing the estimate)."""
    return matchmaking.placement_table(newcomer, pool, PLAYERS, table_index, rng)


def rank_of(bot: int, scores: Sequence[float]) -> int:
    """1 + how many bots score strictly higher than ``bot``."""
    return 1 + sum(1 for s in scores if s > scores[bot])


def tolerant_distance(bot: int, rank: int, strengths: Sequence[float]) -> int:
    """How many places ``rank`` lies outside the ranks ``bot`` may truly hold when bots within
    ``NEAR_EQUAL`` of its strength count as its equals (0 inside)."""
    own = strengths[bot]
    best = 1 + sum(1 for s in strengths if s > own + NEAR_EQUAL)
    worst = sum(1 for s in strengths if s >= own - NEAR_EQUAL)
    return max(0, best - rank, rank - worst)


def settled_ladder(strength: str, seed: int, shape: str = "even") -> tuple[Ladder, int]:
    """19 settled bots and a newcomer (the last bot) of the given strength; its true rank."""
    rng = random.Random(seed)
    low, high = STRENGTHS[strength]
    true_rank = rng.randint(low, high)
    strengths = true_strengths(shape)
    newcomer = strengths.pop(true_rank - 1)
    rng.shuffle(strengths)
    ladder = Ladder(strengths, rng)
    while ladder.matches < WARMUP:
        table = our_matchmaking(ladder)
        luck = [rng.gauss(0, LUCK_SD) for _ in range(PLAYERS)]
        for seating in matchmaking.mirrored_seatings(table):
            ladder.play(seating, luck)
    ladder.strengths.append(newcomer)
    ladder.ratings.append(Rating())
    ladder.games.append(0)
    ladder.last_played.append(ladder.matches)
    return ladder, true_rank


def place(
    ladder: Ladder,
    choice: Choice,
    seed: int,
    matches: int = PLACEMENT_MATCHES,
    ahead: int = QUEUED_AHEAD,
) -> Ladder:
    """Play the newcomer's placement tables on a copy of ``ladder``: table ``t`` is chosen from
    the ratings after table ``t - ahead``, as ``ahead`` tables are queued before results come."""
    ladder = copy.deepcopy(ladder)
    ladder.rng = random.Random(seed)
    newcomer = len(ladder.strengths) - 1
    tables = -(-matches // PLAYERS)
    snapshots = [ladder.candidates()]
    for t in range(tables):
        pool = snapshots[max(0, t - ahead + 1)]
        seated = choice(pool[newcomer], pool, t, ladder.rng)
        table = [int(c.bot) for c in seated]
        luck = [ladder.rng.gauss(0, LUCK_SD) for _ in range(PLAYERS)]
        for seating in matchmaking.mirrored_seatings(table):
            ladder.play(seating, luck)
        snapshots.append(ladder.candidates())
    return ladder


def placement_report(reps: int, seed: int, matches: int = PLACEMENT_MATCHES) -> tuple[float, float]:
    """Print the placement table; the largest median distance of ours (ranked by mu, as the
    ladder ranks), strict and tolerant."""
    setups: list[tuple[str, Choice, int, int]] = [
        (
            f"before: near, {BEFORE_AHEAD} ahead, {BEFORE_MATCHES}",
            before_choice,
            BEFORE_AHEAD,
            BEFORE_MATCHES,
        ),
        (
            f"bracket, {QUEUED_AHEAD} ahead, {BEFORE_MATCHES}",
            our_choice,
            QUEUED_AHEAD,
            BEFORE_MATCHES,
        ),
        (f"ours: bracket, {QUEUED_AHEAD} ahead, {matches}", our_choice, QUEUED_AHEAD, matches),
    ]
    ours = setups[-1][0]
    print(f"{BOTS} bots, {PLAYERS} seats, a newcomer's placement after {WARMUP} settling matches")
    print(f"median |rank by mu after placement - true rank| over {reps} runs")
    print("tolerant: places beyond the bots within", NEAR_EQUAL, "of its true strength;")
    print("neighbour: the settled bot next in truth to the newcomer (its own distance, strict)")
    columns = [name for name, *_ in setups] + ["ours, tolerant", "neighbour"]
    print(f"{'ladder, newcomer':<18}" + "".join(f"{c:>{max(12, len(c) + 2)}}" for c in columns))
    worst = tolerant_worst = 0.0
    for shape, strength in [(sh, st) for sh in SHAPES for st in STRENGTHS]:
        distances: dict[str, list[int]] = {}
        for r in range(reps):
            run_seed = seed * 1000 + r
            ladder, true_rank = settled_ladder(strength, run_seed, shape)
            for name, choice, ahead, budget in setups:
                placed = place(ladder, choice, run_seed + 7, budget, ahead)
                newcomer = len(placed.strengths) - 1
                mean = [x.mu for x in placed.ratings]
                rank = rank_of(newcomer, mean)
                distances.setdefault(name, []).append(abs(rank - true_rank))
            # ``placed`` is ours now: the tolerant distance and the settled neighbour's own.
            truth = placed.strengths
            distances.setdefault(columns[-2], []).append(tolerant_distance(newcomer, rank, truth))
            neighbour = min(
                range(newcomer),
                key=lambda b: (abs(truth[b] - truth[newcomer]), b),
            )
            distances.setdefault(columns[-1], []).append(
                abs(rank_of(neighbour, mean) - rank_of(neighbour, truth))
            )
        medians = {k: statistics.median(v) for k, v in distances.items()}
        print(
            f"{shape + ', ' + strength:<18}"
            + "".join(f"{medians[c]:>{max(12, len(c) + 2)}.1f}" for c in columns),
            flush=True,
        )
        worst = max(worst, medians[ours])
        tolerant_worst = max(tolerant_worst, medians[columns[-2]])
    return worst, tolerant_worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=21, help="repetitions per setup (median)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--part", choices=("tau", "placement"), default="tau")
    parser.add_argument(
        "--placement-matches", type=int, default=PLACEMENT_MATCHES, help="with --part placement"
    )
    args = parser.parse_args()
    if args.part == "placement":
        worst, tolerant = placement_report(args.reps, args.seed, args.placement_matches)
        print(f"placement_worst_tolerant={tolerant:.1f}")
        print(f"placement_worst={worst:.1f}")
        return
    setups: list[tuple[str, Pairing, bool]] = [
        ("random pairing", random_pairing, False),
        ("random pairing, mirrored", random_pairing, True),
        ("our matchmaking", our_matchmaking, False),
        ("our matchmaking, mirrored", our_matchmaking, True),
    ]
    header = "".join(f"{c:>8}" for c in CHECKPOINTS)
    print(f"{BOTS} bots, {PLAYERS} seats, median Kendall tau over {args.reps} runs")
    print(f"{'setup':<28}{header}")
    medians: list[float] = []
    for name, pairing, mirrored in setups:
        runs = [simulate(pairing, mirrored, args.seed * 1000 + r) for r in range(args.reps)]
        medians = [statistics.median(run[i] for run in runs) for i in range(len(CHECKPOINTS))]
        print(f"{name:<28}" + "".join(f"{m:>8.3f}" for m in medians), flush=True)
    print(f"tau1000={medians[CHECKPOINTS.index(1000)]:.3f}")


if __name__ == "__main__":
    main()
