"""The newest validated version plays.

Validations finish in any order (their matches queue behind others, a worker dies, the broker
loses a message); whatever the order, the bot ends with its newest validated version active.
"""

from __future__ import annotations

import itertools
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.web.conftest import SAMPLES, base_config, require_bwrap, sample_version, wait_for
from tests.web.services.test_matches import _outcome
from web import engine
from web.extensions import db
from web.models import BotVersion, VersionStatus
from web.services import bots, building, lifecycle, matches, play, users
from web.storage import get_storage

pytestmark = pytest.mark.services

S = VersionStatus
GREEDY = SAMPLES / "python" / "challenge-greedy"


@pytest.fixture
def opponent(pg_app: Flask) -> Any:
    """An active house bot for validation matches to be played against."""
    require_bwrap()
    version = sample_version("python/challenge-random")
    db.session.commit()
    return version


def validating(owner: Any, name: str, count: int) -> list[tuple[int, int]]:
    """``count`` versions of bot ``name``, each validating with a validation match queued:
    (version id, match id), oldest first."""
    made = []
    for _ in range(count):
        version = bots.register_folder(owner, GREEDY)
        building.record_manifest(version, engine.load_manifest(get_storage().bot_dir(version.id)))
        version.status = S.VALIDATING  # as ``prepare`` leaves it after the self-test
        match = lifecycle.validation_match(version)
        assert match is not None
        made.append((version.id, match.id))
    db.session.commit()
    return made


def pass_validation(match_id: int) -> None:
    """A worker plays the validation match, cleanly."""
    attempt = matches.claim(match_id, "worker", 60)
    assert attempt is not None
    assert play.finish(match_id, attempt, _outcome(2), "replays/x.json")


def statuses(version_ids: list[int]) -> list[VersionStatus]:
    db.session.expire_all()
    return [db.session.get(BotVersion, v).status for v in version_ids]


def test_the_newest_version_ends_active_whatever_order_validations_finish_in(
    opponent: Any,
) -> None:
    owner = users.create_user("racer")
    db.session.commit()
    for k, order in enumerate(itertools.permutations(range(3))):
        made = validating(owner, f"racer-{k}", 3)
        ids = [version_id for version_id, _ in made]
        for index in order:
            pass_validation(made[index][1])
        assert statuses(ids) == [S.RETIRED, S.RETIRED, S.ACTIVE], f"finished in order {order}"
        newest = db.session.get(BotVersion, ids[-1])
        assert newest.bot.active_version() == newest
        for version_id in ids[:-1]:
            older = db.session.get(BotVersion, version_id)
            if older.activated_at is None:  # it never played: the log says why
                assert "is newer and already active" in older.validation_log


def test_an_older_version_validated_late_never_plays(opponent: Any) -> None:
    owner = users.create_user("late")
    db.session.commit()
    (old_id, old_match), (new_id, new_match) = validating(owner, "late-bot", 2)
    pass_validation(new_match)
    pass_validation(old_match)
    assert statuses([old_id, new_id]) == [S.RETIRED, S.ACTIVE]
    old = db.session.get(BotVersion, old_id)
    assert old.activated_at is None and old.error is None
    assert "version 2 is newer and already active" in old.validation_log
    assert "retired without playing" in old.validation_log


def _finish_in_child(url: str, storage: str, match_id: int, attempt: int) -> None:
    """Child process: the worker that finishes one validation match."""
    from web import create_app

    app = create_app(base_config(Path(storage), DATABASE_URL=url, REDIS_URL="redis://none:1/0"))
    with app.app_context():
        assert play.finish(match_id, attempt, _outcome(2), "replays/x.json")
        db.engine.dispose()


def _waiting(watcher: Any) -> int:
    query = text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    with watcher.connect() as conn:
        return int(conn.execute(query).scalar_one())


def test_validations_finishing_at_once_leave_one_version_active_the_newest(
    opponent: Any, pg_url: str, shared_tmp: Path
) -> None:
    """Three workers finish the three validations at the same moment: activations of one
    bot wait for each other (its row is locked), so none misses another's."""
    owner = users.create_user("crowd")
    db.session.commit()
    made = validating(owner, "crowd-bot", 3)
    claims = [(m, matches.claim(m, "worker", 60)) for _, m in made]
    bot_id = db.session.get(BotVersion, made[0][0]).bot_id
    db.session.commit()
    ctx = multiprocessing.get_context("spawn")
    holder = create_engine(pg_url)
    watcher = create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    jobs = []
    with holder.connect() as conn:
        conn.execute(text("SELECT id FROM bots WHERE id = :id FOR UPDATE"), {"id": bot_id})
        for match_id, attempt in reversed(claims):  # the newest asks first
            args = (pg_url, str(shared_tmp), match_id, attempt)
            jobs.append(ctx.Process(target=_finish_in_child, args=args))
            jobs[-1].start()
        wait_for(lambda: _waiting(watcher) >= 3, 120, "all three activations to wait")
        conn.rollback()
    for job in jobs:
        job.join(120)
        assert job.exitcode == 0
    holder.dispose()
    watcher.dispose()
    assert statuses([v for v, _ in made]) == [S.RETIRED, S.RETIRED, S.ACTIVE]
