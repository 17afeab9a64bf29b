"""The kit tests skip a language whose toolchain is missing, and fail instead where every
language is required (``ARENA_REQUIRE_LANGUAGES=1``, as CI sets it)."""

from __future__ import annotations

import pytest

from tests.kits.support import REQUIRED, toolchain

MISSING = "no-such-compiler-kozyri"


def test_a_missing_toolchain_skips_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRED, raising=False)
    with pytest.raises(pytest.skip.Exception, match=f"not installed: {MISSING}"):
        toolchain("sh", MISSING)


def test_a_missing_toolchain_fails_where_every_language_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(REQUIRED, "1")
    with pytest.raises(pytest.fail.Exception, match=f"not installed: {MISSING}"):
        toolchain(MISSING)


def test_an_installed_toolchain_is_found() -> None:
    assert toolchain("sh")["sh"].endswith("/sh")
