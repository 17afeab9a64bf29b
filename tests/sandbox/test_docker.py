"""The Docker backend: the container's settings, the stream splitting, and clean removal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandbox.base import Exit, Limits, Sandbox, isolated_env
from sandbox.cgroups import find_hierarchies
from sandbox.docker import (
    LABEL,
    DockerSandbox,
    bot_user,
    container_command,
)
from sandbox.docker_account import ROOT_NAME
from sandbox.seccomp import docker_profile
from sandbox.walls import MASKED_PATHS
from tests.sandbox.driver import fresh_slot, survivors

LIMITS = Limits(memory_mb=192, processes=32, file_size_mb=8, open_files=64, tmp_mb=16)

ECHO = r"""
import os, socket, sys
net = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])
print("uid", os.getuid(), "net", net, file=sys.stderr)
print("secret", os.environ.get("ARENA_SECRET"), file=sys.stderr)
try:
    open("/usr/pwned", "w")
except OSError as exc:
    print("root_fs", exc.errno, file=sys.stderr, flush=True)
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""


def test_command_and_environment_for_the_image() -> None:
    assert container_command(["python", "bot.py"]) == ["python3", "bot.py"]
    assert container_command(["./run.sh"]) == ["/bot/run.sh"]
    assert container_command(["node", "bot.js"]) == ["node", "bot.js"]
    env = isolated_env({"ARENA_SEAT": "1"})
    assert env["PYTHONPATH"] == "/kit/python" and env["ARENA_SEAT"] == "1"
    assert "ARENA_SECRET" not in env


def test_unreachable_engine_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    reason = DockerSandbox.available()
    assert reason is not None and "DOCKER_HOST" in reason


def test_missing_image_is_explained(
    docker_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DOCKER_IMAGE", "kozyri-arena-no-such-image")
    reason = DockerSandbox.available()
    assert reason is not None and "runner.Dockerfile" in reason


def test_container_round_trip(
    docker_sandbox: Sandbox, open_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_SECRET", "referee-only")
    (open_dir / "echo.py").write_text(ECHO)
    (open_dir / "echo.py").chmod(0o644)
    slot = fresh_slot()
    process = docker_sandbox.spawn(open_dir, ["python3", "echo.py"], LIMITS, slot=slot)
    assert isinstance(process, type(process)) and process.poll() is None
    os.write(process.stdin_fd, b'{"type": "hello"}\n')
    assert os.read(process.stdout_fd, 100) == b'{"type": "hello"}\n'
    err = b""
    while b"root_fs" not in err:
        err += os.read(process.stderr_fd, 4096)
    process.close()
    assert f"uid {bot_user(slot).split(':')[0]} net ['lo']".encode() in err
    assert b"secret None" in err
    assert b"root_fs 30" in err  # EROFS
    assert process.usage().exit is Exit.KILLED
    assert survivors(docker_sandbox, slot) == []


def test_settings_reach_the_engine(docker_sandbox: Sandbox, open_dir: Path) -> None:
    assert isinstance(docker_sandbox, DockerSandbox)
    (open_dir / "idle.py").write_text("import sys; sys.stdin.read()")
    slot = fresh_slot()
    process = docker_sandbox.spawn(open_dir, ["python3", "idle.py"], LIMITS, slot=slot)
    try:
        info = docker_sandbox.api.inspect_container(process.container)  # type: ignore[attr-defined]
    finally:
        process.close()
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["Memory"] == host["MemorySwap"] == 192 << 20
    assert host["PidsLimit"] == 32
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    profiles = [opt for opt in host["SecurityOpt"] if opt.startswith("seccomp=")]
    assert [json.loads(p.removeprefix("seccomp=")) for p in profiles] == [docker_profile()]
    assert set(host["MaskedPaths"]) == set(MASKED_PATHS)
    assert host["CgroupnsMode"] == "private"
    assert host["Init"] is True
    assert {u["Name"] for u in host["Ulimits"]} == {"fsize", "nofile", "cpu", "nproc", "sigpending"}
    assert host["IpcMode"] == "none"  # no /dev/shm beside /tmp
    assert info["Config"]["Labels"][LABEL] == str(slot)
    assert info["Config"]["User"] == bot_user(slot)
    assert survivors(docker_sandbox, slot) == []


SPIN = """
import sys, time
began = time.process_time()
while time.process_time() - began < 0.4:
    pass
"""


def test_cpu_time_is_counted_after_the_container_is_gone(
    docker_sandbox: Sandbox, open_dir: Path
) -> None:
    assert isinstance(docker_sandbox, DockerSandbox)
    if not docker_sandbox.accounts:
        pytest.skip("the engine does not put containers in cgroups this referee can read")
    (open_dir / "spin.py").write_text(SPIN)
    (open_dir / "spin.py").chmod(0o644)
    process = docker_sandbox.spawn(open_dir, ["python3", "spin.py"], LIMITS, slot=fresh_slot())
    assert process.wait(30) == 0  # it ended by itself: the engine dropped its cgroup at once
    process.close()
    usage = process.usage()
    assert usage.exit is Exit.EXITED
    assert 0.4 <= usage.cpu_seconds < 10, usage
    assert usage.max_rss_mb > 1
    assert usage.detail["cpu_measured"] is True
    found = find_hierarchies()
    account_root = (found.v1.get("cpuacct") or found.v2 or Path("/nonexistent")) / ROOT_NAME
    assert not list(account_root.glob(f"{os.getpid()}-*")), "a container's parent group was left"
