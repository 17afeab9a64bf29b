"""The home page: the games, the top of each ladder, recent matches, queue and workers."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, abort, render_template, send_file
from flask.typing import ResponseReturnValue
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from arena.games import example
from web import auth
from web.api import queries
from web.api.catalog import game_list
from web.extensions import db
from web.models import Bot, BotStatus
from web.views.cache import anonymous_cache

bp = Blueprint("home", __name__)

PLAYING_NOW = 10
"""How many of the matches playing now the home page and a ladder page list."""

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"


def starter_files() -> dict[str, str]:
    """The starter kits and a sample bot per language (the greedy bot of the example game, see
    ``arena.games.example``), offered for download by name."""
    sample = f"{example()}-greedy"
    return {
        "kozyri_bot.py": "kit/python/kozyri_bot.py",
        "kozyri_bot.js": "kit/js/kozyri_bot.js",
        "python/bot.py": f"python/{sample}/bot.py",
        "python/bot.toml": f"python/{sample}/bot.toml",
        "js/bot.js": f"js/{sample}/bot.js",
        "js/bot.toml": f"js/{sample}/bot.toml",
    }


@bp.route("/")
@anonymous_cache
def index() -> ResponseReturnValue:
    ladders = queries.ladders()
    user = auth.session_user()
    my_bots = (
        db.session.scalars(
            select(Bot)
            .where(Bot.owner_id == user.id, Bot.status != BotStatus.DELETED)
            .options(selectinload(Bot.versions))
            .order_by(Bot.name)
        ).all()
        if user
        else []
    )
    return render_template(
        "home.html",
        games=game_list(),
        ladders=ladders,
        top=queries.top_of_ladders(5),
        recent=queries.recent_matches(queries.MatchFilter(), 10),
        playing=queries.recent_matches(queries.MatchFilter(status="running"), PLAYING_NOW),
        slugs={ladder.id: ladder.slug for ladder in ladders},
        queue=queries.queue_status(),
        my_bots=my_bots,
    )


FAVICON = Path(__file__).resolve().parents[1] / "static" / "favicon.ico"


@bp.route("/favicon.ico")
def favicon() -> ResponseReturnValue:
    """The site's icon, where browsers look for it first."""
    return send_file(FAVICON, mimetype="image/vnd.microsoft.icon", max_age=86400)


@bp.route("/docs/api")
def api_docs() -> ResponseReturnValue:
    """A readable index of the JSON API, generated from its OpenAPI document."""
    from web.api import api

    spec = api.spec.to_dict()
    return render_template("api_docs.html", spec=spec)


@bp.route("/docs/bots")
def bot_guide() -> ResponseReturnValue:
    """How to write a bot: the starter kits, the manifest, local play and ``arena submit``."""
    files = starter_files()
    sample = SAMPLES / files["python/bot.py"]
    return render_template(
        "bot_guide.html",
        games=game_list(),
        sample=sample.read_text(encoding="utf-8") if sample.is_file() else "",
        files=[name for name in files if (SAMPLES / files[name]).is_file()],
    )


@bp.route("/docs/bots/files/<path:name>")
def starter_file(name: str) -> ResponseReturnValue:
    """One starter file as plain text (only the files named in ``starter_files()``)."""
    files = starter_files()
    path = SAMPLES / files.get(name, "missing")
    if name not in files or not path.is_file():
        abort(404)
    return send_file(path, mimetype="text/plain", as_attachment=True, download_name=Path(name).name)
