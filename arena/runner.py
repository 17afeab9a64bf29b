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
    "StepCallback",
    "TimeControl",
    "run_match",
]


def run_match(
    game: Game,
    bots: Sequence[Entrant],
    seed: int,
    *,
    sandbox: Sandbox,
    time_control: TimeControl | None = None,
    limits: Limits | None = None,
    on_step: StepCallback | None = None,
    pin_cpu: bool = True,
    slot_base: int = 0,
    transcripts: Mapping[int, BinaryIO] | None = None,
) -> MatchOutcome:
    """Play one match of ``game`` between ``bots`` (one per seat) from ``seed``.

    Every bot process is killed when this returns or raises. ``pin_cpu`` keeps the referee and
    its bots on one core (much cheaper per move); ``slot_base`` separates concurrent matches.
    ``transcripts`` maps seats to binary files that receive every line sent to and received
    from that seat's bot (``arena match --seat-log``).
    """
    if len(bots) != game.players:
        raise ValueError(f"{game.name} with {game.players} players needs {game.players} bots")
    tc = time_control or TimeControl()
    referee = Referee(game, list(bots), seed, sandbox, tc, limits, transcripts)
    with _pinned(pin_cpu) as cpu:
        try:
            referee.start(cpu, slot_base)
            return referee.play(on_step)
        finally:
            referee.close_all()


@contextmanager
def _pinned(enabled: bool) -> Iterator[int | None]:
    """Pin the calling thread to one core for the match; yield that core (or None)."""
    if not enabled or not hasattr(os, "sched_setaffinity"):
        yield None
        return
    before = os.sched_getaffinity(0)
    cores = sorted(before)
    core = cores[os.getpid() % len(cores)]
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        yield None
        return
    try:
        yield core
    finally:
        os.sched_setaffinity(0, before)
