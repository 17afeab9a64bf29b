"""The live feed: what the worker writes once per step, and what the site streams from it.

For every game, a recorded match is fed step by step through the worker's writer, read back
from the server-sent events endpoint as a spectator, and compared with the spectator view of
the same match's full replay once it is finished: the same public view, each move as a
spectator sees it made, and no card hidden at that step. Then the bounds on streams.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from flask import Flask

from arena import replay as replays
from arena.games import make_game, names
from tests.arena.test_conformance import CARD_TOKEN, PAST_DEAL_KEYS, PUBLIC_CONSTANTS
from tests.web.conftest import ROOT
from web.extensions import db
from web.models import Match, MatchStatus
from web.services import live, livehub
from web.storage import get_storage

pytestmark = pytest.mark.services

GOLDEN = ROOT / "tests" / "golden"


def events(body: bytes) -> list[tuple[str, str | None, bytes]]:
    """The (event, id, data) of a ``text/event-stream`` body; comments left out."""
    out = []
    for block in body.split(b"\n\n"):
        fields: dict[str, Any] = {}
        for line in block.split(b"\n"):
            if line and not line.startswith(b":"):
                name, _, value = line.partition(b": ")
                fields[name.decode()] = value
        if "data" in fields:
            raw_id = fields.get("id")
            out.append(
                (
                    fields.get("event", b"message").decode(),
                    raw_id and raw_id.decode(),
                    fields["data"],
                )
            )
    return out


def running_match(app: Flask, doc: dict[str, Any]) -> Match:
    match = Match(game_config=dict(doc["game"]), seed=doc["seed"], status=MatchStatus.RUNNING)
    db.session.add(match)
    db.session.commit()
    return match


def feed_of(app: Flask, match: Match, doc: dict[str, Any]) -> None:
    """Write ``doc``'s steps to the match's feed as a worker playing it would."""
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    game = make_game(**doc["game"])
    feed = live.Feed(client, app.config["BROKER_PREFIX"], match.id, game, doc["seed"])
    for index, state in enumerate(replays.states(doc)):  # one state, played on
        if index:
            feed.on_step(state, doc["steps"][index - 1])
    feed.close("finished")
    assert not feed.broken


def hidden_cards(state: Any) -> set[str]:
    """Every seat's private cards at ``state`` (none of which a spectator may see)."""
    return set().union(*(state.private_cards(s) for s in range(state.game.players)))


def named_cards(frame: dict[str, Any], game: str, deal: int) -> set[str]:
    """The cards a frame names, outside what only holds public constants or past deals (a
    move that ended deal ``deal - 1`` names cards dealt again since)."""
    unchecked = (*PUBLIC_CONSTANTS.get(game, ()), *PAST_DEAL_KEYS)
    public = {k: v for k, v in frame["public"].items() if k not in unchecked}
    event = frame["event"] if frame["event"] and frame["event"]["deal"] == deal else None
    return set(CARD_TOKEN.findall(orjson.dumps([event, public]).decode()))


@pytest.mark.parametrize("game", names())
def test_the_stream_carries_the_public_view_and_no_hidden_card(pg_app: Flask, game: str) -> None:
    doc = dict(replays.read_replay(GOLDEN / f"{game}.json"))
    match = running_match(pg_app, doc)
    feed_of(pg_app, match, doc)
    client = pg_app.test_client()
    answer = client.get(f"/api/v1/matches/{match.id}/live")
    assert answer.status_code == 200 and answer.mimetype == "text/event-stream"
    assert answer.headers["Cache-Control"] == "no-store"
    got = events(answer.data)
    assert got[-1] == ("end", None, b"finished")
    frames = [orjson.loads(data) for name, _, data in got if name == "frame"]
    assert [f["index"] for f in frames] == list(range(len(doc["steps"]) + 1))
    assert [name for name, _, _ in got if name == "frame"] == ["frame"] * len(frames)
    assert str(doc["seed"]).encode() not in answer.data, "the seed went out on the stream"
    # Resuming after a frame gives what follows it, whether asked by since or Last-Event-ID.
    half = len(frames) // 2
    resumed = events(client.get(f"/api/v1/matches/{match.id}/live?since={half}").data)
    assert orjson.loads(resumed[0][2])["index"] == half + 1
    again = client.get(f"/api/v1/matches/{match.id}/live", headers={"Last-Event-ID": str(half)})
    assert events(again.data)[0][1] == str(half + 1)

    # The same match, finished and open: its spectator view step by step.
    match.status, match.replay_path = (
        MatchStatus.FINISHED,
        get_storage().put_replay(orjson.dumps(doc)),
    )
    db.session.commit()
    stop = min(len(frames), 500)
    whole = client.get(f"/api/v1/matches/{match.id}/frames?start=0&stop={stop}").get_json()
    played = make_game(**doc["game"])
    for shown, full, state in zip(
        frames, whole["data"]["frames"], replays.states(doc), strict=False
    ):
        assert "spectator" not in shown and "seats" not in shown and "seat" not in shown
        assert shown["public"] == full["public"], f"{game}, frame {shown['index']}"
        if full["event"] is not None:
            seen = played.action_seen_by(full["event"]["action"], full["event"]["seat"], None)
            assert shown["event"] == {
                **full["event"],
                "action": seen,
                "debug": None,
                "stderr": None,
            }
        early = hidden_cards(state) & named_cards(shown, game, state.deal_index)
        assert not early, f"{game}, frame {shown['index']}: hidden cards {sorted(early)}"
    # A finished match's stream ends at once: its whole replay is there to read.
    assert events(client.get(f"/api/v1/matches/{match.id}/live").data) == [("end", None, b"over")]


