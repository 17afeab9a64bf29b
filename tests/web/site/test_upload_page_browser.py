"""The upload page's refusals in a real browser, at desktop and phone width: each manifest
problem on its own line, a ``bot.toml`` one folder down named, the size limits stated, the
manifest text kept and the file plainly asked for again; nothing wider than the screen."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.browser.conftest import screenshot
from tests.web.site.conftest import PASSWORD, LiveServer, World
from tests.web.site.test_upload_explained import nested_zip

pytestmark = [pytest.mark.browser, pytest.mark.services]

BAD_MANIFEST = 'name = "Bad Name!"\ngames = ["no-such-game"]\nlanguage = "python"\n'


def log_in(page: Any, site: str) -> None:
    page.goto(f"{site}/login")
    page.fill('input[name="username"]', "alice")
    page.fill('input[name="password"]', PASSWORD)
    page.click('main button[type="submit"]')
    page.wait_for_load_state()


def send(page: Any, name: str, data: bytes, manifest: str = "") -> None:
    page.set_input_files('input[name="file"]', {"name": name, "mimeType": "x", "buffer": data})
    page.fill('textarea[name="manifest"]', manifest)
    page.click('main button[type="submit"]')
    page.wait_for_selector(".upload-refusal")


@pytest.mark.parametrize("width", [1280, 390])
def test_refusals_on_the_upload_page(
    browser: Any, live_server: LiveServer, world: World, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server.url)
        page.goto(f"{live_server.url}/upload")
        assert "at most 32 MiB as sent" in page.inner_text(".upload-limits")
        send(page, "bot.py", b"print(1)\n", BAD_MANIFEST)
        items = page.locator(".upload-refusal .problems li")
        assert items.count() >= 3, page.inner_text(".upload-refusal")
        tops = [items.nth(i).bounding_box()["y"] for i in range(items.count())]
        assert tops == sorted(set(tops)), "each problem starts a line of its own"
        assert "Choose the file again" in page.inner_text(".choose-again")
        assert "no-such-game" in page.input_value('textarea[name="manifest"]')
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"upload-problems-{width}")
        send(page, "mybot.zip", nested_zip())
        refusal = page.inner_text(".upload-refusal")
        assert "found at mybot/src/bot.toml" in refusal, refusal
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"upload-nested-{width}")
    finally:
        context.close()
