"""The stages an uploaded bot passes on the server, as plain functions of a folder.

The service calls these for every upload (``web.api.uploads``, ``web.services.bots``,
``web.services.building``, ``web.services.lifecycle``) and ``arena check`` calls them on a local
folder, in the same order: pack, read the manifest from the archive, unpack, build in the
sandbox, protocol self-test, validation match against the sample bots. One code path, so a bot
that passes ``arena check`` with the server's settings passes on the server.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bots import MANIFEST, BotManifest, ManifestError, flush_hint, load_bot
from arena.uploads import MAX_UPLOAD_BYTES, UnpackLimits, UploadError, read_manifest, unpack

SAMPLE_BOTS = Path(__file__).resolve().parents[1] / "sample_bots"
NOT_SAMPLES = frozenset({"kit", "broken", "hostile"})
"""Folders of ``sample_bots`` that hold fixtures, not bots for the ladders."""


LOCAL_SLOT_BASE = 640
"""Sandbox slots of ``arena check`` (eight per process: a build, a self-test, the seats of a
validation match), apart from the server's match seats and
build steps, so a check can run beside a local server."""


@dataclass(frozen=True)
class Settings:
    """The server's settings for the stages (its defaults here; see ``web.config``)."""

    sandbox: str = "bwrap"
    upload_max_bytes: int = MAX_UPLOAD_BYTES
    limits: UnpackLimits = field(default_factory=UnpackLimits)
    build_timeout: float = 120.0
    selftest_timeout: float = 5.0
    move_s: float = 2.0
    bank_s: float = 20.0
    validation_match: bool = True


def pack(folder: Path) -> bytes:
    """A zip of a bot folder: hidden files and caches left out, the same bytes every time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            if path.is_file() and not path.is_symlink():
                info = zipfile.ZipInfo(rel.as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o100755 if os.access(path, os.X_OK) else 0o100644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def check_manifest(text: str) -> BotManifest:
    """Parse and check manifest text the way the engine will; ``UploadError`` if it is wrong."""
    with tempfile.TemporaryDirectory(prefix="manifest-") as folder:
        (Path(folder) / MANIFEST).write_text(text, encoding="utf-8")
        try:
            return load_bot(folder)
        except ManifestError as exc:

            def scrub(message: str) -> str:
                for path in (str(Path(folder).resolve()), folder):
                    message = message.replace(path + "/", "").replace(path, "the bot folder")
                return message

            several = (
                [scrub(problem) for problem in exc.problems] if len(exc.problems) > 1 else None
            )
            raise UploadError(scrub(str(exc)), several) from None


def bot_root(scratch: Path) -> Path:
    """The folder holding ``bot.toml``: the archive root, or its single top-level folder."""
    entries = list(scratch.iterdir())
    if not (scratch / MANIFEST).exists() and len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return scratch


def build(
    sandbox: Any, manifest: BotManifest, built: Path, timeout: float, slot: int
) -> tuple[str, str | None]:
    """Run the build step on a copy of the bot's folder into ``built``: the build log, and why
    the bot is refused (None if it built, or has no build step; then ``built`` is not made)."""
    from arena.selftest import without_nul
    from sandbox.build import build_copy

    if not manifest.build:
        return "no build step\n", None
    result = build_copy(
        sandbox, manifest.path, built, list(manifest.build), timeout_s=timeout, slot=slot
    )
    log = without_nul(result.log)
    if result.timed_out:
        return log, f"the build step took longer than {timeout:g} s and was stopped"
    if not result.ok:
        why = f"the build step failed (exit status {result.returncode}); see the build log"
        return log, why
    return log, None


def selftest(
    sandbox: Any, manifest: BotManifest, timeout: float, slot: int = 0
) -> tuple[str, str | None]:
    """The protocol self-test for each game of the bot: the validation log, and why the bot is
    refused (None if every game passed)."""
    from arena.selftest import run_selftest

    logs = []
    for game in manifest.games:
        report = run_selftest(sandbox, manifest, game, timeout=timeout, slot=slot)
        logs.append(f"== protocol self-test: {game}\n{report.log}")
        if not report.passed:
            hint = f" (hint: {report.hint})" if report.hint else ""
            why = f"the protocol self-test failed for {game}; see the validation log{hint}"
            return "\n".join(logs), why
    return "\n".join(logs) + "\n", None


def validation_passed(status: str, forfeited: bool) -> bool:
    """Whether the new bot's seat of its validation match lets it play the ladders."""
    return status == "ok" and not forfeited


def validation_refusal(status: str, message: str, manifest: BotManifest) -> str:
    """Why a validation match refuses the bot, in the words of its page."""
    hint = silence_hint(manifest, status, message)
    return f"the validation match ended with status {status!r}: {message}{hint}"


def silence_hint(manifest: BotManifest, status: str, message: str) -> str:
    """`` (hint: ...)`` when the bot said nothing in time (its output may sit in a buffer)."""
    if status != "timeout" and "(timeout)" not in message:
        return ""
    return f" (hint: {flush_hint(manifest)})"


QUICK_LANGUAGES = ("python", "javascript")
"""Languages whose samples every runner starts at once, with no build step: the demos register
only these (a platform that starts has its bots playing within seconds), and a validation match
takes its opponents among them first."""


