"""What the kit tests share: finding a toolchain, running a kit's own test program, and a
file of real deltas (as the referee writes them) with the observations they must rebuild."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import orjson
import pytest

from arena.feed import ObservationFeed
from arena.games.base import Game, State
from arena.protocol import DELTA
from tests.golden import game_cases, make_case

KIT = Path(__file__).resolve().parents[2] / "sample_bots" / "kit"
REQUIRED = "ARENA_REQUIRE_LANGUAGES"
"""Set to 1 (as CI does) to fail, not skip, when a language's toolchain is missing."""

RUN_TIMEOUT = 300.0
"""Seconds a compile or a kit's test program may take on a busy machine."""


def toolchain(*programs: str) -> dict[str, str]:
    """The path of each program; skips the test (fails it under ARENA_REQUIRE_LANGUAGES=1)
    when one is not installed."""
    found = {name: shutil.which(name) for name in programs}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        why = f"not installed: {', '.join(missing)}"
        if os.environ.get(REQUIRED) == "1":
            pytest.fail(f"{why} (and {REQUIRED}=1)")
        pytest.skip(why)
    return {name: str(path) for name, path in found.items()}


def completed(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in ``cwd``; fail the test, showing its output, unless it exits with 0."""
    done = subprocess.run(
        list(argv),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(argv)} exited with {done.returncode}:\n{output}"
    return done


def run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run ``argv``; its output (stdout, then stderr), failing the test if it did not exit 0."""
    done = completed(argv, cwd, env)
    return done.stdout + done.stderr


def _states(game: Game, seed: int) -> Iterator[State]:
    """A short match's states after each move, half greedy and half random play."""
    state = game.new_state(seed)
    rng = random.Random(seed)
    yield state
    while not state.is_terminal():
        greedy = rng.random() < 0.5
        legal = state.legal_actions()
        state.apply_action(game.greedy_action(state, rng) if greedy else rng.choice(legal))
        yield state


CHECK_EVERY = 20
"""How often a rebuilt observation is compared with the whole one (besides every new deal's
first and each sequence's last): a kit applies every delta; comparing at each step would make
the file tens of MiB."""


def write_deltas(path: Path, seats: int = 1) -> int:
    """Write, for every game, the deltas a seat's bot is sent over a two-deal match, with the
    whole observation the kit must have rebuilt at some of them (``{"delta": ...}`` or
    ``{"delta": ..., "full": ...}`` lines; ``{"reset": true}`` between sequences); return how
    many observations a kit must compare."""
    lines: list[bytes] = []
    compared = 0
    for case in game_cases():
        game = make_case(case, deals=2)
        for seat in range(min(seats, game.players)):
            lines.append(b'{"reset":true}')
            compared += _sequence(lines, game, seat)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return compared


def _sequence(lines: list[bytes], game: Game, seat: int) -> int:
    feed = ObservationFeed(DELTA)
    states = list(_states(game, seed=seat + 1))
    compared = 0
    for step, state in enumerate(states):
        delta = feed.encode(state, seat)
        feed.commit()
        parts = orjson.loads(delta)
        new_deal = "history" in parts.get("set", {}) or "drop" in parts
        if step % CHECK_EVERY == 0 or step == len(states) - 1 or new_deal:
            full = orjson.dumps(state.observation(seat))
            lines.append(b'{"delta":' + delta + b',"full":' + full + b"}")
            compared += 1
        else:
            lines.append(b'{"delta":' + delta + b"}")
    return compared
