"""Cgroup discovery from the mount table, and a real group where the machine allows one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox.cgroups import Cgroup, CgroupLimits, find_hierarchies

HYBRID = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
PURE_V2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"


def test_hybrid_mounts_are_read(tmp_path: Path) -> None:
    (tmp_path / "mounts").write_text(HYBRID)
    found = find_hierarchies(str(tmp_path / "mounts"))
    assert found.v1["memory"] == Path("/sys/fs/cgroup/memory")
    assert found.v1["pids"] == Path("/sys/fs/cgroup/pids")
    assert found.v2 == Path("/sys/fs/cgroup/unified")


def test_pure_v2_mounts_are_read(tmp_path: Path) -> None:
    (tmp_path / "mounts").write_text(PURE_V2)
    found = find_hierarchies(str(tmp_path / "mounts"))
    assert found.v1 == {}
    assert found.v2 == Path("/sys/fs/cgroup")


def test_no_cgroups_means_nothing_enforced(tmp_path: Path) -> None:
    (tmp_path / "mounts").write_text("proc /proc proc rw 0 0\n")
    group = Cgroup(
        "nothing", CgroupLimits(1 << 28, 16, 1.0), find_hierarchies(str(tmp_path / "mounts"))
    )
    assert group.enforced() == {
        "memory": False,
        "processes": False,
        "cpu_share": False,
        "kill_tree": False,
    }
    group.remove()


def test_real_group_holds_and_kills_its_members() -> None:
    group = Cgroup(f"test-{os.getpid()}", CgroupLimits(64 << 20, 8, 0.5))
    if not group.enforced()["processes"]:
        group.remove()
        pytest.skip("no writable pids cgroup here")
    child = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & sleep 60 & wait"], preexec_fn=group.attach_self
    )
    try:
        for _ in range(100):
            if len(group.members()) >= 3:
                break
            subprocess.run(["sleep", "0.01"], check=True)
        assert len(group.members()) == 3
        group.kill_all()
        assert group.members() == set()
        assert child.wait(5) == -9
    finally:
        child.kill()
        child.wait()
        group.remove()
    assert group.dirs == []