def sample_bot_folders(
    games: Sequence[str] | None = None, languages: Sequence[str] | None = None
) -> list[Path]:
    """The project's own sample bots (folders with ``bot.toml``), optionally only those for
    some games, or in some languages."""
    folders = sorted(
        p.parent
        for p in SAMPLE_BOTS.glob("*/*/bot.toml")
        if p.parent.parent.name not in NOT_SAMPLES
    )
    if games is not None:
        folders = [f for f in folders if any(load_bot(f).plays(g) for g in games)]
    if languages is not None:
        folders = [f for f in folders if load_bot(f).language in languages]
    return folders


def validation_opponents(game: str, count: int) -> list[Path]:
    """Sample bots for a local validation match: those needing no build step first, and of
    those the ones in ``QUICK_LANGUAGES`` first."""

    def order(folder: Path) -> tuple[bool, bool]:
        bot = load_bot(folder)
        return bot.build is not None, bot.language not in QUICK_LANGUAGES

    pool = sorted(sample_bot_folders([game]), key=order)
    return [pool[i % len(pool)] for i in range(count)] if pool else []


@dataclass
class Verdict:
    """What the bot's page would show: its status, the reason if refused, and the logs."""

    name: str = ""
    status: str = "rejected"
    error: str | None = None
    stage: str = "upload"
    build_log: str = ""
    validation_log: str = ""
    games: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.status == "active"


Say = Callable[[str], None]


def check_folder(folder: Path, settings: Settings, say: Say = lambda _: None) -> Verdict:
    """Every stage the server runs on an upload of ``folder``, locally; the verdict."""
    verdict = Verdict()
    data = pack(folder)
    say("upload: packing the folder as arena submit sends it")
    if len(data) > settings.upload_max_bytes:
        verdict.error = size_refusal(len(data), settings.upload_max_bytes)
        return verdict
    with tempfile.TemporaryDirectory(prefix="arena-check-") as scratch_name:
        scratch = Path(scratch_name)
        try:
            manifest = check_manifest(read_manifest(data, settings.limits))
            verdict.name, verdict.games = manifest.name, list(manifest.games)
            unpack(data, scratch / "upload", settings.limits)
        except UploadError as exc:
            verdict.error = str(exc)
            return verdict
        _later_stages(verdict, bot_root(scratch / "upload"), scratch, settings, say)
    return verdict


def _later_stages(
    verdict: Verdict, folder: Path, scratch: Path, settings: Settings, say: Say
) -> None:
    from sandbox import get_sandbox

    sandbox = get_sandbox(settings.sandbox)
    manifest = load_bot(folder)
    verdict.stage = "build"
    say(f"build: in the {settings.sandbox} sandbox")
    slot = LOCAL_SLOT_BASE + (os.getpid() % 64) * 8
    log, refusal = build(sandbox, manifest, scratch / "built", settings.build_timeout, slot)
    verdict.build_log = log
    if refusal is not None:
        verdict.error = refusal
        return
    if manifest.build:
        (scratch / "built").chmod(0o755)
        manifest = load_bot(scratch / "built")
    verdict.stage = "self-test"
    say("self-test: the protocol's edge cases, for each game")
    verdict.validation_log, refusal = selftest(sandbox, manifest, settings.selftest_timeout, slot)
    if refusal is not None:
        verdict.error = refusal
        return
    verdict.stage = "validation"
    if not settings.validation_match:
        verdict.validation_log += "no validation match (none configured or no opponents)\n"
        verdict.status = "active"
        return
    say("validation: a match against the sample bots")
    verdict.validation_log += validation_match(verdict, sandbox, manifest, settings, slot)


def validation_match(
    verdict: Verdict, sandbox: Any, manifest: BotManifest, settings: Settings, slot: int = 0
) -> str:
    """Play the validation match of the server (the bot in seat 0, sample bots in the others
    on the game's default table) and set the verdict from it; its log line."""
    import secrets

    from arena.games import make_game
    from arena.runner import TimeControl, run_match

    game = make_game(manifest.games[0])
    opponents = validation_opponents(game.name, game.players - 1)
    if len(opponents) < game.players - 1:
        verdict.status = "active"
        return "no validation match (none configured or no opponents)\n"
    played = run_match(
        game,
        [manifest, *(load_bot(f) for f in opponents)],
        secrets.randbits(64),
        sandbox=sandbox,
        time_control=TimeControl(move_s=settings.move_s, bank_s=settings.bank_s),
        slot_base=slot,
    )
    seat = played.seats[0]
    status, forfeited = str(seat.status), bool(seat.forfeited)
    place = played.result.ranking[0]
    line = f"validation match: status {status}, place {place}{', forfeited' if forfeited else ''}\n"
    if validation_passed(status, forfeited):
        verdict.status = "active"
    else:
        verdict.error = validation_refusal(status, seat.message or "", manifest)
    return line


def size_refusal(size: int, limit: int) -> str:
    """The refusal of an upload over the size limit, naming both sizes."""
    return f"the upload is {mib(size)}; the limit is {mib(limit)}"


def mib(size: int) -> str:
    """``64 MiB``, ``70.3 MiB`` or ``512 bytes``."""
    if size < 1024 * 1024:
        return f"{size} bytes"
    value = size / (1024 * 1024)
    return f"{value:.0f} MiB" if value == int(value) else f"{value:.1f} MiB"
