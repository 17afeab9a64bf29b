"""Matches sharing a deal are sealed until every one of them is played.

A mirrored ladder group and a tournament table are built of two seat rotations on one 64-bit
seed: one finished, its sibling queued or running. Every GET route of the app (enumerated from
its URL map, so a new route is covered as soon as it exists) is asked about both, anonymously,
as a user with no seat, as an admin and as the owner of seat 0, and no answer may hold the seed;
none holds a card of the deal's hidden hands, except the replay and frames, which give exactly
the public view (equal to the spectator's public view of the whole replay opened afterwards,
for every game) and the owner's own seat's view. ``arena fetch`` refuses too. Once the sibling
finishes (or fails), everything opens.
"""

from __future__ import annotations

import io
import re
import subprocess
import zipfile
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import orjson
import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.games import names
from tests.web.conftest import ROOT
from tests.web.site.conftest import GAME, PASSWORD, LiveServer, World, _store, login, record
from tests.web.site.test_cli import arena
from tests.web.site.test_security import leaked_cards

SEED = 2**64 - 987_654_321  # above 2**63: the stored seed must come back whole
ONLOOKERS = [None, "eve", "root-admin"]
SKIPPED_ARGUMENTS = {"filename": "static", "name": "home.starter_file"}
CARD = re.compile(r'"([2-9TJQKA][SHDC])"')


@dataclass
class Group:
    kind: str
    finished: Any  # alice in seat 0, mallory in seat 1
    sibling: Any  # the other rotation: mallory in seat 0, alice in seat 1
    replay: dict[str, Any]
    tournament: Any | None

    @property
    def matches(self) -> list[Any]:
        return [self.finished, self.sibling]


def _eve() -> str:
    """A signed-up user with no seat in any match; returns her API token."""
    from werkzeug.security import generate_password_hash

    from web.services import users

    eve = users.create_user("eve")
    eve.password_hash = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")
    return users.issue_token(eve, "tests")


def _match(world: World, versions: list[Any], status: Any, where: dict[str, Any]) -> Any:
    from web.extensions import db
    from web.models import Match, MatchSeat

    match = Match(game_config=world.ladder.game_config(), seed=SEED, status=status, **where)
    for seat, version in enumerate(versions):
        match.seats.append(MatchSeat(seat=seat, bot_id=version.bot_id, bot_version_id=version.id))
    db.session.add(match)
    db.session.flush()
    return match


def _finish(match: Any, replay: dict[str, Any]) -> None:
    from web.models import MatchStatus, utcnow

    match.status = MatchStatus.FINISHED
    match.replay_path = _store(replay)
    match.result, match.outcome = replay["result"], replay["outcome"]
    match.final_hash, match.finished_at = replay["final_hash"], utcnow()
    for seat in match.seats:
        seat.place, seat.status = replay["result"]["ranking"][seat.seat], "ok"


def make_group(world: World, kind: str, sibling_status: str) -> Group:
    from web.extensions import db
    from web.models import MatchKind, MatchStatus, Tournament, TournamentStatus

    tournament = None
    if kind == "mirrored":
        where: dict[str, Any] = {"ladder_id": world.ladder.id, "mirror_group": "g-sealed"}
    else:  # a tournament table as tournaments made before deal groups had a name
        tournament = Tournament(
            name="sealed cup",
            game_config=world.ladder.game_config(),
            entries=[v.id for v in world.versions],
            status=TournamentStatus.RUNNING,
        )
        db.session.add(tournament)
        db.session.flush()
        where = {"tournament_id": tournament.id, "kind": MatchKind.TOURNAMENT, "rated": False}
    replay = record(SEED)
    finished = _match(world, world.versions, MatchStatus.FINISHED, where)
    _finish(finished, replay)
    sibling = _match(world, world.versions[::-1], MatchStatus(sibling_status), where)
    if sibling_status == "running":
        partial = {k: v for k, v in replay.items() if k not in ("result", "outcome")}
        partial["steps"] = replay["steps"][: len(replay["steps"]) // 3]
        sibling.replay_path = _store(partial)
    world.tokens["eve"] = _eve()
    db.session.commit()
    return Group(kind, finished, sibling, replay, tournament)


@pytest.fixture(params=["mirrored-queued", "mirrored-running", "tournament-running"])
def group(request: pytest.FixtureRequest, world: World) -> Group:
    kind, status = request.param.split("-")
    return make_group(world, kind, status)


def every_url(app: Flask, world: World, group: Group) -> list[str]:
    """Every GET route of the app, filled with the group's matches and its people and bots."""
    values: dict[str, list[Any]] = {
        "match_id": [m.id for m in group.matches],
        "bot_id": [b.id for b in world.bots],
        "version_id": [v.id for v in world.versions],
        "slug": [world.ladder.slug],
        "username": ["alice", "mallory"],
        "tournament_id": [group.tournament.id] if group.tournament else [],
        "name": [GAME],
        "game": [GAME],
        "challenge_id": [_challenge_of(world, group)],
        "seat": [0, 1],
    }
    adapter = app.url_map.bind("localhost")
    urls = []
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or ()):
            continue
        names = sorted(rule.arguments)
        if any(SKIPPED_ARGUMENTS.get(n) == rule.endpoint for n in names):
            continue
        unknown = [n for n in names if n not in values]
        assert not unknown, f"{rule.rule}: tell this test what to put in {unknown}"
        for combo in product(*(values[n] for n in names)):
            urls.append(adapter.build(rule.endpoint, dict(zip(names, combo, strict=True))))
    for match in group.matches:
        base = f"/api/v1/matches/{match.id}/frames"
        urls += [f"{base}?seat=0", f"{base}?seat=1", f"{base}?since=0", f"{base}?start=5"]
    urls += ["/api/v1/matches?status=finished", "/matches?status=finished"]
    if group.tournament:
        urls += [f"/api/v1/matches?tournament={group.tournament.id}"]
        urls += [f"/matches?tournament={group.tournament.id}"]
    return urls


