"""Bot packaging: a bot is a folder with a ``bot.toml`` manifest next to its code.

``docs/bots.md`` documents the manifest for bot authors. ``load_bot`` reads and checks it; every
problem is reported at once, with the manifest's path and the field at fault.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.games import example, names
from sandbox.base import KIT_DIR, kit_env

MANIFEST = "bot.toml"
LANGUAGES = (
    "python",
    "javascript",
    "typescript",
    "java",
    "csharp",
    "c",
    "cpp",
    "go",
    "rust",
    "ruby",
    "php",
    "perl",
    "bash",
    "other",
)
"""What ``language`` in ``bot.toml`` may say: the ten with starter kits, then Perl, Bash, other."""
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_REQUIRED = ("name", "games", "language", "run")
_OPTIONAL = ("build", "description", "author", "version")
_Fail = Callable[[str], None]


class ManifestError(ValueError):
    """A bot folder or its ``bot.toml`` is missing or malformed.

    ``problems`` lists each problem found in the manifest (all of them, not only the first).
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems: list[str] = problems if problems is not None else [message]


class BuildError(RuntimeError):
    """A bot's build command failed; the message ends with its output."""


@dataclass(frozen=True)
class BotManifest:
    """A bot folder as described by its ``bot.toml``; ``path`` is absolute."""

    path: Path
    name: str
    games: tuple[str, ...]
    language: str
    run: tuple[str, ...]
    build: tuple[str, ...] | None = None
    description: str = ""
    author: str = ""
    version: str | None = None

    def plays(self, game: str) -> bool:
        """True if the manifest lists ``game``."""
        return game in self.games


def load_bot(path: str | Path) -> BotManifest:
    """Read and check the manifest of the bot folder at ``path``."""
    folder = Path(path).resolve()
    if not folder.is_dir():
        raise ManifestError(f"{folder}: not a folder (a bot is a folder with {MANIFEST})")
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise ManifestError(f"{folder}: no {MANIFEST} in the bot folder")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{manifest}: not valid TOML: {exc}") from None
    return _parse(manifest, folder, data)


FLUSH_HINTS = {
    "python": 'print(line, flush=True), or run it unbuffered: run = ["python3", "-u", "bot.py"]',
    "javascript": 'process.stdout.write(line + "\\n") each answer, and keep the process alive '
    "while it waits for stdin (readline's 'line' events)",
    "c": "fflush(stdout) after each line, or setvbuf(stdout, NULL, _IOLBF, 0) at the start",
    "cpp": "std::cout << line << std::endl (endl flushes), or std::cout.flush()",
    "rust": "std::io::stdout().flush() after each line when writing through a BufWriter",
    "go": "w.Flush() after each line when writing through a bufio.Writer",
    "java": "System.out.flush() after each println (or a PrintWriter with autoFlush)",
    "node": 'process.stdout.write(line + "\\n") each answer, and keep the process alive '
    "while it waits for stdin (readline's 'line' events)",
    "perl": "$| = 1; at the top of the script",
    "ruby": "$stdout.sync = true at the top, or $stdout.flush after each puts",
    "php": "fflush(STDOUT) after each echo",
    "lua": 'io.stdout:setvbuf("line") at the start, or io.stdout:flush() after each write',
}
"""How to flush stdout, per language (and per interpreter for ``other``)."""


def flush_hint(bot: BotManifest) -> str:
    """A hint for a bot that said nothing in time: its answers may be stuck in a buffer."""
    head = Path(bot.run[0]).name if bot.run else ""
    interpreter = re.sub(r"[\d.]+$", "", head)
    how = FLUSH_HINTS.get(interpreter) or FLUSH_HINTS.get(bot.language)
    advice = f": {how}" if how else " after each line"
    return (
        "if the bot did answer, its output may still sit in a buffer: stdout to a pipe is "
        f"block-buffered in most languages, so flush it{advice}"
    )


def build_bot(bot: BotManifest, timeout_s: float = 300.0) -> str:
    """Run the bot's ``build`` command in its folder, on this machine; return its output.

    Only for one's own bots: the command runs without a sandbox (the platform builds uploaded
    bots inside one), in the user's environment plus the kits' (``KOZYRI_KIT`` names the
    checkout's kits, as in a plain run). Raises ``BuildError`` if it fails or takes longer
    than ``timeout_s``.
    """
    if not bot.build:
        return ""
    try:
        done = subprocess.run(
            list(bot.build),
            cwd=bot.path,
            env={**os.environ, **kit_env(str(KIT_DIR))},
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"{bot.name}: build {list(bot.build)} failed: {exc}") from exc
    output = (done.stdout + done.stderr).decode("utf-8", "replace")
    if done.returncode != 0:
        raise BuildError(f"{bot.name}: build exited with {done.returncode}:\n{output}")
    return output


def _parse(manifest: Path, folder: Path, data: dict[str, Any]) -> BotManifest:
    """Check every field at once; one ``ManifestError`` lists all the problems found."""
    problems: list[str] = []
    fail = problems.append
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        fail(f"unknown field(s) {', '.join(unknown)}; known: {', '.join(_REQUIRED + _OPTIONAL)}")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        fail(f"missing required field(s) {', '.join(missing)}")
    parsed = BotManifest(
        path=folder,
        name=_name(data.get("name"), fail) if "name" in data else "",
        games=_games(data["games"], fail) if "games" in data else (),
        language=_language(data.get("language"), fail) if "language" in data else "",
        run=_command(data["run"], "run", fail) if "run" in data else (),
        build=_command(data["build"], "build", fail) if "build" in data else None,
        description=_text(data, "description", fail),
        author=_text(data, "author", fail),
        version=_text(data, "version", fail) or None,
    )
    if problems:
        raise ManifestError(_problems_text(manifest, problems), problems)
    return parsed


def _problems_text(manifest: Path, problems: list[str]) -> str:
    if len(problems) == 1:
        return f"{manifest}: {problems[0]}"
    listed = "".join(f"\n  - {problem}" for problem in problems)
    return f"{manifest}: {len(problems)} problems:{listed}"


def _name(value: Any, fail: _Fail) -> str:
    if isinstance(value, str) and NAME_PATTERN.fullmatch(value):
        return value
    fail(f"'name' must be 1-64 of a-z 0-9 . _ - (starting with a letter/digit), not {value!r}")
    return ""


def _language(value: Any, fail: _Fail) -> str:
    if value in LANGUAGES:
        return str(value)
    fail(f"'language' must be one of {', '.join(LANGUAGES)}, not {value!r}")
    return ""


def _games(value: Any, fail: _Fail) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(g, str) for g in value):
        fail(f"'games' must be a non-empty list of game names, e.g. [\"{example()}\"]")
        return ()
    unknown = [g for g in value if g not in names()]
    if unknown:
        fail(f"unknown game(s) {', '.join(unknown)}; games: {', '.join(names())}")
    return tuple(value)


def _command(value: Any, key: str, fail: _Fail) -> tuple[str, ...]:
    if isinstance(value, str):
        fail(f'\'{key}\' must be a list of strings, e.g. ["python3", "bot.py"], not a string')
    elif not isinstance(value, list) or not value:
        fail(f"'{key}' must be a non-empty list of strings")
    elif not all(isinstance(part, str) and part for part in value):
        fail(f"every item of '{key}' must be a non-empty string")
    else:
        return tuple(value)
    return ()


def _text(data: dict[str, Any], key: str, fail: _Fail) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        fail(f"'{key}' must be a string")
        return ""
    return value
