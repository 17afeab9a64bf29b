"""Helpers for the kit tests: find a language's toolchain (or skip, or fail where required)
and run its commands with their output in any failure.

CI sets ``ARENA_REQUIRE_LANGUAGES=1``: a missing toolchain then fails the test instead of
skipping it, so a runner that lost a compiler cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from sandbox.toolchains import cargo_rustc

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "sample_bots" / "kit"
REQUIRE_ENV = "ARENA_REQUIRE_LANGUAGES"
RUN_TIMEOUT_S = 300


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
    done = subprocess.run(
        list(argv),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (
        f"{argv} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
    )
    return done
