"""Builds and self-tests under faults of the platform, on real PostgreSQL, Redis and bubblewrap.

The platform's faults (the sandbox unavailable, the storage full) give the version back to be
prepared again; only the bot's own faults reject it. A worker lost mid-build is covered by the
reaper, with a bound; a lost prepare message is resent, one waiting in the queue is not.
"""

from __future__ import annotations

import ast
import errno
import json
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask import Flask, current_app

from tests.web.conftest import SAMPLES, missing, require_bwrap
from web.extensions import db
from web.models import BotVersion, VersionStatus, utcnow
from web.services import attempts, bots, lifecycle, queue, users
from web.services.queue import BUILDS, app_redis
from web.storage import get_storage

pytestmark = pytest.mark.services

WRITES_200K = "open('stamp', 'w').write('x' * 200_000)"


def built_bot(folder: Path, build: str = WRITES_200K) -> bytes:
    """The random challenge bot with a build step running ``build`` (Python), packed."""
    shutil.copytree(SAMPLES / "python" / "challenge-random", folder)
    manifest = folder / "bot.toml"
    manifest.write_text(manifest.read_text() + f"build = ['python3', '-c', {build!r}]\n")
    return bots.pack_folder(folder)


def submit(data: bytes, owner: str = "olga") -> int:
    user = users.get_or_create_user(owner)
    db.session.commit()
    return bots.submit(user, "built", bots.Upload(data=data)).id


def row(version_id: int) -> BotVersion:
    db.session.expire_all()
    version = db.session.get(BotVersion, version_id)
    db.session.rollback()
    assert version is not None
    return version


def test_an_unavailable_sandbox_is_tried_again_not_rejected(
    pg_app: Flask, shared_tmp: Path
) -> None:
    require_bwrap()
    pg_app.config.update(RETRY_BACKOFF=7.0)
    version_id = submit(built_bot(shared_tmp / "bot"))
    pg_app.config["SANDBOX"] = "no-such-sandbox"
    for failures in (1, 2):
        before = utcnow()
        assert lifecycle.prepare(version_id) == VersionStatus.UPLOADED
        version = row(version_id)
        assert (version.status, version.prepare_attempts) == (VersionStatus.UPLOADED, failures)
        assert "no-such-sandbox" in str(version.error)
        assert "not the bot's fault" in str(version.error)
        delay = 7.0 * 2 ** (failures - 1)
        assert version.prepare_due >= before + timedelta(seconds=delay)
        assert version.prepare_lease_until is None
    pg_app.config["SANDBOX"] = "bwrap"
    assert lifecycle.prepare(version_id) == VersionStatus.ACTIVE
    version = row(version_id)
    assert version.error is None and "exit status: 0" in version.build_log
    assert version.build_log.count("$ python3") == 1  # the failed tries left no log behind


