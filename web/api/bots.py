"""API: bots, their versions and rating histories, and uploads of new versions."""

from __future__ import annotations

from typing import Any

from flask import abort, current_app, request
from flask_smorest import Blueprint
from sqlalchemy import select
from sqlalchemy.orm import joinedload, selectinload

from arena.uploads import UploadError
from web import auth
from web.api import envelope, queries
from web.api import schemas as s
from web.api.present import bot_json, version_json
from web.api.upload_limits import upload_limited
from web.api.uploads import accept, manifest_part, too_large
from web.extensions import db
from web.models import Bot, BotStatus, BotVersion, User
from web.services import sealing, stats, versions
from web.services.placement import placement_owed

blp = Blueprint("api_bots", __name__, description="Bots, versions, ratings and uploads")


def _bot_or_404(bot_id: int) -> Bot:
    found = queries.bot(bot_id)
    if found is None:
        abort(404, description=f"no bot {bot_id}")
    return found


@blp.route("/bots")
@blp.arguments(s.BotArgs, location="query")
@blp.response(200, s.envelope(s.Bot, many=True))
def bots(args: dict[str, Any]) -> dict[str, Any]:
    """Bots, newest first (optionally one user's)."""
    stmt = select(Bot).where(Bot.status != BotStatus.DELETED).order_by(Bot.id.desc())
    if args.get("user"):
        stmt = stmt.join(User, User.id == Bot.owner_id).where(User.username == args["user"])
    loads = (joinedload(Bot.owner), selectinload(Bot.versions))
    page = queries.paginate(stmt, args["page"], args["per_page"], *loads)
    reader = auth.reader()
    owed = placement_owed([v for b in page.items for v in b.versions])
    data = [bot_json(b, auth.owns_bot(reader, b.owner_id), owed=owed) for b in page.items]
    return envelope(data, page.meta())


@blp.route("/bots/<id:bot_id>")
@blp.response(200, s.envelope(s.Bot))
def bot(bot_id: int) -> dict[str, Any]:
    """One bot with its ratings and versions (logs only for its owner)."""
    found = _bot_or_404(bot_id)
    private = auth.owns_bot(auth.reader(), found.owner_id)
    return envelope(bot_json(found, private, queries.bot_ratings(bot_id)))


@blp.route("/bots/<id:bot_id>/ratings")
@blp.arguments(s.RatingArgs, location="query")
@blp.response(200, s.RatingHistoryEnvelope)
def ratings(args: dict[str, Any], bot_id: int) -> dict[str, Any]:
    """Rating history on a ladder as ``[[iso time, mu - 3 sigma, mu, sigma], ...]``."""
    found = _bot_or_404(bot_id)
    ladder = _ladder_of(found, args.get("ladder"))
    points = queries.rating_history(found.id, ladder.id, args["points"]) if ladder else []
    return envelope(points, None)


def _ladder_of(found: Bot, slug: str | None) -> Any:
    """The named ladder, or the bot's first one when none is named."""
    if slug:
        ladder = queries.ladder_by_slug(slug)
        if ladder is None:
            abort(404, description=f"no ladder {slug!r}")
        return ladder
    rated = queries.bot_ratings(found.id)
    return rated[0][1] if rated else None


@blp.route("/versions/<id:version_id>")
@blp.response(200, s.envelope(s.Version))
def version(version_id: int) -> dict[str, Any]:
    """One bot version: its status, and for its owner the build and validation logs."""
    found = db.session.get(BotVersion, version_id)
    if found is None:
        abort(404, description=f"no bot version {version_id}")
    owner_id = db.session.scalar(select(Bot.owner_id).where(Bot.id == found.bot_id))
    return envelope(version_json(found, auth.owns_bot(auth.reader(), int(owner_id or 0))))


