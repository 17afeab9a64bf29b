"""Commands a newcomer runs first, from a folder with nothing in it yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_db_upgrade_creates_the_var_folder_of_sqlite(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(ROOT)
    flask = [sys.executable, "-m", "flask", "--app", "web", "db", "upgrade"]
    done = subprocess.run(flask, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "var" / "arena.db").stat().st_size > 0
