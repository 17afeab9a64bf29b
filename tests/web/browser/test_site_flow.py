"""The whole site in a browser: sign up, upload a bot, watch it validate, see its rating chart,
find it on the ladder, open one of its matches and step through the replay from a seat's view.

It runs the real app on PostgreSQL and Redis over HTTP, and a real Celery worker that builds,
self-tests and plays the bot under bubblewrap.
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.web.browser.conftest import screenshot
from tests.web.conftest import SAMPLES, require_bwrap, sample_version, serving, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.slow]

# Kozyr Boys: hidden hands, and a match of fixed length (so its frames stay small).
BOT = "python/kozyr-boys-heuristic"
HOUSE = ["python/kozyr-boys-random", "python/kozyr-boys-heuristic"]
ROOT_SEL = "#replay-viewer"


@pytest.fixture
def live_site(pg_app: Flask) -> Iterator[str]:
    """The app served over HTTP on a free loopback port, for as long as the test runs."""
    with serving(pg_app) as served:
        yield served.url


def zipped(folder: Path) -> bytes:
    """A bot folder as a user would zip it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def reload_until(page: Any, selector: str, timeout: float, what: str) -> None:
    """Reload ``page`` until something matches ``selector``."""
    deadline = time.monotonic() + timeout
    while page.locator(selector).count() == 0:
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}:\n{page.inner_text('main')[-2000:]}")
        page.wait_for_timeout(1000)
        page.reload()


def sign_up(page: Any, site: str, name: str) -> None:
    page.goto(f"{site}/register")
    page.fill('input[name="username"]', name)
    page.fill('input[name="password"]', "correct horse battery")
    page.fill('input[name="confirm"]', "correct horse battery")
    page.click('main button[type="submit"]')
    page.wait_for_url("**/upload")


def upload(page: Any, archive: bytes) -> None:
    page.set_input_files(
        'input[name="file"]',
        {"name": "kozyr-boys-heuristic.zip", "mimeType": "application/zip", "buffer": archive},
    )
    page.click('main button[type="submit"]')
    page.wait_for_url("**/bots/*")


def test_upload_validate_play_and_watch_the_replay(
    pg_app: Flask, live_site: str, start_worker: Any, page: Any, tmp_path: Path
) -> None:
    require_bwrap()
    for folder in HOUSE:
        sample_version(folder)
    start_worker(pg_app)
    sign_up(page, live_site, "ada")
    screenshot(page, "site-upload")
    upload(page, zipped(SAMPLES / BOT))
    bot_url = page.url
    reload_until(page, "main td .status.active", 300, "the version to pass validation")

    played = _play_ladder_matches(pg_app, 2)
    page.goto(bot_url)
    page.wait_for_selector("#rating-chart canvas")
    assert int(page.get_attribute("#rating-chart", "data-points") or 0) >= 2
    screenshot(page, "site-bot")

    page.click("main a[href*='/ladders/kozyr-boys'] >> nth=0")
    page.wait_for_url("**/ladders/**")
    assert "ada" in page.inner_text("table.ladder")
    screenshot(page, "site-ladder")
    page.click("text=Matches on this ladder")
    page.click(f"main table.list a[href$='/matches/{played[0]}']")
    page.wait_for_selector(f"{ROOT_SEL}[data-step]")
    _step_through_the_replay(page, tmp_path)


def _play_ladder_matches(app: Flask, count: int) -> list[int]:
    """Queue ladder matches as the scheduler does; wait until ``count`` are finished with every
    seat rotation of their deal (until then a match is sealed); their ids."""
    from sqlalchemy import select

    from web.extensions import db
    from web.models import Match, MatchKind, MatchStatus
    from web.services import ladders

    ladders.schedule_all()

    def finished() -> list[int]:
        db.session.rollback()  # a fresh snapshot: the worker commits in another process
        query = select(Match.id, Match.mirror_group, Match.status).where(
            Match.kind == MatchKind.LADDER
        )
        groups: dict[Any, list[tuple[int, str]]] = {}
        for match_id, group, status in db.session.execute(query):
            groups.setdefault(group or match_id, []).append((match_id, status))
        ids = sorted(
            match_id
            for members in groups.values()
            if all(status == MatchStatus.FINISHED for _, status in members)
            for match_id, _ in members
        )
        return ids if len(ids) >= count else []

    return wait_for(finished, 300, f"{count} ladder matches and their rotations to be played")


def _step_through_the_replay(page: Any, tmp_path: Path) -> None:
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    page.wait_for_selector(f'{ROOT_SEL}[data-step="4"]')
    assert page.url.endswith("#4")
    backs = page.locator(".seat .hand .rv-card.back")
    assert backs.count() == 0, "a finished match shows every hand to spectators"
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="0"]')
    assert "seat=0" in page.url
    assert page.locator('.seat[data-seat="0"] .hand .rv-card.back').count() == 0
    for other in (1, 2):
        assert page.locator(f'.seat[data-seat="{other}"] .hand .rv-card.back').count() > 0
    screenshot(page, "site-match-seat-view")
    with page.expect_download() as info:
        page.click(".rv-btn.download")
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    assert '"kozyri-arena-replay"' in saved.read_text()
