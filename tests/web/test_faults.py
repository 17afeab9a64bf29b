"""Faults of the platform under real Celery workers, PostgreSQL and Redis: no match is lost.

A worker killed again and again, a full storage disk, a database that is gone for 30 s: none of
them spends a match's attempts, and every match still finishes, rated exactly once.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from werkzeug.test import TestResponse

from tests.web.conftest import (
    SAMPLES,
    Worker,
    base_config,
    missing,
    require_bwrap,
    sample_version,
    wait_for,
)
from tests.web.tcp_proxy import TcpProxy
from tests.web.test_worker import finished, match_row, queue, rating_changes, unvalidated_version
from web import create_app
from web.extensions import db
from web.models import Bot, BotVersion, MatchStatus, Rating, VersionStatus
from web.services import attempts, bots, ladders, lifecycle, matches, users
from web.services.queue import MATCH_QUEUES
from web.storage import get_storage

pytestmark = [pytest.mark.services, pytest.mark.slow]

PASSWORD = "correct horse battery"


def _running_attempt(match_id: int, attempt: int) -> str | None:
    """The claim holder while attempt ``attempt`` of the match runs (None before or after)."""
    row = match_row(match_id)
    if row.status == MatchStatus.RUNNING and row.attempts == attempt:
        return row.worker
    return None


def _moved_past(match_id: int, attempt: int) -> bool:
    """The reaper (which beat would run) has taken attempt ``attempt`` back, or it finished."""
    matches.reap()
    row = match_row(match_id)
    return row.attempts > attempt or row.status != MatchStatus.RUNNING


def test_a_match_whose_worker_is_killed_three_times_finishes_rated_once(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=1.0, MATCH_LEASE=4)
    greedy = sample_version("python/challenge-greedy")
    sleeper = unvalidated_version("hostile/sleeper")  # every turn runs into the time limit
    ladder = ladders.default_ladder("challenge")
    group = "killed-three-times"
    killed = matches.create_match(
        ladder.game_config(), [greedy, sleeper], seed=5, ladder_id=ladder.id, mirror_group=group
    )
    mirror = matches.create_match(
        ladder.game_config(), [sleeper, greedy], seed=5, ladder_id=ladder.id, mirror_group=group
    )
    db.session.commit()
    worker = start_worker(pg_app, queues=",".join(MATCH_QUEUES))  # no ladder scheduling
    for attempt in (1, 2, 3):
        holder = wait_for(
            lambda a=attempt: _running_attempt(killed.id, a), 120, f"attempt {attempt}", worker
        )
        os.kill(int(holder.rsplit(":", 1)[1]), signal.SIGKILL)
        wait_for(lambda a=attempt: _moved_past(killed.id, a), 120, "the reaper", worker)

    def group_done() -> bool:
        matches.reap()
        return finished(killed.id) and finished(mirror.id)

    wait_for(group_done, 180, "both matches of the mirrored group", worker)
    row = match_row(killed.id)
    assert (row.attempts, row.faults, row.lost_workers) == (4, 0, 3)
    assert rating_changes(killed.id) == rating_changes(mirror.id) == 2
    games = db.session.scalars(select(Rating.games).where(Rating.ladder_id == ladder.id)).all()
    assert sorted(games) == [2, 2]


def test_a_match_whose_worker_process_is_killed_is_played_again_at_once(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    """The broker hands the killed process's message to another process at once; the claim
    sees its holder gone and takes the match over, long before its ten-minute lease ends (no
    reaper runs in this test)."""
    require_bwrap()
    pg_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=1.0, MATCH_LEASE=600)
    greedy = sample_version("python/challenge-greedy")
    sleeper = unvalidated_version("hostile/sleeper")  # every turn runs into the time limit
    ladder = ladders.default_ladder("challenge")
    killed = matches.create_match(ladder.game_config(), [greedy, sleeper], ladder_id=ladder.id)
    db.session.commit()
    worker = start_worker(pg_app, queues=",".join(MATCH_QUEUES))  # no reaper, no scheduling
    holder = wait_for(lambda: _running_attempt(killed.id, 1), 120, "attempt 1", worker)
    lease_until = match_row(killed.id).lease_until
    os.kill(int(holder.rsplit(":", 1)[1]), signal.SIGKILL)
    wait_for(lambda: match_row(killed.id).attempts == 2, 120, "attempt 2", worker)
    row = match_row(killed.id)
    assert row.started_at < lease_until
    assert (row.lost_workers, row.faults) == (1, 0)
    wait_for(lambda: finished(killed.id), 180, "the match to finish", worker)
    assert rating_changes(killed.id) == 2


@pytest.fixture
def small_disk(shared_tmp: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted as the storage folder (the app's ``STORAGE_DIR``)."""
    folder = shared_tmp / "storage"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(folder)]
    done = subprocess.run(mount, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        missing(f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=True)


def _fill(folder: Path) -> Path:
    """Write a file until the disk is full; returns it."""
    filler = folder / "filler"
    block = b"\0" * 65536
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_storage_disk_loses_no_match_and_is_named_as_the_cause(
    pg_app: Flask, small_disk: Path, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(RETRY_BACKOFF=0.5, RETRY_BACKOFF_MAX=3.0)
    assert get_storage().root == small_disk.resolve()
    versions = [sample_version(f"python/challenge-{k}") for k in ("greedy", "random")]
    ladder = ladders.default_ladder("challenge")
    filler = _fill(small_disk)
    ids = [queue(ladder, versions, seed=s) for s in range(3)]
    worker = start_worker(pg_app)

    def all_refused() -> bool:
        rows = [match_row(i) for i in ids]
        assert not any(r.status in (MatchStatus.FINISHED, MatchStatus.FAILED) for r in rows)
        return all(r.error and "no space left on device" in r.error for r in rows)

    wait_for(all_refused, 120, "every match to meet the full disk", worker)
    error = match_row(ids[0]).error
    assert f"storage folder {small_disk.resolve()}" in error and "stopped answering" not in error
    filler.unlink()  # the disk is freed; no reaper runs: the workers gave the claims back

    wait_for(lambda: all(finished(i) for i in ids), 120, "every match once the disk is freed")
    for match_id in ids:
        row = match_row(match_id)
        assert (row.faults, row.lost_workers, row.error) == (0, 0, None)
        assert row.attempts > 1 and get_storage().resolve(row.replay_path).is_file()
        assert rating_changes(match_id) == 2


def test_matches_given_back_for_a_full_disk_play_once_it_is_freed_not_after_their_backoff(
    pg_app: Flask, small_disk: Path, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(RETRY_BACKOFF=300.0, RETRY_BACKOFF_MAX=600.0)
    versions = [sample_version(f"python/challenge-{k}") for k in ("greedy", "random")]
    ladder = ladders.default_ladder("challenge")
    filler = _fill(small_disk)
    ids = [queue(ladder, versions, seed=s) for s in range(2)]
    worker = start_worker(pg_app, queues=",".join(MATCH_QUEUES))  # no reaper runs

    def all_refused() -> bool:
        return all(attempts.STORAGE_WAIT in (match_row(i).error or "") for i in ids)

    wait_for(all_refused, 120, "every match to meet the full disk", worker)
    tried = {i: match_row(i).attempts for i in ids}
    due = {i: match_row(i).queued_at for i in ids}
    # Their messages come back to look at the disk, find it full and are sent again: no claim.
    waiting = "waiting for the storage to answer"
    wait_for(lambda: worker.output().count(waiting) >= 2, 120, "a look at the full disk", worker)
    assert {i: match_row(i).attempts for i in ids} == tried
    filler.unlink()
    wait_for(lambda: all(finished(i) for i in ids), 120, "every match once the disk is freed")
    for match_id in ids:
        row = match_row(match_id)
        assert row.finished_at < due[match_id]  # long before their backoff of 300 s ran out
        assert (row.faults, row.error, rating_changes(match_id)) == (0, None, 2)


def test_a_database_outage_of_30_seconds_loses_no_message(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=1.0, MATCH_LEASE=4)
    greedy = sample_version("python/challenge-greedy")
    random_bot = sample_version("python/challenge-random")
    sleeper = unvalidated_version("hostile/sleeper")
    ladder = ladders.default_ladder("challenge")
    url = make_url(pg_app.config["SQLALCHEMY_DATABASE_URI"])
    with TcpProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        through = url.set(port=proxy.port).render_as_string(hide_password=False)
        worker = start_worker(pg_app, concurrency=2, ARENA_DATABASE_URL=through)
        playing = queue(ladder, [greedy, sleeper])
        wait_for(lambda: _running_attempt(playing, 1), 120, "the first match to start", worker)
        proxy.cut()
        # Sent while the workers cannot reach the database: they must hold on to these.
        waiting = [queue(ladder, [greedy, random_bot], seed=s) for s in range(2)]
        wait_for(lambda: "Retry in" in worker.output(), 60, "a task to meet the outage", worker)
        time.sleep(30)  # the outage itself
        proxy.restore()
        ids = [playing, *waiting]
        wait_for(lambda: all(finished(i) for i in ids), 300, "every match after the outage", worker)
    assert [rating_changes(i) for i in ids] == [2, 2, 2]
    assert all(match_row(i).faults == 0 for i in ids)
    assert match_row(playing).attempts == 1  # its result was kept, not played again


# --- uploads on a full disk -------------------------------------------------------------------


def _with_data(folder: Path, size: int) -> bytes:
    """The random challenge bot plus ``size`` bytes of hex text (zipped to about half)."""
    shutil.copytree(SAMPLES / "python" / "challenge-random", folder)
    (folder / "data.txt").write_text(os.urandom(size // 2).hex())
    return bots.pack_folder(folder)


def _stored_files(storage: Path) -> list[str]:
    """Every file the storage holds, but the test's filler."""
    return sorted(str(p.relative_to(storage)) for p in storage.rglob("*") if p.is_file())


def _nothing_kept(storage: Path) -> None:
    assert db.session.scalar(select(func.count()).select_from(BotVersion)) == 0
    assert db.session.scalar(select(func.count()).select_from(Bot)) == 0
    db.session.rollback()
    assert _stored_files(storage) == ["filler"]


def _api_upload(client: FlaskClient, token: str, archive: bytes) -> TestResponse:
    return client.post(
        "/api/v1/uploads",
        data={"file": (io.BytesIO(archive), "bot.zip")},
        headers={"Authorization": f"Bearer {token}"},
    )


def _as_documented(client: FlaskClient, answer: TestResponse) -> None:
    """The answer is the one the OpenAPI document declares for its status on uploads."""
    import jsonschema

    spec = client.get("/api/v1/openapi.json").get_json()
    declared = spec["paths"]["/api/v1/uploads"]["post"]["responses"][str(answer.status_code)]
    schema = declared["content"]["application/json"]["schema"]
    jsonschema.validate(answer.get_json(), {**schema, "components": spec["components"]})


def test_an_upload_to_a_full_disk_answers_507_and_keeps_nothing(
    pg_app: Flask, small_disk: Path, shared_tmp: Path
) -> None:
    pg_app.config.update(UPLOAD_RATE_LIMIT="1000 per minute")
    owner = users.create_user("filler", PASSWORD)
    db.session.commit()
    token = users.issue_token(owner, "tests")
    db.session.commit()
    from tests.web.site.conftest import FreshClient

    pg_app.test_client_class = FreshClient  # the fixtures' app context must not leak ``g``
    client = pg_app.test_client()
    small = bots.pack_folder(SAMPLES / "python" / "challenge-random")
    # Under 500 kB packed, as the test client holds larger bodies in files it never closes.
    large = _with_data(shared_tmp / "large", 640 * 1024)
    filler = _fill(small_disk)

    answer = _api_upload(client, token, small)  # the archive itself cannot be written
    assert answer.status_code == 507
    error = answer.get_json()["error"]
    assert error["code"] == "insufficient_storage"
    assert error["message"] == "the server's storage is full; nothing was saved; try again later"
    _as_documented(client, answer)
    _nothing_kept(small_disk)

    assert len(large) < 400 * 1024
    os.truncate(filler, filler.stat().st_size - 448 * 1024)  # room for the archive only
    answer = _api_upload(client, token, large)  # stored, then unpacking meets the full disk
    assert answer.status_code == 507, answer.get_data(as_text=True)
    _nothing_kept(small_disk)

    _login(client)
    page = client.get("/upload").get_data(as_text=True)
    form = {"csrf_token": _csrf(page), "file": (io.BytesIO(large), "bot.zip")}
    answer = client.post("/upload", data=form, content_type="multipart/form-data")
    assert answer.status_code == 507, answer.get_data(as_text=True)[-3000:]
    assert "the server&#39;s storage is full; nothing was saved" in answer.get_data(as_text=True)
    _nothing_kept(small_disk)

    filler.unlink()  # freed: the same upload is accepted
    answer = _api_upload(client, token, large)
    assert answer.status_code == 201, answer.get_data(as_text=True)
    assert db.session.scalar(select(func.count()).select_from(BotVersion)) == 1


def _login(client: FlaskClient) -> None:
    from tests.web.site.conftest import login

    login(client, "filler", PASSWORD)


def _csrf(page: str) -> str:
    from tests.web.site.conftest import csrf_from

    return csrf_from(page)


# --- builds under faults ----------------------------------------------------------------------


def _slow_build(folder: Path) -> bytes:
    """The random challenge bot with a build step that takes 8 s."""
    shutil.copytree(SAMPLES / "python" / "challenge-random", folder)
    manifest = folder / "bot.toml"
    build = "import time; time.sleep(8); open('stamp', 'w').write('built')"
    manifest.write_text(manifest.read_text() + f"build = ['python3', '-c', {build!r}]\n")
    return bots.pack_folder(folder)


def _version(version_id: int) -> BotVersion:
    db.session.expire_all()
    version = db.session.get(BotVersion, version_id)
    db.session.rollback()
    assert version is not None
    return version


def test_a_build_whose_worker_is_killed_is_built_again_by_another(
    pg_app: Flask, shared_tmp: Path, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(MATCH_LEASE=4)
    owner = users.create_user("builder")
    db.session.commit()
    first = start_worker(pg_app, name="first")
    version_id = bots.submit(owner, "slow", bots.Upload(_slow_build(shared_tmp / "b"))).id

    def building() -> bool:
        version = _version(version_id)
        return version.status == VersionStatus.BUILDING and "$ python3" not in version.build_log

    wait_for(building, 120, "the build to start", first)
    first.stop()  # the whole worker is gone: its message stays taken until the reaper acts
    second = start_worker(pg_app, name="second")

    def active() -> bool:
        lifecycle.reap()  # what the periodic reaper does
        return _version(version_id).status == VersionStatus.ACTIVE

    wait_for(active, 180, "the version to be built by the second worker", second)
    version = _version(version_id)
    assert (version.prepare_attempts, version.prepare_lost, version.error) == (2, 1, None)
    assert (get_storage().bot_dir(version_id) / "stamp").read_text() == "built"


def test_a_database_outage_during_a_build_keeps_its_result(
    pg_app: Flask, shared_tmp: Path, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(MATCH_LEASE=4)
    owner = users.create_user("builder")
    db.session.commit()
    url = make_url(pg_app.config["SQLALCHEMY_DATABASE_URI"])
    with TcpProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        through = url.set(port=proxy.port).render_as_string(hide_password=False)
        worker = start_worker(pg_app, ARENA_DATABASE_URL=through)
        version_id = bots.submit(owner, "slow", bots.Upload(_slow_build(shared_tmp / "b"))).id
        building = VersionStatus.BUILDING
        wait_for(lambda: _version(version_id).status == building, 120, "the build", worker)
        proxy.cut()  # the build goes on; its lease cannot be renewed, its result not written
        wait_for(lambda: "lease could not be renewed" in worker.output(), 60, "the outage", worker)
        waiting = f"version {version_id}: concluding"  # the build is done; its result waits
        wait_for(lambda: waiting in worker.output(), 120, "the result to wait", worker)
        proxy.restore()
        active = VersionStatus.ACTIVE
        wait_for(lambda: _version(version_id).status == active, 180, "the result", worker)
    version = _version(version_id)
    assert (version.prepare_attempts, version.prepare_lost, version.error) == (1, 0, None)
    assert (get_storage().bot_dir(version_id) / "stamp").read_text() == "built"


# --- hung and lost connections ----------------------------------------------------------------


def test_a_database_host_that_drops_packets_fails_a_lease_renewal_in_seconds(
    pg_app: Flask, shared_tmp: Path
) -> None:
    url = make_url(pg_app.config["SQLALCHEMY_DATABASE_URI"])
    with TcpProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        through = url.set(port=proxy.port).render_as_string(hide_password=False)
        config = base_config(shared_tmp, DATABASE_URL=through, DB_CONNECT_TIMEOUT=2)
        app = create_app({**config, "REDIS_URL": pg_app.config["REDIS_URL"]})
        proxy.blackhole()
        outcome: list[object] = []

        def renew() -> None:
            with app.app_context():
                try:
                    outcome.append(matches.renew_lease(1, 1, 60))
                except Exception as exc:
                    outcome.append(exc)
                finally:
                    db.session.remove()

        worker = threading.Thread(target=renew, daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), "the renewal hung on a host that drops packets"
        assert isinstance(outcome[0], OperationalError)
        assert "timeout" in str(outcome[0]).lower()
        proxy.restore()
        with app.app_context():
            assert matches.renew_lease(1, 1, 60) is False  # reachable again: no such claim
            db.session.remove()
            db.engine.dispose()


def test_a_broker_outage_of_30_seconds_loses_no_queued_match(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    versions = [sample_version(f"python/challenge-{k}") for k in ("greedy", "random")]
    ladder = ladders.default_ladder("challenge")
    redis = make_url(pg_app.config["REDIS_URL"])
    with TcpProxy(redis.host or "127.0.0.1", redis.port or 6379) as proxy:
        through = redis.set(port=proxy.port).render_as_string(hide_password=False)
        worker = start_worker(pg_app, concurrency=2, ARENA_REDIS_URL=through)
        before = [queue(ladder, versions, seed=s) for s in range(2)]
        wait_for(lambda: finished(before[0]), 120, "a match before the outage", worker)
        proxy.cut()
        # Queued while the workers cannot reach the broker: the messages wait in it.
        during = [queue(ladder, versions, seed=s) for s in range(2, 6)]
        lost = "Connection to broker lost"
        wait_for(lambda: lost in worker.output(), 60, "the worker to lose the broker")
        time.sleep(30)  # the outage itself
        proxy.restore()
        ids = [*before, *during]
        wait_for(lambda: all(finished(i) for i in ids), 300, "every match after the outage", worker)
    assert [rating_changes(i) for i in ids] == [2] * len(ids)
    assert all(match_row(i).faults == 0 for i in ids)
