"""Faults of the platform under real Celery workers, PostgreSQL and Redis: no match is lost.

A worker killed again and again, a full storage disk, a database that is gone for 30 s: none of
them spends a match's attempts, and every match still finishes, rated exactly once.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.engine import make_url

from tests.web.conftest import Worker, missing, require_bwrap, sample_version, wait_for
from tests.web.tcp_proxy import TcpProxy
from tests.web.test_worker import finished, match_row, queue, rating_changes, unvalidated_version
from web.extensions import db
from web.models import MatchStatus, Rating
from web.services import ladders, matches
from web.storage import get_storage

pytestmark = [pytest.mark.services, pytest.mark.slow]


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
    worker = start_worker(pg_app)
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
