"""The ``any-game-random`` samples in C, C++, Ruby, PHP, TypeScript and Python: each built
in the bubblewrap sandbox as an upload is (no network, the build's own limits), then all of
them at the tables of one short match of every game, under bubblewrap, without a strike."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from arena.bots import BotManifest, load_bot
from arena.games import game_class, names
from arena.runner import run_match
from sandbox.base import Sandbox
from sandbox.build import build_copy
from tests.golden import make_case
from tests.kits.support import toolchain
from tests.sandbox.conftest import REPO, backend_or_skip

SAMPLES = REPO / "sample_bots"
LANGUAGES = {
    "c": ("gcc",),
    "cpp": ("g++",),
    "ruby": ("ruby",),
    "php": ("php",),
    "typescript": ("tsc", "node"),
    "python": ("python3",),
}
"""Each sample's folder under ``sample_bots`` and the programs it needs."""

SHORT = {"turn_cap": 60, "lowest_rank": 9}
"""Where a game has them: a deal cut short, and a small pack (random play may last long)."""

BUILD_TIMEOUT_S = 240.0
"""A compile on a busy machine (the platform's own limit is BUILD_TIMEOUT)."""


@pytest.fixture(scope="module")
def bwrap() -> Sandbox:
    return backend_or_skip("bwrap")


@pytest.fixture(scope="module")
def samples(
    bwrap: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[BotManifest]]:
    """Every sample, built (those with a build step) in the sandbox, as the platform runs it."""
    for programs in LANGUAGES.values():
        toolchain(*programs)
    scratch = tmp_path_factory.mktemp("samples")
    scratch.chmod(0o755)
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [
            pool.submit(_built, bwrap, SAMPLES / language / "any-game-random", scratch, slot)
            for slot, language in enumerate(LANGUAGES)
        ]
        yield [future.result() for future in futures]
    shutil.rmtree(scratch, ignore_errors=True)


def _built(sandbox: Sandbox, source: Path, scratch: Path, slot: int) -> BotManifest:
    manifest = load_bot(source)
    if manifest.build is None:
        return manifest
    target = scratch / source.parent.name
    result = build_copy(
        sandbox, source, target, manifest.build, timeout_s=BUILD_TIMEOUT_S, slot=slot
    )
    assert result.ok, result.log
    return load_bot(target)


def test_every_sample_names_every_game_and_its_language() -> None:
    for language in LANGUAGES:
        manifest = load_bot(SAMPLES / language / "any-game-random")
        assert manifest.language == language
        assert sorted(manifest.games) == sorted(names())


def tables(bots: list[BotManifest], players: int) -> list[list[BotManifest]]:
    """The bots in groups of ``players`` (the last group filled up from the first bots)."""
    groups = []
    for start in range(0, len(bots), players):
        group = bots[start : start + players]
        groups.append(group + bots[: players - len(group)])
    return groups


@pytest.mark.parametrize("game_name", names())
def test_the_samples_play_a_short_match_without_a_strike(
    game_name: str, samples: list[BotManifest], bwrap: Sandbox
) -> None:
    game = make_case((game_name, None), deals=1, **SHORT)
    players = game_class(game_name).spec.default_players
    assert game.players == players
    for seed, table in enumerate(tables(samples, players), start=1):
        played = run_match(game, table, seed, sandbox=bwrap)
        seats = [
            (bot.name, seat.status, seat.strikes)
            for bot, seat in zip(table, played.seats, strict=True)
        ]
        assert [(status, strikes) for _, status, strikes in seats] == [("ok", 0)] * players, seats
        assert played.replay["steps"], "no move was played"
