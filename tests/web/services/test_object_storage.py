"""Matches and builds on an object store (a real S3 server): an outage or a missing object
gives the claim back, naming the store, spends no attempt and loses nothing."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask

from tests.sandbox.test_build import C_BOT
from tests.web.conftest import require_bwrap, sample_version
from tests.web.services.test_build import upload
from tests.web.services.test_matches import queue_match, rating_changes
from tests.web.tcp_proxy import TcpProxy
from web import engine
from web.extensions import db
from web.models import Match, MatchStatus, VersionStatus
from web.services import attempts, ladders, play
from web.storage import get_storage
from web.storage.objects import ObjectStorage

pytestmark = pytest.mark.services


def row(match_id: int) -> Match:
    db.session.expire_all()
    match = db.session.get(Match, match_id)
    db.session.rollback()
    return match


@pytest.fixture
def on_s3(s3_app: Flask) -> tuple[Any, list[Any]]:
    """The challenge ladder with two sample bots whose files are only in the object store."""
    require_bwrap()
    versions = [
        sample_version("python/challenge-greedy"),
        sample_version("python/challenge-random"),
    ]
    ladder = ladders.default_ladder("challenge")
    db.session.commit()
    return ladder, versions


def test_a_match_is_played_from_the_store_and_its_replay_stored_compressed(
    s3_app: Flask, on_s3: tuple[Any, list[Any]]
) -> None:
    match_id = queue_match(*on_s3)
    assert play.play_match(match_id) == "finished"
    key = row(match_id).replay_path
    assert key.startswith("replays/") and key.endswith(".json.gz")
    storage = get_storage()
    assert storage.read(key) == gzip.decompress(storage.get(key))
    answer = s3_app.test_client().get(f"/api/v1/matches/{match_id}/replay")
    assert answer.status_code == 200 and answer.get_json()["steps"]
    assert rating_changes(match_id) == 2


def test_an_unreachable_store_gives_the_match_back_and_it_plays_once_the_store_answers(
    s3_app: Flask, on_s3: tuple[Any, list[Any]], s3_endpoint: str
) -> None:
    endpoint = urlsplit(s3_endpoint)
    match_id = queue_match(*on_s3)
    with TcpProxy(endpoint.hostname or "127.0.0.1", endpoint.port or 80) as proxy:
        s3_app.config["S3_ENDPOINT_URL"] = f"http://127.0.0.1:{proxy.port}"
        proxy.cut()
        assert "could not" in play.play_match(match_id)
        match = row(match_id)
        assert (match.status, match.faults, match.lease_until) == (MatchStatus.QUEUED, 0, None)
        assert f"the object store {s3_app.config['STORAGE_URL']}" in match.error
        assert attempts.STORAGE_WAIT in match.error
        assert not get_storage().answers()
        assert play.play_match(match_id) == "waiting for the storage to answer"
        proxy.restore()
        assert play.play_match(match_id) == "finished"
    assert rating_changes(match_id) == 2
    assert row(match_id).faults == 0


def test_a_version_missing_from_the_store_is_named_and_the_match_waits_for_it(
    s3_app: Flask, on_s3: tuple[Any, list[Any]]
) -> None:
    _ladder, versions = on_s3
    match_id = queue_match(*on_s3)
    storage = get_storage()
    pointer = f"bots/{versions[1].id}"
    kept = storage.get(pointer)
    storage.delete(pointer)
    assert "not the match's fault" in row_error_after(match_id)
    match = row(match_id)
    assert match.status == MatchStatus.QUEUED and match.faults == 0
    assert f"{pointer} is missing from the object store" in match.error
    storage.put(pointer, kept)
    assert play.play_match(match_id) == "finished"
    assert rating_changes(match_id) == 2


def row_error_after(match_id: int) -> str:
    """Play the match once; the error it was given back with."""
    play.play_match(match_id)
    return str(row(match_id).error)


def test_a_bot_built_on_the_store_replaces_its_upload_whole_and_plays(s3_app: Flask) -> None:
    require_bwrap()
    version = upload("carol", C_BOT.encode())
    assert version.status == VersionStatus.ACTIVE, version.build_log + str(version.error)
    storage = get_storage()
    assert isinstance(storage, ObjectStorage)
    with storage.checkout(version.id) as folder:
        assert (folder / "bot.c").read_text() == C_BOT
        assert os.access(folder / "bot", os.X_OK)
        seats = [engine.SeatSpec(folder, "c-first"), engine.SeatSpec(folder, "c-first-2")]
        outcome = engine.run({"game": "svoi-kozyri", "players": 2}, seats, 11)
    assert outcome.statuses == ["ok", "ok"], outcome.messages
    assert list(storage.cache.tmp.iterdir()) == []  # the upload's and the build's scratch: gone
    assert not Path(s3_app.config["STORAGE_DIR"]).exists()  # nothing written to a folder
