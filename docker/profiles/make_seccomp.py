"""Write ``seccomp-worker.json``: the seccomp profile of the Compose worker container.

The worker must let bubblewrap build each bot's sandbox (new user, mount, PID, network, IPC and
UTS namespaces, a fresh root through ``pivot_root``), which Docker's default profile refuses to a
container without ``CAP_SYS_ADMIN``. Instead of lifting the filter altogether, this profile
allows every system call the kernel knows for the architecture EXCEPT the ones listed in
``REFUSED`` below; anything else (including system calls newer than the table used here)
fails with EPERM. Each bot then gets its own, narrower filter from the sandbox on top.

Regenerate after editing the lists (needs Debian's python3-seccomp for the syscall table):

    /usr/bin/python3 docker/profiles/make_seccomp.py > docker/profiles/seccomp-worker.json
"""

from __future__ import annotations

import json
import sys

import seccomp

REFUSED: dict[str, str] = {
    # Kernel and machine administration: never a worker's business.
    "acct": "process accounting",
    "reboot": "reboot",
    "kexec_load": "load a new kernel",
    "kexec_file_load": "load a new kernel",
    "init_module": "load a kernel module",
    "finit_module": "load a kernel module",
    "delete_module": "unload a kernel module",
    "create_module": "obsolete module call",
    "get_kernel_syms": "obsolete module call",
    "query_module": "obsolete module call",
    "swapon": "swap management",
    "swapoff": "swap management",
    "quotactl": "disk quotas",
    "quotactl_fd": "disk quotas",
    "syslog": "kernel log",
    "settimeofday": "set the clock",
    "clock_settime": "set the clock",
    "clock_adjtime": "set the clock",
    "adjtimex": "tune the clock",
    "stime": "set the clock",
    "iopl": "port I/O",
    "ioperm": "port I/O",
    "vhangup": "hang up the terminal",
    "nfsservctl": "obsolete NFS daemon call",
    "uselib": "obsolete library loader",
    "ustat": "obsolete",
    "sysfs": "obsolete",
    "_sysctl": "obsolete",
    "vm86": "virtual 8086 mode",
    "vm86old": "virtual 8086 mode",
    "lookup_dcookie": "profiling",
    # Kernel keyrings are not namespaced: a bot or worker could leave or read keys.
    "add_key": "kernel keyring",
    "request_key": "kernel keyring",
    "keyctl": "kernel keyring",
    # Looking into or steering other processes.
    "ptrace": "trace another process",
    "process_vm_readv": "read another process's memory",
    "process_vm_writev": "write another process's memory",
    "kcmp": "compare kernel objects of other processes",
    "pidfd_getfd": "steal another process's file descriptor",
    "perf_event_open": "performance counters (side channels)",
    "bpf": "eBPF programs",
    "userfaultfd": "page fault handling (race amplifier for kernel exploits)",
    "fanotify_init": "watch the whole filesystem",
    "open_by_handle_at": "open files by handle, bypassing the mount view",
    "name_to_handle_at": "file handles (pair of the call above)",
    # NUMA placement: no use here, and a way to disturb other workloads.
    "mbind": "NUMA policy",
    "set_mempolicy": "NUMA policy",
    "set_mempolicy_home_node": "NUMA policy",
    "get_mempolicy": "NUMA policy",
    "migrate_pages": "move another process's pages",
    "move_pages": "move another process's pages",
    # io_uring runs work outside the system call filter.
    "io_uring_setup": "io_uring",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    # Bubblewrap builds its sandboxes with mount(2), pivot_root(2) and umount2(2); joining an
    # existing namespace, chroot and the new mount API are not needed.
    "setns": "join another namespace",
    "chroot": "bubblewrap uses pivot_root",
    "open_tree": "new mount API",
    "move_mount": "new mount API",
    "fsopen": "new mount API",
    "fsconfig": "new mount API",
    "fsmount": "new mount API",
    "fspick": "new mount API",
    "mount_setattr": "new mount API",
    # Placeholders the kernel never implemented.
    "afs_syscall": "not implemented",
    "tuxcall": "not implemented",
    "security": "not implemented",
    "getpmsg": "not implemented",
    "putpmsg": "not implemented",
}

NOT_IMPLEMENTED = {"clone3"}
"""Answered with ENOSYS, not EPERM: the C library then falls back to clone(2)."""

ARCHITECTURES = ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]


def known_syscalls() -> list[str]:
    """Every system call name libseccomp knows on x86-64."""
    names: set[str] = set()
    for number in range(1024):
        try:
            name = seccomp.resolve_syscall(seccomp.Arch.X86_64, number)
        except ValueError:
            continue
        names.add(name.decode() if isinstance(name, bytes) else str(name))
    return sorted(names)


def profile() -> dict[str, object]:
    allowed = [n for n in known_syscalls() if n not in REFUSED and n not in NOT_IMPLEMENTED]
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
        "architectures": ARCHITECTURES,
        "syscalls": [
            {"names": allowed, "action": "SCMP_ACT_ALLOW"},
            {"names": sorted(NOT_IMPLEMENTED), "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
        ],
    }


if __name__ == "__main__":
    json.dump(profile(), sys.stdout, indent=1)
    sys.stdout.write("\n")
