"""CPU time and peak memory of a Docker bot, read from a cgroup parent made for its container.

The engine destroys a container's cgroup as soon as the bot ends, and keeps no account of a
stopped container. So each container is started under a parent cgroup of its own
(``cgroup_parent``): a parent counts what its children use, and keeps the count after the
container's own group is gone. This works where the engine uses the ``cgroupfs`` driver on this
host (it creates the parent in every hierarchy; the referee reads it, then removes it). Against a
remote engine, a ``systemd`` driver or a referee without access to ``/sys/fs/cgroup`` nothing is
measured and the figures stay 0.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from pathlib import Path

from sandbox.cgroups import Hierarchies, find_hierarchies, remove_group_dir

ROOT_NAME = "kozyri-arena-docker"
"""The directory, in every hierarchy, under which each container's parent group is made."""

_names = itertools.count()


class ContainerAccount:
    """The parent cgroup of one bot container: where to put it, and what it counted."""

    def __init__(self, found: Hierarchies | None = None) -> None:
        self.found = found if found is not None else find_hierarchies()
        self.relative = f"{ROOT_NAME}/{os.getpid()}-{next(_names)}"

    @property
    def cgroup_parent(self) -> str:
        """The value for the engine's ``cgroup_parent`` setting."""
        return f"/{self.relative}"

    def _dir(self, controller: str) -> Path | None:
        """The parent group in the hierarchy of ``controller`` (v1), or in the v2 tree."""
        mount = self.found.v1.get(controller) or self.found.v2
        return mount / self.relative if mount is not None else None

    def local(self) -> bool:
        """True if the engine made our parent group on this host (call after the start).

        The parent's name is unique, so finding it proves the engine shares our hierarchies;
        it stays when a bot that ended at once has already lost its own group.
        """
        cpu = self._dir("cpuacct")
        return cpu is not None and cpu.is_dir()

    def cpu_seconds(self) -> float | None:
        """CPU time the container used, also after it ended; None if not measurable here."""
        cpu = self._dir("cpuacct")
        if cpu is None:
            return None
        if "cpuacct" in self.found.v1:
            value = _first_int(cpu / "cpuacct.usage")
            return value / 1e9 if value is not None else None
        usage = _keyed(cpu / "cpu.stat").get("usage_usec")
        return usage / 1e6 if usage is not None else None

    def peak_memory_mb(self) -> float | None:
        """The container's peak memory, if the memory hierarchy keeps it."""
        memory = self._dir("memory")
        if memory is None:
            return None
        name = "memory.max_usage_in_bytes" if "memory" in self.found.v1 else "memory.peak"
        value = _first_int(memory / name)
        return value / (1 << 20) if value else None

    def remove(self, attempts: int = 40) -> None:
        """Delete the parent in every hierarchy (once the engine has removed the container)."""
        mounts = {*self.found.v1.values(), *([self.found.v2] if self.found.v2 else [])}
        for mount in mounts:
            path = mount / self.relative
            for _ in range(attempts):
                if remove_group_dir(path):
                    break
                time.sleep(0.005)  # the engine may still be deleting the container's group


def _first_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _keyed(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    return out
