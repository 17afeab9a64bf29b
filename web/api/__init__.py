"""The JSON API under ``/api/v1``, with its OpenAPI document at ``/api/v1/openapi.json``.

Built with flask-smorest on the plain Flask app: the schemas in ``web.api.schemas`` describe every
payload, and the document is generated from them and from the view functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, request
from flask_smorest import Api
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from web.api import schemas
from web.extensions import csrf, limiter

PREFIX = "/api/v1"


DATABASE_UNREACHABLE = "DATABASE_UNREACHABLE"


class ArenaApi(Api):
    """flask-smorest's Api with the project's error envelope (errors are handled app-wide), and
    a 503 declared on every operation that needs the database."""

    ERROR_SCHEMA = schemas.ErrorEnvelope

    def _register_error_handlers(self) -> None:
        """The app's handler in ``web.views`` answers every error, JSON under /api."""

    def _register_responses(self) -> None:
        super()._register_responses()
        header = {"description": "seconds to wait", "schema": {"type": "integer"}}
        response = {
            "description": "Service Unavailable: the database does not answer just now; "
            "send the request again after `Retry-After` seconds",
            "headers": {"Retry-After": header},
            "content": {"application/json": {"schema": self.ERROR_SCHEMA}},
        }
        self.spec.components.response(DATABASE_UNREACHABLE, response)

    def register_blueprint(self, blp: Any, **options: Any) -> None:
        # flask-smorest builds each operation's document through these callbacks; one more,
        # run first, adds the 503 to every operation without decorating each view.
        if _declare_outage not in blp._prepare_doc_cbks:
            blp._prepare_doc_cbks.insert(0, _declare_outage)
        super().register_blueprint(blp, **options)


def _declare_outage(doc: dict[str, Any], doc_info: dict[str, Any], **_kw: Any) -> dict[str, Any]:
    """Add the 503 to an operation's responses, unless its view is ``without_database``."""
    if not doc_info.get(_WITHOUT_DATABASE):
        responses = doc_info.setdefault("response", {}).setdefault("responses", {})
        responses.setdefault(503, []).append(DATABASE_UNREACHABLE)
    return doc


_WITHOUT_DATABASE = "arena_without_database"
F = TypeVar("F", bound=Callable[..., Any])


def without_database(view: F) -> F:
    """Marks an API view that never reads the database (its document declares no 503)."""
    view.__dict__.setdefault("_apidoc", {})[_WITHOUT_DATABASE] = True
    return view


api = ArenaApi()

MAX_ID = 2**31 - 1


class IdConverter(IntegerConverter):
    """``<id:name>``: a row id, 1 to 2**31-1 (larger numbers are a 404, not a database error)."""

    def __init__(self, url_map: Any) -> None:
        super().__init__(url_map, min=1, max=MAX_ID)


def _id_schema(_converter: Any) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": MAX_ID}


def configure(app: Flask) -> None:
    """OpenAPI settings (only those the app has not set already)."""
    app.config.setdefault("API_TITLE", "Kozyri Arena")
    app.config.setdefault("API_VERSION", "v1")
    app.config.setdefault("OPENAPI_VERSION", "3.0.3")
    app.config.setdefault("OPENAPI_URL_PREFIX", PREFIX)
    app.config.setdefault("OPENAPI_JSON_PATH", "openapi.json")
    app.config.setdefault("API_RATE_LIMIT", "600 per minute")
    app.config.setdefault(
        "API_SPEC_OPTIONS",
        {
            "info": {"description": "Games, ladders, bots, matches and replays of Kozyri Arena."},
            "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        },
    )


def register(app: Flask) -> None:
    """Attach the API blueprints; they authenticate by token and so skip CSRF checks."""
    from web.api import admin, bots, catalog, challenges, matches, owner, tables

    configure(app)
    app.url_map.converters["id"] = IdConverter
    api.init_app(app)
    api.register_converter(IdConverter, _id_schema)
    limit = app.config["API_RATE_LIMIT"]
    for module in (catalog, bots, matches, challenges, tables, owner, admin):
        csrf.exempt(module.blp)
        limiter.limit(limit)(module.blp)
        api.register_blueprint(module.blp, url_prefix=PREFIX)


def error_payload(error: HTTPException) -> dict[str, Any]:
    """The error envelope for ``error`` (validation messages go in ``details``)."""
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    details = data.get("messages") if isinstance(data, dict) else None
    body: dict[str, Any] = {
        "status": status,
        "code": (error.name or "error").lower().replace(" ", "_"),
        "message": error.description or error.name or "error",
    }
    if details:
        body["details"] = details
    return {"error": body}


def wants_json() -> bool:
    return request.path == PREFIX or request.path.startswith(PREFIX + "/")


def envelope(data: Any, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The success envelope."""
    return {"data": data, "meta": meta} if meta is not None else {"data": data}
