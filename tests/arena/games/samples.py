"""A game's Python sample bots in a real match, for the per-game tests."""

from __future__ import annotations

from pathlib import Path

from arena.bots import load_bot
from arena.games.base import Game
from arena.runner import BuiltinBot, Entrant, MatchOutcome, SeatStatus, run_match
from sandbox import get_sandbox

SAMPLES = Path(__file__).resolve().parents[3] / "sample_bots" / "python"


def sample_match(game: Game, seed: int) -> tuple[MatchOutcome, set[str]]:
    """The game's heuristic sample (seat 0), its random sample and built-in greedy, as real
    processes: the outcome, once every seat is known to have played cleanly, and the action
    types the heuristic used."""
    name = game.spec.name
    bots: list[Entrant] = [
        load_bot(SAMPLES / f"{name}-heuristic"),
        load_bot(SAMPLES / f"{name}-random"),
        BuiltinBot("greedy"),
    ]
    outcome = run_match(game, bots, seed, sandbox=get_sandbox("none"))
    assert [s.status for s in outcome.seats] == [SeatStatus.OK] * 3
    kinds = {step["action"]["type"] for step in outcome.replay["steps"] if step["seat"] == 0}
    return outcome, kinds
