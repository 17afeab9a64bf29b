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
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=21, help="repetitions per setup (median)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
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