def _challenge_of(world: World, group: Group) -> int:
    """A challenge holding the group's matches: its pages must keep the deal sealed too."""
    from web.extensions import db
    from web.models import Challenge

    challenge = Challenge(
        user_id=world.owner.id, ladder_id=world.ladder.id, entries=[v.id for v in world.versions]
    )
    db.session.add(challenge)
    db.session.flush()
    for match in group.matches:
        match.challenge_id = challenge.id
    db.session.commit()
    return challenge.id


def deal_cards(replay: dict[str, Any]) -> set[str]:
    """Every card dealt to a hand in the first deal, as it starts."""
    from arena.replay import states

    first = next(iter(states(replay)))  # type: ignore[arg-type]
    return {c for seat in range(first.game.players) for c in first.private_cards(seat)}


def as_reader(client: FlaskClient, world: World, who: str | None) -> dict[str, str]:
    if who is None:
        return {}
    login(client, who)
    return {"Authorization": f"Bearer {world.tokens[who]}"}


def public_form(frames: list[dict[str, Any]], game_config: dict[str, Any]) -> list[Any]:
    """Spectator frames of an open replay as a spectator of the hidden match sees them: the
    public observation, and each move as the rules let a spectator see it made."""
    from arena.games import make_game

    game = make_game(**game_config)
    out = []
    for frame in frames:
        event = frame["event"]
        if event is not None:  # an admin reads every seat's debug text once the group is done
            event = {**event, "debug": None, "stderr": None}
            if "action" in event:
                event["action"] = game.action_seen_by(event["action"], event["seat"], None)
        out.append({"index": frame["index"], "event": event, "public": frame["public"]})
    return out


def all_frames(client: FlaskClient, match_id: int, headers: dict[str, str]) -> list[Any]:
    """Every frame served of a match (window after window), as the reader is served them."""
    frames: list[Any] = []
    total = 1
    while len(frames) < total:
        url = f"/api/v1/matches/{match_id}/frames?start={len(frames)}&stop={len(frames) + 500}"
        answer = client.get(url, headers=headers)
        assert answer.status_code == 200, (url, answer.get_data(as_text=True))
        data = answer.get_json()["data"]
        total = data["total"]
        frames += data["frames"]
    return frames


