"""A bot that does not compile: its author reads the compiler's own words in ``arena check``
(as on the bot's page, which shows the same build log; see
``tests/web/services/test_build.py``)."""

from __future__ import annotations

import pytest

from arena.cli.main import main
from tests.kits.support import toolchain
from tests.sandbox.conftest import REPO, backend_or_skip

BROKEN_CPP = REPO / "sample_bots" / "broken" / "cpp-compile-error"


def test_arena_check_shows_the_compilers_error(capsys: pytest.CaptureFixture[str]) -> None:
    toolchain("g++")
    backend_or_skip("bwrap")
    code = main(["check", str(BROKEN_CPP), "--sandbox", "bwrap"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "status: rejected at the build stage" in out
    assert "the build step failed (exit status 1)" in out
    assert "undeclared_helper" in out and "was not declared" in out  # g++'s own message
    assert "bot.cpp:7:" in out  # where, as g++ says it
    assert all(len(line) <= 80 for line in out.splitlines()), out
