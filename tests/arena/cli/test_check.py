"""``arena check`` as an author runs it: the verdict in its exit status, what the bot's page
would show in 80 columns, and no control sequence of a bot's on the terminal. (That its verdict
is the server's, fixture by fixture, is ``tests/web/services/test_check_agrees.py``.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.cli.main import main
from tests.arena.cli.test_terminal_safety import ESCAPES, SAMPLES, assert_terminal_safe


def require_bwrap() -> None:
    from sandbox import get_sandbox

    try:
        get_sandbox("bwrap")
    except Exception as exc:
        if os.environ.get("ARENA_REQUIRE_BWRAP") == "1":
            pytest.fail(f"bwrap required: {exc}")
        pytest.skip(f"bwrap sandbox not available: {exc}")


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    out = capsys.readouterr()
    text = out.out + out.err
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert not too_wide, too_wide
    return code, text


def test_a_good_bot_passes_every_stage_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    require_bwrap()
    code, out = check(capsys, str(SAMPLES / "python" / "svara-random"), "--selftest-timeout", "10")
    assert code == 0, out
    assert "status: active" in out
    assert "== protocol self-test: svara" in out and "validation match: status ok" in out


def test_a_hostile_bot_is_rejected_and_its_text_is_defused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    require_bwrap()
    code, out = check(capsys, ESCAPES, "--selftest-timeout", "10", "--move-timeout", "1")
    assert code == 1, out
    assert "status: rejected at the" in out and "reason: " in out
    assert_terminal_safe(out)


def test_a_manifest_problem_is_refused_before_any_sandbox(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "bot"
    shutil.copytree(SAMPLES / "python" / "svara-random", folder)
    (folder / "bot.toml").write_text('name = "x"\ngames = ["no-such-game"]\n')
    code, out = check(capsys, str(folder), "--sandbox", "no-such-sandbox")
    assert code == 1
    assert "status: rejected at the upload stage" in out and "no-such-game" in out


def test_a_folder_over_the_size_limit_is_refused_naming_the_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "bot"
    shutil.copytree(SAMPLES / "python" / "svara-random", folder)
    (folder / "data.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    code, out = check(capsys, str(folder), "--max-upload-mib", "1")
    assert code == 1
    assert "the upload is 2.0 MiB; the limit is 1 MiB" in out


def test_a_missing_folder_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(capsys, "/nonexistent/bot")
    assert code == 2 and "is not a folder" in out