def _zipped_members(data: bytes, group: Group) -> list[str]:
    """The replays of ``group``'s matches (or its seed) found in a zip of replays."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        found = [n for n in archive.namelist() if str(SEED) in archive.read(n).decode()]
        names = set(archive.namelist())
    return found + sorted(names & {f"match-{m.id}.json" for m in group.matches})


SERVES_FRAMES = re.compile(r"/matches/\d+/(replay|frames)")


@pytest.mark.parametrize("who", ONLOOKERS)
def test_onlookers_see_only_the_public_view_of_a_sealed_group(
    app: Flask, client: FlaskClient, world: World, group: Group, who: str | None
) -> None:
    from web.extensions import db

    headers = as_reader(client, world, who)
    cards = deal_cards(group.replay)
    assert cards
    urls = every_url(app, world, group)
    assert len(urls) > 30
    for url in urls:
        answer = client.get(url, headers=headers)
        body = answer.get_data().decode("utf-8", "replace")  # the favicon is binary
        answer.close()  # a download is a file the response holds open
        assert answer.status_code < 500, (url, answer.status_code)
        assert str(SEED) not in body, f"{url} gives away the seed to {who}"
        if answer.mimetype == "application/zip":  # a bot's replays in bulk: none of the group
            assert not _zipped_members(answer.get_data(), group), (url, who)
            continue
        if not SERVES_FRAMES.search(url):  # those are held to the public view below
            assert not leaked_cards(body, cards), (url, who, leaked_cards(body, cards))
    sealed: dict[int, list[Any]] = {}
    for match in group.matches:
        for what in ("frames?seat=0", "frames?seat=1"):
            answer = client.get(f"/api/v1/matches/{match.id}/{what}", headers=headers)
            assert answer.status_code in (403, 404), (what, answer.status_code)
        data = client.get(f"/api/v1/matches/{match.id}", headers=headers).get_json()["data"]
        assert data["seed"] is None and "hands open when the" in data["sealed"]
        if not match.replay_path:
            continue
        doc = orjson.loads(client.get(f"/api/v1/matches/{match.id}/replay", headers=headers).data)
        assert not {"seed", "result", "outcome", "final_hash"} & doc.keys()
        assert doc["live"] is True and "1 of 2" in doc["sealed"]
        sealed[match.id] = all_frames(client, match.id, headers)
        assert all(f.keys() == {"index", "event", "public"} for f in sealed[match.id])
    page = client.get(f"/matches/{group.finished.id}", headers=headers).get_data(as_text=True)
    assert "Finished; hands open when the 2 rotations of this deal are done: 1 of 2" in page
    assert 'id="replay-viewer"' in page and f"seed {SEED}" not in page
    # the public view is what a spectator of the whole replay sees, once the group is done
    _finish(group.sibling, group.replay)
    db.session.commit()
    opened = all_frames(client, group.finished.id, headers)
    assert all("spectator" in f for f in opened)
    public = public_form(opened, group.replay["game"])
    for frames in sealed.values():
        assert frames == public[: len(frames)]
    assert len(sealed[group.finished.id]) == len(public)


def greedy_replay(game: str, seed: int) -> dict[str, Any]:
    """A real replay of ``game`` (its usual table size) played by greedy agents."""
    import random

    from arena.agents import greedy_agent
    from arena.games import make_game
    from arena.replay import record_builtin_match

    state = make_game(game).new_state(seed)
    seats = state.game.players
    names = [f"s{i}" for i in range(seats)]
    agents = [greedy_agent] * seats
    return dict(record_builtin_match(state, agents, names, random.Random(seed), timed=False))


@pytest.mark.parametrize("game", names())
def test_every_game_shows_a_sealed_group_by_its_public_view(
    client: FlaskClient, world: World, game: str
) -> None:
    """While a rotation waits, an onlooker gets the finished one's public view, exactly the
    spectator's public view of its whole replay once the group is done, and no seed."""
    from web.extensions import db
    from web.models import MatchStatus

    replay = greedy_replay(game, SEED)
    versions = [world.versions[i % 2] for i in range(replay["game"]["players"])]
    where = {"ladder_id": world.ladder.id, "mirror_group": f"g-{game}"}
    finished = _match(world, versions, MatchStatus.FINISHED, where)
    finished.game_config = replay["game"]
    _finish(finished, replay)
    sibling = _match(world, versions[::-1], MatchStatus.QUEUED, where)
    db.session.commit()
    served = client.get(f"/api/v1/matches/{finished.id}/replay").get_data(as_text=True)
    assert str(SEED) not in served and orjson.loads(served)["live"] is True
    sealed = all_frames(client, finished.id, {})
    assert str(SEED) not in orjson.dumps(sealed).decode()
    page = client.get(f"/matches/{finished.id}").get_data(as_text=True)
    assert "Finished; hands open when" in page and "live-badge" not in page
    _finish(sibling, replay)
    db.session.commit()
    opened = all_frames(client, finished.id, {})
    assert sealed == public_form(opened, replay["game"])
    public_moves = [f["event"]["action"] for f in public_form(opened, replay["game"])[1:]]
    assert [s["action"] for s in orjson.loads(served)["steps"]] == public_moves


