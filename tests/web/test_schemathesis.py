"""Property-based tests of the JSON API from its own OpenAPI document: whatever schemathesis
generates (valid or not), no endpoint answers with a server error."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from tests.web.site.conftest import World
from tests.web.site.conftest import app as app
from tests.web.site.conftest import world as world


def spec_app() -> Flask:
    """An app only asked for its OpenAPI document (building it touches no database)."""
    from web import create_app

    scratch = tempfile.gettempdir()
    return create_app({"DATABASE_URL": "sqlite://", "STORAGE_DIR": scratch})


schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", spec_app())


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_server_errors(case: Any, app: Flask, world: World) -> None:
    """Every operation, against the test database filled with a ladder and matches."""
    app.config["API_RATE_LIMIT"] = "100000 per minute"
    headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
    case.call_and_validate(app=app, headers=headers, checks=[not_a_server_error])


def test_the_document_covers_every_api_route() -> None:
    """What schemathesis calls is what the document lists: an undocumented route would escape."""
    import re

    app = spec_app()
    spec = app.test_client().get("/api/v1/openapi.json").get_json()
    documented = {
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method in operations
        if method in {"get", "post", "put", "patch", "delete"}
    }
    served = {
        (method, re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule))
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/") and rule.rule != "/api/v1/openapi.json"
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}
    }
    prefix = "/api/v1"
    documented = {(m, p if p.startswith(prefix) else prefix + p) for m, p in documented}
    assert served <= documented, served - documented
    assert ("POST", "/api/v1/uploads") in documented
