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
