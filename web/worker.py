"""The worker entry point: ``celery -A web.worker worker -Q matches,default`` and ``... beat``."""

from __future__ import annotations

from web import create_app

app = create_app()
celery = app.extensions["celery"]
