"""A newcomer's first hour, end to end, on the embedded platform (``arena up``'s launcher).

In a real browser at desktop width: sign up, create an API token, upload a bot with
``arena submit`` (the CLI, as a subprocess), watch the bot page follow the version from the queue
to active by itself, find the bot on its ladder, and open one of its matches in the replay viewer
from the bot's own seat: whether or not the other rotations of its mirrored deal are played yet,
it reads as finished and lists every move. Then the same pages at phone width. At both widths
screenshots are taken, no page is wider than the screen, and no part of the card table (seats,
the cards in the centre, the info box, the controls) covers another at any of several steps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser.conftest import overlaps, screenshot, table_boxes
from tests.web.conftest import ROOT, SAMPLES, require_bwrap, wait_for
from tests.web.test_embedded import free_port, healthy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BOT = SAMPLES / "python" / "kozyr-boys-heuristic"
NAME = "kozyr-boys-heuristic"
USER = "newcomer"
PASSWORD = "correct horse battery"
ROOT_SEL = "#replay-viewer"
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}
WAIT_S = 300
"""How long the platform may take to validate the bot or play its match on a loaded machine."""


@pytest.fixture
def platform(shared_tmp: Path) -> Iterator[str]:
    """The embedded platform with its own Redis, SQLite, workers, scheduler and web server."""
    require_bwrap()
    var, log, port = shared_tmp / "var", shared_tmp / "up.log", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_DEMO_GAMES="kozyr-boys", ARENA_SCHEDULE_INTERVAL="5")
    command = [sys.executable, "-m", "web.embedded", "--var", str(var), "--port", str(port),
               "--workers", "2"]  # fmt: skip
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_for(lambda: healthy(port), 120, "the embedded platform's web server")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def page_fits(page: Any, what: str) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{what} is wider than the screen ({width} px)"


def sign_up_and_create_a_token(page: Any, site: str) -> str:
    page.goto(site)
    page.click("main >> text=Sign up")
    page.fill('input[name="username"]', USER)
    page.fill('input[name="password"]', PASSWORD)
    page.fill('input[name="confirm"]', PASSWORD)
    page.click('main button[type="submit"]')
    page.wait_for_url("**/upload")
    languages = page.locator("table.languages tbody tr")
    assert languages.count() >= 10, "the upload page lists every kit language"
    screenshot(page, "newcomer-1-upload")
    page.click(f"header >> text={USER}")
    page.wait_for_url("**/account")
    page.fill('input[name="name"]', "laptop")
    page.click("main >> text=Create a token")
    page.wait_for_url("**/account")  # redirected after the POST: a reload sends nothing again
    token = str(page.inner_text("code.token")).strip()
    screenshot(page, "newcomer-2-token")
    page.reload()
    assert page.locator("code.token").count() == 0, "the token is shown once"
    return token


def submit(site: str, token: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "arena.cli.main", "submit", str(BOT), "--server", site,
               "--token", token, "--wait", str(WAIT_S)]  # fmt: skip
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def follow_the_bot_page(page: Any, site: str, child: subprocess.Popen[str]) -> str:
    """Open the bot from the home page; the bot page follows it to active by itself."""
    mine = f"main .hero a:has-text('{NAME}')"  # "Your bots" (the ladders list the house's)

    def listed() -> bool:
        if child.poll() not in (None, 0):
            out, err = child.communicate()
            pytest.fail(f"arena submit failed ({child.returncode}):\n{out}\n{err}")
        page.goto(site)
        return bool(page.locator(mine).count())

    wait_for(listed, 120, "the uploaded bot on the home page")
    badge = page.inner_text("main .hero .status")
    screenshot(page, "newcomer-3-home")
    page.click(mine)
    page.wait_for_url("**/bots/*")
    screenshot(page, "newcomer-4-bot-validating")
    if page.locator("#version-progress").count():
        assert badge != "active" and page.inner_text("#bot-state") != "active", "not active yet"
    # no reloads from here: the page's own script follows the version and reloads when it settles
    page.wait_for_selector("#bot-state.active, #bot-state.rejected", timeout=WAIT_S * 1000)
    assert page.inner_text("#bot-state") == "active", page.inner_text("main")[:2000]
    assert page.locator("#version-progress").count() == 0
    screenshot(page, "newcomer-5-bot-active")
    return str(page.url)


def the_ladder_shows_the_bot(page: Any) -> None:
    page.click("main >> text=table >> nth=0")
    page.wait_for_url("**/ladders/**")
    assert USER in page.inner_text("table.ladder")
    screenshot(page, "newcomer-6-ladder")


def open_a_finished_match(page: Any, bot_url: str) -> str:
    finished = "main table.matches tr:has(.status.finished) td:first-child a"

    def played() -> bool:
        page.goto(bot_url)
        return bool(page.locator(finished).count())

    wait_for(played, WAIT_S, "a finished match of the bot")
    page.click(f"{finished} >> nth=0")
    page.wait_for_url("**/matches/*")
    page.wait_for_selector(f"{ROOT_SEL}[data-step]")
    finished_as_such(page)
    return str(page.url).split("#")[0].split("?")[0]


def finished_as_such(page: Any) -> None:
    """A finished match never reads as live: while its mirrored group is still being played
    it says how far the group is, and after that it is an ordinary replay (either may hold)."""
    assert page.locator(".live-badge").count() == 0, "a finished match is not live"
    note = page.locator("#sealed-note")
    if note.count():
        assert "Finished; hands open when the" in note.inner_text()


def watch_from_its_seat(page: Any) -> int:
    """Choose the bot's seat; the others' public moves are listed with what they did."""
    seat = page.get_attribute(ROOT_SEL, "data-viewer-seat")
    assert seat not in (None, ""), "the owner's seat is known to the viewer"
    page.select_option(".rv-seat", seat)
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="{seat}"]')
    steps = int(page.inner_text(".rv-counter").split("/")[1])
    lines = page.locator(".rv-log li[data-step]")
    wait_for(lambda: lines.count() == steps, 120, "every move in the log")
    texts = page.eval_on_selector_all(
        ".rv-log li[data-step] .what", "ls => ls.map(l => l.textContent)"
    )
    assert "moves (hidden)" not in texts, "public moves are listed from a seat's view"
    return steps


def no_part_covers_another(page: Any, steps: int, name: str) -> None:
    for step in sorted({1, steps // 4, steps // 2, steps}):
        page.eval_on_selector(
            ".rv-range", f"r => {{ r.value = '{step}'; r.dispatchEvent(new Event('input')); }}"
        )
        page.wait_for_selector(f'{ROOT_SEL}[data-step="{step}"]')
        page.wait_for_timeout(400)  # let the cards' glide end before measuring
        boxes = table_boxes(page)
        assert not overlaps(boxes), f"{name}, step {step}: {overlaps(boxes)}"
    screenshot(page, name)


def test_a_newcomer_reaches_the_ladder_and_watches_the_bot_play(
    platform: str, context: Any, errors: Any
) -> None:
    page = errors.watch(context.new_page())
    page.set_viewport_size(DESKTOP)
    token = sign_up_and_create_a_token(page, platform)
    child = submit(platform, token)
    try:
        bot_url = follow_the_bot_page(page, platform, child)
        out, err = child.communicate(timeout=WAIT_S + 60)
    finally:
        child.kill()
    assert child.returncode == 0, out + err
    assert "active" in out, out
    the_ladder_shows_the_bot(page)
    match_url = open_a_finished_match(page, bot_url)
    steps = watch_from_its_seat(page)
    no_part_covers_another(page, steps, "newcomer-7-match-seat-1280")

    page.set_viewport_size(PHONE)
    pages = [(platform, "home"), (bot_url, "bot"), (f"{platform}/account", "account"),
             (f"{platform}/upload", "upload")]  # fmt: skip
    for url, name in pages:
        page.goto(url)
        page_fits(page, name)
        screenshot(page, f"newcomer-390-{name}")
    page.goto(match_url)
    page.wait_for_selector(f"{ROOT_SEL}[data-step]")
    finished_as_such(page)
    page_fits(page, "the match page")
    assert page.locator("table.seats th:has-text('Status')").is_visible()
    options = page.eval_on_selector_all(
        "code.command span", "spans => spans.map(s => [s.textContent, s.getClientRects().length])"
    )
    assert options == [["--server", 1], ["--verify", 1]], "no option of the command is split"
    steps = watch_from_its_seat(page)
    no_part_covers_another(page, steps, "newcomer-8-match-seat-390")
    slider = page.eval_on_selector(".rv-range", "r => r.getBoundingClientRect().width")
    assert slider >= 200, f"the seek slider keeps a usable width ({slider} px)"
    speed = page.eval_on_selector(".rv-speed", "s => s.getBoundingClientRect().right")
    assert speed <= PHONE["width"], "the speed selector is in view"
    real = [e for e in errors if "favicon" not in e]
    assert not real, "errors in the page:\n" + "\n".join(real)