def test_a_seat_owner_sees_only_their_own_seat(
    app: Flask, client: FlaskClient, world: World, group: Group
) -> None:
    from arena.games import make_game
    from arena.replay import states

    headers = as_reader(client, world, "alice")
    for url in every_url(app, world, group):
        answer = client.get(url, headers=headers)
        body = answer.get_data().decode("utf-8", "replace")
        answer.close()
        assert str(SEED) not in body, f"{url} gives away the seed to a seat owner"
    m = group.finished.id
    doc = orjson.loads(client.get(f"/api/v1/matches/{m}/replay", headers=headers).data)
    assert not {"seed", "result", "outcome", "final_hash"} & doc.keys()
    assert doc["live"] is True and "hands open when the" in doc["sealed"]
    assert all(s["debug"] is None for s in doc["steps"] if s["seat"] != 0)
    assert any(s["debug"] for s in doc["steps"] if s["seat"] == 0)
    assert client.get(f"/api/v1/matches/{m}/frames?seat=1", headers=headers).status_code == 403
    if group.sibling.replay_path:  # the running rotation, as its owners follow it
        running = client.get(f"/api/v1/matches/{group.sibling.id}/replay", headers=headers)
        assert "hands open when the" in orjson.loads(running.data)["sealed"]
    # alice sits in seat 1 of the sibling: its seat 0 is not hers
    sibling = f"/api/v1/matches/{group.sibling.id}/frames?seat=0"
    assert client.get(sibling, headers=headers).status_code in (403, 404)
    public = client.get(f"/api/v1/matches/{m}/frames", headers=headers).get_json()["data"]
    assert public["live"] and all("spectator" not in f for f in public["frames"])
    game = make_game(**group.replay["game"])
    own = client.get(f"/api/v1/matches/{m}/frames?seat=0&start=0&stop=500", headers=headers)
    frames = own.get_json()["data"]["frames"]
    assert len(frames) == len(group.replay["steps"]) + 1
    checked = 0
    for frame, state in zip(frames, states(group.replay), strict=True):  # type: ignore[arg-type]
        seen = set(CARD.findall(orjson.dumps(state.observation(0)).decode()))
        if frame["index"]:  # a move as seat 0 saw it made (its own, or one the rules show it)
            step = group.replay["steps"][frame["index"] - 1]
            action = game.action_seen_by(step["action"], step["seat"], 0)
            assert frame["event"]["action"] == action
            seen |= set(CARD.findall(orjson.dumps(action).decode()))
        hidden = set(state.private_cards(1)) - seen
        shown = set(CARD.findall(orjson.dumps(frame).decode()))
        assert not hidden & shown, (frame["index"], hidden & shown)
        checked += bool(hidden)
    assert checked, "seat 1 should hold cards seat 0 never saw"


def test_arena_fetch_refuses_a_sealed_match(
    live_server: LiveServer, world: World, group: Group, tmp_path: Path
) -> None:
    for token in (None, world.tokens["alice"]):
        out = tmp_path / "m.json"
        command = arena("fetch", str(group.finished.id), "--server", live_server.url)
        command += ["--out", str(out)] + (["--token", token] if token else [])
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 1, done.stdout
        assert "sealed" in done.stderr and str(SEED) not in done.stderr + done.stdout
        assert not out.exists()


