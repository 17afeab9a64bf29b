"""The viewer's jumps on a 10,000-step match, timed in a real headless Chromium.

The fixture site of the browser tests (``tests/web/browser/fixture_site.py``: ``web/static``
as the site serves it, frames as the API serves them, without the history lists) serves a match
of built-in random agents of more than 10,000 steps. Each round opens the viewer in a fresh
page and, at once (while the other windows of frames still load in the background), drags the
slider to the end, to the middle, back to the start, and to a step picked at random, timing each
jump in the page's own clock: from the slider's ``input`` to the moment the viewer shows the new
step (its ``data-step``). Goal: every jump under 200 ms.

    .venv/bin/python bench/viewer_jump.py [--rounds 20] [--width 1280]

Needs Debian's chromium (``ARENA_CHROMIUM``, default /usr/bin/chromium) and Playwright. Last
line ``p99_ms=<worst p99 of the kinds> rounds=<n>``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = Path(os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium"))
ROOT_SEL = "#replay-viewer"
JUMP = """([step, selector]) => new Promise((done) => {
  const root = document.querySelector(selector);
  const range = root.querySelector(".rv-range");
  const started = performance.now();
  const seen = new MutationObserver(() => {
    if (root.dataset.step === String(step)) {
      seen.disconnect();
      done(performance.now() - started);
    }
  });
  seen.observe(root, { attributes: true, attributeFilter: ["data-step"] });
  range.value = String(step);
  range.dispatchEvent(new Event("input"));
})"""
"""Jump the slider to a step; the milliseconds until the viewer shows it (in the page's clock)."""


def ten_thousand_steps() -> Any:
    """A match of built-in random agents of more than 10,000 steps."""
    from arena.agents import random_agent
    from arena.games import make_game
    from arena.replay import agent_rng, record_builtin_match

    game = make_game("challenge", params={"deals": 6})
    for seed in range(30, 100):
        replay = record_builtin_match(
            game.new_state(seed), [random_agent] * 2, ["left", "right"], agent_rng(seed),
            timed=False,
        )  # fmt: skip
        if len(replay["steps"]) >= 10_000:
            return replay
    raise SystemExit("no match of 10,000 steps among the seeds tried")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="fresh pages, four jumps each")
    parser.add_argument("--width", type=int, default=1280, help="the window's width in pixels")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from tests.web.browser.conftest import LAUNCH_ARGS
    from tests.web.browser.fixture_site import FixtureSite

    replay = ten_thousand_steps()
    steps = len(replay["steps"])
    site = FixtureSite().start()
    url = site.add("huge", replay)
    site.lean.add("huge")
    picker = random.Random(7)
    times: dict[str, list[float]] = {"end": [], "middle": [], "start": [], "random": []}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
            )
            context = browser.new_context(viewport={"width": args.width, "height": 860})
            context.set_default_timeout(120_000)
            for _ in range(args.rounds):
                page = context.new_page()
                page.goto(url)
                page.wait_for_selector(f"{ROOT_SEL}[data-step]")
                jumps = {
                    "end": steps,
                    "middle": steps // 2,
                    "start": 0,
                    "random": picker.randrange(1, steps),
                }
                for kind, step in jumps.items():
                    times[kind].append(page.evaluate(JUMP, [step, ROOT_SEL]))
                    shown = page.inner_text(".rv-counter")
                    if shown != f"{step} / {steps}":
                        raise SystemExit(f"a jump to {step} shows {shown!r}")
                page.close()
            browser.close()
    finally:
        site.stop()
    print(f"{steps} steps, {args.rounds} rounds at {args.width} px; ms from the slider's input")
    print(f"{'jump':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    worst = 0.0
    for kind, measured in times.items():
        p99 = percentile(measured, 0.99)
        worst = max(worst, p99)
        print(f"{kind:>8} {statistics.median(measured):>8.1f} {p99:>8.1f} {max(measured):>8.1f}")
    print(f"p99_ms={worst:.1f} rounds={args.rounds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
