"""``arena check`` gives the server's verdict: for every broken and hostile fixture bot, the
local stages and the upload path (``bots.submit`` and ``lifecycle.prepare`` on real
PostgreSQL, under real bubblewrap) refuse it with the same words, or both let it through to its
validation match; and a validation match decides the same way on both sides."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select

from arena.checking import Settings, Verdict, check_folder
from tests.web.conftest import SAMPLES, require_bwrap, sample_version
from web.extensions import db
from web.models import BotVersion, Match, MatchKind, VersionStatus
from web.services import bots, lifecycle, play, users

pytestmark = pytest.mark.services

SELFTEST_S = 3.0


def without_hint(error: str | None) -> str | None:
    """The refusal without its " (hint: ...)": whether a bot attacking its machine (a memory hog,
    say) answered before the self-test's time ran out is a matter of timing, not of code."""
    return error.split(" (hint: ")[0] if error else error


FIXTURES = sorted(
    p.parent.relative_to(SAMPLES).as_posix()
    for kind in ("broken", "hostile")
    for p in (SAMPLES / kind).glob("*/bot.toml")
)


def server_verdict(folder: Path) -> BotVersion:
    """The version an upload of ``folder`` becomes after its build and self-test stages."""
    owner = users.get_or_create_user("author")
    db.session.commit()
    version = bots.submit(owner, folder.name, bots.Upload(data=bots.pack_folder(folder)))
    if version.status == VersionStatus.UPLOADED:
        lifecycle.prepare(version.id)
    db.session.expire_all()
    found = db.session.get(BotVersion, version.id)
    assert found is not None
    return found


def test_every_fixture_is_covered() -> None:
    assert len(FIXTURES) >= 20 and "broken/unflushed" in FIXTURES and "hostile/snoop" in FIXTURES


TIMED_OUT = re.compile(r"no answer \(\S+\) within")
"""A self-test step that ran out of time: under a busy machine, a matter of load, not code."""


def cheap_verdicts(pg_app: Flask, folder: Path, selftest_s: float) -> tuple[BotVersion, Verdict]:
    """The upload path's verdict and ``arena check``'s, side by side, with one self-test time."""
    pg_app.config["SELFTEST_TIMEOUT"] = selftest_s
    pg_app.config["VALIDATION_MATCH"] = False  # the cheap stages only; see the test below
    settings = Settings(selftest_timeout=selftest_s, validation_match=False)
    with ThreadPoolExecutor(1) as pool:  # the check beside the server path, in its own slots
        checked = pool.submit(check_folder, folder, settings)
        server = server_verdict(folder)
        local = checked.result()
    return server, local


@pytest.mark.parametrize("fixture", FIXTURES)
def test_the_cheap_stages_agree_with_the_upload_path(pg_app: Flask, fixture: str) -> None:
    require_bwrap()
    folder = SAMPLES / fixture
    server, local = cheap_verdicts(pg_app, folder, SELFTEST_S)
    if str(server.status) != local.status and (
        TIMED_OUT.search(server.validation_log)
        or TIMED_OUT.search(local.validation_log)
        or local.stage == "self-test"
    ):  # one side's self-test failed on a loaded machine: judge both again with room to spare
        server, local = cheap_verdicts(pg_app, folder, 6 * SELFTEST_S)
    assert str(server.status) == local.status, (
        server.error,
        local.error,
        server.validation_log[-2000:],
        local.validation_log[-2000:],
    )
    assert without_hint(server.error) == without_hint(local.error)
    if server.status == VersionStatus.REJECTED:
        assert "FAILED" in local.validation_log or local.stage != "self-test"


@pytest.mark.parametrize(
    ("fixture", "game", "accepted"),
    [
        ("python/kozyr-boys-random", "kozyr-boys", True),
        ("broken/crash-mid-match", "challenge", False),
    ],
)
def test_the_validation_match_agrees_with_the_upload_path(
    pg_app: Flask, shared_tmp: Path, fixture: str, game: str, accepted: bool
) -> None:
    """Short settings: a short game, one second a move."""
    require_bwrap()
    pg_app.config.update(SELFTEST_TIMEOUT=10.0, MOVE_TIMEOUT=1.0, TIME_BANK=3.0)
    sample_version(f"python/{game}-random")
    folder = shared_tmp / "bot"
    shutil.copytree(SAMPLES / fixture, folder)
    manifest = folder / "bot.toml"
    manifest.write_text(re.sub(r"(?m)^games = .*$", f'games = ["{game}"]', manifest.read_text()))
    settings = Settings(selftest_timeout=10.0, move_s=1.0, bank_s=3.0)
    with ThreadPoolExecutor(1) as pool:
        checked = pool.submit(check_folder, folder, settings)
        version = server_verdict(folder)
        assert version.status == VersionStatus.VALIDATING, version.error
        match_id = db.session.scalar(select(Match.id).where(Match.kind == MatchKind.VALIDATION))
        assert match_id is not None
        assert play.play_match(match_id) == "finished"
        local = checked.result()
    db.session.expire_all()
    server = db.session.get(BotVersion, version.id)
    assert server is not None
    assert (server.status == VersionStatus.ACTIVE) is accepted is local.accepted
    assert server.error == local.error
    assert "validation match" in local.validation_log
