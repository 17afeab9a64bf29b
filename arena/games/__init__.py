"""The registry of games, found by presence: every package under ``arena/games/`` that sets
``GAME`` (its ``Game`` subclass) and ``ORDER`` (its place in the list) is a game.

Folders named in the environment variable ``ARENA_GAMES_PATH`` (separated like ``PATH``) are
searched too: a game folder dropped into one of them is a game like the built-in ones, for the
CLI, local matches, bot processes started from here and the site. The built-in folders come
first, so a game folder of the same package name elsewhere does not replace one of them.

Modules beside the game folders (``base``, ``beating``, ``tricktaking``) are shared by the games
and are not games themselves.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from arena.games.base import ConfigError, Game

PATH_ENV = "ARENA_GAMES_PATH"
"""Extra folders holding game folders, separated by ``os.pathsep``."""

VIEWER_FILE = "viewer.js"
"""The replay viewer's adapter in a game folder (optional: the viewer has a generic one)."""

_BUILT_IN = list(__path__)


@dataclass(frozen=True)
class Entry:
    """One registered game: its class, its package and where that package lives."""

    game: type[Game]
    package: str
    folder: Path
    order: int


_found: dict[str, dict[str, Entry]] = {}
"""The registry per value of ``ARENA_GAMES_PATH``: discovery runs once per value."""


def _search_path(extra: str) -> list[str]:
    """The package's search path: the built-in folder, then each folder in ``extra``."""
    more = [str(Path(p).resolve()) for p in extra.split(os.pathsep) if p]
    return _BUILT_IN + [p for p in more if p not in _BUILT_IN]


def _entry(package: str) -> Entry | None:
    """The game in ``package``, or None for a package that is not a game."""
    module = importlib.import_module(package)
    game = getattr(module, "GAME", None)
    if not (isinstance(game, type) and issubclass(game, Game)):
        return None
    folder = Path(module.__file__ or "").parent
    return Entry(game, package, folder, int(getattr(module, "ORDER", 1000)))


def _discover(extra: str) -> dict[str, Entry]:
    __path__[:] = _search_path(extra)  # so that ``arena.games.<folder>`` imports from any of them
    entries: dict[str, Entry] = {}
    for info in pkgutil.iter_modules(__path__, __name__ + "."):
        entry = _entry(info.name) if info.ispkg else None
        if entry is None or entry.game.spec.name in entries:
            continue  # a shared package, or a second folder for a name already found
        entries[entry.game.spec.name] = entry
    ordered = sorted(entries.values(), key=lambda e: (e.order, e.game.spec.name))
    return {e.game.spec.name: e for e in ordered}


def _registry() -> dict[str, Entry]:
    extra = os.environ.get(PATH_ENV, "")
    found = _found.get(extra)
    if found is None:
        found = _found[extra] = _discover(extra)
    return found


def _get(name: str) -> Entry:
    registry = _registry()
    try:
        return registry[name]
    except KeyError:
        raise ConfigError(f"no game {name!r}; games: {', '.join(registry)}") from None


def names() -> list[str]:
    """The registered game names, in registry order."""
    return list(_registry())


def example() -> str:
    """The game that help texts and examples name: the first in the registry."""
    return names()[0]


def game_class(name: str) -> type[Game]:
    """The ``Game`` subclass registered as ``name``."""
    return _get(name).game


def folder(name: str) -> Path:
    """The folder of the game registered as ``name``."""
    return _get(name).folder


def part(name: str, module: str) -> ModuleType | None:
    """The module ``module`` of the game folder of ``name`` (``"terminal"``), if it has one."""
    entry = _get(name)
    if not (entry.folder / f"{module}.py").is_file():
        return None
    return importlib.import_module(f"{entry.package}.{module}")


def viewer_script(name: str) -> Path | None:
    """The replay viewer's adapter of the game ``name``, if its folder has one."""
    path = folder(name) / VIEWER_FILE
    return path if path.is_file() else None


def make_game(
    game: str,
    players: int | None = None,
    params: Mapping[str, Any] | None = None,
    variant: str | None = None,
) -> Game:
    """Build a game from its name; ``make_game(**g.config())`` rebuilds ``g``."""
    return game_class(game)(players=players, params=params, variant=variant)
