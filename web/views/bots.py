"""Bot pages: a bot's ratings, versions, chart, opponents and matches; uploads; owner actions."""

from __future__ import annotations

import io
from collections.abc import Callable

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

from arena.checking import mib
from arena.uploads import UploadError
from web import auth, charts
from web.api import queries
from web.api.upload_limits import ALLOWANCES, upload_limited
from web.api.uploads import accept
from web.extensions import db
from web.forms import ActionForm, DeleteBotForm, PlayForm, UploadForm
from web.models import Bot, BotStatus, BotVersion, Ladder, Rating
from web.services import bots as bot_service
from web.services import human_ladder, runtimes, sealing, tables, versions
from web.services import stats as bot_stats
from web.services.placement import placing_bots
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
    placing = placing_bots([bot_id])  # read once: the ranks and the placement note
    return render_template(
        "bot.html",
        bot=found,
        owner=auth.owns_bot(user, found.owner_id),
        admin=auth.is_admin(user),
        ratings=ratings,
        ranks=queries.bot_ranks(bot_id, [ladder.id for _, ladder in ratings], placing),
        rank_label=queries.rank_label,
        ladder=chosen,
        history=history,
        places=places,
        placement=_placement(found, placing),
        rivals=queries.head_to_head(bot_id, chosen.id if chosen else None),
        recent=queries.recent_matches(queries.MatchFilter(bot_id=bot_id), 15),
        slugs=queries.ladder_slugs(),
        action=ActionForm(),
        records={r.version_id: r.to_json() for r in versions.records(found)},
        controls=_is_owner(found),
        delete_form=DeleteBotForm(),
        challenges=queries.challenges(None, bot_id, 1, 5).items,
        against_people=_against_people(found),
    )


def _against_people(found: Bot) -> list[human_ladder.Standing]:
    """How the version playing now fares against people, where it played enough tables."""
    active = found.active_version()
    return human_ladder.standings(active.id) if active is not None else []


def _placement(found: Bot, placing: dict[int, tuple[int, int]]) -> tuple[int, int, int] | None:
    """(number, placement matches played, owed in all) of the bot's active version while it
    is placing (``placing``: ``placing_bots([found.id])``)."""
    active = found.active_version()
    left = placing.get(found.id)
    return (active.number, *left) if active is not None and left else None


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
    error, problems, sent = None, [], None
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
            error, problems, sent = str(exc), exc.problems, stored.filename or "the file"
        else:
            db.session.refresh(version)  # a worker may have taken it already
            word, sentence = version_stage(version)
            flash(f"Version {version.number} uploaded ({word}): it {sentence}.", "ok")
            return redirect(url_for("bots.bot", bot_id=version.bot_id))
    offered = runtimes.offered(str(current_app.config["SANDBOX"]))
    allowances = [a.describe() for a in ALLOWANCES]
    page = render_template(
        "upload.html",
        form=form,
        error=error,
        problems=problems,
        sent=sent,
        offered=offered,
        allowances=allowances,
        limits=upload_limits_text(),
    )
    return page, 422 if error or form.errors else 200


def upload_limits_text() -> str:
    """``at most 32 MiB as sent, 64 MiB and 2000 files unpacked``."""
    cfg = current_app.config
    sent, unpacked = int(cfg["MAX_CONTENT_LENGTH"]), int(cfg["UPLOAD_MAX_BYTES"])
    files = int(cfg["UPLOAD_MAX_FILES"])
    return f"at most {mib(sent)} as sent, {mib(unpacked)} and {files} files unpacked"


