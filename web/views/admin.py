"""Administrators' actions and reports: pause a bot, queue a match again, start a tournament,
read the collusion report."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from marshmallow import ValidationError
from sqlalchemy import select

from arena.games import names as game_names
from web.api import queries
from web.api.schemas import CollusionArgs
from web.auth import admin_required
from web.extensions import db
from web.forms import ActionForm, TournamentForm
from web.models import Bot, BotStatus, Match, MatchStatus
from web.services import collusion as collusion_service
from web.services import ladders as ladder_service
from web.services import matches as match_service
from web.services import tournaments as tournament_service

bp = Blueprint("admin", __name__, url_prefix="/admin")


@bp.route("")
@admin_required
def index() -> ResponseReturnValue:
    paused = db.session.scalars(select(Bot).where(Bot.status == BotStatus.PAUSED)).all()
    failed = queries.recent_matches(queries.MatchFilter(status=MatchStatus.FAILED), 25)
    return render_template(
        "admin.html",
        paused=paused,
        failed=failed,
        queue=queries.queue_status(),
        action=ActionForm(),
        form=TournamentForm(),
        ladders=queries.ladders(),
        slugs=queries.ladder_slugs(),
    )


@bp.route("/bots/<id:bot_id>/pause", methods=["POST"])
@admin_required
def pause(bot_id: int) -> ResponseReturnValue:
    bot = db.session.get(Bot, bot_id)
    if bot is None:
        abort(404)
    if ActionForm().validate_on_submit():
        bot.status = BotStatus.PAUSED
        bot.paused_reason = "paused by an administrator"
        db.session.commit()
        flash(f"{bot.name} is paused.", "ok")
    return redirect(url_for("bots.bot", bot_id=bot_id))


@bp.route("/matches/<id:match_id>/requeue", methods=["POST"])
@admin_required
def requeue(match_id: int) -> ResponseReturnValue:
    if db.session.get(Match, match_id) is None:
        abort(404)
    if ActionForm().validate_on_submit():
        try:
            match_service.requeue(match_id)
            flash(f"Match {match_id} is queued again.", "ok")
        except ValueError as exc:
            flash(str(exc), "error")
    return redirect(url_for("matches.match", match_id=match_id))


@bp.route("/tournaments", methods=["POST"])
@admin_required
def start_tournament() -> ResponseReturnValue:
    form = TournamentForm()
    if not form.validate_on_submit():
        flash("The tournament form has errors: " + str(form.errors), "error")
        return redirect(url_for("admin.index"))
    ladder = queries.ladder_by_slug(form.ladder.data or "")
    if ladder is None:
        flash(f"No ladder {form.ladder.data!r}.", "error")
        return redirect(url_for("admin.index"))
    ids = [int(x) for x in (form.versions.data or "").replace(" ", "").split(",") if x]
    if not ids:
        ids = [v.id for v in ladder_service.active_versions(ladder.game)]
    if len(ids) < ladder.players:
        flash(f"A tournament on {ladder.slug} needs at least {ladder.players} entries.", "error")
        return redirect(url_for("admin.index"))
    try:
        made = tournament_service.create_tournament(
            form.name.data or "tournament",
            ladder.game_config(),
            ids,
            tables=form.tables.data or 1,
            seed=form.seed.data,
        )
    except (LookupError, ValueError) as exc:
        flash(str(exc), "error")
        return redirect(url_for("admin.index"))
    return redirect(url_for("tournaments.tournament", tournament_id=made.id))


@bp.route("/collusion")
@admin_required
def collusion() -> ResponseReturnValue:
    """Every pair of authors: together against apart, and timing against choices."""
    try:
        args = CollusionArgs().load(request.args)
    except ValidationError as exc:
        abort(400, description=f"bad query: {exc.messages}")
    scope = collusion_service.Scope(args.get("game"), args["matches"], args["alpha"])
    report, unreadable = collusion_service.report(scope)
    return render_template(
        "admin_collusion.html",
        report=report,
        unreadable=unreadable,
        scope=scope,
        games=game_names(),
    )
