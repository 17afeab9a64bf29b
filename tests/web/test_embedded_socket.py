"""gunicorn's control socket lives in the instance's ``var/``, never in the shared home."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from web.embedded import SOCKET_PATH_MAX, control_socket_args

APP = """def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
"""


def test_the_socket_is_under_var(tmp_path: Path) -> None:
    assert control_socket_args(tmp_path) == ["--control-socket", str(tmp_path / "gunicorn.ctl")]


def test_a_path_too_long_for_a_socket_turns_the_socket_off(tmp_path: Path) -> None:
    deep = tmp_path / ("v" * SOCKET_PATH_MAX)
    assert control_socket_args(deep) == ["--no-control-socket"]


def test_gunicorn_opens_its_socket_there(tmp_path: Path) -> None:
    var = Path("/tmp") / f"arena-ctl-{tmp_path.name[-20:]}"
    var.mkdir(exist_ok=True)
    (tmp_path / "stub.py").write_text(APP)
    command = [sys.executable, "-m", "gunicorn", "stub:app", "-b", "127.0.0.1:0",
               "-w", "1", *control_socket_args(var)]  # fmt: skip
    proc = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not (var / "gunicorn.ctl").exists():
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "no control socket within 90 s"
            time.sleep(0.2)
        assert (var / "gunicorn.ctl").is_socket()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        if proc.stderr:
            proc.stderr.close()
        for leftover in var.iterdir():
            leftover.unlink()
        var.rmdir()
