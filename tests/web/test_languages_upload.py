"""One bot of each kit language, uploaded through the API, built and self-tested (every game)
by a real worker in the server's sandbox until it is ``active``.

The bots are the languages' samples (``sandbox/languages.py``); a language whose sample folder
or toolchain is missing here is left out with its reason, a failure with
``ARENA_REQUIRE_LANGUAGES=1``.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from flask import Flask

from tests.kits.languages import REQUIRE_ENV, required, sample_of, usable
from tests.web.conftest import Worker, require_bwrap, wait_for
from web.extensions import db
from web.models import BotVersion, VersionStatus
from web.services import bots, users

pytestmark = [pytest.mark.services, pytest.mark.slow]


def upload(app: Flask, token: str, archive: bytes) -> int:
    answer = app.test_client().post(
        "/api/v1/uploads",
        data={"file": (io.BytesIO(archive), "bot.zip")},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 201, answer.get_json()
    return int(answer.get_json()["data"]["id"])


def statuses(ids: dict[str, int]) -> dict[str, VersionStatus]:
    db.session.expire_all()
    found = {lang: db.session.get(BotVersion, vid).status for lang, vid in ids.items()}
    db.session.rollback()
    return found


def test_each_languages_sample_uploads_to_active(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    languages, left_out = usable(str(pg_app.config["SANDBOX"]))
    if not languages:
        pytest.skip(f"no language can be uploaded here: {'; '.join(left_out)}")
    # Generous limits: a JVM or Mono starts slowly on a loaded machine. No validation match:
    # the self-test already plays each game with the bot, and the mixed tables of
    # tests/kits/test_languages.py play whole matches.
    pg_app.config.update(
        SELFTEST_TIMEOUT=60.0, MOVE_TIMEOUT=10.0, TIME_BANK=30.0, VALIDATION_MATCH=False
    )
    alice = users.create_user("alice")
    token = users.issue_token(alice)
    db.session.commit()
    ids = {lang.id: upload(pg_app, token, bots.pack_folder(sample_of(lang))) for lang in languages}
    worker = start_worker(pg_app, concurrency=2)

    done = (VersionStatus.ACTIVE, VersionStatus.REJECTED)

    def settled() -> bool:
        return all(status in done for status in statuses(ids).values())

    wait_for(settled, 120 + 60 * len(ids), "every upload to be validated", worker)
    rejected = {lang: s for lang, s in statuses(ids).items() if s != VersionStatus.ACTIVE}
    logs = {
        lang: (v.build_log or "") + (v.validation_log or "") + str(v.error)
        for lang in rejected
        if (v := db.session.get(BotVersion, ids[lang])) is not None
    }
    assert not rejected, logs
    if left_out and required():
        pytest.fail(f"{REQUIRE_ENV}=1 but left out: {'; '.join(left_out)}")