@bp.route("/versions/<id:version_id>/archive")
@login_required
def archive(version_id: int) -> ResponseReturnValue:
    """The uploaded archive of a version: its owner's code, for its owner (and admins) only."""
    version = db.session.get(BotVersion, version_id)
    if version is None or not auth.owns_bot(auth.session_user(), version.bot.owner_id):
        abort(404)
    storage = get_storage()
    try:
        data = storage.get(storage.archive_key(version.sha256))
    except FileNotFoundError:
        abort(404)
    except OSError:
        abort(503)
    name = f"{version.bot.name}-v{version.number}.bin"
    return send_file(
        io.BytesIO(data),
        as_attachment=True,
        download_name=name,
        mimetype="application/octet-stream",
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


# --- an owner's control of the bot and its versions -------------------------------------------


def _owned(bot_id: int) -> Bot:
    """The bot, for its owner; 403 for anyone else, 404 if there is none."""
    found = _bot_or_404(bot_id)
    user = auth.session_user()
    if user is None or user.id != found.owner_id:
        abort(
            403,
            description="only the bot's owner can change which version plays, or "
            "retire or delete it",
        )
    return found


def _control(bot_id: int, action: Callable[[], object], done: str) -> ResponseReturnValue:
    try:
        action()
    except versions.ControlError as exc:
        flash(str(exc), "error")
    else:
        flash(done, "ok")
    return redirect(url_for("bots.bot", bot_id=bot_id))


@bp.route("/bots/<id:bot_id>/play", methods=["POST"])
@login_required
def play(bot_id: int) -> ResponseReturnValue:
    found = _owned(bot_id)
    form = PlayForm()
    if not form.validate_on_submit():
        flash("that is not a version number", "error")
        return redirect(url_for("bots.bot", bot_id=bot_id))
    number = form.number.data
    done = (
        f"Version {number} plays the ladders now, and stays until you choose another."
        if number
        else "The newest validated version plays now, and each newer one once validated."
    )
    return _control(bot_id, lambda: versions.choose(found, number), done)


@bp.route("/bots/<id:bot_id>/humans", methods=["POST"])
@login_required
def humans(bot_id: int) -> ResponseReturnValue:
    """The owner lets people play the bot at the tables, or stops them."""
    found = _owned(bot_id)
    if not ActionForm().validate_on_submit():
        abort(400)
    tables.allow_people(found, request.form.get("allow") == "1")
    if found.humans_may_play:
        flash(f"People may now choose {found.name} at the tables (unrated for it).", "ok")
    else:
        flash(f"People can no longer choose {found.name} at the tables.", "ok")
    return redirect(url_for("bots.bot", bot_id=bot_id))


@bp.route("/bots/<id:bot_id>/retire", methods=["POST"])
@login_required
def retire(bot_id: int) -> ResponseReturnValue:
    found = _owned(bot_id)
    if not ActionForm().validate_on_submit():
        abort(400)
    done = "The bot is retired: it plays no ladder match. Choose a version to bring it back."
    return _control(bot_id, lambda: versions.retire(found), done)


@bp.route("/bots/<id:bot_id>/delete", methods=["POST"])
@login_required
def delete(bot_id: int) -> ResponseReturnValue:
    found = _owned(bot_id)
    form = DeleteBotForm()
    if not form.validate_on_submit():
        flash("type the bot's name to delete it", "error")
        return redirect(url_for("bots.bot", bot_id=bot_id))
    try:
        versions.delete_bot(found, form.confirm.data or "")
    except versions.ControlError as exc:
        flash(str(exc), "error")
        return redirect(url_for("bots.bot", bot_id=bot_id))
    flash(f"{found.name} is deleted; its finished matches keep its name.", "ok")
    return redirect(url_for("users.user", username=found.owner.username))


@bp.route("/bots/<id:bot_id>/compare")
def compare(bot_id: int) -> ResponseReturnValue:
    """Two versions side by side: rating, win rate, errors, think time."""
    found = _bot_or_404(bot_id)
    records = {r.number: r.to_json() for r in versions.records(found)}
    numbers = sorted(records, reverse=True)
    a = _number_arg("a", numbers[1] if len(numbers) > 1 else None)
    b = _number_arg("b", numbers[0] if numbers else None)
    if (a is not None and a not in records) or (b is not None and b not in records):
        abort(404, description=f"{found.name} has no such version")
    return render_template(
        "compare.html",
        bot=found,
        numbers=numbers,
        a=records.get(a) if a is not None else None,
        b=records.get(b) if b is not None else None,
        owner=_is_owner(found),
    )


def _is_owner(found: Bot) -> bool:
    user = auth.session_user()
    return user is not None and user.id == found.owner_id


def _number_arg(name: str, default: int | None) -> int | None:
    raw = request.args.get(name, "")
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else default


# --- statistics ---------------------------------------------------------------------------------


@bp.route("/bots/<id:bot_id>/stats")
def stats(bot_id: int) -> ResponseReturnValue:
    """The bot's statistics, of every version or of the one chosen."""
    found = _bot_or_404(bot_id)
    numbers = [v.number for v in reversed(found.versions)]
    number = _number_arg("version", None)
    if request.args.get("version") and number not in numbers:
        abort(404, description=f"{found.name} has no such version")
    version_id = next((v.id for v in found.versions if v.number == number), None)
    figures = bot_stats.bot_stats(found, version_id)
    return render_template(
        "stats.html",
        bot=found,
        numbers=numbers,
        number=number,
        stats=figures,
        owner=_is_owner(found),
        charts=charts,
        day_points=[(r["day"], r["win_rate"]) for r in figures["by_day"]],
        seat_bars=[(f"seat {r['seat']}", r["win_rate"], r["matches"]) for r in figures["by_seat"]],
        player_bars=[
            (f"{r['players']} players", r["win_rate"], r["matches"]) for r in figures["by_players"]
        ],
    )


@bp.route("/errors")
@login_required
def errors() -> ResponseReturnValue:
    """The logged-in author's matches in which a bot of theirs erred, newest first."""
    user = auth.session_user()
    assert user is not None
    page_no = _number_arg("page", 1) or 1
    bot_id = _number_arg("bot", None)
    page = queries.paginate(bot_stats.error_seats(user.id, bot_id), min(page_no, 100_000), 50)
    hidden = sealing.hidden_ids(seat.match for seat in page.items)
    rows = [bot_stats.error_row(seat, seat.match_id in hidden) for seat in page.items]
    mine = [b for b in user.bots if b.status != BotStatus.DELETED]
    return render_template("errors.html", rows=rows, page=page, bots=mine, bot_id=bot_id)
