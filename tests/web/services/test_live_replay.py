"""Live replays: a running match shows its steps so far, public information only, on the API."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.games import make_game
from arena.replay import check_replay, states, verify
from tests.web.conftest import Worker, require_bwrap, wait_for
from web.extensions import db
from web.models import BotVersion, Match, MatchStatus, User, VersionStatus
from web.services import bots, building, ladders, lifecycle, matches, play, users

pytestmark = pytest.mark.services

SEED = 1_234_567_891
SLOW_DECISIONS = 12
CARD = re.compile(r'"([2-9TJQKA][SHDC])"')

SLOW_BOT = f'''"""Svara, random, but slow at first: time to watch a match while it runs."""

import random
import time

from kozyri_bot import Bot, run


class SlowBot(Bot):
    name = "slow-start"
    decisions = 0

    def choose(self, observation, legal_actions):
        self.decisions += 1
        if self.decisions <= {SLOW_DECISIONS}:
            time.sleep(0.25)
        return random.randrange(len(legal_actions))


if __name__ == "__main__":
    run(SlowBot())
'''
MANIFEST = """name = "slow-start"
games = ["svara"]
language = "python"
run = ["python3", "bot.py"]
"""


def slow_version(root: Path, owner: User) -> BotVersion:
    """The slow-starting bot, owned by ``owner``, put straight on the ladder (no self-test)."""
    from web import engine
    from web.storage import get_storage

    folder = root / "slow-start"
    folder.mkdir(exist_ok=True)
    (folder / "bot.py").write_text(SLOW_BOT)
    (folder / "bot.toml").write_text(MANIFEST)
    version = bots.register_folder(owner, folder, trusted=True)
    building.record_manifest(version, engine.load_manifest(get_storage().bot_dir(version.id)))
    version.status = VersionStatus.VALIDATING  # straight to activation
    lifecycle.activate(version)
    db.session.commit()
    return version


def row(match_id: int) -> Match:
    db.session.rollback()  # see what the worker committed since
    found = db.session.get(Match, match_id)
    assert found is not None
    return found


def live_replay(client: FlaskClient, match_id: int, more_than: int = 0) -> dict[str, Any] | None:
    """The anonymous live replay once it holds more than ``more_than`` steps, else None."""
    if row(match_id).status != MatchStatus.RUNNING:
        return None
    answer = client.get(f"/api/v1/matches/{match_id}/replay")
    if answer.status_code != 200:
        return None
    doc: dict[str, Any] = answer.get_json()
    return doc if doc.get("live") and len(doc["steps"]) > more_than else None


def hidden_from_seat_0(replay: dict[str, Any], steps: int) -> set[str]:
    """Seat 1's cards after ``steps`` steps that seat 0 has not seen by then."""
    partial = {**replay, "steps": replay["steps"][:steps]}
    seen: set[str] = set()
    hidden: set[str] = set()
    for index, state in enumerate(states(partial)):  # type: ignore[arg-type]
        seen |= set(CARD.findall(orjson.dumps(state.observation(0)).decode()))
        if index == steps:
            hidden = set(state.private_cards(1))
    return hidden - seen


def leaked(body: bytes, replay: dict[str, Any], steps: int) -> set[str]:
    """Seat 1's hidden cards (after ``steps`` steps) that ``body`` names."""
    return hidden_from_seat_0(replay, steps) & set(CARD.findall(body.decode()))


