"""API: the games, their ladders and standings, the queue, the sandbox's runtimes, and who the
token belongs to."""

from __future__ import annotations

import logging
from typing import Any

from flask import abort, current_app
from flask_smorest import Blueprint

from web import auth
from web.api import envelope, queries, without_database
from web.api import schemas as s
from web.api.present import ladder_json
from web.services.runtimes import offered

log = logging.getLogger(__name__)

blp = Blueprint("api_catalog", __name__, description="Games, ladders and the match queue")


def game_list() -> list[dict[str, Any]]:
    """Every registered game that loads, with the slugs of its ladders."""
    from arena.games import game_class, names

    by_game: dict[str, list[str]] = {}
    for ladder in queries.ladders():
        by_game.setdefault(ladder.game, []).append(ladder.slug)
    games = []
    for name in names():
        try:
            spec = game_class(name).spec
        except Exception as exc:  # a game module still being written must not break the site
            log.warning("game %s cannot be loaded: %s", name, exc)
            continue
        games.append(
            {
                "name": spec.name,
                "title": spec.title,
                "min_players": spec.min_players,
                "max_players": spec.max_players,
                "default_players": spec.default_players,
                "variants": list(spec.variants),
                "ladders": by_game.get(name, []),
            }
        )
    return games


@blp.route("/games")
@blp.response(200, s.envelope(s.Game, many=True))
def games() -> dict[str, Any]:
    """The games the arena referees."""
    return envelope(game_list())


@blp.route("/ladders")
@blp.response(200, s.envelope(s.Ladder, many=True))
def ladders() -> dict[str, Any]:
    """Every ladder: one per game, variant and table size."""
    return envelope([ladder_json(ladder) for ladder in queries.ladders()])


@blp.route("/ladders/<string:slug>")
@blp.arguments(s.StandingsArgs, location="query")
@blp.response(200, s.envelope(s.LadderStandings))
def ladder(args: dict[str, Any], slug: str) -> dict[str, Any]:
    """A ladder and one page of its standings (ranked by ``mu`` once placed, docs/ratings.md)."""
    found = queries.ladder_by_slug(slug)
    if found is None:
        abort(404, description=f"no ladder {slug!r}")
    page = queries.standings(found, args["sort"], args["page"], args["per_page"])
    data = {"ladder": ladder_json(found), "standings": [row.to_json() for row in page.items]}
    return envelope(data, page.meta())


@blp.route("/status")
@blp.response(200, s.envelope(s.QueueStatus))
def status() -> dict[str, Any]:
    """Matches queued and running, and the workers seen playing in the last ten minutes."""
    return envelope(queries.queue_status())


@blp.route("/runtimes")
@without_database
@blp.response(200, s.envelope(s.Runtimes))
def runtimes() -> dict[str, Any]:
    """The languages with a starter kit and their versions, and the interpreters and compilers
    an uploaded bot's ``run`` and ``build`` can call: those of the server's sandbox, probed once
    (a missing language says why; ``available`` false, with the reason, if nothing could be
    listed)."""
    return envelope(offered(str(current_app.config["SANDBOX"])))


@blp.route("/me")
@blp.response(200, s.envelope(s.Me))
@blp.doc(security=[{"token": []}])
def me() -> dict[str, Any]:
    """The account the request is authenticated as (401 if none)."""
    user = auth.reader()
    if user is None:
        abort(401, description="not logged in and no API token given")
    return envelope({"id": user.id, "username": user.username, "is_admin": user.is_admin})
