"""The replay viewer's game adapters, served from the game folders.

The viewer's own modules are static files (``web/static/js/viewer``); each game's adapter lives in
its folder (``arena/games/<game>/viewer.js``) and is served beside them, at
``/static/js/viewer/games/<game>.js``, so its relative imports of the viewer's shared helpers
(``../adapters/common.js``) resolve as they would on disk.
"""

from __future__ import annotations

from flask import Blueprint, abort, send_file
from flask.typing import ResponseReturnValue

from arena import games
from arena.games.base import ConfigError

bp = Blueprint("viewer", __name__)


@bp.route("/static/js/viewer/games/<name>.js")
def game_adapter(name: str) -> ResponseReturnValue:
    """The adapter of the game ``name``; 404 for an unknown game or one without an adapter."""
    try:
        script = games.viewer_script(name)
    except ConfigError:
        abort(404)
    if script is None:
        abort(404)
    return send_file(script, mimetype="text/javascript")
