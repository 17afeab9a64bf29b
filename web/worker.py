"""Worker entry point:
``celery -A web.worker worker -Q builds,default,validate,urgent,challenges,matches``
(or ``beat``)."""

from __future__ import annotations

from web import create_app

flask_app = create_app()
# Celery looks for ``app`` or ``celery`` here: both name the Celery app, bound to ``flask_app``.
celery = app = flask_app.extensions["celery"]