def test_a_running_match_shows_public_steps_then_its_whole_replay(
    pg_app: Flask, shared_tmp: Path, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    alice, bob = users.create_user("alice"), users.create_user("bob")
    db.session.commit()
    versions = [slow_version(shared_tmp, alice), slow_version(shared_tmp, bob)]
    token = users.issue_token(alice, "tests")
    ladder = ladders.get_or_create_ladder("svara", players=2)
    match_id = matches.create_match(
        ladder.game_config(), versions, seed=SEED, ladder_id=ladder.id
    ).id
    db.session.commit()
    client = pg_app.test_client()
    mine = {"Authorization": f"Bearer {token}"}
    worker = start_worker(pg_app)

    first = wait_for(lambda: live_replay(client, match_id), 60, "a live replay", worker)
    assert "seed" not in first and "result" not in first and "final_hash" not in first
    url = f"/api/v1/matches/{match_id}"
    captured = [(client.get(url + "/replay").data, None), (client.get(url + "/frames").data, 1)]
    frames = orjson.loads(captured[1][0])["data"]["frames"]
    assert all(set(f) == {"index", "event", "public"} for f in frames)
    own = client.get(url + "/replay", headers=mine).get_json()
    assert own["live"]
    assert client.get(url + "/frames?seat=1", headers=mine).status_code == 403
    own_frames = client.get(url + "/frames?seat=0", headers=mine)
    assert own_frames.status_code == 200
    captured.append((own_frames.data, 1))
    later = wait_for(
        lambda: live_replay(client, match_id, len(first["steps"])), 30, "more steps", worker
    )

    wait_for(lambda: row(match_id).status == MatchStatus.FINISHED, 120, "the finish", worker)
    whole = client.get(url + "/replay").get_json()
    replay: dict[str, Any] = dict(check_replay(whole))
    assert whole["seed"] == SEED and verify(check_replay(whole)) == []
    assert len(first["steps"]) < len(later["steps"]) < len(replay["steps"])
    live_file = Path(pg_app.config["STORAGE_DIR"]) / "replays" / "live" / f"{match_id}.json"
    assert not live_file.exists()
    assert not str(row(match_id).replay_path).startswith("replays/live/")
    assert hidden_from_seat_0(replay, len(first["steps"])), "seat 1 should hold hidden cards"
    # Moves are shown as a spectator sees them made, the owner's own seat whole.
    game = make_game(**replay["game"])
    public = [game.action_seen_by(s["action"], s["seat"], None) for s in replay["steps"]]
    assert [s.get("action") for s in first["steps"]] == public[: len(first["steps"])]
    assert [f["event"].get("action") for f in frames[1:]] == public[: len(frames) - 1]
    mine_shown = [s.get("action") for s in own["steps"]]
    assert mine_shown == [
        s["action"] if s["seat"] == 0 else public[i]
        for i, s in enumerate(replay["steps"][: len(own["steps"])])
    ]
    for body, offset in captured:
        doc = orjson.loads(body)
        steps = len(doc["data"]["frames"]) - 1 if offset else len(doc["steps"])
        assert not leaked(body, replay, steps)
        assert str(SEED).encode() not in body, "the seed of a running match was served"
    shown = client.get(url + "/frames").data  # a finished match shows every hand
    assert leaked(shown, replay, len(first["steps"]))


@pytest.fixture
def claimed(pg_app: Flask) -> tuple[int, int]:
    """A match without seats, claimed by this process: enough for the live replay's bookkeeping."""
    config = ladders.default_ladder("challenge").game_config()
    match = Match(game_config=config, seed=SEED, status=MatchStatus.QUEUED, max_attempts=3)
    db.session.add(match)
    db.session.commit()
    attempt = matches.claim(match.id, "here", 60)
    assert attempt is not None
    return match.id, attempt


def step(seat: int) -> dict[str, Any]:
    return {"seat": seat, "action": {"type": "pass"}, "deal": 0, "time_ms": 1.0, "status": "ok"}


def test_the_live_file_is_throttled_pointed_at_and_withdrawn(
    claimed: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    match_id, attempt = claimed
    live = play.LiveReplay(match_id, attempt, row(match_id).game_config, SEED, [])
    for seat in (0, 1, 0, 1):
        live.on_step(None, step(seat))
    stored = orjson.loads(live.storage.get(live.relative))
    assert len(stored["steps"]) == 1, "only the first step is written within a second"
    assert stored["partial"] is True and stored["seed"] == SEED
    assert stored["game"]["game"] == "challenge" and "result" not in stored
    assert row(match_id).replay_path == live.relative
    monkeypatch.setattr(play, "LIVE_REPLAY_EVERY", 0.0)
    live.on_step(None, step(0))
    assert len(orjson.loads(live.storage.get(live.relative))["steps"]) == 5
    live.withdraw()
    assert row(match_id).replay_path is None and not live.storage.exists(live.relative)


def test_a_lost_claim_neither_points_at_nor_removes_another_attempts_file(
    claimed: tuple[int, int],
) -> None:
    match_id, attempt = claimed
    stale = play.LiveReplay(match_id, attempt - 1, row(match_id).game_config, SEED, [])
    stale.on_step(None, step(0))
    assert row(match_id).replay_path is None
    current = play.LiveReplay(match_id, attempt, row(match_id).game_config, SEED, [])
    current.on_step(None, step(1))
    stale.withdraw()
    stale.discard()
    assert row(match_id).replay_path == current.relative
    assert current.storage.exists(current.relative)
