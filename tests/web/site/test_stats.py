"""A bot's statistics through the API and the site: win rate and place by seat, table size,
opponent and day, errors by kind, think time; per version; sealed deals left out until their
group is done; an owner's list of matches with errors, refused to anyone else."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask.testing import FlaskClient

from tests.web.site.conftest import World, _bot, login
from tests.web.site.test_api import auth
from tests.web.site.test_versions import _new_version

STATS = "/api/v1/bots/{}/stats"


def _played(
    ladder: Any,
    seated: list[Any],
    places: list[int],
    *,
    status: str = "ok",
    strikes: int = 0,
    days_ago: int = 0,
    group: str | None = None,
    match_status: str = "finished",
    kind: str = "ladder",
    think: tuple[int, float, float, float] | None = (10, 20.0, 50.0, 80.0),
) -> Any:
    """A match row as the platform leaves it; seat 0's bot gets ``status`` and ``strikes``."""
    from web.extensions import db
    from web.models import Match, MatchSeat, utcnow

    finished = utcnow() - timedelta(days=days_ago)
    match = Match(
        ladder_id=ladder.id,
        game_config=ladder.game_config(),
        seed=len(places) + days_ago,
        status=match_status,
        kind=kind,
        mirror_group=group,
        finished_at=finished if match_status == "finished" else None,
        outcome={
            "forfeited": [status == "crash"] + [False] * (len(seated) - 1),
            "messages": [None if status == "ok" else f"the bot said {status}"]
            + [None] * (len(seated) - 1),
        },
    )
    for k, (version, place) in enumerate(zip(seated, places, strict=True)):
        moves, p50, p90, most = think if think else (None, None, None, None)
        match.seats.append(
            MatchSeat(
                seat=k,
                bot_id=version.bot_id,
                bot_version_id=version.id,
                place=place if match_status == "finished" else None,
                status=(status if k == 0 else "ok") if match_status == "finished" else None,
                strikes=strikes if k == 0 else 0,
                moves=moves,
                think_ms_p50=p50,
                think_ms_p90=p90,
                think_ms_max=most,
            )
        )
    db.session.add(match)
    db.session.flush()
    return match


def _stats_world(world: World) -> tuple[Any, Any, Any]:
    """alice's ``stat-bot`` (v1 and v2) against mallory-bot and a third bot."""
    from web.extensions import db

    bot, v1 = _bot(world.owner, "stat-bot")
    _, third = _bot(world.other, "third-bot")
    v2 = _new_version(bot, 2)
    rival = world.versions[1]
    lad = world.ladder
    _played(lad, [v1, rival], [1, 2], days_ago=2)
    _played(lad, [rival, v1], [1, 2], days_ago=2)  # seat 0 is mallory's: seat 1 is ours
    _played(lad, [v1, rival], [2, 1], status="timeout", strikes=1, days_ago=1)
    _played(lad, [v2, rival, third], [1, 3, 2], think=(4, 100.0, 400.0, 900.0))
    _played(lad, [v2, third], [2, 1], status="crash", think=None)
    # Not counted: a validation match, a queued one.
    _played(lad, [v1, rival], [1, 2], kind="validation")
    _played(lad, [v1, rival], [1, 2], match_status="queued")
    db.session.commit()
    return bot, v1, v2


def test_statistics_by_seat_table_opponent_day_errors_and_think_time(
    client: FlaskClient, world: World
) -> None:
    bot, _, _ = _stats_world(world)
    data = client.get(STATS.format(bot.id)).get_json()["data"]
    assert data["overall"] == {"matches": 5, "wins": 2, "win_rate": 0.4, "average_place": 1.6}
    by_seat = {r["seat"]: (r["matches"], r["wins"]) for r in data["by_seat"]}
    assert by_seat == {0: (4, 2), 1: (1, 0)}
    by_players = {r["players"]: (r["matches"], r["wins"]) for r in data["by_players"]}
    assert by_players == {2: (4, 1), 3: (1, 1)}
    rivals = {r["name"]: (r["matches"], r["ahead"]) for r in data["by_opponent"]}
    assert rivals == {"mallory-bot": (4, 2), "third-bot": (2, 1)}
    assert [r["matches"] for r in data["by_day"]] == [2, 1, 2], "oldest day first"
    errors = data["errors"]
    assert errors["matches_with_errors"] == 2
    assert errors["by_kind"]["timeout"] == errors["timeouts"] == 1
    assert errors["by_kind"]["crash"] == 1 and errors["by_kind"]["illegal_action"] == 0
    assert (errors["strikes"], errors["matches_with_strikes"]) == (1, 1)
    think = data["think"]
    assert (think["matches"], think["moves"]) == (4, 34)
    assert (think["p50_ms"], think["p90_ms"], think["max_ms"]) == (20.0, 400.0, 900.0)


