"""``arena tournament`` as a newcomer meets it: small tables, folders never reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli.main import main

SAMPLES = Path(__file__).resolve().parents[3] / "sample_bots"
THREE = [str(SAMPLES / "python" / f"svoi-kozyri-{k}") for k in ("random", "greedy", "heuristic")]


def test_three_bots_play_at_tables_of_three(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tournament", "svoi-kozyri", *THREE, "--matches", "2", "--sandbox", "none"]
    assert main([*argv, "--param", "deals=1", "--out", str(tmp_path / "t")]) == 0
    assert "3 bots: tables of 3" in capsys.readouterr().err
    assert '"players": 3' in (tmp_path / "t" / "tournament.json").read_text()


def test_the_default_folder_is_never_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["tournament", "challenge", "builtin:random", "builtin:greedy", "--matches", "2"]
    for _ in range(2):
        assert main([*argv, "--sandbox", "none"]) == 0
    folders = sorted(p.name for p in (tmp_path / "tournaments").iterdir())
    assert folders == ["challenge-0", "challenge-0-2"]
    assert all((tmp_path / "tournaments" / f / "tournament.json").is_file() for f in folders)


def test_an_out_folder_with_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    argv = ["tournament", "challenge", "builtin:random", "builtin:greedy", "--matches", "2"]
    assert main([*argv, "--sandbox", "none", "--out", str(tmp_path)]) == 2
    assert f"{tmp_path} is not empty" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_options_may_stand_between_the_bots(tmp_path: Path) -> None:
    argv = ["tournament", "challenge", "builtin:random", "--no-build", "builtin:greedy",
            "--matches", "2", "--sandbox", "none", "--out", str(tmp_path / "t")]  # fmt: skip
    assert main(argv) == 0
    assert (tmp_path / "t" / "tournament.json").is_file()
