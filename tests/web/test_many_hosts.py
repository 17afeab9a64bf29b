"""Workers on two hosts that share nothing but PostgreSQL, Redis and the object store.

Each worker has a storage folder and a cache of its own (as a worker on another machine
would); one ladder's matches are played by both, and one worker is killed whole in the middle
of a match, as a lost host: every match still finishes, each played to its end once and rated
once.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import SAMPLES, Worker, require_bwrap, sample_version, wait_for
from tests.web.test_worker import finished, match_row, rating_changes
from web import engine
from web.extensions import db
from web.models import BotVersion, MatchStatus, Rating, VersionStatus
from web.services import bots, building, ladders, lifecycle, matches, users
from web.services.queue import MATCH_QUEUES
from web.storage import get_storage

pytestmark = [pytest.mark.services, pytest.mark.slow]


def on_the_ladder_unvalidated(folder: str) -> BotVersion:
    """A sample bot put straight on the ladders (``hostile/sleeper`` would fail the self-test)."""
    owner = users.get_or_create_user("house", house=True)
    version = bots.register_folder(owner, SAMPLES / folder, trusted=True)
    with get_storage().checkout(version.id) as files:
        building.record_manifest(version, engine.load_manifest(files))
    version.status = VersionStatus.VALIDATING  # straight to activation
    lifecycle.activate(version)
    db.session.commit()
    return version


def descendants(pid: int) -> set[int]:
    """The processes started by ``pid``, and theirs (a worker's pool, its bots)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, grown = {pid}, True
    while grown:
        more = {child for child, parent in parents.items() if parent in found} - found
        found |= more
        grown = bool(more)
    return found - {pid}


def held_by(worker: Worker, match_ids: list[int]) -> int | None:
    """A match of ``match_ids`` that a process of ``worker`` is in the middle of (its steps
    so far are in the live replay)."""
    pool = descendants(worker.process.pid)
    for match_id in match_ids:
        row = match_row(match_id)
        holder = (row.worker or "").rpartition(":")[2]
        playing = row.status == MatchStatus.RUNNING and (row.replay_path or "").startswith(
            "replays/live/"
        )
        if playing and holder.isdigit() and int(holder) in pool:
            return match_id
    return None


def test_two_worker_hosts_sharing_only_the_services_play_one_ladder_and_survive_a_lost_host(
    s3_app: Flask, start_worker: Callable[..., Worker], shared_tmp: Path
) -> None:
    require_bwrap()
    # A lease long enough that a busy machine's slow bot start is not taken for a lost host.
    s3_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=1.0, MATCH_LEASE=12)
    greedy = sample_version("python/challenge-greedy")
    sleeper = on_the_ladder_unvalidated("hostile/sleeper")  # each of its turns runs out of time
    ladder = ladders.default_ladder("challenge")
    pairs = [[greedy, sleeper], [sleeper, greedy]] * 2
    ids = [
        matches.create_match(ladder.game_config(), seats, seed=seed, ladder_id=ladder.id).id
        for seed, seats in enumerate(pairs, start=11)
    ]
    db.session.commit()
    hosts = {name: shared_tmp / name for name in ("host-a", "host-b")}
    workers = {
        name: start_worker(
            s3_app,
            name=name,
            queues=",".join(MATCH_QUEUES),
            ARENA_STORAGE_DIR=str(folder / "storage"),
            ARENA_CACHE_DIR=str(folder / "cache"),
        )
        for name, folder in hosts.items()
    }

    def one_in_the_middle_of_a_match() -> tuple[int, str] | None:
        matches.reap()  # what beat does every REAP_INTERVAL (a message lost is sent again)
        for name, worker in workers.items():
            match_id = held_by(worker, ids)
            if match_id is not None:
                return match_id, name
        return None

    killed, name = wait_for(one_in_the_middle_of_a_match, 120, "a host to be mid-match")
    lost, survivor = workers[name], workers[({*workers} - {name}).pop()]
    os.killpg(lost.process.pid, signal.SIGKILL)  # the host is gone, bots and all
    lost.process.wait(10)

    def all_finished() -> bool:
        matches.reap()  # what beat does every REAP_INTERVAL
        return all(finished(match_id) for match_id in ids)

    wait_for(all_finished, 180, "every match to finish on the other host", survivor)
    rows = {match_id: match_row(match_id) for match_id in ids}
    assert (rows[killed].attempts, rows[killed].lost_workers, rows[killed].faults) == (2, 1, 0)
    assert all(rows[m].attempts == 1 for m in ids if m != killed), "a match was played twice"
    assert all(rating_changes(match_id) == 2 for match_id in ids)
    games = db.session.scalars(select(Rating.games).where(Rating.ladder_id == ladder.id)).all()
    assert sorted(games) == [4, 4]
    client = s3_app.test_client()
    for match_id, row in rows.items():
        assert row.replay_path.endswith(".json.gz") and get_storage().exists(row.replay_path)
        replay = client.get(f"/api/v1/matches/{match_id}/replay").get_json()
        assert replay["seed"] == row.seed and replay["steps"]
    for name, folder in hosts.items():  # each host fetched the bots into its own cache ...
        assert list((folder / "cache" / "trees").glob("*.size")), f"{name} fetched no bot"
        assert not (folder / "storage").exists()  # ... and wrote nothing to a storage folder