@blp.route("/uploads", methods=["POST"])
@blp.arguments(s.UploadForm, location="form")
@blp.arguments(s.UploadFiles, location="files")
@blp.response(201, s.envelope(s.Version))
@blp.alt_response(
    413,
    schema=s.ErrorEnvelope,
    description="Content Too Large: the upload is over the server's size limit "
    "(`MAX_CONTENT_LENGTH`, 32 MiB by default); the message names the limit and, when the "
    "request gave its length, the upload's size",
)
@blp.alt_response(
    507,
    schema=s.ErrorEnvelope,
    description="Insufficient Storage: the server's storage cannot hold the upload; nothing "
    "was kept (no version, no file): send it again later",
)
@blp.alt_response(
    429,
    schema=s.ErrorEnvelope,
    description="Too Many Requests: the uploading account has used up one of its upload allowances "
    "(accepted uploads, or uploads refused for a mistake in them); the message says which and "
    "when it resets",
    headers={"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}},
)
@blp.doc(security=[{"token": []}])
@upload_limited
def upload(form: dict[str, Any], files: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Upload a new bot version (an archive, or one file plus ``manifest``); needs a token.

    The bot is named by its manifest. The version then builds and validates in the background:
    poll ``/versions/<id>`` for its status.
    """
    owner = auth.writer()
    stored = files["file"]
    data = stored.read(int(_max_bytes()) + 1)
    if len(data) > _max_bytes():
        abort(413, description=too_large(request.content_length))
    try:
        manifest = manifest_part(form.get("manifest"), files.get("manifest"))
        created = accept(owner, data, stored.filename or "bot", manifest)
    except UploadError as exc:
        abort(422, description=str(exc))
    return envelope(version_json(created, True)), 201


def _max_bytes() -> int:
    return int(current_app.config["MAX_CONTENT_LENGTH"])


# --- an owner's control of the bot and its versions -------------------------------------------

_OWNER_ONLY = {
    "description": "Forbidden: only the bot's owner can do this",
    "schema": s.ErrorEnvelope,
}


def _owned(bot_id: int, what: str) -> Bot:
    """The bot, if the token's user owns it: 404 if there is none (or it was deleted), 403 for
    anyone else (the bot's page is public, so its existence is no secret)."""
    found = _bot_or_404(bot_id)
    if auth.writer().id != found.owner_id:
        abort(403, description=f"only the bot's owner can {what}")
    return found


def _control(action: Any) -> None:
    try:
        action()
    except versions.ControlError as exc:
        abort(422, description=str(exc))


@blp.route("/bots/<id:bot_id>/versions")
@blp.response(200, s.envelope(s.VersionRecord, many=True))
def version_records(bot_id: int) -> dict[str, Any]:
    """Every version of the bot with its record (matches, wins, errors, think time, ratings),
    newest first; validation matches are not counted."""
    found = _bot_or_404(bot_id)
    return envelope([r.to_json() for r in versions.records(found)])


@blp.route("/bots/<id:bot_id>/compare")
@blp.arguments(s.CompareArgs, location="query")
@blp.response(200, s.envelope(s.Comparison))
def compare(args: dict[str, Any], bot_id: int) -> dict[str, Any]:
    """Two versions of the bot side by side: rating, win rate, errors, think time."""
    found = _bot_or_404(bot_id)
    by_number = {r.number: r for r in versions.records(found)}
    missing = [n for n in (args["a"], args["b"]) if n not in by_number]
    if missing:
        abort(404, description=f"{found.name} has no version {missing[0]}")
    a, b = by_number[args["a"]], by_number[args["b"]]
    return envelope({"bot_id": found.id, "a": a.to_json(), "b": b.to_json()})


@blp.route("/bots/<id:bot_id>/play", methods=["POST"])
@blp.arguments(s.PlayBody)
@blp.response(200, s.envelope(s.Bot))
@blp.alt_response(403, **_OWNER_ONLY)
@blp.doc(security=[{"token": []}])
def play(body: dict[str, Any], bot_id: int) -> dict[str, Any]:
    """Choose the version that plays the ladders (a rollback, or forward again); it stays
    chosen when newer versions are validated. ``null``: the newest validated version, and
    each newer one from now on."""
    found = _owned(bot_id, "choose the version that plays")
    _control(lambda: versions.choose(found, body["version"]))
    return envelope(bot_json(found, True, queries.bot_ratings(bot_id)))


@blp.route("/bots/<id:bot_id>/retire", methods=["POST"])
@blp.response(200, s.envelope(s.Bot))
@blp.alt_response(403, **_OWNER_ONLY)
@blp.doc(security=[{"token": []}])
def retire(bot_id: int) -> dict[str, Any]:
    """Retire the bot: it stops playing the ladders (its page, ratings and matches stay);
    choosing a version, or uploading a new one, brings it back."""
    found = _owned(bot_id, "retire it")
    _control(lambda: versions.retire(found))
    return envelope(bot_json(found, True, queries.bot_ratings(bot_id)))


@blp.route("/bots/<id:bot_id>/delete", methods=["POST"])
@blp.arguments(s.DeleteBody)
@blp.response(204)
@blp.alt_response(403, **_OWNER_ONLY)
@blp.doc(security=[{"token": []}])
def delete(body: dict[str, Any], bot_id: int) -> tuple[str, int]:
    """Delete the bot for good (``confirm`` is its name): its page and ladder rows go, its
    queued matches are cancelled; its finished matches and replays stay, with its name."""
    found = _owned(bot_id, "delete it")
    _control(lambda: versions.delete_bot(found, body["confirm"]))
    return "", 204


# --- statistics ---------------------------------------------------------------------------------


def version_id_of(found: Bot, number: int | None) -> int | None:
    """The id of ``found``'s version ``number`` (None: every version); 404 if it has none such."""
    if number is None:
        return None
    for v in found.versions:
        if v.number == number:
            return v.id
    abort(404, description=f"{found.name} has no version {number}")


@blp.route("/bots/<id:bot_id>/stats")
@blp.arguments(s.StatsArgs, location="query")
@blp.response(200, s.envelope(s.BotStats))
def bot_stats(args: dict[str, Any], bot_id: int) -> dict[str, Any]:
    """The bot's statistics (or one version's): win rate and average place by seat, table size,
    opponent and day; errors, timeouts and strikes by kind; think time per move. Counted over
    the finished matches among its ``window`` most recent, validation matches aside; a match
    whose deal group is still sealed counts once the whole group is done."""
    found = _bot_or_404(bot_id)
    version_id = version_id_of(found, args.get("version"))
    return envelope({**stats.bot_stats(found, version_id), "version": args.get("version")})


@blp.route("/errors")
@blp.arguments(s.ErrorListArgs, location="query")
@blp.response(200, s.envelope(s.ErrorSeat, many=True))
@blp.alt_response(401, schema=s.ErrorEnvelope, description="Unauthorized: log in or send a token")
@blp.doc(security=[{"token": []}])
def errors(args: dict[str, Any]) -> dict[str, Any]:
    """Your bots' seats that ended in an error (crash, timeout, strikes, forfeit), newest match
    first, each with its match: what the referee said, and the place once the match is open."""
    user = auth.reader()
    if user is None:
        abort(401, description="this list is your own: log in or send an API token")
    page = queries.paginate(stats.error_seats(user.id, args.get("bot")), args["page"],
                            args["per_page"])  # fmt: skip
    hidden = sealing.hidden_ids(seat.match for seat in page.items)
    data = [stats.error_row(seat, seat.match_id in hidden) for seat in page.items]
    return envelope(data, page.meta())
