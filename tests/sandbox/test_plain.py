"""The ``none`` backend: no isolation, but the rlimits it promises and a whole-tree kill."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox import get_sandbox
from sandbox.base import Exit, Limits, SandboxError

SPIN = "while True:\n    pass\n"
PARENT = """\
import subprocess, sys, time
child = subprocess.Popen(["sleep", "60"])
print(child.pid, flush=True)
time.sleep(60)
"""
WRITER = """\
try:
    with open("big.bin", "wb") as out:
        out.write(b"x" * (3 << 20))
    print("wrote", flush=True)
except OSError as exc:
    print("refused", exc.errno, flush=True)
"""


def bot(tmp_path: Path, source: str) -> Path:
    (tmp_path / "bot.py").write_text(source)
    return tmp_path


def gone(pid: int) -> bool:
    """True once ``pid`` has ended (a zombie waiting for its reaper counts as ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def test_a_spinning_bot_stops_at_its_cpu_seconds(tmp_path: Path) -> None:
    limits = Limits(cpu_seconds=1)
    process = get_sandbox("none").spawn(bot(tmp_path, SPIN), ["python3", "bot.py"], limits)
    try:
        assert process.wait(timeout=30) is not None
        assert process.usage().exit is Exit.CPU_LIMIT
    finally:
        process.close()


def test_a_file_past_the_size_limit_is_refused(tmp_path: Path) -> None:
    limits = Limits(file_size_mb=1)
    process = get_sandbox("none").spawn(bot(tmp_path, WRITER), ["python3", "bot.py"], limits)
    try:
        assert process.wait(timeout=30) == 0
        answer = os.read(process.stdout_fd, 100).decode()
    finally:
        process.close()
    assert answer.startswith("refused 27")  # EFBIG
    assert (tmp_path / "big.bin").stat().st_size == 1 << 20


def test_kill_takes_the_bots_children_too(tmp_path: Path) -> None:
    process = get_sandbox("none").spawn(bot(tmp_path, PARENT), ["python3", "bot.py"], Limits())
    try:
        child = int(os.read(process.stdout_fd, 100).split()[0])
        assert not gone(child)
        process.kill()
        deadline = time.monotonic() + 5
        while not gone(child) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert gone(child)
        assert process.usage().exit is Exit.KILLED
    finally:
        process.close()


def test_a_missing_bot_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"no bot folder .*/missing"):
        get_sandbox("none").spawn(tmp_path / "missing", ["python3", "bot.py"], Limits())
