"""An owner's tools on the site: their webhooks and deliveries; the bot page's events and
bulk replay download, and the match page's links to their seats' logs (template helpers)."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import login_required

from web import auth
from web.extensions import db
from web.forms import ActionForm
from web.models import Bot, BotEvent, Match, Webhook
from web.services import events, seatlogs, webhooks

bp = Blueprint("owner", __name__)


@bp.app_template_global()
def bot_events(bot: Bot) -> list[BotEvent]:
    """The bot's latest events, for its page (shown to its owner)."""
    return events.recent(bot)


@bp.app_template_global()
def seat_logs(match: Match) -> list[int]:
    """The seats of ``match`` whose whole logs the logged-in user may download."""
    return seatlogs.readable_seats(match, auth.session_user())


@bp.route("/account/webhooks")
@login_required
def index() -> ResponseReturnValue:
    return _page(None)


def _page(created: Webhook | None) -> ResponseReturnValue:
    user = auth.session_user()
    assert user is not None
    return render_template(
        "webhooks.html",
        hooks=webhooks.hooks_of(user),
        deliveries=webhooks.deliveries_of(user),
        action=ActionForm(),
        limit=webhooks.MAX_WEBHOOKS,
        created=created,
    )


@bp.route("/account/webhooks", methods=["POST"])
@login_required
def add() -> ResponseReturnValue:
    user = auth.session_user()
    assert user is not None
    if not ActionForm().validate_on_submit():
        abort(400)
    try:
        hook = webhooks.subscribe(user, request.form.get("url", ""))
    except webhooks.WebhookRefused as exc:
        flash(f"Webhook refused: {exc}.", "error")
        return redirect(url_for("owner.index"))
    db.session.commit()
    return _page(hook)  # the secret is shown on this answer only, never stored in the session


@bp.route("/account/webhooks/<id:hook_id>/delete", methods=["POST"])
@login_required
def delete(hook_id: int) -> ResponseReturnValue:
    user = auth.session_user()
    hook = db.session.get(Webhook, hook_id)
    if user is None or hook is None or hook.user_id != user.id:
        abort(404)
    if ActionForm().validate_on_submit():
        webhooks.remove(hook)
        db.session.commit()
        flash("Webhook removed.", "ok")
    return redirect(url_for("owner.index"))