@pytest.mark.parametrize("ending", ["finished", "failed", "cancelled"])
def test_the_group_opens_once_every_member_is_done(
    app: Flask,
    client: FlaskClient,
    world: World,
    ending: str,
    live_server: LiveServer,
    tmp_path: Path,
) -> None:
    from web.extensions import db
    from web.models import MatchStatus

    group = make_group(world, "mirrored", "running")
    if ending == "finished":
        _finish(group.sibling, group.replay)
    else:  # a member that cannot be played does not hold the others back
        group.sibling.status = MatchStatus(ending)
    db.session.commit()
    m = group.finished.id
    data = client.get(f"/api/v1/matches/{m}").get_json()["data"]
    assert data["seed"] == str(SEED) and data["sealed"] is None
    listed = client.get("/api/v1/matches?status=finished").get_json()["data"]
    assert str(SEED) in [x["seed"] for x in listed]
    replay = orjson.loads(client.get(f"/api/v1/matches/{m}/replay").data)
    assert replay["seed"] == SEED and "result" in replay  # 64 bits, whole
    frames = client.get(f"/api/v1/matches/{m}/frames").get_json()["data"]["frames"]
    assert frames and all("spectator" in f for f in frames)
    page = client.get(f"/matches/{m}").get_data(as_text=True)
    assert f"seed {SEED}" in page and "hands open when the" not in page
    assert 'id="replay-viewer"' in page
    out = str(tmp_path / "m.json")
    done = subprocess.run(
        arena("fetch", str(m), "--server", live_server.url, "--out", out, "--verify"),
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"seed {SEED}" in done.stdout


def test_a_new_tournament_names_each_table_a_deal_group(app: Flask, world: World) -> None:
    from sqlalchemy import select

    from web.extensions import db
    from web.models import Match
    from web.services import sealing
    from web.services.tournaments import create_tournament

    made = create_tournament(
        "t", world.ladder.game_config(), [v.id for v in world.versions], tables=3
    )
    rows = list(db.session.scalars(select(Match).where(Match.tournament_id == made.id)))
    by_group: dict[str | None, set[int]] = {}
    for match in rows:
        by_group.setdefault(match.mirror_group, set()).add(match.seed)
    assert None not in by_group and len(by_group) == 3
    assert all(len(seeds) == 1 for seeds in by_group.values())
    assert all(sealing.sealed(m) for m in rows)


def test_a_failed_member_played_again_after_its_group_opened_gets_a_fresh_deal(
    app: Flask, world: World
) -> None:
    from web.extensions import db
    from web.models import MatchStatus
    from web.services import matches, sealing

    group = make_group(world, "mirrored", "running")
    group.sibling.status = MatchStatus.FAILED
    db.session.commit()
    assert not sealing.hidden(group.finished)  # the failed member does not hold it back
    again = matches.requeue(group.sibling.id)
    assert again.seed != SEED and again.mirror_group is None
    assert not sealing.hidden(group.finished), "the open deal stays open"


def test_a_failed_member_of_a_group_still_sealed_keeps_its_deal(app: Flask, world: World) -> None:
    from web.extensions import db
    from web.models import MatchStatus
    from web.services import matches, sealing

    group = make_group(world, "mirrored", "running")
    third = _match(world, world.versions, MatchStatus.QUEUED, {"mirror_group": "g-sealed"})
    group.sibling.status = MatchStatus.FAILED
    db.session.commit()
    assert sealing.sealed(group.finished) and sealing.sealed(third)
    again = matches.requeue(group.sibling.id)
    assert again.seed == SEED and again.mirror_group == "g-sealed"


# Where a match's seed and stored replay may be read. Anything new that reads them must go
# through web.services.sealing (or web.api.replays, which does) and be added here on review.
SEED_READERS = {
    "web/api/present.py",  # seed only when not hidden
    "web/services/play.py",  # the worker that plays the match
    "web/services/sealing.py",  # the check itself
    "web/services/stats.py",  # compares seeds in SQL to leave out sealed deals; never reads one
    "web/templates/match.html",  # seed only when not hidden
}
REPLAY_READERS = {
    "web/api/replays.py",  # serves replays through the check
    "web/api/present.py",  # the replay's address only
    "web/api/tables.py",  # whether a person's own table has a replay to watch yet (never read)
    "web/services/collusion.py",  # finished matches only, after the check (the admins' report)
    "web/services/play.py",  # the worker writes it
    "web/views/matches.py",  # whether the page hosts the viewer (after the check)
    "web/models.py",
    "web/storage/__init__.py",
}
NOT_A_MATCH_SEED = re.compile(r"(tournament|form|self|Match)\.seed\b")


def test_only_the_sealing_check_reads_seeds_and_replays() -> None:
    seeds, replays = set(), set()
    for path in sorted((ROOT / "web").rglob("*")):
        if path.suffix not in (".py", ".html") or "migrations" in path.parts:
            continue
        name = str(path.relative_to(ROOT))
        text = NOT_A_MATCH_SEED.sub("", path.read_text("utf-8"))
        if re.search(r"\.seed\b", text):
            seeds.add(name)
        if "replay_path" in text or re.search(r"replays\.load\(", text):
            replays.add(name)
    assert seeds <= SEED_READERS, seeds - SEED_READERS
    assert replays <= REPLAY_READERS, replays - REPLAY_READERS
    assert "web/api/replays.py" in replays and "web/api/present.py" in seeds  # it does look
