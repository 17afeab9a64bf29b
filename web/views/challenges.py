"""Challenge pages: the list (everyone's, one user's, or one bot's), one challenge with its
results and matches, and the form that makes one."""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import login_required
from sqlalchemy import select

from web import auth
from web.api import queries
from web.api.challenges import present
from web.extensions import db
from web.forms import ChallengeForm
from web.models import Bot, BotStatus, BotVersion, Challenge, Ladder, User, VersionStatus
from web.services import challenges as service
from web.services import ladders
from web.views.ladders import page_arg

bp = Blueprint("challenges", __name__, url_prefix="/challenges")

MAX_ID = 2**31 - 1
"""The largest bot id or version number a seat may name (the database's integer)."""


def _int_arg(name: str) -> int | None:
    raw = request.args.get(name, "")
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else None


@bp.route("")
def index() -> ResponseReturnValue:
    user = request.args.get("user") or None
    bot_id = _int_arg("bot")
    page = queries.challenges(user, bot_id, page_arg(), 20)
    return render_template(
        "challenges.html", page=page, rows=present(list(page.items)), user=user, bot_id=bot_id
    )


@bp.route("/<id:challenge_id>")
def challenge(challenge_id: int) -> ResponseReturnValue:
    found = db.session.get(Challenge, challenge_id)
    if found is None:
        abort(404)
    return render_template(
        "challenge.html", challenge=found, row=present([found])[0], slugs=queries.ladder_slugs()
    )


@bp.route("/new", methods=["GET", "POST"])
@login_required
def new() -> ResponseReturnValue:
    """The form: a ladder of the challenged bot's games, one seat select per seat, deals."""
    user = auth.session_user()
    assert user is not None
    target = db.session.get(Bot, _int_arg("bot") or 0)
    if target is None or target.status == BotStatus.DELETED:
        abort(404)
    open_ladders = _ladders_of(target)
    form = ChallengeForm()
    if not form.is_submitted():
        form.ladder.data = request.args.get("ladder") or (
            open_ladders[0].slug if open_ladders else ""
        )
    ladder = next((x for x in open_ladders if x.slug == form.ladder.data), None)
    error = None
    if ladder is not None and request.method == "POST" and form.validate():
        try:
            made = service.create(user, ladder, _entries(), int(form.deals.data or 1))
        except (service.ChallengeError, service.ChallengeLimit) as exc:
            error = str(exc)
        else:
            flash(f"Challenge {made.id} queued: its matches play ahead of the ladders.", "ok")
            return redirect(url_for("challenges.challenge", challenge_id=made.id))
    page = render_template(
        "challenge_new.html",
        form=form,
        target=target,
        ladders=open_ladders,
        ladder=ladder,
        options=_options(user, target, ladder),
        chosen=_chosen(user, target, ladder),
        error=error,
        allowance=service.describe_allowance(),
        used=service.count_recent(user),
    )
    status = 429 if error and "used up" in error else 422 if error or form.errors else 200
    return page, status


def _ladders_of(bot: Bot) -> list[Ladder]:
    games: list[str] = []
    for version in bot.versions:
        if version.status in service.VALIDATED:
            games += [g for g in version.games or [] if g not in games]
    return ladders.ladders_for(games)


def _digits(text: str) -> bool:
    """Whether ``text`` is a number in ASCII digits (``str.isdigit`` also takes ``²``)."""
    return text.isascii() and text.isdigit()


def _entries() -> list[service.Entry]:
    """The seat selects, read as entries; a value that is not one is a ``ChallengeError``."""
    entries = []
    for raw in request.form.getlist("seat"):
        bot, _, number = raw.partition(":")
        if not _digits(bot) or (number and not _digits(number)) or len(raw) > 24:
            raise service.ChallengeError(f"{raw!r} is not a seat")
        ids = (int(bot), int(number) if number else None)
        if any(n is not None and not 1 <= n <= MAX_ID for n in ids):
            raise service.ChallengeError(f"{raw!r} is not a seat")
        entries.append(service.Entry(*ids))
    return entries


def _options(user: User, target: Bot, ladder: Ladder | None) -> list[tuple[str, str]]:
    """(value, label) of each version that may take a seat: the challenged bot as it plays
    now, and every validated version of the user's own bots that plays the ladder's game."""
    if ladder is None:
        return []
    options: list[tuple[str, str]] = []
    if target.owner_id != user.id:
        playing = target.active_version()
        if playing is not None:
            label = f"{target.name} v{playing.number} ({target.owner.username}, as it plays now)"
            options.append((str(target.id), label))
    for version in _own_versions(user, ladder.game):
        mark = " (playing)" if version.status == VersionStatus.ACTIVE else ""
        label = f"{version.bot.name} v{version.number}{mark}"
        options.append((f"{version.bot_id}:{version.number}", label))
    return options


def _own_versions(user: User, game: str) -> list[BotVersion]:
    rows = db.session.scalars(
        select(BotVersion)
        .join(Bot)
        .where(
            Bot.owner_id == user.id,
            Bot.status != BotStatus.DELETED,
            BotVersion.status.in_(service.VALIDATED),
        )
        .order_by(Bot.name, BotVersion.number.desc())
    ).all()
    return [v for v in rows if game in (v.games or [])]


def _chosen(user: User, target: Bot, ladder: Ladder | None) -> list[str]:
    """The value preselected in each seat: as posted, else the ``a``/``b`` versions asked for
    (a comparison's "challenge them"), else the challenged bot against the user's newest."""
    if ladder is None:
        return []
    posted = request.form.getlist("seat")
    if posted:
        return posted
    asked = [request.args.get(k) for k in ("a", "b") if request.args.get(k, "").isdigit()]
    if asked:
        seats = [f"{target.id}:{n}" for n in asked]
    else:
        playing = target.active_version()
        first = f"{target.id}:{playing.number}" if target.owner_id == user.id and playing else ""
        seats = [first or str(target.id)]
    mine = _own_versions(user, ladder.game)
    fill = f"{mine[0].bot_id}:{mine[0].number}" if mine else ""
    return (seats + [fill] * ladder.players)[: ladder.players]