def test_statistics_of_one_version_and_bad_versions(client: FlaskClient, world: World) -> None:
    bot, _, _ = _stats_world(world)
    one = client.get(STATS.format(bot.id) + "?version=2").get_json()["data"]
    assert one["version"] == 2
    assert one["overall"]["matches"] == 2 and one["overall"]["wins"] == 1
    assert one["errors"]["by_kind"]["crash"] == 1 and one["errors"]["timeouts"] == 0
    missing = client.get(STATS.format(bot.id) + "?version=9")
    assert missing.status_code == 404
    assert "no version 9" in missing.get_json()["error"]["message"]
    assert client.get(STATS.format(bot.id) + "?version=0").status_code == 422
    assert client.get(STATS.format(bot.id) + "?version=x").status_code == 422
    assert client.get(STATS.format(999_999)).status_code == 404


def test_a_sealed_deal_counts_only_once_its_group_is_done(
    client: FlaskClient, world: World
) -> None:
    from web.extensions import db
    from web.models import MatchStatus

    bot, v1, _ = _stats_world(world)
    rival = world.versions[1]
    _played(world.ladder, [v1, rival], [1, 2], group="deal-7", days_ago=3)
    sibling = _played(world.ladder, [rival, v1], [1, 2], group="deal-7", match_status="queued")
    db.session.commit()
    before = client.get(STATS.format(bot.id)).get_json()["data"]
    assert before["overall"]["matches"] == 5, "the finished rotation is sealed"
    assert len(before["by_day"]) == 3
    sibling.status, sibling.finished_at = MatchStatus.FINISHED, sibling.created_at
    for seat, place in zip(sibling.seats, [1, 2], strict=True):
        seat.place, seat.status = place, "ok"
    db.session.commit()
    after = client.get(STATS.format(bot.id)).get_json()["data"]
    assert after["overall"]["matches"] == 7 and after["overall"]["wins"] == 3


def test_the_owners_list_of_matches_with_errors(client: FlaskClient, world: World) -> None:
    from web.extensions import db

    bot, v1, _ = _stats_world(world)
    rival = world.versions[1]
    sealed = _played(world.ladder, [v1, rival], [2, 1], status="illegal_action", group="deal-9")
    _played(world.ladder, [rival, v1], [1, 2], group="deal-9", match_status="queued")
    db.session.commit()
    got = client.get("/api/v1/errors", headers=auth(world, "alice")).get_json()
    rows = got["data"]
    assert [r["status"] for r in rows] == ["illegal_action", "crash", "timeout"], "newest first"
    assert got["meta"]["total"] == 3
    assert rows[0]["match_id"] == sealed.id and rows[0]["place"] is None, "sealed: no place"
    assert rows[1]["forfeited"] is True and rows[1]["message"] == "the bot said crash"
    assert rows[2]["place"] == 2 and rows[2]["strikes"] == 1 and rows[2]["version"] == 1
    only = client.get(f"/api/v1/errors?bot={bot.id}&per_page=1", headers=auth(world, "alice"))
    assert len(only.get_json()["data"]) == 1 and only.get_json()["meta"]["pages"] == 3
    # Nobody else sees them: mallory's list holds only mallory's bots, anonymous is refused.
    theirs = client.get("/api/v1/errors", headers=auth(world, "mallory")).get_json()["data"]
    assert all(r["bot"] != "stat-bot" for r in theirs)
    refused = client.get("/api/v1/errors")
    assert refused.status_code == 401 and "log in" in refused.get_json()["error"]["message"]
    assert client.get("/api/v1/errors?per_page=0", headers=auth(world, "alice")).status_code == 422


def test_the_statistics_and_error_pages(client: FlaskClient, world: World) -> None:
    bot, _, _ = _stats_world(world)
    page = client.get(f"/bots/{bot.id}/stats").get_data(as_text=True)
    assert 'id="by-seat"' in page and 'class="rate-bars"' in page and 'class="rate-line"' in page
    assert "mallory-bot" in page and "40.0%" in page
    assert client.get(f"/bots/{bot.id}/stats?version=2").status_code == 200
    assert client.get(f"/bots/{bot.id}/stats?version=9").status_code == 404
    assert client.get("/errors").status_code == 302, "the list is for its owner: log in"
    login(client, "alice")
    mine = client.get("/errors").get_data(as_text=True)
    assert mine.count("<tr data-match=") == 2 and "the bot said timeout" in mine
    login(client, "mallory")
    assert "stat-bot" not in client.get("/errors").get_data(as_text=True)
