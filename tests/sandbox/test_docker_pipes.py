"""The Docker backend's named pipes: ends, crashes, kills, starts that fail, and privacy."""

from __future__ import annotations

import os
import select
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import sandbox.docker as docker_backend
from sandbox.base import BotCommandError, Exit, Limits, Sandbox, SandboxError
from sandbox.docker import PIPE_MOUNT, UID_BASE, DockerProcess
from tests.sandbox.driver import fresh_slot, survivors

LIMITS = Limits(memory_mb=128, processes=16, tmp_mb=8)
BOUND_S = 60.0


@pytest.fixture
def pipe_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder the pipe folders of this test go under (empty again once all are closed);
    open to every uid, so only each pipe folder's own mode keeps strangers out."""
    root = Path(tempfile.mkdtemp(prefix="arena-pipe-root-", dir="/tmp"))
    root.chmod(0o755)
    monkeypatch.setenv(docker_backend.PIPE_DIR_ENV, str(root))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def start(box: Sandbox, folder: Path, source: str, slot: int) -> DockerProcess:
    (folder / "bot.py").write_text(source)
    (folder / "bot.py").chmod(0o644)
    process = box.spawn(folder, ["python3", "bot.py"], LIMITS, slot=slot)
    assert isinstance(process, DockerProcess)
    return process


def read_to_end(fd: int) -> bytes:
    """Everything until end of file, failing the test if it does not come within the bound."""
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], BOUND_S)
        assert ready, f"no end of file within {BOUND_S} s (got {data!r})"
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data += chunk


