"""Version numbers and rating updates under concurrency, against real PostgreSQL."""

from __future__ import annotations

import io
import multiprocessing
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import create_engine, select, text
from sqlalchemy.pool import NullPool

from arena import ratings as skill
from tests.web.conftest import SAMPLES, base_config, require_bwrap, sample_version, wait_for
from web import engine
from web.api import uploads as api_uploads
from web.extensions import db
from web.models import BotVersion, Rating, RatingChange, VersionStatus
from web.services import bots, building, ladders, lifecycle, matches, play, users
from web.storage import get_storage

pytestmark = pytest.mark.services

UPLOADS = 100


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[Flask]:
    """The app on SQLite, as the embedded platform runs it (no broker: sends are logged)."""
    from flask_migrate import upgrade

    from web import create_app

    config = {"DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}", "REDIS_URL": ""}
    app = create_app(base_config(tmp_path, **config))
    with app.app_context():
        upgrade()
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.mark.parametrize("database", ["postgresql", "sqlite"])
def test_concurrent_uploads_of_one_bot_are_all_accepted_with_consecutive_numbers(
    database: str, request: pytest.FixtureRequest
) -> None:
    app: Flask = request.getfixturevalue("pg_app" if database == "postgresql" else "sqlite_app")
    app.config.update(UPLOAD_RATE_LIMIT="10000 per minute", API_RATE_LIMIT="10000 per minute")
    owner = users.create_user("prolific")
    db.session.commit()
    # One token per upload, as from many machines: the uploads race for the bot, not the token.
    tokens = [users.issue_token(owner, f"machine-{k}") for k in range(UPLOADS)]
    db.session.commit()
    archive = bots.pack_folder(SAMPLES / "python" / "challenge-random")
    start = threading.Barrier(UPLOADS)
    codes: list[int] = []

    def upload(token: str) -> None:
        client = app.test_client()
        start.wait()
        answer = client.post(
            "/api/v1/uploads",
            data={"file": (io.BytesIO(archive), "bot.zip")},
            headers={"Authorization": f"Bearer {token}"},
        )
        codes.append(answer.status_code)

    threads = [threading.Thread(target=upload, args=(t,)) for t in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert sorted(codes) == [201] * UPLOADS
    numbers = db.session.scalars(select(BotVersion.number).order_by(BotVersion.number)).all()
    assert numbers == list(range(1, UPLOADS + 1))
    assert len({v.bot_id for v in db.session.scalars(select(BotVersion))}) == 1


SLOWED = {"unpacking": (bots, "unpack"), "reading the manifest": (api_uploads, "read_manifest")}


@pytest.mark.parametrize("stage", sorted(SLOWED))
def test_no_transaction_is_open_while_an_upload_is_unpacked(
    stage: str, sqlite_app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite every transaction holds the write lock: while an upload is being read and
    unpacked (held there by the test), another connection can still write."""
    owner = users.create_user("patient")
    db.session.commit()
    token, owner_id = users.issue_token(owner, "tests"), owner.id
    db.session.commit()  # this session holds no lock while the upload runs
    module, name = SLOWED[stage]
    slow, reached, release = getattr(module, name), threading.Event(), threading.Event()

    def held(*args: Any, **kwargs: Any) -> Any:
        reached.set()
        release.wait(300)
        return slow(*args, **kwargs)

    monkeypatch.setattr(module, name, held)
    archive = bots.pack_folder(SAMPLES / "python" / "challenge-random")
    codes: list[int] = []

    def upload() -> None:
        answer = sqlite_app.test_client().post(
            "/api/v1/uploads",
            data={"file": (io.BytesIO(archive), "bot.zip")},
            headers={"Authorization": f"Bearer {token}"},
        )
        codes.append(answer.status_code)

    uploader = threading.Thread(target=upload)
    uploader.start()
    try:
        assert reached.wait(120), f"the upload never reached {stage}"
        # Held by an open transaction, the write lock would make this wait its whole timeout
        # and fail with "database is locked".
        other = sqlite3.connect(tmp_path / "arena.db", timeout=60, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE users SET email = 'still@served' WHERE id = ?", (owner_id,))
        other.execute("COMMIT")
        other.close()
    finally:
        release.set()
        uploader.join(300)
    assert codes == [201]
    version = db.session.scalar(select(BotVersion))
    assert (version.number, version.status) == (1, VersionStatus.UPLOADED)
    assert get_storage().bot_dir(version.id).joinpath("bot.toml").is_file()


def _in_child(url: str, storage: str, job: str, ids: tuple[int, ...]) -> None:
    """Child process: activate a version, or finish a claimed match (its outcome made up)."""
    from web import create_app

    app = create_app(base_config(Path(storage), DATABASE_URL=url, REDIS_URL="redis://none:1/0"))
    with app.app_context():
        if job == "activate":
            version = db.session.get(BotVersion, ids[0])
            version.status = VersionStatus.VALIDATING  # straight to activation
            lifecycle.activate(version)
            db.session.commit()
        else:
            from tests.web.services.test_matches import _outcome

            assert play.finish(ids[0], ids[1], _outcome(2), "replays/x.json")
        db.engine.dispose()


def _waiting_on_locks(watcher: Any, processes: list[Any]) -> int:
    """Backends of this database waiting for a lock (from a fresh statistics snapshot)."""
    assert all(p.exitcode is None for p in processes), "a racer ended before it had to wait"
    query = text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    with watcher.connect() as conn:
        return int(conn.execute(query).scalar_one())


def test_an_activation_racing_a_finish_loses_no_rating_update(
    pg_app: Flask, pg_url: str, shared_tmp: Path
) -> None:
    require_bwrap()
    greedy = sample_version("python/challenge-greedy")
    random_bot = sample_version("python/challenge-random")
    ladder = ladders.default_ladder("challenge")
    newer = bots.register_folder(greedy.bot.owner, SAMPLES / "python" / "challenge-greedy")
    building.record_manifest(newer, engine.load_manifest(get_storage().bot_dir(newer.id)))
    match = matches.create_match(ladder.game_config(), [greedy, random_bot], ladder_id=ladder.id)
    db.session.commit()
    attempt = matches.claim(match.id, "racer", 60)
    assert attempt is not None
    rating = db.session.scalar(
        select(Rating).where(Rating.bot_id == greedy.bot_id, Rating.ladder_id == ladder.id)
    )
    # Just above a new version's sigma: the finish takes it below, so the activation must widen
    # it again; computed from the row as it was before the finish, the activation changes nothing.
    rating.sigma = skill.RESUBMIT_SIGMA + 0.001
    rating_id = rating.id
    db.session.commit()

    # Hold the rating row, let the finish queue on it first and the activation second, then let
    # go: the activation must see the finish's update, not the row as it was before.
    ctx = multiprocessing.get_context("spawn")
    holder = create_engine(pg_url)
    watcher = create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with holder.connect() as conn:
        conn.execute(text("SELECT id FROM ratings WHERE id = :id FOR UPDATE"), {"id": rating_id})
        jobs = []
        for job, ids in (("finish", (match.id, attempt)), ("activate", (newer.id,))):
            args = (pg_url, str(shared_tmp), job, ids)
            jobs.append(ctx.Process(target=_in_child, args=args))
            jobs[-1].start()
            queued = len(jobs)
            wait_for(
                lambda n=queued: _waiting_on_locks(watcher, jobs) >= n, 120, f"the {job} to wait"
            )
        conn.rollback()
    holder.dispose()
    watcher.dispose()
    for process in jobs:
        process.join(120)
        assert process.exitcode == 0
    db.session.expire_all()
    row = db.session.get(Rating, rating_id)
    change = db.session.scalar(select(RatingChange).where(RatingChange.bot_id == greedy.bot_id))
    expected = skill.new_version(skill.Rating(change.mu_after, change.sigma_after))
    assert (row.mu, row.sigma) == (pytest.approx(expected.mu), pytest.approx(expected.sigma))
    assert row.games == 1


def test_two_processes_creating_one_ladder_both_get_it(pg_app: Flask, pg_url: str) -> None:
    """Two versions of a game with no ladder yet, activating at once, both reach the ladder:
    the one whose insert loses the race reads the winner's row (it used to fail its task and
    leave its version stuck)."""
    from sqlalchemy.orm import Session

    from arena.games import make_game
    from web.models import Ladder

    game = "kozyr-boys"
    assert db.session.scalar(select(Ladder).where(Ladder.game == game)) is None
    config = make_game(game).config()
    other = create_engine(pg_url)
    watcher = create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    got: dict[str, Any] = {}

    def create() -> None:
        with pg_app.app_context():
            try:
                got["id"] = ladders.default_ladder(game).id
                db.session.commit()
            except Exception as exc:  # reported below
                got["error"] = exc
            finally:
                db.session.remove()

    with Session(other) as first:
        winner = Ladder(
            slug=ladders.ladder_slug(game, config["players"], config["variant"]),
            game=game,
            players=config["players"],
            variant=config["variant"],
            params={},
            mirrored=True,
        )
        first.add(winner)
        first.flush()  # the row is written, not committed: the second insert must wait on it
        racer = threading.Thread(target=create)
        racer.start()
        wait_for(lambda: _waiting_on_locks(watcher, []) >= 1, 120, "the second insert to wait")
        first.commit()
        winner_id = winner.id
    racer.join(120)
    other.dispose()
    watcher.dispose()
    assert "error" not in got, got.get("error")
    assert got["id"] == winner_id
