"""Engine speed: random playouts of our games against OpenSpiel games driven the same way.

Both engines run the same Python loop: ask for the legal actions, pick one uniformly at random,
apply it (OpenSpiel's chance outcomes are sampled by their probabilities and not counted as
decisions). Repetitions of the two engines are interleaved so that machine noise hits both alike;
the medians are reported. Rates are per CPU second of the benchmark process. Usage::

    python -m bench.engine                 # every case, 5 repetitions of ~1 s per engine
    python -m bench.engine --reps 9 --seconds 2 --case svoi-kozyri

The last line is ``ratio=<ours/openspiel>`` for the first case run (the headline figure).
OpenSpiel is an optional dependency: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.games import make_game

clock = time.process_time
"""CPU seconds of this process: on a shared machine other work barely moves it (wall time does)."""


@dataclass(frozen=True)
class Case:
    """One comparison: our game and an OpenSpiel game of similar shape."""

    name: str
    game: str
    players: int
    openspiel: str
    openspiel_params: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)


CASES = (
    Case("svoi-kozyri", "svoi-kozyri", 4, "crazy_eights", {"players": 4}),
    # 36 cards as ours; 8 tricks, since oh_hell turns a trump card from what is left undealt.
    Case(
        "svoi-kozyri-tricks",
        "svoi-kozyri-tricks",
        4,
        "oh_hell",
        {"players": 4, "num_cards_per_suit": 9, "num_tricks_fixed": 8},
    ),
    Case("kozyr-boys", "kozyr-boys", 3, "skat", {}),
    # Two-player Svoi Kozyri with open hands: the two-player crazy_eights is the nearest shape.
    Case("challenge", "challenge", 2, "crazy_eights", {"players": 2}),
    # One betting round over three hole cards from a 36-card pack, antes of 10, raises of 10.
    Case(
        "svara",
        "svara",
        3,
        "universal_poker",
        {
            "numPlayers": 3,
            "numRounds": 1,
            "numSuits": 4,
            "numRanks": 9,
            "numHoleCards": 3,
            "numBoardCards": "0",
            "betting": "limit",
            "blind": "10 10 10",
            "raiseSize": "10",
            "maxRaises": "9",
            "firstPlayer": "1",
            "stack": "2000 2000 2000",
        },
    ),
)
"""Add a row to compare another game."""


@dataclass
class Run:
    """Decisions (and all actions, chance included) played in a measured stretch."""

    decisions: int = 0
    actions: int = 0
    games: int = 0
    seconds: float = 0.0

    def rate(self) -> float:
        return self.decisions / self.seconds


def ours(case: Case, seconds: float, seed: int) -> Run:
    """Random matches of our game for about ``seconds``."""
    game = make_game(case.game, case.players, case.params)
    rng = random.Random(seed)
    run = Run()
    start = clock()
    while clock() - start < seconds:
        state = game.new_state(rng.randrange(2**31))
        choice, n = rng.choice, 0
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
            n += 1
        run.decisions += n
        run.actions += n
        run.games += 1
    run.seconds = clock() - start
    return run


def openspiel(case: Case, seconds: float, seed: int) -> Run:
    """Random games of the OpenSpiel game for about ``seconds``, from a Python loop."""
    import pyspiel

    game = pyspiel.load_game(case.openspiel, case.openspiel_params)
    rng = random.Random(seed)
    run = Run()
    start = clock()
    while clock() - start < seconds:
        state = game.new_initial_state()
        decisions = chances = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, probs)[0])
                chances += 1
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        run.decisions += decisions
        run.actions += decisions + chances
        run.games += 1
    run.seconds = clock() - start
    return run


def measure(case: Case, reps: int, seconds: float) -> tuple[list[Run], list[Run]]:
    """Interleaved repetitions of both engines."""
    mine: list[Run] = []
    theirs: list[Run] = []
    engines: tuple[tuple[Callable[[Case, float, int], Run], list[Run]], ...] = (
        (ours, mine),
        (openspiel, theirs),
    )
    for rep in range(reps):
        order = engines if rep % 2 == 0 else engines[::-1]
        for engine, runs in order:
            runs.append(engine(case, seconds, rep))
    return mine, theirs


def median(runs: list[Run], value: Callable[[Run], float]) -> float:
    return statistics.median(value(r) for r in runs)


def report(case: Case, mine: list[Run], theirs: list[Run]) -> float:
    """Print the medians of one case; return the decisions/s ratio ours/OpenSpiel."""
    ours_rate = median(mine, Run.rate)
    their_rate = median(theirs, Run.rate)
    ratio = ours_rate / their_rate
    print(
        f"{case.name} {case.players}p: {ours_rate:,.0f} decisions/s, "
        f"{median(mine, lambda r: r.games / r.seconds):,.1f} matches/s, "
        f"{median(mine, lambda r: r.decisions / r.games):,.0f} decisions/match"
    )
    print(
        f"openspiel {case.openspiel} {case.players}p: {their_rate:,.0f} decisions/s, "
        f"{median(theirs, lambda r: r.actions / r.seconds):,.0f} actions/s with chance, "
        f"{median(theirs, lambda r: r.games / r.seconds):,.0f} games/s"
    )
    print(f"{case.name}: ours/openspiel = {ratio:.2f}")
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per engine per rep")
    parser.add_argument("--case", action="append", help="case names to run (default: all)")
    args = parser.parse_args(argv)
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        print("open_spiel is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    cases = [c for c in CASES if not args.case or c.name in args.case]
    if not cases:
        print(f"no such case; cases: {', '.join(c.name for c in CASES)}", file=sys.stderr)
        return 2
    ratios = [report(case, *measure(case, args.reps, args.seconds)) for case in cases]
    print(f"ratio={ratios[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
