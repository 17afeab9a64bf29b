"""The kit languages as the tests see them: which have their sample, a language's toolchain
(or a skip, or a failure where required), and running a kit's commands with their output in
any failure.

CI sets ``ARENA_REQUIRE_LANGUAGES=1``: a missing toolchain or sample then fails the test instead
of skipping it, so a runner that lost a compiler cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from arena.bots import BotManifest, load_bot
from arena.checking import build
from sandbox.base import Sandbox
from sandbox.languages import LANGUAGES, Language
from sandbox.runtimes import list_languages
from sandbox.toolchains import cargo_rustc
from tests.kits.support import completed

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "sample_bots" / "kit"
REQUIRE_ENV = "ARENA_REQUIRE_LANGUAGES"
BUILD_TIMEOUT_S = 300.0


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


def missing(reason: str) -> None:
    """Skip with ``reason``, or fail with it where every language is required."""
    if required():
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def sample_of(language: Language) -> Path:
    return REPO / language.sample


def with_samples() -> list[Language]:
    """The languages whose sample bot is in this checkout."""
    return [lang for lang in LANGUAGES if (sample_of(lang) / "bot.toml").is_file()]


def usable(backend: str) -> tuple[list[Language], list[str]]:
    """The languages with a sample that ``backend`` can build and run, and why each other
    language of the table is left out."""
    ready = {s.id for s in list_languages(backend) if s.available}
    reasons = {s.id: s.reason for s in list_languages(backend)}
    kept, left_out = [], []
    for language in LANGUAGES:
        if not (sample_of(language) / "bot.toml").is_file():
            left_out.append(f"{language.id}: no sample at {language.sample}")
        elif language.id not in ready:
            left_out.append(f"{language.id}: {reasons[language.id]} ({backend})")
        else:
            kept.append(language)
    return kept, left_out


def built_sample(sandbox: Sandbox, language: Language, scratch: Path) -> BotManifest:
    """The language's sample, built in ``sandbox`` as the platform builds an upload (a copy
    under ``scratch``; the checkout is not written)."""
    manifest = load_bot(sample_of(language))
    if not manifest.build:
        return manifest
    source = scratch / f"{language.id}-source"
    shutil.copytree(manifest.path, source)
    target = scratch / f"{language.id}-built"
    log, why = build(sandbox, load_bot(source), target, BUILD_TIMEOUT_S, slot=0)
    assert why is None, f"{language.id}: {why}\n{log}"
    return load_bot(target)


def program_or_skip(name: str, language: str) -> str:
    """The path of ``name`` (a compiler or runtime of ``language``), or a skip saying why."""
    found = shutil.which(name) or (cargo_rustc() if name == "rustc" else None)
    if found is None:
        why = f"{language}: {name} is not installed"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {why}")
        pytest.skip(why)
    return found


def run_ok(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in ``cwd``; fail the test, showing its output, unless it exits with 0."""
    return completed(argv, cwd, env)
