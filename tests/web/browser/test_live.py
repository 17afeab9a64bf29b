"""Watching a running mirrored ladder match live, in a real browser at 1280 and 390 px.

A worker plays the first of two seat rotations of one deal (so the deal stays sealed while it
runs and after); two pages follow it from the home page's list of matches playing now, pushed
by the live stream, to its end, and the owner of seat 0 follows that seat's view from the
stream. What each stream carried is compared with the full replay opened once both rotations
are done: the public view (and the owner's seat view) frame by frame, no hidden card early.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from flask import Flask

from arena import replay as replays
from arena.games import make_game
from tests.web.browser.conftest import DEFAULT_TIMEOUT_MS, PageErrors, screenshot
from tests.web.browser.test_site_flow import live_site as live_site
from tests.web.conftest import require_bwrap, wait_for
from tests.web.services.test_live_feed import events, hidden_cards, named_cards
from tests.web.services.test_live_replay import row
from web.engine import load_manifest
from web.extensions import db
from web.models import BotVersion, Match, MatchStatus, User, VersionStatus
from web.services import bots, building, ladders, lifecycle, matches, users
from web.services.queue import send_match
from web.storage import get_storage

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.slow]

SEED = 2_718_281_828
ROOT_SEL = "#replay-viewer"
WIDTHS = {"1280": {"width": 1280, "height": 860}, "390": {"width": 390, "height": 844}}
WAIT_S = 240

STEADY_BOT = '''"""Svara at a steady walking pace: every decision takes a moment, to be watched."""

import random
import time

from kozyri_bot import Bot, run


class Steady(Bot):
    name = "steady"

    def choose(self, observation, legal_actions):
        time.sleep(0.4)
        return random.randrange(len(legal_actions))


if __name__ == "__main__":
    run(Steady())
'''

COLLECT = """(() => {
  // Every frame any live stream of this page carries, as it arrived.
  const Real = window.EventSource;
  window.__frames = [];
  window.EventSource = class extends Real {
    constructor(url, options) {
      super(url, options);
      this.addEventListener("frame", (e) => window.__frames.push(JSON.parse(e.data)));
    }
  };
})();"""


def steady_version(root: Path, owner: User) -> BotVersion:
    folder = root / f"steady-{owner.username}"
    folder.mkdir(exist_ok=True)
    (folder / "bot.py").write_text(STEADY_BOT)
    (folder / "bot.toml").write_text(
        f'name = "steady-{owner.username}"\ngames = ["svara"]\nlanguage = "python"\n'
        'run = ["python3", "bot.py"]\n'
    )
    version = bots.register_folder(owner, folder, trusted=True)
    building.record_manifest(version, load_manifest(get_storage().bot_dir(version.id)))
    version.status = VersionStatus.VALIDATING  # straight to activation
    lifecycle.activate(version)
    db.session.commit()
    return version


class SeatReader(threading.Thread):
    """Reads one live stream to its end (here: the owner's seat view), as a script would."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        self.body = b""

    def run(self) -> None:
        with urllib.request.urlopen(self.request, timeout=WAIT_S) as answer:
            for line in answer:
                self.body += line
                if line.startswith(b"event: end"):
                    self.body += answer.readline()
                    return


def nudged(match_id: int, every: float = 10.0) -> Any:
    """``row(match_id)``, sending the match to the workers again now and then while it waits in
    the queue: test runs side by side may share a Redis database, and one's ``FLUSHDB`` drops
    another's messages (the reaper resends them on a real install; claims make a duplicate
    harmless)."""
    sent = [time.monotonic()]

    def check() -> Match:
        found = row(match_id)
        if found.status == MatchStatus.QUEUED and time.monotonic() - sent[0] > every:
            sent[0] = time.monotonic()
            send_match(match_id)
        return found

    return check


def refused(url: str, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60)
    except urllib.error.HTTPError as exc:
        return exc.code
    return 200


def open_watcher(browser: Any, errors: PageErrors, site: str, width: str) -> Any:
    """A page at ``width`` that finds the match on the home page and follows it."""
    context = browser.new_context(viewport=WIDTHS[width])
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    context.add_init_script(COLLECT)
    page = errors.watch(context.new_page())
    page.goto(site)
    page.click(".playing-now .live-list a >> nth=0")
    page.wait_for_selector(f'{ROOT_SEL}[data-feed="stream"]')
    assert page.locator(".rv-title .live-badge").is_visible()
    return page


def test_a_running_mirrored_match_is_watched_live_to_its_end(
    pg_app: Flask, live_site: str, start_worker: Any, browser: Any, shared_tmp: Path
) -> None:
    require_bwrap()
    pg_app.config["LIVE_STREAM_SECONDS"] = 600.0  # the streams here last the whole match
    alice, bob = users.create_user("alice"), users.create_user("bob")
    db.session.commit()
    versions = [steady_version(shared_tmp, alice), steady_version(shared_tmp, bob)]
    tokens = [users.issue_token(alice, "live"), users.issue_token(bob, "live")]
    ladder = ladders.get_or_create_ladder("svara", players=2)
    config = {**ladder.game_config(), "params": {"deals": 6}}  # some 30 moves
    kept = dict(seed=SEED, ladder_id=ladder.id, mirror_group="live-deal")
    first = matches.create_match(config, versions, **kept).id
    second = matches.create_match(config, versions[::-1], **kept).id
    db.session.commit()
    stream = f"{live_site}/api/v1/matches/{first}/live"
    assert refused(f"{stream}?seat=0", None) == 403, "a seat view is its owner's only"
    assert refused(f"{stream}?seat=0", tokens[1]) == 403
    owner = SeatReader(f"{stream}?seat=0", tokens[0])
    owner.start()  # from before the first move
    errors = PageErrors()
    # Only these two matches: the ladder tops up nothing behind them.
    worker = start_worker(pg_app, ARENA_QUEUE_TARGET="0", ARENA_PLACEMENT_MATCHES="0")
    first_row = nudged(first)
    wait_for(lambda: first_row().replay_path, WAIT_S, "the first rotation to start", worker)
    assert row(second).status == MatchStatus.QUEUED, "one worker plays one rotation at a time"

    pages = {width: open_watcher(browser, errors, live_site, width) for width in WIDTHS}
    for width, page in pages.items():
        page.click(f"{ROOT_SEL} button.now")
        wait_for(lambda p=page: len(p.evaluate("window.__frames")) >= 3, WAIT_S, "live frames")
        at = int(page.get_attribute(ROOT_SEL, "data-step") or 0)
        assert at >= page.evaluate("window.__frames.at(-1).index") - 1, "jump to now follows"
        screenshot(page, f"live-{width}")

    wait_for(lambda: row(first).status == MatchStatus.FINISHED, WAIT_S, "the finish", worker)
    steps = len(
        replays.check_replay(orjson.loads(get_storage().read(str(row(first).replay_path))))["steps"]
    )
    for width, page in pages.items():
        page.wait_for_selector(f'{ROOT_SEL}[data-feed="over"]')  # the stream said it is over
        assert page.locator(".rv-title .live-badge").count() == 0
        page.wait_for_selector(f'{ROOT_SEL}[data-step="{steps}"]')  # it followed to the end
        screenshot(page, f"live-{width}-over")
    owner.join(WAIT_S)
    assert not owner.is_alive(), "the owner's stream ended with the match"
    assert not errors, "errors in the pages:\n" + "\n".join(errors)

    # Once both rotations are done the deal is open: compare with the full replay.
    second_row = nudged(second)
    done = MatchStatus.FINISHED
    wait_for(lambda: second_row().status == done, WAIT_S, "the other rotation", worker)
    client = pg_app.test_client()
    doc = client.get(f"/api/v1/matches/{first}/replay").get_json()
    window = f"/api/v1/matches/{first}/frames?start=0&stop={min(steps + 1, 500)}"
    spectator = client.get(window).get_json()["data"]["frames"]
    seat0 = client.get(window + "&seat=0").get_json()["data"]["frames"]
    game = make_game(**doc["game"])
    seen = [orjson.loads(data) for name, _, data in events(owner.body) if name == "frame"]
    assert [f["index"] for f in seen] == list(range(steps + 1)), "the owner saw every step"
    watched = {w: p.evaluate("window.__frames") for w, p in pages.items()}
    for index, state in enumerate(replays.states(doc)):
        full = spectator[index]
        public = None if full["event"] is None else {
            **full["event"], "debug": None, "stderr": None,
            "action": game.action_seen_by(full["event"]["action"], full["event"]["seat"], None),
        }  # fmt: skip
        for frames in watched.values():
            for frame in (f for f in frames if f["index"] == index):
                assert set(frame) == {"index", "event", "public"}
                assert frame["public"] == full["public"] and frame["event"] == public
                assert not hidden_cards(state) & named_cards(frame, "svara", state.deal_index)
        mine = seen[index]
        assert mine["seat"] == seat0[index]["seat"] and mine["public"] == full["public"]
        others = set().union(*(state.private_cards(s) for s in range(1, game.players)))
        assert not others & named_cards({**mine, "public": mine["seat"]}, "svara", state.deal_index)
    for context in {p.context for p in pages.values()}:
        context.close()
