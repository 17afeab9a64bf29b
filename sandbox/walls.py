"""The walls of both backends beyond namespaces: which host-wide tables a bot never sees, and the
container options that carry the seccomp rules (``sandbox.seccomp``) and those masks to Docker.

Kept apart from the backends so that both take one list (see docs/sandbox.md, "The walls").
"""

from __future__ import annotations

from typing import Any

from sandbox.seccomp import docker_profile_json

MASKED_PROC = (
    "locks",
    "keys",
    "key-users",
    "timer_list",
    "sched_debug",
    "schedstat",
    "loadavg",
    "stat",
    "meminfo",
    "uptime",
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "diskstats",
    "interrupts",
    "softirqs",
    "sys/fs/file-nr",
    "sys/fs/inode-nr",
    "sys/fs/inode-state",
    "sys/fs/dentry-state",
    "sys/fs/aio-nr",
    "sys/kernel/pty/nr",
    "sys/kernel/hung_task_detect_count",
    "cgroups",
    "swaps",
)
"""Host-wide tables in ``/proc`` that carry what other processes do (locks, keys, counts of
processes, open files, AIO contexts, terminals, cgroups, memory, swap, CPU and disk activity).
``bwrap`` covers each with ``/dev/null`` (unreadable inside a user namespace, which refuses
device nodes); Docker masks them (empty)."""

MASKED_PROC_DIRS = ("pressure", "irq", "fs", "sys/fs/quota")
"""Folders of ``/proc`` full of host-wide counters: stall times of CPU, memory and I/O
(``pressure``), interrupt counts (``irq``), file-system allocator and quota statistics (``fs``,
``sys/fs/quota``). Both backends show each as an empty read-only folder."""

MASKED_DEV = ("/dev/ptmx",)
"""Device nodes covered with ``/dev/null``: the pseudo-terminal multiplexer allocates from a
host-wide pool whose count (``pty/nr``) and exhaustion other bots could see."""

ENGINE_MASKED = (
    "/proc/asound",
    "/proc/acpi",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
)
"""What the engine masks by default; a ``MaskedPaths`` list replaces it, so it is repeated."""
MASKED_PATHS = (
    *ENGINE_MASKED,
    *(f"/proc/{name}" for name in MASKED_PROC),
    *(f"/proc/{name}" for name in MASKED_PROC_DIRS),
    *MASKED_DEV,
    "/sys",
)
"""Paths the container sees empty: the engine's, the host-wide ``/proc`` tables the ``bwrap``
backend covers too, and all of ``/sys`` (disk and device counters; ``bwrap`` has no ``/sys``)."""


def docker_security_opt() -> list[str]:
    """The ``security_opt`` entry that loads the project's seccomp profile."""
    return [f"seccomp={docker_profile_json()}"]


def docker_host_walls() -> dict[str, Any]:
    """Host-config fields the SDK has no argument for (API 1.40+ and 1.41+).

    A private cgroup namespace hides the host's cgroup paths, which name the referee's pid and
    count its containers.
    """
    return {"MaskedPaths": list(MASKED_PATHS), "CgroupnsMode": "private"}


def engine_has_seccomp(api: Any) -> bool:
    """True if the engine reports seccomp among its security options (else it ignores ours)."""
    try:
        options = api.info().get("SecurityOptions") or []
    except Exception:
        return False
    return any("name=seccomp" in str(option) for option in options)