@pytest.fixture
def small_storage(pg_app: Flask) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted on the app's storage folder."""
    folder = Path(pg_app.config["STORAGE_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(folder)]
    done = subprocess.run(mount, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        missing(f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Write a file in ``folder`` until its disk is full; returns the file."""
    filler = folder / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_disk_during_the_build_is_tried_again_and_named(
    pg_app: Flask, shared_tmp: Path, small_storage: Path
) -> None:
    require_bwrap()
    version_id = submit(built_bot(shared_tmp / "bot"))
    filler = fill(small_storage)
    assert lifecycle.prepare(version_id) == VersionStatus.UPLOADED
    version = row(version_id)
    assert version.status == VersionStatus.UPLOADED
    assert f"storage folder {small_storage.resolve()}: no space left on device" in str(
        version.error
    )
    assert not list((small_storage / "tmp").iterdir())  # the failed build left nothing
    assert sorted(p.name for p in get_storage().bot_dir(version_id).iterdir()) == [
        "bot.py",
        "bot.toml",
    ]
    filler.unlink()
    assert lifecycle.prepare(version_id) == VersionStatus.ACTIVE
    assert (get_storage().bot_dir(version_id) / "stamp").stat().st_size == 200_000


def test_the_bots_own_build_failure_still_rejects_it_at_once(
    pg_app: Flask, shared_tmp: Path
) -> None:
    require_bwrap()
    version_id = submit(built_bot(shared_tmp / "bot", "print('compiler says no'); exit(3)"))
    assert lifecycle.prepare(version_id) == VersionStatus.REJECTED
    version = row(version_id)
    assert "build step failed (exit status 3)" in str(version.error)
    assert "compiler says no" in version.build_log
    assert version.prepare_attempts == 1
    assert lifecycle.prepare(version_id) == VersionStatus.REJECTED  # a verdict, not tried again
    assert row(version_id).prepare_attempts == 1


def test_a_build_that_loses_its_worker_every_time_is_rejected_at_the_bound(
    pg_app: Flask, shared_tmp: Path
) -> None:
    pg_app.config["MAX_LOST_WORKERS"] = 3
    version_id = submit(built_bot(shared_tmp / "bot"))
    db.session.commit()
    for lost in (1, 2, 3):
        attempt = lifecycle.claim(version_id)  # the worker building it dies: no renewal
        assert attempt == lost
        assert lifecycle.reap(utcnow())["requeued"] == []  # its lease is still live
        report = lifecycle.reap(utcnow() + timedelta(seconds=120))
        assert row(version_id).prepare_lost == lost
        if lost < 3:
            assert report["requeued"] == [version_id]
            assert row(version_id).status == VersionStatus.UPLOADED
    assert report["rejected"] == [version_id]
    version = row(version_id)
    assert version.status == VersionStatus.REJECTED
    assert "stopped answering 3 times" in str(version.error)
    assert lifecycle.claim(version_id) is None
    assert lifecycle.prepare(version_id) == VersionStatus.REJECTED


def test_a_claim_taken_over_after_its_lease_ran_out_counts_a_lost_worker(
    pg_app: Flask, shared_tmp: Path
) -> None:
    pg_app.config["MATCH_LEASE"] = -1  # every lease has run out already
    version_id = submit(built_bot(shared_tmp / "bot"))
    assert lifecycle.claim(version_id) == 1
    assert lifecycle.claim(version_id) == 2
    assert row(version_id).prepare_lost == 1
    assert lifecycle.held(version_id, 1) is None  # the first claim is void
    db.session.rollback()


def _purge(pg_app: Flask) -> None:
    """Lose every message of the prepare queue, as a broker restart without persistence would."""
    celery = pg_app.extensions["celery"]
    with celery.connection_for_write() as conn:
        conn.default_channel.client.delete(BUILDS)  # the key prefix is added by kombu


def test_the_reaper_resends_a_lost_prepare_message_but_not_a_waiting_one(
    pg_app: Flask, shared_tmp: Path
) -> None:
    version_id = submit(built_bot(shared_tmp / "bot"))  # sent after the commit; no worker runs
    assert queue.version_ids_in_broker() == {version_id}
    later = utcnow() + timedelta(seconds=60)
    assert lifecycle.reap(later)["resent"] == []  # queued behind other work: not lost
    _purge(pg_app)
    assert queue.version_ids_in_broker() == set()
    assert lifecycle.reap(later)["resent"] == [version_id]
    assert queue.version_ids_in_broker() == {version_id}
    assert lifecycle.reap(later + timedelta(seconds=1))["resent"] == []  # sent just now
    attempt = lifecycle.claim(version_id)
    assert attempt is not None
    _purge(pg_app)
    assert lifecycle.reap(utcnow())["resent"] == []  # building, its lease live


def test_a_sandbox_that_cannot_start_the_self_test_is_the_platforms_fault(
    pg_app: Flask, shared_tmp: Path
) -> None:
    from arena.bots import load_bot
    from arena.selftest import run_selftest
    from sandbox import SandboxError, get_sandbox

    require_bwrap()
    folder = shared_tmp / "bot"
    shutil.copytree(SAMPLES / "python" / "challenge-random", folder)
    manifest = load_bot(folder)
    assert run_selftest(get_sandbox("bwrap"), manifest, "challenge").passed
    shutil.rmtree(folder)  # the storage lost it: the sandbox has nothing to mount
    with pytest.raises(SandboxError):
        run_selftest(get_sandbox("bwrap"), manifest, "challenge")


def test_a_sandbox_that_fails_only_when_the_build_starts_is_the_platforms_fault(
    pg_app: Flask, shared_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox is there, but cannot start the build: here the worker's temporary folder
    is private to root, so the build's uid cannot reach its copy (a misconfigured host)."""
    import os
    import tempfile

    require_bwrap()
    if os.geteuid() != 0:
        missing("the sandbox checks the build folder's reach only when run as root")
    pg_app.config.update(RETRY_BACKOFF=7.0)
    version_id = submit(built_bot(shared_tmp / "bot"))
    private = shared_tmp / "private-tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    assert lifecycle.prepare(version_id) == VersionStatus.UPLOADED
    version = row(version_id)
    assert (version.status, version.prepare_attempts) == (VersionStatus.UPLOADED, 1)
    assert "sandbox failure" in str(version.error) and "not reachable" in str(version.error)
    assert "not the bot's fault" in str(version.error)
    assert list(private.iterdir()) == []  # the failed try left no build folder behind
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert lifecycle.prepare(version_id) == VersionStatus.ACTIVE
    assert (get_storage().bot_dir(version_id) / "stamp").stat().st_size == 200_000


@pytest.mark.parametrize("field", ["build", "run"])
def test_a_command_the_sandbox_does_not_have_rejects_the_bot_at_once(
    pg_app: Flask, shared_tmp: Path, field: str
) -> None:
    """``ruby`` where there is no Ruby is the bot's mistake, in its build or its run command:
    rejected with the reason, never tried again as if the platform had failed."""
    require_bwrap()
    folder = shared_tmp / "bot"
    shutil.copytree(SAMPLES / "python" / "challenge-random", folder)
    manifest = folder / "bot.toml"
    text = manifest.read_text()
    if field == "run":
        text = text.replace('run = ["python3", "bot.py"]', 'run = ["no-such-ruby", "bot.rb"]')
        assert "no-such-ruby" in text
    else:
        text += "build = ['no-such-ruby', 'make.rb']\n"
    manifest.write_text(text)
    version_id = submit(bots.pack_folder(folder))
    assert lifecycle.prepare(version_id) == VersionStatus.REJECTED
    version = row(version_id)
    log = version.build_log if field == "build" else version.validation_log
    assert "command not found: 'no-such-ruby'" in log, log
    assert "not the bot's fault" not in str(version.error)
    assert version.prepare_attempts == 1


def _prepare_etas(version_id: int) -> list[datetime]:
    """When the version's prepare messages waiting in the ``builds`` queue are due."""
    prefix = str(current_app.config["BROKER_PREFIX"])
    with app_redis() as client:
        assert client is not None
        raw = [json.loads(m) for m in client.lrange(prefix + BUILDS, 0, -1)]
    return [
        datetime.fromisoformat(m["headers"]["eta"]).astimezone(UTC).replace(tzinfo=None)
        for m in raw
        if list(ast.literal_eval(m["headers"]["argsrepr"])) == [version_id] and m["headers"]["eta"]
    ]


def test_a_build_given_back_for_a_full_disk_looks_again_in_seconds_and_claims_nothing_meanwhile(
    pg_app: Flask, shared_tmp: Path, small_storage: Path
) -> None:
    require_bwrap()
    pg_app.config.update(RETRY_BACKOFF=600.0, RETRY_BACKOFF_MAX=600.0)
    version_id = submit(built_bot(shared_tmp / "bot"))
    filler = fill(small_storage)
    assert lifecycle.prepare(version_id) == VersionStatus.UPLOADED
    version = row(version_id)
    assert attempts.STORAGE_WAIT in str(version.error) and "600 s at most" in str(version.error)
    assert version.prepare_due > utcnow() + timedelta(seconds=500)  # due after its backoff ...
    etas = _prepare_etas(version_id)  # ... but its message comes in seconds to look
    assert etas and max(etas) <= utcnow() + timedelta(seconds=attempts.STORAGE_PROBE_EVERY)
    assert lifecycle.prepare(version_id) == VersionStatus.UPLOADED  # still full: a look only
    assert row(version_id).prepare_attempts == 1
    assert len(_prepare_etas(version_id)) == len(etas) + 1  # and the next look is sent
    filler.unlink()
    assert lifecycle.prepare(version_id) == VersionStatus.ACTIVE  # freed: built at once
