"""How many bits work left running across the freeze, and timers, carry, with and without each fix.

The long version of ``tests/sandbox/test_freeze_channels.py``: the ``freeze-leak`` pair plays
Svoi Kozyri under each backend, and for each technique the receiver's right guesses of the
sender's random bits (one per move, ``--bits`` of them, 100 by default) are counted, with the
fix and without it:

- ``kernel``: long system calls begun just before the answer; fix: the referee waits until
  the bot has really stopped (``arena.referee.WAIT_FOR_FREEZE``); both seats on one core;
- ``timers``: every timer the limits allow (POSIX timers, itimers of helper processes), set to
  fire while the bot is frozen; fix: a core of its own per seat (``own_cores``); without it
  both seats share one core, as on a host with fewer cores than seats.

Each line: backend, technique, setting, right/scored, the exact one-sided binomial p-value
against fair guessing, and the information per move of a binary symmetric channel with that
error rate (``1 - H(right/scored)`` bits; 0 for no better than chance).

    .venv/bin/python bench/freeze_channels.py [--bits 100] [--backend bwrap] [--technique kernel]
        [--repeat 1]

``--repeat N`` plays N matches per setting and adds their counts up.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import arena.referee  # noqa: E402
from sandbox import backend_class, get_sandbox  # noqa: E402
from tests.sandbox.test_freeze_channels import (  # noqa: E402
    Score,
    aim,
    binomial_tail,
    leak_match,
    score,
)

SETTINGS = (
    ("kernel", "waits (fix)", True, False),
    ("kernel", "no wait", False, False),
    ("timers", "own cores (fix)", True, True),
    ("timers", "one core", True, False),
)
"""(technique, label, the referee waits for the freeze, each seat on a core of its own)."""


def bits_per_move(right: int, scored: int) -> float:
    """Capacity of a binary symmetric channel that gets ``right`` of ``scored`` right."""
    p = right / scored if scored else 0.5
    if p <= 0.5:
        return 0.0
    if p >= 1.0:
        return 1.0
    return 1 + p * math.log2(p) + (1 - p) * math.log2(1 - p)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", type=int, default=100, help="bits per setting (at most 153)")
    parser.add_argument("--backend", action="append", help="bwrap and/or docker (default both)")
    parser.add_argument("--technique", action="append", help="kernel and/or timers (default both)")
    parser.add_argument("--repeat", type=int, default=1, help="matches per setting")
    args = parser.parse_args()
    for name in args.backend or ["bwrap", "docker"]:
        reason = backend_class(name).available()
        if reason is not None:
            print(f"# {name} skipped: {reason}")
            continue
        sandbox = get_sandbox(name)
        for technique, label, wait, own in SETTINGS:
            if args.technique and technique not in args.technique:
                continue
            arena.referee.WAIT_FOR_FREEZE = wait
            started = time.perf_counter()
            right = scored = 0
            for _ in range(args.repeat):
                outcome = leak_match(sandbox, aim(technique, args.bits), own_cores=own)
                result = score(outcome.replay["steps"], args.bits)
                right, scored = right + result.right, scored + result.scored
            result = Score(scored, right)
            p_value = binomial_tail(result.scored, result.right)
            print(
                f"{name:6s} {technique:6s} {label:16s} {result.right:4d}/{result.scored:<4d} "
                f"p={p_value:.2g} {bits_per_move(result.right, result.scored):.2f} bit/move "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    arena.referee.WAIT_FOR_FREEZE = True


if __name__ == "__main__":
    main()
