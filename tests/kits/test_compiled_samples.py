"""The Java, C#, Go and Rust samples, built as an upload is built and played under bubblewrap.

Each sample is built once by ``sandbox.build.build_copy`` in the bwrap sandbox (no network,
the kits at ``/kit``, the toolchain folders of ``sandbox.toolchains`` bound read-only), then
plays one short match of every game without a strike (the other seats are the referee's own
in-process random players, so that the bots under test are the only processes started). As
they share the JavaScript sample's seeded generator, each plays exactly its moves; and a
malformed message from the referee ends each with a clear error on stderr. The full matches
against the Python samples are in ``docs/bots.md`` (``arena match``).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.bots import BotManifest, load_bot
from arena.games import make_game
from arena.referee import BuiltinBot, Entrant, TimeControl
from arena.runner import run_match
from sandbox.base import Sandbox
from sandbox.build import build_copy
from tests.kits.languages import REPO, program_or_skip
from tests.sandbox.conftest import backend_or_skip

SAMPLES = REPO / "sample_bots"
TOOLS = {
    "java": ("javac", "Java"),
    "csharp": ("mcs", "C# (Mono)"),
    "go": ("go", "Go"),
    "rust": ("rustc", "Rust"),
}
SHORT: dict[str, tuple[int | None, dict[str, object]]] = {
    "svoi-kozyri": (3, {"deals": 1, "pickup_plain": 1, "pickup_own_trump": 1}),
    "challenge": (None, {"deals": 2, "lowest_rank": 9}),
    "svoi-kozyri-tricks": (None, {"max_deals": 1}),
    "kozyr-boys": (None, {"rounds": 1}),
    "svara": (None, {"deals": 1}),
}
"""Each game as short as it can be played (random players pick up a lot: small pick-ups and
the smallest pack keep a deal to a few dozen moves), with its table size (None: the default)."""
PATIENT = TimeControl(init_s=60.0, move_s=10.0, bank_s=120.0)
"""Generous limits: the machine may be loaded, and these bots are not on trial for speed."""


@pytest.fixture(scope="module")
def bwrap() -> Sandbox:
    return backend_or_skip("bwrap")


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A folder every sandbox uid can walk into, for the built samples."""
    path = Path(tempfile.mkdtemp(prefix="arena-kits-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


_built: dict[str, BotManifest] = {}


def built(language: str, bwrap: Sandbox, scratch: Path) -> BotManifest:
    """The sample of ``language``, built in the sandbox once per module."""
    program_or_skip(*TOOLS[language])
    if language not in _built:
        source = SAMPLES / language / "any-game-random"
        command = load_bot(source).build
        assert command is not None
        target = scratch / language
        result = build_copy(bwrap, source, target, command, timeout_s=240)
        assert result.ok, result.log
        _built[language] = load_bot(target)
    return _built[language]


def moves_of_seat0(bot: Entrant, bwrap: Sandbox) -> list[object]:
    """Seat 0's actions in a short Svara match of ``bot`` against the built-in random player."""
    game = make_game("svara", players=2, params={"deals": 4})
    played = run_match(game, [bot, RANDOM], 5, sandbox=bwrap, time_control=PATIENT)
    return [step["action"] for step in played.replay["steps"] if step["seat"] == 0]


RANDOM = BuiltinBot("random")
_reference: list[list[object]] = []


@pytest.mark.parametrize("language", list(TOOLS))
def test_the_sample_plays_every_game_under_bwrap(
    language: str, bwrap: Sandbox, scratch: Path
) -> None:
    bot = built(language, bwrap, scratch)
    for name, (players, params) in SHORT.items():
        game = make_game(name, players=players, params=params)
        seats = [bot, *[RANDOM] * (game.players - 1)]
        played = run_match(game, seats, 11, sandbox=bwrap, time_control=PATIENT)
        seats = [(s.status, s.strikes) for s in played.seats]
        assert seats == [("ok", 0)] * game.players, (name, played.seats)


@pytest.mark.parametrize("language", list(TOOLS))
def test_the_sample_plays_the_javascript_samples_moves(
    language: str, bwrap: Sandbox, scratch: Path
) -> None:
    program_or_skip("node", "JavaScript")
    bot = built(language, bwrap, scratch)
    if not _reference:
        _reference.append(moves_of_seat0(load_bot(SAMPLES / "js" / "any-game-random"), bwrap))
    moves = moves_of_seat0(bot, bwrap)
    assert len(moves) > 3 and moves == _reference[0]


@pytest.mark.parametrize("language", list(TOOLS))
def test_a_malformed_message_ends_the_sample_with_a_clear_error(
    language: str, bwrap: Sandbox, scratch: Path
) -> None:
    bot = built(language, bwrap, scratch)
    if not bot.run[0].startswith("./"):
        program_or_skip(bot.run[0], language)
    done = subprocess.run(
        list(bot.run),
        cwd=bot.path,
        input='{"type":"hello","seat":\n',
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert "kozyri kit: cannot read the referee's message: malformed JSON" in done.stderr
