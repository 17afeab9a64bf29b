"""The JSON API under ``/api/v1``, with its OpenAPI document at ``/api/v1/openapi.json``.

Built with flask-smorest on the plain Flask app: the schemas in ``web.api.schemas`` describe every
payload, and the document is generated from them and from the view functions.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, request
from flask_smorest import Api
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from web.api import schemas
from web.extensions import csrf, limiter

PREFIX = "/api/v1"


class ArenaApi(Api):
    """flask-smorest's Api with the project's error envelope (errors are handled app-wide)."""

    ERROR_SCHEMA = schemas.ErrorEnvelope

    def _register_error_handlers(self) -> None:
        """The app's handler in ``web.views.errors`` answers every error, JSON under /api."""


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
    from web.api import admin, bots, catalog, matches

    configure(app)
    app.url_map.converters["id"] = IdConverter
    api.init_app(app)
    api.register_converter(IdConverter, _id_schema)
    limit = app.config["API_RATE_LIMIT"]
    for module in (catalog, bots, matches, admin):
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
