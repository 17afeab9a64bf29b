"""Build steps of uploaded bots on real PostgreSQL and real bubblewrap.

The build runs on a private copy; only a build that succeeds in time replaces the version's
folder, and the matches then run that built folder read-only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from flask import Flask

from tests.sandbox.conftest import REPO
from tests.sandbox.test_build import C_BOT
from tests.web.conftest import require_bwrap
from web import engine
from web.extensions import db
from web.models import BotVersion, VersionStatus
from web.services import bots, lifecycle, users
from web.storage import get_storage

pytestmark = pytest.mark.services

GCC_MANIFEST = (
    'name = "c-first"\ngames = ["svoi-kozyri"]\nlanguage = "c"\n'
    'build = ["gcc", "-O2", "-o", "bot", "bot.c"]\nrun = ["./bot"]\n'
)


def upload(owner_name: str, source: bytes, manifest: str = GCC_MANIFEST) -> BotVersion:
    """Submit ``bot.c`` and ``manifest`` as a single-file upload, then build and test it."""
    owner = users.get_or_create_user(owner_name)
    db.session.commit()
    data = bots.Upload(data=source, filename="bot.c", manifest=manifest)
    version = bots.submit(owner, "c-first", data)
    lifecycle.prepare(version.id)
    return version


def leftovers(app: Flask) -> list[Path]:
    """What is left in the storage's scratch area (nothing, after any build)."""
    return list((Path(app.config["STORAGE_DIR"]) / "tmp").iterdir())


def test_an_uploaded_c_bot_is_built_in_the_sandbox_and_plays(pg_app: Flask) -> None:
    require_bwrap()
    version = upload("carol", C_BOT.encode())
    assert version.status == VersionStatus.ACTIVE, version.build_log + str(version.error)
    assert "$ gcc -O2 -o bot bot.c" in version.build_log
    assert "exit status: 0" in version.build_log
    assert version.sha256 == hashlib.sha256(C_BOT.encode()).hexdigest()  # the upload's address
    folder = get_storage().bot_dir(version.id)
    binary = folder / "bot"
    assert (folder / "bot.c").read_text() == C_BOT
    assert os.access(binary, os.X_OK) and binary.stat().st_uid == os.geteuid()
    assert not binary.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert leftovers(pg_app) == []
    seats = [engine.SeatSpec(folder, "c-first"), engine.SeatSpec(folder, "c-first-2")]
    outcome = engine.run({"game": "svoi-kozyri", "players": 2}, seats, 11)
    assert outcome.statuses == ["ok", "ok"], outcome.messages
    assert outcome.steps > 0


def test_a_failed_build_leaves_no_active_version_and_the_upload_untouched(
    pg_app: Flask,
) -> None:
    require_bwrap()
    broken = b"int main(void) { return undefined_name; }\n"
    version = upload("dmitri", broken)
    assert version.status == VersionStatus.REJECTED
    assert "build step failed (exit status 1)" in str(version.error)
    assert "undefined_name" in version.build_log
    folder = get_storage().bot_dir(version.id)
    assert sorted(p.name for p in folder.iterdir()) == ["bot.c", "bot.toml"]
    assert leftovers(pg_app) == []


def test_a_build_that_runs_too_long_is_stopped_and_rejected(pg_app: Flask) -> None:
    require_bwrap()
    pg_app.config["BUILD_TIMEOUT"] = 2
    manifest = GCC_MANIFEST.replace(
        '["gcc", "-O2", "-o", "bot", "bot.c"]', '["sh", "-c", "touch half-built; sleep 60"]'
    )
    version = upload("elena", C_BOT.encode(), manifest)
    assert version.status == VersionStatus.REJECTED
    assert "took longer than 2 s and was stopped" in str(version.error)
    assert "build stopped: still running after the 2 s build time limit" in version.build_log
    folder = get_storage().bot_dir(version.id)
    assert not (folder / "half-built").exists()
    assert leftovers(pg_app) == []


def test_a_new_version_whose_build_fails_leaves_the_active_one_playing(pg_app: Flask) -> None:
    require_bwrap()
    first = upload("fyodor", C_BOT.encode())
    assert first.status == VersionStatus.ACTIVE, first.build_log
    second = upload("fyodor", b"not C at all\n")
    assert (second.bot_id, second.number) == (first.bot_id, 2)
    assert second.status == VersionStatus.REJECTED
    db.session.refresh(first)
    assert first.status == VersionStatus.ACTIVE
    assert os.access(get_storage().bot_dir(first.id) / "bot", os.X_OK)


def test_a_cpp_compile_error_reaches_the_build_log_in_the_compilers_words(pg_app: Flask) -> None:
    require_bwrap()
    folder = REPO / "sample_bots" / "broken" / "cpp-compile-error"
    owner = users.get_or_create_user("elena")
    db.session.commit()
    version = bots.submit(owner, folder.name, bots.Upload(data=bots.pack_folder(folder)))
    lifecycle.prepare(version.id)
    assert version.status == VersionStatus.REJECTED
    assert "build step failed (exit status 1)" in str(version.error)
    assert "bot.cpp:7:" in version.build_log  # g++'s own message, where it says it
    assert "undeclared_helper" in version.build_log and "was not declared" in version.build_log
