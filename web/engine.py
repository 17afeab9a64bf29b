"""The service's one door into the referee engine (``arena``) and the sandboxes.

Everything the service needs from the engine (load a bot folder, pick a sandbox, play a match)
goes through here, so the rest of ``web`` works on plain data: ``SeatSpec`` in, ``Outcome`` out.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import current_app

log = logging.getLogger(__name__)


class InfrastructureError(Exception):
    """The match could not be played for a reason that is not a bot's fault (retry later)."""


@dataclass(frozen=True)
class SeatSpec:
    """A bot taking a seat: its unpacked folder and how it is shown."""

    bot_dir: Path
    name: str
    version: str | None = None
    trusted: bool = False
    human: bool = False
    """A person's seat (``web.services.tables``): no folder, asked through ``run``'s ``ask``."""


@dataclass
class Outcome:
    """What the service keeps of a played match."""

    result: dict[str, Any]
    ranking: list[int]
    scores: list[float]
    statuses: list[str]
    forfeited: list[bool]
    strikes: list[int]
    cpu_seconds: list[float | None]
    messages: list[str | None]
    stderr: list[str]
    replay: dict[str, Any]
    final_hash: str | None = None
    steps: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The per-seat figures stored on the match row."""
        return {
            "status": self.statuses,
            "forfeited": self.forfeited,
            "strikes": self.strikes,
            "cpu_seconds": self.cpu_seconds,
            "messages": self.messages,
            "steps": self.steps,
        }


def load_manifest(bot_dir: Path) -> Any:
    """The bot's manifest (``bot.toml``) as ``arena.bots`` reads it."""
    from arena.bots import load_bot

    return load_bot(bot_dir)


def sandbox_for(trusted: bool) -> Any:
    """The sandbox to run bots in: the configured isolating one, or ``none`` for trusted bots.

    Uploaded bots never run unsandboxed: without an isolating sandbox their matches wait (an
    infrastructure error) rather than run bare.
    """
    from sandbox import SandboxUnavailable, get_sandbox

    name = current_app.config["TRUSTED_SANDBOX" if trusted else "SANDBOX"]
    try:
        return get_sandbox(name)
    except SandboxUnavailable as exc:
        if trusted and current_app.config["ALLOW_UNSANDBOXED_SAMPLES"]:
            log.warning("%s; the project's own sample bots run without a sandbox", exc)
            return get_sandbox("none")
        raise InfrastructureError(str(exc)) from exc
    except Exception as exc:  # a backend that fails to import or start is infrastructure too
        raise InfrastructureError(f"sandbox {name!r}: {exc}") from exc


def time_control() -> Any:
    from arena.runner import TimeControl

    cfg = current_app.config
    return TimeControl(move_s=float(cfg["MOVE_TIMEOUT"]), bank_s=float(cfg["TIME_BANK"]))


def _slot_base(players: int) -> int:
    """Separate per-seat sandbox slots of matches running at once on this host."""
    return (os.getpid() % 64) * players


BUILD_SLOT_BASE = 512
"""Build steps use slots from here on (one per worker process), apart from every match seat."""


def build_slot() -> int:
    """The sandbox slot of this process's build steps (its own uid and cgroups)."""
    return BUILD_SLOT_BASE + os.getpid() % 64


def pool_index() -> int | None:
    """This process's index in the Celery worker pool (0, 1, ...), or None outside one."""
    try:
        from billiard.process import current_process

        index = getattr(current_process(), "index", None)
    except ImportError:
        return None
    return int(index) if index is not None else None


@contextmanager
def pool_core() -> Iterator[None]:
    """Confine a pool process to one core chosen by its pool index, for one match.

    The runner pins each match to one core; left to itself it picks by pid, so two pool
    processes can land on the same core while another idles.
    """
    index = pool_index()
    if index is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    cores = sorted(before)
    os.sched_setaffinity(0, {cores[index % len(cores)]})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def run(
    game_config: dict[str, Any],
    seats: list[SeatSpec],
    seed: int,
    *,
    on_step: Callable[..., None] | None = None,
    ask: Callable[..., int | None] | None = None,
) -> Outcome:
    """Play one match and return its outcome; ``InfrastructureError`` if it could not be played.

    A person's seat (``SeatSpec.human``) is asked through ``ask`` (``arena.remote_seat.Ask``).
    """
    from arena.games import make_game
    from arena.runner import run_match
    from sandbox import SandboxError

    try:
        game = make_game(**game_config)
        entrants = [_entrant(seat, ask) for seat in seats]
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"cannot prepare the match: {exc}") from exc
    sandbox = sandbox_for(all(seat.trusted or seat.human for seat in seats))
    try:
        with pool_core():
            played = run_match(
                game,
                entrants,
                seed,
                sandbox=sandbox,
                time_control=time_control(),
                on_step=on_step,
                slot_base=_slot_base(len(seats)),
            )
    except SandboxError as exc:
        raise InfrastructureError(f"sandbox failure: {exc}") from exc
    return outcome_from(played, seats)


def _entrant(seat: SeatSpec, ask: Callable[..., int | None] | None) -> Any:
    """The referee's entrant for one seat: a bot's manifest, or a person's remote seat."""
    if not seat.human:
        return load_manifest(seat.bot_dir)
    from arena.remote_seat import RemoteSeat

    if ask is None:
        raise ValueError(f"seat {seat.name} is a person's, and nobody can ask them")
    cfg = current_app.config
    move, bank = float(cfg["HUMAN_MOVE_TIMEOUT"]), float(cfg["HUMAN_TIME_BANK"])
    return RemoteSeat(seat.name, ask, move_s=move, bank_s=bank)


def outcome_from(played: Any, seats: list[SeatSpec]) -> Outcome:
    """Plain data from ``arena.runner.MatchOutcome``, seats named as the service knows them."""
    replay = dict(played.replay)
    replay["seats"] = [
        {"name": seat.name, "kind": "human" if seat.human else "bot", "version": seat.version}
        for seat in seats
    ]
    reports = played.seats
    return Outcome(
        result=played.result.to_json(),
        ranking=list(played.result.ranking),
        scores=[float(s) for s in played.result.scores],
        statuses=[str(r.status) for r in reports],
        forfeited=[bool(r.forfeited) for r in reports],
        strikes=[int(r.strikes) for r in reports],
        cpu_seconds=[r.cpu_s for r in reports],
        messages=[r.message for r in reports],
        stderr=[r.stderr for r in reports],
        replay=replay,
        final_hash=replay.get("final_hash"),
        steps=len(replay.get("steps", [])),
    )