def test_a_seat_view_is_its_owners_only_and_streams_are_bounded(pg_app: Flask) -> None:
    doc = dict(replays.read_replay(GOLDEN / "svara.json"))
    match = running_match(pg_app, doc)
    client = pg_app.test_client()
    # This match has no seats to own: nobody may ask for one, and bad arguments are refused.
    assert client.get(f"/api/v1/matches/{match.id}/live?seat=0").status_code == 404
    assert client.get(f"/api/v1/matches/{match.id}/live?seat=-1").status_code == 422
    assert client.get(f"/api/v1/matches/{match.id}/live?since=x").status_code == 422
    assert client.get("/api/v1/matches/999999/live").status_code == 404
    # Every stream open counts against the client's and the server's bound.
    pg_app.config["LIVE_STREAMS_PER_CLIENT"] = 2
    live.slots.take("127.0.0.1", 100, 2)
    live.slots.take("127.0.0.1", 100, 2)
    try:
        busy = client.get(f"/api/v1/matches/{match.id}/live")
        assert busy.status_code == 503 and busy.headers["Retry-After"].isdigit()
        assert "at most 2 live streams per client" in busy.get_json()["error"]["message"]
        pg_app.config["LIVE_STREAMS"] = 2
        with pytest.raises(live.Busy, match="follows 2 live matches at most"):
            live.slots.take("10.0.0.9", 2, 2)
    finally:
        live.slots.give("127.0.0.1")
        live.slots.give("127.0.0.1")
    assert live.slots.count() == 0


def test_a_stream_sends_heartbeats_and_ends_when_its_match_is_gone(pg_app: Flask) -> None:
    """No worker writes: the stream only beats, and ends once the match is no longer running
    (a worker that died writes no end); a stream's time is bounded too."""
    doc = dict(replays.read_replay(GOLDEN / "svara.json"))
    match = running_match(pg_app, doc)
    hub = _hub(pg_app, block_s=0.05)
    key = live.stream_key(pg_app.config["BROKER_PREFIX"], match.id)
    states = iter([True, True, False])
    got = list(livehub.follow(hub, key, -1, 0.05, float("inf"), lambda: next(states)))
    assert [e.name for e in got] == [None, None, "end"]
    quiet = list(livehub.follow(hub, key, -1, 0.05, time.monotonic() + 0.2, lambda: True))
    assert quiet and all(e.name is None for e in quiet), "a stream past its time just stops"


def _hub(app: Flask, block_s: float) -> livehub.Hub:
    url = app.config["REDIS_URL"]
    return livehub.Hub(lambda: redis.Redis.from_url(url), keep=5000, block_s=block_s)


def test_spectators_of_one_view_share_one_reader_and_each_gets_every_frame(
    pg_app: Flask,
) -> None:
    """Twenty spectators, some joining late or resuming after a frame, read one view through
    one channel of the process: each gets exactly the frames after its own start, in order,
    then the end; the channel stops once the view has ended."""
    doc = dict(replays.read_replay(GOLDEN / "svara.json"))
    match = running_match(pg_app, doc)
    key = live.stream_key(pg_app.config["BROKER_PREFIX"], match.id)
    hub = _hub(pg_app, block_s=0.2)
    starts = [-1] * 10 + [0, 3, 7] * 3 + [-1]
    got: dict[int, list[live.Event]] = {}

    def spectator(k: int) -> None:
        got[k] = list(livehub.follow(hub, key, starts[k], 30.0, time.monotonic() + 120, _true))

    threads = [threading.Thread(target=spectator, args=(k,)) for k in range(len(starts))]
    for thread in threads[:10]:
        thread.start()
    feed_of(pg_app, match, doc)  # written while the first ten wait, before the others come
    for thread in threads[10:]:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive()
    whole = redis.Redis.from_url(pg_app.config["REDIS_URL"]).xrange(key)
    frames = [(int(i.split(b"-")[0]), f[b"f"]) for i, f in whole if b"f" in f]
    assert len(frames) == len(doc["steps"]) + 1
    for k, start in enumerate(starts):
        names_ = [e.name for e in got[k]]
        assert names_[-1] == "end" and set(names_[:-1]) == {"frame"}, (k, names_)
        assert [(e.id, e.data) for e in got[k][:-1]] == [f for f in frames if f[0] > start]
    assert hub.channels == {} or all(c.ended for c in hub.channels.values())


def _true() -> bool:
    return True


def test_a_feed_that_cannot_write_leaves_the_match_alone(pg_app: Flask, tmp_path: Path) -> None:
    doc = dict(replays.read_replay(GOLDEN / "svara.json"))
    nowhere = redis.Redis(unix_socket_path=str(tmp_path / "no-redis.sock"), socket_timeout=1)
    feed = live.Feed(nowhere, "nowhere:", 1, make_game(**doc["game"]), doc["seed"])
    for index, state in enumerate(replays.states(doc)):  # one state, played on
        if index:
            feed.on_step(state, doc["steps"][index - 1])
    feed.close("finished")
    assert feed.broken and not feed.thread.is_alive()
