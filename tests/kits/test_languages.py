"""Every kit language's sample plays every game, under bubblewrap and under Docker.

Cheap by design: per backend, each language's sample is built once, then one mixed table per
game seats the languages in turn (as many as the game's seats allow, continuing round the
table from game to game), so five matches seat all of them. A language whose sample folder or
toolchain is missing is left out with its reason (a failure with ``ARENA_REQUIRE_LANGUAGES=1``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from itertools import cycle, islice
from pathlib import Path

import pytest

from arena.bots import BotManifest
from arena.games import game_class, make_game, names
from arena.runner import run_match
from sandbox.base import Sandbox
from sandbox.languages import LANGUAGES, Language
from sandbox.runtimes import list_languages
from tests.kits.languages import (
    REQUIRE_ENV,
    built_sample,
    missing,
    required,
    sample_of,
    usable,
)

SHORT = {
    "svoi-kozyri": {"deals": 1},
    "challenge": {"deals": 2},
    "svoi-kozyri-tricks": {"target": 1, "max_deals": 1},
    "kozyr-boys": {"rounds": 1},
    "svara": {"deals": 2},
}
"""Parameters that keep each game's match short (every game is played)."""


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder sandboxed builds (other uids) can read and bots can be run from."""
    path = Path(tempfile.mkdtemp(prefix="arena-langs-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def seating(languages: list[Language]) -> dict[str, list[Language]]:
    """Per game, the languages at its table: every seat filled, going round the list so that
    over the five games each language sits at least once (when they have seats enough)."""
    turn = cycle(languages)
    tables = {}
    for game in names():
        seats = game_class(game).spec.max_players
        tables[game] = list(islice(turn, seats))
    return tables


def test_seating_gives_every_language_a_seat() -> None:
    tables = seating(list(LANGUAGES))
    assert set(tables) == set(names())
    seated = [language.id for table in tables.values() for language in table]
    assert {language.id for language in LANGUAGES} <= set(seated)
    assert all(len(t) == game_class(g).spec.max_players for g, t in tables.items())


@pytest.mark.parametrize("language", LANGUAGES, ids=[lang.id for lang in LANGUAGES])
def test_each_language_has_its_sample_and_its_toolchain(language: Language) -> None:
    """Every language of the table has a sample here and its programs on this machine."""
    if not (sample_of(language) / "bot.toml").is_file():
        missing(f"no sample bot for {language.id} at {language.sample}")
    status = next(s for s in list_languages("none") if s.id == language.id)
    if not status.available:
        missing(f"{language.id}: {status.reason}; {status.install}")
    assert status.version


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_a_mixed_table_of_the_languages_plays_every_game(
    backend: str, scratch: Path, request: pytest.FixtureRequest
) -> None:
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    languages, left_out = usable(backend)
    if left_out:
        print("left out:", *left_out, sep="\n  ")
    if not languages:
        missing(f"no language can be played under {backend}: {'; '.join(left_out)}")
    bots = {lang.id: built_sample(sandbox, lang, scratch) for lang in languages}
    for game, table in seating(languages).items():
        entrants: list[BotManifest] = [bots[lang.id] for lang in table]
        played = run_match(make_game(game, len(table), SHORT[game]), entrants, 11, sandbox=sandbox)
        statuses = {f"{seat}: {lang.id}": r.status for seat, (lang, r) in
                    enumerate(zip(table, played.seats, strict=True))}  # fmt: skip
        assert set(statuses.values()) == {"ok"}, (game, statuses, played.seats)
        assert played.steps > 0
    if left_out and required():
        pytest.fail(f"{REQUIRE_ENV}=1 but under {backend}, left out: {'; '.join(left_out)}")
