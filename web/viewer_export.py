"""A replay as one standalone HTML file that plays offline, opened straight from disk.

The page holds the viewer's ES modules (as ``data:`` URLs behind an import map, their relative
imports renamed to the map's bare names), the viewer's CSS and the replay with every frame. The
browser builds the same file from the same template and module list
(``web/static/js/viewer/export.js``); this module builds it on the server, for example for a
download link or a command that saves a replay as a page.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from arena import games
from arena.replay import Replay, frames

STATIC = Path(__file__).resolve().parent / "static"
VIEWER = STATIC / "js" / "viewer"
CSS = STATIC / "css" / "viewer.css"

_PLACEHOLDER = re.compile(r"__(TITLE|CSS|IMPORTMAP|DATA)__")
_RELATIVE_IMPORT = re.compile(r'(from\s+|import\s*\(\s*)"(\.{1,2}/[^"]+)"')


GAMES_PREFIX = "games/"
"""Where the viewer looks for a game's adapter, beside its own modules (``games/<game>.js``)."""


def manifest() -> dict[str, Any]:
    """The viewer's module list and page template (``manifest.json``), with the adapter of every
    registered game that has one (``games/<game>.js``, from the game's folder)."""
    loaded: dict[str, Any] = json.loads((VIEWER / "manifest.json").read_text("utf-8"))
    adapters = [f"{GAMES_PREFIX}{name}.js" for name in games.names() if games.viewer_script(name)]
    return {**loaded, "modules": [*loaded["modules"], *adapters]}


def module_path(path: str) -> Path:
    """The file of the viewer module ``path``: a game's adapter lives in the game's folder."""
    if path.startswith(GAMES_PREFIX):
        script = games.viewer_script(path.removeprefix(GAMES_PREFIX).removesuffix(".js"))
        if script is None:
            raise FileNotFoundError(path)
        return script
    return VIEWER / path


def rewrite_imports(path: str, source: str) -> str:
    """``source`` (the module at ``path``) with relative imports named as in the import map."""

    def bare(match: re.Match[str]) -> str:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), match[2]))
        return f'{match[1]}"arena-viewer/{target}"'

    return _RELATIVE_IMPORT.sub(bare, source)


def script_json(value: Any) -> str:
    """JSON that cannot end the script element it sits in."""
    return orjson.dumps(value).decode().replace("<", "\\u003c")


def import_map(modules: dict[str, str]) -> dict[str, dict[str, str]]:
    """The import map giving every module (path to source) as a ``data:`` URL."""
    imports = {}
    for path, source in modules.items():
        code = quote(rewrite_imports(path, source), safe="")
        imports[f"arena-viewer/{path}"] = f"data:text/javascript;charset=utf-8,{code}"
    return {"imports": imports}


def build_page(template: str, css: str, modules: dict[str, str], data: Any, title: str) -> str:
    """Fill the standalone template with the CSS, the modules and the data."""
    values = {
        "TITLE": html.escape(title),
        "CSS": css.replace("</", "<\\/"),
        "IMPORTMAP": script_json(import_map(modules)),
        "DATA": script_json(data),
    }
    return _PLACEHOLDER.sub(lambda m: values[m[1]], template)


def standalone_html(replay: Replay, title: str | None = None) -> str:
    """The standalone page of ``replay``: every frame, all cards shown.

    The replay is embedded as given, debug and stderr text included: pass a finished match's
    replay as the reader may see it (``web.api.replays.served_bytes``). A replay without its
    seed (as a running or sealed match is served) shows no hidden card, so it cannot be
    exported: ``ValueError``.
    """
    if replay.get("seed") is None or replay.get("live"):
        raise ValueError("only a whole replay can be exported (this match is running or sealed)")
    spec = manifest()
    modules = {path: module_path(path).read_text("utf-8") for path in spec["modules"]}
    template = (VIEWER / spec["template"]).read_text("utf-8")
    data = {"replay": replay, "frames": frames(replay)}
    name = title or f"{replay['game'].get('game', 'match')} replay"
    return build_page(template, CSS.read_text("utf-8"), modules, data, name)
