"""The replay viewer in a real browser, against golden replays served as the API serves them."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from arena.agents import random_agent
from arena.games import make_game, names
from arena.replay import agent_rng, read_replay, record_builtin_match
from tests.web.browser.conftest import overlaps, screenshot, table_boxes
from tests.web.browser.fixture_site import GOLDEN, FixtureSite
from web.viewer_export import standalone_html

pytestmark = pytest.mark.browser

GAMES = names()
ROOT_SEL = "#replay-viewer"
WAIT_S = 120.0
"""How long a test waits for something the viewer does: generous, the machine may be loaded."""
WAIT_MS = WAIT_S * 1000


def open_viewer(page: Any, url: str) -> Any:
    page.goto(url)
    page.wait_for_selector(f"{ROOT_SEL}[data-step]")
    return page


def step_of(page: Any) -> int:
    return int(page.get_attribute(ROOT_SEL, "data-step"))


def wait_step(page: Any, step: int) -> None:
    page.wait_for_selector(f'{ROOT_SEL}[data-step="{step}"]', timeout=WAIT_MS)


def wait_until(
    page: Any,
    check: Callable[[], bool],
    what: str,
    timeout: float = WAIT_S,
    about: Callable[[], str] | None = None,
) -> None:
    """Poll ``check`` from Python (the page's CSP forbids Playwright's evaluated predicates);
    ``about`` says what the page shows if the wait runs out."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}" + (f": {about()}" if about else ""))
        page.wait_for_timeout(50)


def last_step(name: str) -> int:
    return len(read_replay(GOLDEN / f"{name}.json")["steps"])


def hidden_cards(page: Any, seat: int) -> int:
    return int(page.locator(f'.seat[data-seat="{seat}"] .hand .rv-card.back').count())


def face_cards(page: Any, seat: int) -> int:
    return int(page.locator(f'.seat[data-seat="{seat}"] .hand .rv-card.face').count())


@pytest.mark.parametrize("game", GAMES)
def test_each_game_draws_its_table_to_the_end(page: Any, site: FixtureSite, game: str) -> None:
    open_viewer(page, f"{site.url}/viewer/{game}#12")
    assert step_of(page) == 12
    players = read_replay(GOLDEN / f"{game}.json")["game"]["players"]
    assert page.locator(".seat").count() == players
    lines = page.locator(".rv-log li[data-step]")
    # the windows after the first one arrive in the background
    wait_until(page, lambda: lines.count() == last_step(game), "every line of the log")
    screenshot(page, f"viewer-{game}")
    page.keyboard.press("End")
    wait_step(page, last_step(game))
    assert "Match over" in page.inner_text(".table-banner")
    assert page.inner_text(".rv-counter") == f"{last_step(game)} / {last_step(game)}"


