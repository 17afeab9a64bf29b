"""A bot whose answers sit in an unflushed stdout buffer is told so, in its own language, by the
self-test and by a validation match: the newcomer's most common mistake (real bubblewrap)."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import SAMPLES, require_bwrap, sample_version
from web.extensions import db
from web.models import BotVersion, Match, MatchKind, VersionStatus
from web.services import bots, lifecycle, play, users

pytestmark = pytest.mark.services

UNFLUSHED = SAMPLES / "broken" / "unflushed"
PYTHON_ADVICE = "print(line, flush=True)"


def test_the_self_test_says_the_output_may_be_buffered(pg_app: Flask) -> None:
    from arena.bots import load_bot
    from arena.selftest import run_selftest
    from sandbox import get_sandbox

    require_bwrap()
    report = run_selftest(get_sandbox("bwrap"), load_bot(UNFLUSHED), "challenge", timeout=2.0)
    assert not report.passed
    assert report.hint is not None and PYTHON_ADVICE in report.hint
    assert "hello: no answer (timeout)" in report.log
    assert f"hint: {report.hint}" in report.log


def test_a_bot_that_answers_has_no_hint(pg_app: Flask) -> None:
    from arena.bots import load_bot
    from arena.selftest import run_selftest
    from sandbox import get_sandbox

    require_bwrap()
    manifest = load_bot(SAMPLES / "python" / "challenge-random")
    report = run_selftest(get_sandbox("bwrap"), manifest, "challenge", timeout=60.0)
    assert report.passed and report.hint is None and "hint:" not in report.log


def test_the_rejected_version_carries_the_hint(pg_app: Flask) -> None:
    require_bwrap()
    owner = users.create_user("newcomer")
    db.session.commit()
    pg_app.config["SELFTEST_TIMEOUT"] = 2.0
    upload = bots.Upload(data=bots.pack_folder(UNFLUSHED))
    version = bots.submit(owner, "unflushed", upload)
    assert str(lifecycle.prepare(version.id)) == "rejected"
    db.session.expire_all()
    version = db.session.get(BotVersion, version.id)
    assert "self-test failed" in str(version.error) and PYTHON_ADVICE in str(version.error)
    assert "hint: if the bot did answer" in version.validation_log


def test_a_validation_match_that_times_out_carries_the_hint(pg_app: Flask) -> None:
    """A bot past its self-test that then says nothing in its validation match (the match's
    init time ran out) is rejected with the same advice."""
    require_bwrap()
    sample_version("python/challenge-random")
    owner = users.create_user("newcomer")
    db.session.commit()
    version = bots.submit(owner, "unflushed", bots.Upload(data=bots.pack_folder(UNFLUSHED)))
    version.manifest = {"name": "broken-unflushed", "run": ["python3", "bot.py"]}
    version.games, version.language = ["challenge"], "python"
    version.status = VersionStatus.VALIDATING  # as if its self-test had passed
    match_row = lifecycle.validation_match(version)
    assert match_row is not None
    db.session.commit()
    assert play.play_match(match_row.id) == "finished"
    db.session.expire_all()
    version = db.session.get(BotVersion, version.id)
    assert version.status == VersionStatus.REJECTED
    error = str(version.error)
    assert "no ready after hello (timeout)" in error, error
    assert "(hint: if the bot did answer" in error and PYTHON_ADVICE in error
    kinds = db.session.scalars(select(Match.kind)).all()
    assert kinds == [MatchKind.VALIDATION]
