"""Bot pages: a bot's ratings, versions, chart, opponents and matches; uploads; owner actions."""

from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_login import login_required

from web import auth
from web.api import queries
from web.api.upload_limits import ALLOWANCES, upload_limited
from web.api.uploads import accept
from web.extensions import db
from web.forms import ActionForm, UploadForm
from web.models import Bot, BotStatus, BotVersion, Ladder, Rating
from web.services import bots as bot_service
from web.services import runtimes
from web.services.uploads import UploadError
from web.storage import get_storage
from web.views.status import version_stage

bp = Blueprint("bots", __name__)


def _bot_or_404(bot_id: int) -> Bot:
    found = queries.bot(bot_id)
    if found is None:
        abort(404)
    return found


@bp.route("/bots/<id:bot_id>")
def bot(bot_id: int) -> ResponseReturnValue:
    found = _bot_or_404(bot_id)
    user = auth.session_user()
    ratings = queries.bot_ratings(bot_id)
    chosen = _chosen_ladder(ratings, request.args.get("ladder"))
    history = queries.rating_history(bot_id, chosen.id, 200) if chosen else []
    places = queries.placements(chosen.id, [bot_id]).get(bot_id, {}) if chosen else {}
    return render_template(
        "bot.html",
        bot=found,
        owner=auth.owns_bot(user, found.owner_id),
        admin=auth.is_admin(user),
        ratings=ratings,
        ladder=chosen,
        history=history,
        places=places,
        placement=_placement(found),
        rivals=queries.head_to_head(bot_id, chosen.id if chosen else None),
        recent=queries.recent_matches(queries.MatchFilter(bot_id=bot_id), 15),
        slugs=queries.ladder_slugs(),
        action=ActionForm(),
    )


def _placement(found: Bot) -> tuple[int, int] | None:
    """(number, placement matches left) of the bot's active version, if it has any left."""
    from web.services.ladders import placement_left

    active = found.active_version()
    left = placement_left(active) if active is not None else 0
    return (active.number, left) if active is not None and left else None


def _chosen_ladder(ratings: list[tuple[Rating, Ladder]], slug: str | None) -> Ladder | None:
    """The ladder named ``slug`` among the bot's, else its first one (None if it has none)."""
    for _rating, ladder in ratings:
        if slug is None or ladder.slug == slug:
            return ladder
    return ratings[0][1] if ratings else None


@bp.route("/upload", methods=["GET", "POST"])
@login_required
@upload_limited
def upload() -> ResponseReturnValue:
    form = UploadForm()
    error = None
    if form.validate_on_submit():
        stored = form.file.data
        try:
            version = accept(
                auth.session_user(),  # type: ignore[arg-type]
                stored.read(),
                stored.filename or "bot",
                form.manifest.data or None,
            )
        except UploadError as exc:
            error = str(exc)
        else:
            db.session.refresh(version)  # a worker may have taken it already
            word, sentence = version_stage(version)
            flash(f"Version {version.number} uploaded ({word}): it {sentence}.", "ok")
            return redirect(url_for("bots.bot", bot_id=version.bot_id))
    offered = runtimes.offered(str(current_app.config["SANDBOX"]))
    allowances = [a.describe() for a in ALLOWANCES]
    page = render_template(
        "upload.html", form=form, error=error, offered=offered, allowances=allowances
    )
    return page, 422 if error or form.errors else 200


@bp.route("/versions/<id:version_id>/archive")
@login_required
def archive(version_id: int) -> ResponseReturnValue:
    """The uploaded archive of a version: its owner's code, for its owner (and admins) only."""
    version = db.session.get(BotVersion, version_id)
    if version is None or not auth.owns_bot(auth.session_user(), version.bot.owner_id):
        abort(404)
    path = get_storage().archive_path(version.sha256)
    if not path.exists():
        abort(404)
    name = f"{version.bot.name}-v{version.number}.bin"
    return send_file(
        path, as_attachment=True, download_name=name, mimetype="application/octet-stream"
    )


@bp.route("/bots/<id:bot_id>/resume", methods=["POST"])
@login_required
def resume(bot_id: int) -> ResponseReturnValue:
    found = _bot_or_404(bot_id)
    if not auth.owns_bot(auth.session_user(), found.owner_id):
        abort(404)
    if ActionForm().validate_on_submit() and found.status == BotStatus.PAUSED:
        bot_service.resume(found)
        flash("The bot plays again.", "ok")
    return redirect(url_for("bots.bot", bot_id=bot_id))
