"""Cgroup discovery from the mount table, and a real group where the machine allows one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox.cgroups import ROOT_NAME, Cgroup, CgroupLimits, find_hierarchies, sweep_stale
from tests.sandbox.driver import fresh_slot

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
        "own_core": False,
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


def writable_memory_root() -> Path:
    """The v1 memory hierarchy's root of our groups, or a skip."""
    memory = find_hierarchies().v1.get("memory")
    probe = Cgroup(f"{os.getpid()}-probe-w", CgroupLimits(64 << 20))
    writable = probe.memory is not None
    probe.remove()
    if memory is None or not writable:
        pytest.skip("no writable v1 memory cgroup here")
    return memory / ROOT_NAME


def oom_in(group: Cgroup) -> int:
    """Run a Python memory hog in ``group``; its return code."""
    hog = "b = []\nwhile True: b.append(bytearray(1 << 24))"
    done = subprocess.run(["/usr/bin/python3", "-c", hog], preexec_fn=group.attach_self)
    return done.returncode


def test_a_slot_keeps_its_groups_and_one_bot_at_a_time_uses_them() -> None:
    root = writable_memory_root()
    slot = fresh_slot()
    first = Cgroup.for_slot(slot, CgroupLimits(48 << 20, 8, 1.0))
    second = Cgroup.for_slot(slot, CgroupLimits(48 << 20, 8, 1.0))  # the same slot, at once
    try:
        assert first.name == f"slot{slot}"
        assert second.name != first.name and second.name.endswith(f"-slot{slot}")
        assert oom_in(first) == -9 and first.oom_killed()
    finally:
        second.remove()
        first.remove()
    assert (root / first.name).is_dir() and not (root / second.name).exists()
    again = Cgroup.for_slot(slot, CgroupLimits(96 << 20, 8, 1.0))  # a higher limit than before
    try:
        assert again.name == first.name
        assert again.memory is not None
        assert int((again.memory / "memory.limit_in_bytes").read_text()) == 96 << 20
        assert not again.oom_killed(), "the last bot's OOM kill was charged to the next one"
        assert (again.peak_memory_mb() or 0) < 8, "the last bot's peak was kept"
        assert again.members() == set()
    finally:
        again.remove()
    sweep_stale()  # nobody holds the slot's lease now: its groups go
    assert not (root / first.name).exists()


def test_sweep_spares_groups_in_use() -> None:
    root = writable_memory_root()
    ended = subprocess.Popen(["true"])  # its pid names a referee that is gone
    ended.wait()
    stale = Cgroup(f"{ended.pid}-0-slot{fresh_slot()}", CgroupLimits(32 << 20))
    live = Cgroup(f"{os.getpid()}-0-slot{fresh_slot()}", CgroupLimits(32 << 20))
    leased = Cgroup.for_slot(fresh_slot(), CgroupLimits(32 << 20))
    try:
        sweep_stale()
        assert not (root / stale.name).exists()
        assert (root / live.name).is_dir() and (root / leased.name).is_dir()
    finally:
        for group in (stale, live, leased):
            group.remove()


def test_a_bots_cpu_group_sits_at_the_top_and_is_swept_there() -> None:
    cpu = find_hierarchies().v1.get("cpu")
    if cpu is None or not os.access(cpu, os.W_OK):
        pytest.skip("no writable v1 cpu hierarchy here")
    ended = subprocess.Popen(["true"])  # its pid names a referee that is gone
    ended.wait()
    stale = Cgroup(f"{ended.pid}-0-slot{fresh_slot()}", CgroupLimits(cpus=1.0))
    live = Cgroup(f"{os.getpid()}-0-slot{fresh_slot()}", CgroupLimits(cpus=1.0))
    slot = fresh_slot()
    leased = Cgroup.for_slot(slot, CgroupLimits(32 << 20, cpus=1.0))
    try:
        # One process's weight each, not a share of one common parent's.
        assert stale.cpu == cpu / f"{ROOT_NAME}.{stale.name}" and stale.cpu.is_dir()
        assert leased.cpu == cpu / f"{ROOT_NAME}.slot{slot}"
        assert not (cpu / ROOT_NAME / stale.name).exists()
        assert (stale.cpu / "cpu.cfs_quota_us").read_text().strip() == "100000"
        sweep_stale()
        assert not stale.cpu.exists()
        assert live.cpu is not None and live.cpu.is_dir() and leased.cpu.is_dir()
    finally:
        for group in (stale, live, leased):
            group.remove()
    sweep_stale()  # nobody holds the slot's lease now: its CPU group at the top goes too
    assert not (cpu / f"{ROOT_NAME}.slot{slot}").exists()
