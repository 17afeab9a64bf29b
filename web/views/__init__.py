"""The server-rendered site: one small blueprint per area, all registered by ``register``."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask, abort, current_app, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_login import current_user
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException, InternalServerError

from arena.games import example, game_class
from arena.games.base import GameSpec
from web import charts
from web.api import error_payload, wants_json
from web.api.queries import score
from web.views import status


def register(app: Flask) -> None:
    """Blueprints, error pages, template helpers and the security headers of every answer."""
    from web.api import IdConverter
    from web.views import (
        admin,
        auth,
        bots,
        challenges,
        home,
        ladders,
        matches,
        owner,
        play,
        tournaments,
        users,
        viewer,
    )

    app.url_map.converters["id"] = IdConverter
    modules = (
        auth,
        home,
        ladders,
        bots,
        matches,
        challenges,
        play,
        tournaments,
        users,
        owner,
        admin,
        viewer,
    )
    for module in modules:
        app.register_blueprint(module.bp)
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(Exception, handle_unexpected)
    app.context_processor(template_helpers)
    # First of all, the CSRF check included: that check reads the form and takes every field's
    # name for text.
    app.before_request_funcs.setdefault(None, []).insert(0, refuse_malformed_fields)
    app.after_request(security_headers)
    app.jinja_env.filters["when"] = when
    app.jinja_env.filters["literals"] = literals
    app.jinja_env.filters["num"] = lambda x, d=2: "" if x is None else f"{x:.{d}f}"
    _configure_login(app)
    _trust_proxies(app)


def _trust_proxies(app: Flask) -> None:
    """Behind ``TRUSTED_PROXIES`` reverse proxies, take the client's address and scheme from
    their ``X-Forwarded-*`` headers (rate limits count per client, not per proxy)."""
    hops = int(app.config.get("TRUSTED_PROXIES", 0))
    if hops > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops
        )


def _configure_login(app: Flask) -> None:
    from web.extensions import login_manager

    login_manager.login_view = "auth.login"
    login_manager.login_message = "Log in to see that page."


def template_helpers() -> dict[str, Any]:
    return {
        "sparkline": charts.sparkline,
        "rating_chart": charts.rating_chart,
        "score": score,
        "page_url": page_url,
        "bot_state": status.bot_state,
        "version_stage": status.version_stage,
        "version_steps": status.steps,
        "example_game": example_game,
    }


def example_game() -> GameSpec:
    """The game the pages' examples name (``arena.games.example``)."""
    return game_class(example()).spec


def page_url(**changes: Any) -> str:
    """This page's address with some query arguments changed (a new sort starts at page 1)."""
    args = request.args.to_dict()
    if "sort" in changes:
        args.pop("page", None)
    args.update({k: v for k, v in changes.items() if v is not None})
    values: dict[str, Any] = {**(request.view_args or {}), **args}
    return url_for(request.endpoint or "home.index", **values)


def literals(text: str | None) -> Markup:
    """Escaped text in which spans between double backquotes become code elements."""
    escaped = str(escape(text or ""))
    return Markup(re.sub(r"``(.+?)``", r"<code>\1</code>", escaped))


def when(moment: Any) -> str:
    """A short UTC date and time for tables."""
    return moment.strftime("%Y-%m-%d %H:%M") if moment else "never"


def handle_http_error(error: HTTPException) -> ResponseReturnValue:
    """JSON envelope under /api, an HTML page elsewhere."""
    if error.code == 413:  # the body is not read: say what the limit is
        from web.api.uploads import too_large

        error.description = too_large(request.content_length)
    if wants_json():
        response = error.get_response()
        response.data = _json(error_payload(error))
        response.mimetype = "application/json"
        return response
    if error.code and 300 <= error.code < 400:
        return error.get_response()
    page = render_template("error.html", error=error, user=current_user)
    return page, error.code or 500, _retry_after(error)


def _retry_after(error: HTTPException) -> dict[str, str]:
    headers = dict(error.get_response().headers)
    return {k: v for k, v in headers.items() if k.lower() == "retry-after"}


def handle_unexpected(error: Exception) -> ResponseReturnValue:
    """503 with ``Retry-After`` while the database is unreachable (whatever raised it); any
    other error is a bug: logged with its traceback, answered as a plain 500 (no details leak)."""
    from web import health

    if health.database_unreachable(error):
        return handle_http_error(health.unavailable(error))
    current_app.logger.exception("unhandled error on %s", request.path)
    return handle_http_error(InternalServerError())


def _json(payload: dict[str, Any]) -> bytes:
    import orjson

    # The details of a bad list item are keyed by its index: ``{"entries": {0: [...]}}``.
    return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)


def refuse_malformed_fields() -> None:
    """400 for a NUL character in the path, query or form fields (no database stores one), and
    for a form part without a name (a malformed multipart body)."""
    fields = list(request.args.items(multi=True))
    if request.method == "POST" and request.mimetype in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        fields += list(request.form.items(multi=True))
    if any(k is None for k, _ in fields):
        abort(400, description="a form part without a name: send each field with its name")
    if "\x00" in request.path or any("\x00" in k + v for k, v in fields):
        abort(400, description="NUL characters are not allowed in requests")


CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PERMISSIONS_POLICY = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


def security_headers(response: Any) -> Any:
    """Headers every answer carries: no framing, no sniffing, scripts and forms of this site
    only, no referrer to other sites; over HTTPS, HSTS."""
    headers = response.headers
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
    headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
    if request.is_secure or current_app.config.get("SESSION_COOKIE_SECURE"):
        headers.setdefault("Strict-Transport-Security", "max-age=31536000")
    return response
