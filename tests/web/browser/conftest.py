"""Browser fixtures: Debian's chromium driven by Playwright, headless, and the fixture site.

Where chromium or Playwright is missing the browser tests skip with the reason; with
``ARENA_REQUIRE_BROWSER=1`` (CI) that is a failure instead. Every page collects the console
errors and uncaught exceptions of its scripts, Content-Security-Policy violations included, and a
test fails if there were any. Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser.fixture_site import ROOT, FixtureSite

CHROMIUM = Path(os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
DEFAULT_TIMEOUT_MS = 120_000
"""How long Playwright waits for a page, a selector or an action before it fails a test.

Generous on purpose: the tests run beside other CPU-heavy jobs, so a slow answer is not an error;
a test that waits for something that never comes still fails, only later.
"""
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


def missing_browser(reason: str) -> None:
    """Skip, or fail when the environment says a browser must be there."""
    if os.environ.get("ARENA_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser required: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureSite]:
    """The fixture site with every golden replay."""
    served = FixtureSite().start()
    for path in sorted((ROOT / "tests" / "golden").glob("*.json")):
        served.add_golden(path.stem)
    yield served
    served.stop()


class PageErrors(list[str]):
    """Console errors and uncaught exceptions seen by one page."""

    def watch(self, page: Any) -> Any:
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.append(f"uncaught: {exc}"))
        return page

    def _console(self, message: Any) -> None:
        if message.type == "error" and "favicon" not in (message.location or {}).get("url", ""):
            self.append(f"console: {message.text}")


@pytest.fixture
def context(browser: Any, site: FixtureSite) -> Iterator[Any]:
    """A fresh browser context that accepts downloads and may use the clipboard."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    ctx.set_default_timeout(DEFAULT_TIMEOUT_MS)
    ctx.set_default_navigation_timeout(DEFAULT_TIMEOUT_MS)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    yield ctx
    ctx.close()


@pytest.fixture
def errors() -> PageErrors:
    return PageErrors()


@pytest.fixture
def page(context: Any, errors: PageErrors) -> Iterator[Any]:
    """A page whose script errors fail the test."""
    opened = errors.watch(context.new_page())
    yield opened
    real = [e for e in errors if "favicon.ico" not in e]
    assert not real, "errors in the page:\n" + "\n".join(real)


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot under ``test-artifacts/screenshots``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


TABLE_BOXES = """root => {
  const box = (r) => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const union = (rects) => rects.length ? box({
    left: Math.min(...rects.map(r => r.left)), top: Math.min(...rects.map(r => r.top)),
    right: Math.max(...rects.map(r => r.right)), bottom: Math.max(...rects.map(r => r.bottom))
  }) : null;
  const shown = (node) => node.getClientRects().length > 0;
  const out = {};
  root.querySelectorAll('.seat').forEach(s => {
    out['seat ' + s.dataset.seat] = box(s.getBoundingClientRect());
  });
  root.querySelectorAll('.table-center .zone').forEach(z => {
    const parts = [...z.children].filter(shown).map(c => c.getBoundingClientRect());
    const found = union(parts);
    if (found) out['centre ' + z.className] = found;
  });
  const info = root.querySelector('.table-info');
  if (info && shown(info)) out['info box'] = box(info.getBoundingClientRect());
  root.querySelectorAll('.rv-controls > *').forEach((c, i) => {
    out['control ' + i + ' ' + c.className] = box(c.getBoundingClientRect());
  });
  return out;
}"""
"""The boxes of the table's parts, by name: seats, the centre's cards, info box and controls."""

PLACE_CONTROLS = """root => {
  const controls = root.querySelector('.rv-controls');
  if (getComputedStyle(controls).position !== 'sticky') return;
  const stage = root.querySelector('.rv-stage').getBoundingClientRect();
  const below = stage.bottom + controls.offsetHeight + 8 - window.innerHeight;
  if (below > 0) window.scrollBy(0, below);
}"""


def table_boxes(page: Any) -> dict[str, dict[str, float]]:
    """Where the viewer's table parts are on the page now (``TABLE_BOXES``)."""
    # a phone's controls stick to the foot of the screen, over the page, while their own place
    # (under the table) is below it: measure with that place on screen
    page.eval_on_selector("#replay-viewer", PLACE_CONTROLS)
    boxes: dict[str, dict[str, float]] = page.eval_on_selector("#replay-viewer", TABLE_BOXES)
    return boxes


def overlaps(boxes: dict[str, dict[str, float]]) -> list[tuple[str, str]]:
    """Every pair of boxes that share some area (touching edges do not count)."""
    names = sorted(boxes)
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            one, two = boxes[a], boxes[b]
            if (
                min(one["right"], two["right"]) - max(one["left"], two["left"]) > 0.5
                and min(one["bottom"], two["bottom"]) - max(one["top"], two["top"]) > 0.5
            ):
                found.append((a, b))
    return found
