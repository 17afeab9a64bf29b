"""The home page: the games, the top of each ladder, recent matches, queue and workers."""

from __future__ import annotations

from flask import Blueprint, render_template
from flask.typing import ResponseReturnValue
from sqlalchemy import select

from web import auth
from web.api import queries
from web.api.catalog import game_list
from web.extensions import db
from web.models import Bot
from web.views.cache import anonymous_cache

bp = Blueprint("home", __name__)


@bp.route("/")
@anonymous_cache
def index() -> ResponseReturnValue:
    ladders = queries.ladders()
    user = auth.session_user()
    my_bots = (
        db.session.scalars(select(Bot).where(Bot.owner_id == user.id).order_by(Bot.name)).all()
        if user
        else []
    )
    return render_template(
        "home.html",
        games=game_list(),
        ladders=ladders,
        top=queries.top_of_ladders(5),
        recent=queries.matches(queries.MatchFilter(), 1, 10).items,
        slugs={ladder.id: ladder.slug for ladder in ladders},
        queue=queries.queue_status(),
        my_bots=my_bots,
    )


@bp.route("/docs/api")
def api_docs() -> ResponseReturnValue:
    """A readable index of the JSON API, generated from its OpenAPI document."""
    from web.api import api

    spec = api.spec.to_dict()
    return render_template("api_docs.html", spec=spec)
