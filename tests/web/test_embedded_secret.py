"""``arena up`` signs sessions with a key of its own: random on the first start, kept under its
``var/`` folder for its owner only, the same after a restart."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from web.config import default_settings
from web.embedded import SECRET_KEY_FILE, Platform


def _configured(var: Path) -> dict[str, str]:
    platform = Platform(var, port=0, workers=1)
    platform.configure()
    return platform.env


def test_the_first_start_makes_a_random_key_that_later_starts_reuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_SECRET_KEY", raising=False)
    var = tmp_path / "var"
    key = _configured(var)["ARENA_SECRET_KEY"]
    assert len(key) == 64 and int(key, 16) and key != default_settings()["SECRET_KEY"]
    path = var / SECRET_KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == key
    assert _configured(var)["ARENA_SECRET_KEY"] == key, "a restart keeps the key"
    other = _configured(tmp_path / "other")["ARENA_SECRET_KEY"]
    assert other != key, "each instance has its own"


def test_a_key_file_readable_by_others_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_SECRET_KEY", raising=False)
    var = tmp_path / "var"
    var.mkdir()
    path = var / SECRET_KEY_FILE
    path.write_text("k" * 64 + "\n")
    path.chmod(0o644)
    assert _configured(var)["ARENA_SECRET_KEY"] == "k" * 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_empty_key_file_stops_the_start_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_SECRET_KEY", raising=False)
    var = tmp_path / "var"
    var.mkdir()
    (var / SECRET_KEY_FILE).write_text("\n")
    with pytest.raises(SystemExit, match="delete it to make a new one"):
        _configured(var)


def test_a_key_from_the_environment_wins_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_SECRET_KEY", "s" * 64)
    var = tmp_path / "var"
    assert _configured(var)["ARENA_SECRET_KEY"] == "s" * 64
    assert not (var / SECRET_KEY_FILE).exists()