def test_a_bot_that_exits_ends_its_stdout(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    slot = fresh_slot()
    process = start(
        docker_sandbox, open_dir, "import sys; print(sys.stdin.readline().upper())", slot
    )
    os.write(process.stdin_fd, b"ping\n")
    assert read_to_end(process.stdout_fd) == b"PING\n\n"
    assert process.wait(BOUND_S) == 0
    process.close()
    assert process.usage().exit is Exit.EXITED
    assert list(pipe_root.iterdir()) == [] and survivors(docker_sandbox, slot) == []


CLOSES_STDOUT = """
import os, sys
print("bye", flush=True)
os.close(1)
sys.stdin.readline()
"""


def test_a_bot_that_closes_stdout_is_seen_while_it_runs(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    slot = fresh_slot()
    process = start(docker_sandbox, open_dir, CLOSES_STDOUT, slot)
    assert read_to_end(process.stdout_fd) == b"bye\n"
    assert process.poll() is None
    os.write(process.stdin_fd, b"go\n")
    assert process.wait(BOUND_S) == 0
    process.close()


def test_a_crash_reaches_stderr_and_the_exit_code(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    slot = fresh_slot()
    process = start(docker_sandbox, open_dir, "raise SystemExit('broken: ' + 'x' * 3)", slot)
    assert read_to_end(process.stdout_fd) == b""
    assert b"broken: xxx" in read_to_end(process.stderr_fd)
    assert process.wait(BOUND_S) == 1
    process.close()
    assert process.usage().exit is Exit.EXITED


def test_a_killed_container_ends_both_pipes(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    slot = fresh_slot()
    process = start(docker_sandbox, open_dir, "import sys; sys.stdin.read()", slot)
    docker_sandbox.api.kill(process.container)  # type: ignore[attr-defined]  # from outside
    assert read_to_end(process.stdout_fd) == b""
    assert process.wait(BOUND_S) is not None
    with pytest.raises(BrokenPipeError):
        os.write(process.stdin_fd, b"anyone there?\n")
    process.close()
    assert list(pipe_root.iterdir()) == [] and survivors(docker_sandbox, slot) == []


def test_a_container_that_never_opens_its_pipes_fails_the_start(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docker_backend, "SHIM", "exec sleep 600")
    monkeypatch.setattr(docker_backend, "CONNECT_TIMEOUT_S", 3.0)
    slot = fresh_slot()
    with pytest.raises(SandboxError, match="did not open its pipes"):
        start(docker_sandbox, open_dir, "", slot)
    assert list(pipe_root.iterdir()) == [] and survivors(docker_sandbox, slot) == []


def test_a_container_that_ends_before_its_pipes_fails_the_start(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docker_backend, "SHIM", "exit 3")
    slot = fresh_slot()
    with pytest.raises(SandboxError, match="ended before opening its pipes"):
        start(docker_sandbox, open_dir, "", slot)
    assert list(pipe_root.iterdir()) == [] and survivors(docker_sandbox, slot) == []


def test_a_command_that_cannot_run_is_the_bots_fault(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    slot = fresh_slot()
    with pytest.raises(BotCommandError):
        docker_sandbox.spawn(open_dir, ["no-such-interpreter", "bot.py"], LIMITS, slot=slot)
    (open_dir / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (open_dir / "run.sh").chmod(0o644)  # not executable
    with pytest.raises(BotCommandError):
        docker_sandbox.spawn(open_dir, ["./run.sh"], LIMITS, slot=slot)
    assert list(pipe_root.iterdir()) == [] and survivors(docker_sandbox, slot) == []


def test_a_container_the_engine_cannot_start_leaves_nothing(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    slot = fresh_slot()
    (open_dir / "bot.py").write_text("")
    with pytest.raises(SandboxError):
        docker_sandbox.spawn(open_dir, ["python3", "bot.py"], LIMITS, slot=slot, cpu=4095)
    assert list(pipe_root.iterdir()) == [] and survivors(docker_sandbox, slot) == []


LOOKS_AROUND = f"""
import os, sys
print(sorted(os.listdir("{PIPE_MOUNT}")), flush=True)
for path in sys.stdin.readline().split():
    try:
        os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        print("opened", path, flush=True)
    except OSError as exc:
        print("refused", exc.errno, flush=True)
try:
    open("{PIPE_MOUNT}/extra", "w")
except OSError as exc:
    print("write", exc.errno, flush=True)
"""


def test_a_bot_reaches_only_its_own_pipes(
    docker_sandbox: Sandbox, open_dir: Path, pipe_root: Path
) -> None:
    first, second = fresh_slot(), fresh_slot()
    other = start(docker_sandbox, open_dir, "import sys; sys.stdin.read()", first)
    process = start(docker_sandbox, open_dir, LOOKS_AROUND, second)
    try:
        (other_dir,) = [p for p in pipe_root.iterdir() if p.stat().st_uid == UID_BASE + first]
        info = other_dir.stat()
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_gid == UID_BASE + first
        for name in ("in", "out", "err"):
            pipe = (other_dir / name).stat()
            assert stat.S_ISFIFO(pipe.st_mode) and stat.S_IMODE(pipe.st_mode) == 0o600
            assert pipe.st_uid == UID_BASE + first
        # Inside: only its own three pipes; the other's folder is not there at all.
        os.write(process.stdin_fd, f"{other_dir}/out {pipe_root}\n".encode())
        lines = read_to_end(process.stdout_fd).decode().splitlines()
        assert lines == ["['err', 'in', 'out']", "refused 2", "refused 2", "write 30"]
        # On the host: another bot's uid cannot open the folder either.
        probe = "import os, sys; os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)"
        done = subprocess.run(
            ["/usr/bin/python3", "-c", probe, str(other_dir / "out")],
            user=UID_BASE + second,
            group=UID_BASE + second,
            extra_groups=[],
            capture_output=True,
            check=False,
            cwd="/",
        )
        assert done.returncode == 1 and b"PermissionError" in done.stderr
    finally:
        process.close()
        other.close()
    assert list(pipe_root.iterdir()) == []


def test_a_referee_that_is_not_root_hides_the_folder_instead(
    pipe_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docker_backend.os, "geteuid", lambda: 1000)
    pipes = docker_backend.PipeFolder(UID_BASE)
    try:
        assert stat.S_IMODE(pipes.path.stat().st_mode) == 0o711
        assert pipes.path.stat().st_uid == os.getuid()
        for name in ("in", "out", "err"):
            assert stat.S_IMODE((pipes.path / name).stat().st_mode) == 0o666
    finally:
        os.close(pipes.stdout_fd)
        os.close(pipes.stderr_fd)
        pipes.remove()
    assert list(pipe_root.iterdir()) == []


def test_pipe_folders_of_a_referee_that_died_are_swept(pipe_root: Path) -> None:
    ended = subprocess.Popen(["/usr/bin/true"])
    ended.wait()
    namespace = os.stat("/proc/self/ns/pid").st_ino
    stale = pipe_root / f"{docker_backend.PIPE_PREFIX}{namespace}-{ended.pid}-abc123"
    stale.mkdir()
    os.mkfifo(stale / "in")
    live = Path(f"{pipe_root / docker_backend.referee_tag()}-def456")
    elsewhere = pipe_root / f"{docker_backend.PIPE_PREFIX}{namespace + 1}-{ended.pid}-ghi789"
    live.mkdir()
    elsewhere.mkdir()
    assert docker_backend.sweep_stale_pipes() == [stale]
    assert sorted(pipe_root.iterdir()) == sorted([live, elsewhere])