def test_keys_step_jump_and_keep_the_url_current(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svoi-kozyri")
    assert step_of(page) == 0
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    wait_step(page, 3)
    assert page.url.endswith("#3")
    assert page.inner_text(".rv-counter") == "3 / 174"
    assert "current" in (page.get_attribute('.rv-log li[data-step="3"]', "class") or "")
    page.keyboard.press("ArrowLeft")
    wait_step(page, 2)
    marks = sorted(
        int(s) for s in page.eval_on_selector_all(
            ".rv-marks .tick:not(.strike)", "ticks => ticks.map(t => t.dataset.step)"
        )
    )  # fmt: skip
    assert marks, "the scrubber has deal and trick marks"
    page.keyboard.press("Shift+ArrowRight")
    wait_step(page, next(m for m in marks if m > 2))
    page.keyboard.press("Shift+ArrowLeft")
    wait_step(page, max([0, *(m for m in marks if m < next(m for m in marks if m > 2))]))
    page.keyboard.press("End")
    wait_step(page, 174)
    assert page.url.endswith("#174")
    page.keyboard.press("Home")
    wait_step(page, 0)


def test_keys_are_left_to_form_controls(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/challenge#5")
    page.focus("#notes")
    page.keyboard.press("ArrowRight")
    page.keyboard.type("f? ")
    assert step_of(page) == 5
    assert page.input_value("#notes") == "f? "
    assert page.get_attribute(ROOT_SEL, "data-seat") == ""


def test_the_scrubber_and_the_log_move_the_player(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/kozyr-boys")
    page.eval_on_selector(
        ".rv-range", "r => { r.value = '40'; r.dispatchEvent(new Event('input')); }"
    )
    wait_step(page, 40)
    assert page.url.endswith("#40")
    page.locator(".rv-range").focus()
    page.keyboard.press("ArrowRight")  # the scrubber's own key: one step, not two
    wait_step(page, 41)
    page.keyboard.press("?")
    assert page.is_visible(".rv-help"), "after the scrubber, keys reach the player again"
    page.keyboard.press("Escape")
    page.click('.rv-log li[data-step="7"]')
    wait_step(page, 7)
    assert "play" in page.inner_text(".rv-detail")
    page.click(".rv-marks .tick.deal >> nth=0")
    deal_start = int(page.get_attribute(".rv-marks .tick.deal >> nth=0", "data-step"))
    wait_step(page, deal_start)
    assert page.locator(".table-info").inner_text().startswith("Deal\n2")
    assert page.inner_text(".table-banner").startswith("Deal 1: ")
    page.keyboard.press("ArrowRight")
    assert not page.is_visible(".table-banner"), "the deal's outcome shows for one step"


def test_speeds_and_playback(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svara")
    assert page.input_value(".rv-speed") == "1"
    page.keyboard.press("ArrowUp")
    assert page.input_value(".rv-speed") == "2"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.input_value(".rv-speed") == "0.25"
    page.keyboard.press("7")
    assert page.input_value(".rv-speed") == "16"
    page.keyboard.press(" ")
    wait_until(page, lambda: step_of(page) >= 8, "playback at 16x")
    page.keyboard.press(" ")
    stopped = step_of(page)
    page.wait_for_timeout(300)
    assert step_of(page) == stopped, "space pauses"
    page.click(".rv-btn.play")
    page.keyboard.press(" ")  # on the focused play button: one toggle, not two
    paused = step_of(page)
    page.wait_for_timeout(300)
    assert step_of(page) == paused


def test_a_seats_view_hides_the_other_hands(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svoi-kozyri-tricks#10")
    assert all(hidden_cards(page, seat) == 0 for seat in range(4)), "a finished match shows all"
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="0"]')
    assert any("seat=0" in url for url in requested), "the seat's frames come from the API"
    assert "?seat=0#10" in page.url
    assert step_of(page) == 10
    assert face_cards(page, 0) > 0 and hidden_cards(page, 0) == 0
    for other in (1, 2, 3):
        assert hidden_cards(page, other) > 0 and face_cards(page, other) == 0
    screenshot(page, "viewer-seat-view")
    page.select_option(".rv-seat", "2")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="2"]')
    assert face_cards(page, 2) > 0 and hidden_cards(page, 0) > 0
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="3"]')
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat=""]')
    assert "seat=" not in page.url


def test_the_url_names_the_step_and_the_seat_on_load(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/challenge?seat=1#last")
    assert step_of(page) == last_step("challenge")
    assert page.get_attribute(ROOT_SEL, "data-seat") == "1"
    assert page.input_value(".rv-seat") == "1"
    open_viewer(page, f"{site.url}/viewer/challenge?seat=9#15")
    assert step_of(page) == 15
    assert page.get_attribute(ROOT_SEL, "data-seat") == ""


def test_copy_link_and_seed(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svara?seat=1#6")
    page.click(".rv-btn.copy-link")
    page.wait_for_selector(f"{ROOT_SEL}[data-copied]")
    assert page.get_attribute(ROOT_SEL, "data-copied") == f"{site.url}/viewer/svara?seat=1#6"
    assert page.evaluate("navigator.clipboard.readText()") == f"{site.url}/viewer/svara?seat=1#6"
    seed = str(read_replay(GOLDEN / "svara.json")["seed"])
    page.click(".rv-btn.seed")
    wait_until(page, lambda: page.get_attribute(ROOT_SEL, "data-copied") == seed, "the seed copied")
    assert seed in page.inner_text(".rv-btn.seed")


def test_help_overlay(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svoi-kozyri")
    assert not page.is_visible(".rv-help")
    page.keyboard.press("?")
    assert page.is_visible(".rv-help")
    assert "Shift" in page.inner_text(".rv-help")
    screenshot(page, "viewer-help")
    page.keyboard.press("Escape")
    assert not page.is_visible(".rv-help")


def test_download_the_replay(page: Any, site: FixtureSite, tmp_path: Path) -> None:
    open_viewer(page, f"{site.url}/viewer/kozyr-boys")
    with page.expect_download() as info:
        page.click(".rv-btn.download")
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    assert saved.name.endswith(".json")
    assert json.loads(saved.read_text()) == json.loads((GOLDEN / "kozyr-boys.json").read_text())


def _offline_page(context: Any, errors: Any) -> Any:
    offline = errors.watch(context.new_page())
    offline.route("http://**/*", lambda route: route.abort())
    return offline


def test_exported_page_plays_offline(
    page: Any, context: Any, errors: Any, site: FixtureSite, tmp_path: Path
) -> None:
    open_viewer(page, f"{site.url}/viewer/svoi-kozyri#4")
    with page.expect_download() as info:
        page.click(".rv-btn.export")
    saved = tmp_path / "replay.html"
    info.value.save_as(saved)
    offline = _offline_page(context, errors)
    open_viewer(offline, saved.as_uri())
    offline.keyboard.press("ArrowRight")
    wait_step(offline, 1)
    offline.keyboard.press("f")
    offline.wait_for_selector(f'{ROOT_SEL}[data-seat="0"]')
    assert hidden_cards(offline, 1) > 0
    assert offline.locator(".rv-btn.export").count() == 0
    screenshot(offline, "viewer-standalone-export")


def test_server_built_page_plays_offline(context: Any, errors: Any, tmp_path: Path) -> None:
    saved = tmp_path / "kozyr-boys.html"
    saved.write_text(standalone_html(read_replay(GOLDEN / "kozyr-boys.json")))
    offline = _offline_page(context, errors)
    open_viewer(offline, saved.as_uri() + "#20")
    assert step_of(offline) == 20
    offline.keyboard.press("Shift+ArrowRight")
    wait_until(offline, lambda: step_of(offline) > 20, "a jump to the next trick")


def _troubled_replay() -> Any:
    replay = copy.deepcopy(read_replay(GOLDEN / "challenge.json"))
    replay["seats"][1] = {"name": "slowpoke", "kind": "bot", "version": "3"}
    step = replay["steps"][5]
    step.update(status="timeout", time_ms=2003.5, debug="thinking about 9D", stderr="late again")
    return replay


def test_strikes_are_marked_and_bot_text_is_shown(page: Any, site: FixtureSite) -> None:
    replay = _troubled_replay()
    seat = replay["steps"][5]["seat"]
    open_viewer(page, site.add("troubled", replay))
    strike = page.locator(".rv-marks .tick.strike")
    assert strike.count() == 1
    assert strike.get_attribute("data-step") == "6"
    assert "timeout" in (strike.get_attribute("title") or "")
    strike.click()
    wait_step(page, 6)
    detail = page.inner_text(".rv-detail")
    assert "timeout" in detail and "2.00 s" in detail
    assert "thinking about 9D" in detail and "late again" in detail
    assert replay["seats"][seat]["name"] in detail
    assert "strike" in (page.get_attribute('.rv-log li[data-step="6"]', "class") or "")
    screenshot(page, "viewer-strike")


def test_a_running_match_shows_public_cards_and_follows_new_steps(
    page: Any, site: FixtureSite
) -> None:
    url = site.add("running", read_replay(GOLDEN / "svoi-kozyri.json"), viewer_seat=2)
    site.live["running"] = 10
    open_viewer(page, url + "#last")
    assert step_of(page) == 10
    assert page.is_visible(".live-badge")
    assert page.locator(".rv-btn.seed").count() == 0, "no seed while the match runs"
    options = page.eval_on_selector_all(".rv-seat option", "os => os.map(o => o.value)")
    assert options == ["", "2"], "onlookers see public cards; the owner also their own seat"
    assert all(hidden_cards(page, seat) > 0 for seat in range(4)), "hands are hidden"
    site.requests.clear()
    site.live["running"] = 25
    wait_step(page, 25)
    assert any("since=" in r for r in site.requests), "a running match is polled with since"
    assert page.inner_text(".rv-counter") == "25 / 25"
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="2"]')
    assert face_cards(page, 2) > 0 and hidden_cards(page, 2) == 0 and hidden_cards(page, 3) > 0
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat=""]')
    del site.live["running"]
    wait_step(page, 174)
    page.wait_for_selector(".rv-btn.seed")
    assert not page.is_visible(".live-badge")
    assert page.locator(".rv-seat option").count() == 5
    page.keyboard.press("Home")
    wait_step(page, 0)
    assert all(hidden_cards(page, seat) == 0 for seat in range(4)), "now every hand shows"


def test_a_finished_rotation_of_an_open_group_says_so_and_lists_its_public_moves(
    page: Any, site: FixtureSite
) -> None:
    replay = read_replay(GOLDEN / "kozyr-boys.json")
    url = site.add("sealed", replay)
    site.live["sealed"] = len(replay["steps"])
    site.sealed["sealed"] = (
        "finished; hands open when the 3 rotations of this deal are done: 1 of 3"
    )
    open_viewer(page, url + "#last")
    assert page.locator(".live-badge").count() == 0, "a finished match is not live"
    assert "hands open when the 3 rotations" in page.inner_text(".rv-sealed")
    lines = page.locator(".rv-log li[data-step]")
    wait_until(page, lambda: lines.count() == last_step("kozyr-boys"), "every line of the log")
    texts = page.eval_on_selector_all(
        ".rv-log li[data-step] .what", "ls => ls.map(l => l.textContent)"
    )
    assert "moves (hidden)" not in texts, "every public move is listed"
    secret = [i for i, st in enumerate(replay["steps"]) if st["action"]["type"] == "discard"]
    assert secret and all(texts[i] == "discard (secret)" for i in secret)
    screenshot(page, "viewer-sealed-finished")
    page.keyboard.press("Home")
    wait_step(page, 0)
    assert all(hidden_cards(page, seat) > 0 for seat in range(3)), "hands stay hidden"
    del site.live["sealed"], site.sealed["sealed"]
    page.wait_for_selector(".rv-btn.seed", timeout=WAIT_MS)  # the group is done: it opens
    assert page.locator(".rv-sealed").count() == 0


def test_frames_without_history_still_play(page: Any, site: FixtureSite) -> None:
    url = site.add("lean", read_replay(GOLDEN / "svoi-kozyri.json"))
    site.lean.add("lean")
    open_viewer(page, url + "#8")
    assert page.inner_text('.rv-log li[data-step="2"] .what') == "beat 9♥"
    assert page.inner_text('.seat[data-seat="0"] .seat-note') != ""
    assert page.locator(".rv-marks .tick.pick-up").count() > 0
    page.keyboard.press("f")
    page.wait_for_selector(f'{ROOT_SEL}[data-seat="0"]')
    page.wait_for_selector('.rv-log li[data-step="2"]')
    assert page.inner_text('.rv-log li[data-step="2"] .what') == "beat 9♥", "the pile is public"
    assert hidden_cards(page, 1) > 0


def test_cards_glide_unless_the_reader_asks_for_less_motion(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svoi-kozyri#3")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.getAnimations().length") > 0
    page.emulate_media(reduced_motion="reduce")
    page.wait_for_timeout(400)
    page.keyboard.press("ArrowRight")
    wait_step(page, 5)
    assert page.evaluate("document.getAnimations().length") == 0


def long_replay(min_steps: int = 2000) -> Any:
    """A match of built-in random agents longer than ``min_steps`` (the first seed that is)."""
    game = make_game("challenge")
    for seed in range(1, 100):
        state = game.new_state(seed)
        replay = record_builtin_match(
            state, [random_agent] * 2, ["left", "right"], agent_rng(seed), timed=False
        )
        if len(replay["steps"]) > min_steps:
            return replay
    raise AssertionError("no long match among the first seeds")


def window_sizes(requests: list[str]) -> list[int]:
    """How many frames each windowed request asked for."""
    sizes = []
    for url in requests:
        query = parse_qs(urlsplit(url).query)
        if "start" in query:
            sizes.append(int(query["stop"][0]) - int(query["start"][0]))
    return sizes


def log_state(page: Any) -> str:
    """What the move log holds and what the page last said (for a failure message)."""
    steps = page.eval_on_selector_all(
        ".rv-log li[data-step]", "ls => ls.map(l => Number(l.dataset.step))"
    )
    gaps = sorted(set(range(1, max(steps, default=0) + 1)) - set(steps))
    note = page.inner_text(".rv-toast") if page.locator(".rv-toast").count() else ""
    return f"{len(steps)} lines, {len(set(steps))} distinct, gaps {gaps[:20]}, note {note!r}"


def test_a_long_replay_opens_at_once_and_jumps_to_its_end(page: Any, site: FixtureSite) -> None:
    replay = long_replay()
    steps = len(replay["steps"])
    url = site.add("long", replay)
    site.requests.clear()
    open_viewer(page, url)
    assert page.inner_text(".rv-counter") == f"0 / {steps}", "the length is known at once"
    assert site.requests[0].endswith("start=0&stop=200"), "the first window only"
    page.keyboard.press("End")
    wait_step(page, steps)
    assert "Match over" in page.inner_text(".table-banner")
    assert page.inner_text(".rv-counter") == f"{steps} / {steps}"
    page.eval_on_selector(
        ".rv-range", f"r => {{ r.value = '{steps // 2}'; r.dispatchEvent(new Event('input')); }}"
    )
    wait_step(page, steps // 2)
    lines = page.locator(".rv-log li[data-step]")
    wait_until(page, lambda: lines.count() == steps, "the whole log", about=lambda: log_state(page))
    order = page.eval_on_selector_all(
        ".rv-log li[data-step]", "ls => ls.map(l => Number(l.dataset.step))"
    )
    assert order == list(range(1, steps + 1)), "windows arriving out of order keep the log's order"
    deals = len({step["deal"] for step in replay["steps"]})
    assert page.locator(".rv-log li.deal-sep").count() == deals, "one heading per deal"
    assert page.locator(".rv-marks .tick.deal").count() == deals - 1
    assert all(0 < size <= 500 for size in window_sizes(site.requests))


def test_windows_a_busy_server_refused_are_asked_for_again(
    page: Any, site: FixtureSite, errors: list[str]
) -> None:
    replay = long_replay()
    steps = len(replay["steps"])
    url = site.add("refused", replay)
    open_viewer(page, url)
    site.refuse["refused"] = 3  # the next three background windows meet a busy server
    lines = page.locator(".rv-log li[data-step]")
    notes: list[str] = []

    def whole() -> bool:
        text = page.inner_text(".rv-toast")
        if "trying again" in text and text not in notes:
            notes.append(text)
        return lines.count() == steps

    wait_until(page, whole, "the whole log after refusals", about=lambda: log_state(page))
    assert site.refuse["refused"] == 0, "every refusal was met"
    assert any("Some steps did not load (trying again): busy" in n for n in notes)
    errors[:] = [e for e in errors if "503" not in e]  # the refusals, as the browser logs them


def ten_thousand_steps() -> Any:
    """A match of built-in random agents of more than 10,000 steps."""
    game = make_game("challenge", params={"deals": 6})
    for seed in range(30, 100):
        state = game.new_state(seed)
        replay = record_builtin_match(
            state, [random_agent] * 2, ["left", "right"], agent_rng(seed), timed=False
        )
        if len(replay["steps"]) >= 10_000:
            return replay
    raise AssertionError("no match of 10,000 steps among the seeds tried")


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


@pytest.mark.parametrize("width", [1280, 390])
def test_any_jump_on_a_ten_thousand_step_match_shows_its_step(
    page: Any, site: FixtureSite, width: int
) -> None:
    """Jumps right after opening (the other windows still loading) to the end, the middle, back
    to the start and elsewhere each show their own step, its counter and no waiting table. How
    fast is measured by ``bench/viewer_jump.py`` (docs/benchmarks.md), never here."""
    replay = ten_thousand_steps()
    steps = len(replay["steps"])
    page.set_viewport_size({"width": width, "height": 860})
    url = site.add("huge", replay)
    site.lean.add("huge")  # as the API serves frames: without the history lists
    open_viewer(page, url)
    for step in (steps, steps // 2, 0, 7_257, 123, steps - 333, 9_001):
        page.evaluate(JUMP, [step, ROOT_SEL])  # resolves once the viewer shows ``step``
        assert step_of(page) == step
        assert page.inner_text(".rv-counter") == f"{step} / {steps}"
        assert (
            page.evaluate(f"document.querySelector('{ROOT_SEL}').classList.contains('fetching')")
            is False
        )
    assert "Match over" not in page.inner_text(".table-banner"), "the last jump is mid-match"


def test_a_64_bit_seed_is_shown_copied_and_downloaded_whole(
    page: Any, site: FixtureSite, tmp_path: Path
) -> None:
    """Seeds have 64 bits; a JavaScript number would round this one."""
    seed = 2**64 - 987_654_321
    game = make_game("svoi-kozyri", 2)
    replay = record_builtin_match(
        game.new_state(seed), [random_agent] * 2, ["a", "b"], agent_rng(seed), timed=False
    )
    open_viewer(page, site.add("wide-seed", replay))
    assert str(seed) in page.inner_text(".rv-btn.seed")
    page.click(".rv-btn.seed")
    wait_until(
        page, lambda: page.get_attribute(ROOT_SEL, "data-copied") == str(seed), "the seed copied"
    )
    with page.expect_download() as info:
        page.click(".rv-btn.download")
    saved = tmp_path / "wide.json"
    info.value.save_as(saved)
    assert str(seed) in info.value.suggested_filename
    assert json.loads(saved.read_text())["seed"] == seed  # a number again, every digit kept


SECRETS = [
    ("svoi-kozyri-tricks", "choose_trump", "chooses trumps (secret)"),
    ("kozyr-boys", "discard", "discard (secret)"),
]


@pytest.mark.parametrize(("game", "kind", "secret"), SECRETS)
def test_a_seat_sees_the_others_public_moves_and_not_their_secrets(
    page: Any, site: FixtureSite, game: str, kind: str, secret: str
) -> None:
    open_viewer(page, f"{site.url}/viewer/{game}?seat=0")
    replay = read_replay(GOLDEN / f"{game}.json")
    lines = page.locator(".rv-log li[data-step]")
    wait_until(page, lambda: lines.count() == last_step(game), "every line of the log")
    texts = page.eval_on_selector_all(
        ".rv-log li[data-step] .what", "ls => ls.map(l => l.textContent)"
    )
    others = [i for i, s in enumerate(replay["steps"]) if s["seat"] != 0]
    assert others and not any(texts[i] == "moves (hidden)" for i in others)
    secrets = [i for i in others if replay["steps"][i]["action"]["type"] == kind]
    assert secrets and all(texts[i] == secret for i in secrets)
    played = [i for i in others if replay["steps"][i]["action"]["type"] == "play"]
    assert played and all(texts[i].startswith("play") for i in played)


def test_a_seat_switch_shows_that_the_moves_are_loading(page: Any, site: FixtureSite) -> None:
    open_viewer(page, f"{site.url}/viewer/svara#5")
    page.route("**/api/frames/**", lambda route: None)  # held: the new seat's moves never come
    page.keyboard.press("f")
    page.wait_for_selector(".rv-log li.rv-log-wait")
    assert page.locator(".rv-log li[data-step]").count() == 0
    assert page.get_attribute(".rv-log", "aria-busy") == "true"


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("game", GAMES)
def test_no_part_of_the_table_covers_another(
    page: Any, site: FixtureSite, game: str, width: int
) -> None:
    """Seats, the cards in the centre, the info box and the controls each keep their own
    place, on a desktop and on a phone, from the deal to the end of the match."""
    page.set_viewport_size({"width": width, "height": 844})
    open_viewer(page, f"{site.url}/viewer/{game}")
    steps = last_step(game)
    for step in sorted({1, 12, steps // 3, steps // 2, steps - 1}):
        page.eval_on_selector(
            ".rv-range", f"r => {{ r.value = '{step}'; r.dispatchEvent(new Event('input')); }}"
        )
        wait_step(page, step)
        page.wait_for_timeout(400)  # the cards' glide ends (a check, not a wait for the page)
        boxes = table_boxes(page)
        assert sum(name.startswith("seat") for name in boxes) >= 2
        assert not overlaps(boxes), f"step {step}: {overlaps(boxes)}"
    viewport = page.viewport_size["width"]
    controls = table_boxes(page)
    slider = page.eval_on_selector(".rv-range", "r => r.getBoundingClientRect().width")
    assert slider >= min(200, viewport / 2), f"the seek slider keeps a usable width ({slider})"
    speed = next(box for name, box in controls.items() if "rv-speed" in name)
    assert speed["right"] <= viewport, "the speed selector is not cut off"
    screenshot(page, f"viewer-{game}-{width}")


def test_a_game_folder_dropped_in_brings_its_adapter(
    page: Any, site: FixtureSite, context: Any, errors: Any, toy: str, tmp_path: Path
) -> None:
    """The toy game's folder, found through ``ARENA_GAMES_PATH``, is drawn by its own adapter
    (``viewer.js``, served from the folder) on the site and in the standalone page."""
    game = make_game(toy, 2)
    replay = record_builtin_match(
        game.new_state(4), [random_agent] * 2, ["a", "b"], agent_rng(4), timed=False
    )
    end = len(replay["steps"])
    open_viewer(page, site.add("toy-folder", replay) + f"#{end}")
    assert step_of(page) == end
    laid = page.locator('.seat[data-seat="0"] .badge.laid')
    wait_until(page, lambda: laid.count() == 1, "the toy adapter's badge")
    assert laid.inner_text().startswith("laid ")
    saved = tmp_path / "toy.html"
    saved.write_text(standalone_html(replay))
    offline = _offline_page(context, errors)
    open_viewer(offline, saved.as_uri() + f"#{end}")
    assert offline.locator(".badge.laid").count() == 2
