"""The match runner: real bot processes play one match of a game, whatever they do.

One long-lived process per seat for the whole match, started through a sandbox and kept on one
core. ``run_match`` is the entry point; the rules it applies (time control, strikes, forfeits,
statuses) live in ``arena.referee`` and are re-exported here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import BinaryIO

from arena.games.base import Game
from arena.referee import (
    FORFEITED,
    BuiltinBot,
    Entrant,
    MatchOutcome,
    Referee,
    Seated,
    SeatReport,
    SeatStatus,
    StepCallback,
    TimeControl,
)
from sandbox.base import Limits, Sandbox

__all__ = [
    "FORFEITED",
    "BuiltinBot",
    "Entrant",
    "MatchOutcome",
    "SeatReport",
    "SeatStatus",
    "Seated",
    "StepCallback",
    "TimeControl",
    "run_match",
]


def run_match(
    game: Game,
    bots: Sequence[Seated],
    seed: int,
    *,
    sandbox: Sandbox,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    on_step: StepCallback | None = None,
    pin_cpu: bool = True,
    slot_base: int = 0,
    transcripts: Mapping[int, BinaryIO] | None = None,
    own_cores: bool = True,
) -> MatchOutcome:
    """Play one match of ``game`` between ``bots`` (one per seat) from ``seed``.

    Every bot process is killed when this returns or raises. ``pin_cpu`` pins each bot to a
    core (and the referee to seat 0's): with ``own_cores`` and at least as many cores as seats,
    every seat gets a core of its own, so that nothing one bot leaves running (a timer that
    fires while it is frozen) lands on another's; otherwise all share one core. ``slot_base``
    separates concurrent matches. ``transcripts`` maps seats to binary files that receive every
    line sent to and received from that seat's bot (``arena match --seat-log``).
    """
    if len(bots) != game.players:
        raise ValueError(f"{game.name} with {game.players} players needs {game.players} bots")
    tc = time_control or TimeControl()
    referee = Referee(game, list(bots), seed, sandbox, tc, limits, transcripts)
    cores = seat_cores(game.players, own_cores) if pin_cpu else [None] * game.players
    with _pinned(cores[0]):
        try:
            referee.start(cores, slot_base)
            return referee.play(on_step)
        finally:
            referee.close_all()


def seat_cores(players: int, own: bool = True) -> list[int | None]:
    """The core of each seat: distinct ones if ``own`` and there are enough, else one shared.

    Which cores is chosen by the referee's pid, so that concurrent matches spread out.
    """
    if not hasattr(os, "sched_getaffinity"):
        return [None] * players
    cores = sorted(os.sched_getaffinity(0))
    first = os.getpid() % len(cores)
    if own and len(cores) >= players:
        return [cores[(first + i) % len(cores)] for i in range(players)]
    return [cores[first]] * players


@contextmanager
def _pinned(core: int | None) -> Iterator[None]:
    """Pin the calling thread to ``core`` for the match (nothing if None or refused)."""
    if core is None:
        yield
        return
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
