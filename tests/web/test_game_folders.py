"""A game folder dropped in gets its ladder on the site, and the ladder plays real matches.

The toy game folder (``tests/fixtures/games/toy_high_card``) is found only through
``ARENA_GAMES_PATH`` (the ``toy`` fixture); nothing in ``web`` names it. Its bots are real bot
processes in the real sandbox, the database is the real PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from arena.replay import read_replay, verify
from tests.arena.test_game_folders import toy_bot
from tests.web.conftest import require_bwrap, sample_version
from web.api import queries
from web.api.catalog import game_list
from web.extensions import db
from web.models import Match, MatchStatus
from web.services import ladders, matches, play
from web.storage import get_storage

pytestmark = pytest.mark.services


def test_a_ladder_for_the_toy_game_is_made_listed_and_plays(
    pg_app: Flask, toy: str, tmp_path: Path
) -> None:
    require_bwrap()
    assert toy in [g["name"] for g in game_list()]
    made = ladders.ensure_default_ladders()
    db.session.commit()
    ladder = next(ladder for ladder in made if ladder.game == toy)
    assert ladder in queries.ladders()
    versions: list[Any] = [
        sample_version(str(toy_bot(tmp_path / name, name))) for name in ("toy-a", "toy-b")
    ]
    assert all(toy in v.games for v in versions)
    match = matches.create_match(ladder.game_config(), versions, seed=7, ladder_id=ladder.id)
    db.session.commit()
    assert play.play_match(match.id) == "finished"
    db.session.expire_all()
    played = db.session.get(Match, match.id)
    assert played.status == MatchStatus.FINISHED
    assert played.replay_path
    assert verify(read_replay(get_storage().resolve(played.replay_path))) == []
