"""Worker entry point: ``celery -A web.worker:celery worker -Q matches,default`` (or ``beat``)."""

from __future__ import annotations

from web import create_app

app = create_app()
celery = app.extensions["celery"]
