"""The seccomp rules of both sandbox backends: one table, two outputs.

``RULES`` is the single definition of what a bot may not call. It is turned into

- a BPF program for ``bwrap --seccomp FD``, built with libseccomp's Python binding (Debian's
  ``python3-seccomp`` or PyPI's ``pyseccomp``); when the referee's interpreter cannot import
  either, the program is built by running this file with the system ``/usr/bin/python3``, and
  without libseccomp ``filter_program`` returns None (``enforced()`` then says so);
- a Docker/OCI seccomp profile (``docker_profile``), passed to every bot container as
  ``security_opt=["seccomp=<json>"]``. ``sandbox/seccomp.json`` is the same profile written
  out for operators (``python -m sandbox.seccomp --docker``); a test keeps it in step.

Every rule that looks at an argument compares what the kernel reads. An ``int`` argument is 32
bits wide in the kernel but travels in a 64-bit register, and libseccomp's plain EQ compares
all 64: ``socket(AF_INET | 1 << 32, ...)`` would slip past an EQ rule and still make an inet
socket. So ``low32`` and ``bits`` compare under a mask, and the socket family is an allow-list
checked on the whole register: only exactly ``AF_UNIX`` passes.

Run as a script, it writes the BPF program to stdout (``--docker``: the JSON profile).
"""

from __future__ import annotations

import errno
import functools
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Literal

SYSTEM_PYTHON = "/usr/bin/python3"
AF_UNIX = 1
LOW32 = 0xFFFFFFFF
SHARED_FUTEX_MASK = 0xFFFFFEFF
"""A futex operation's low 32 bits but FUTEX_CLOCK_REALTIME (256): command and private flag."""

Op = Literal["ne", "low32", "bits", "masked"]


@dataclass(frozen=True)
class Cmp:
    """A test on one syscall argument; the rule applies when it holds.

    ``ne``: the whole 64-bit argument differs from ``value`` (an allow-list of one value, so set
    high bits are refused too). ``low32``: the low 32 bits equal ``value``. ``bits``: every bit
    of ``value`` is set. ``masked``: the futex operation, without its clock bit, is ``value``.
    """

    index: int
    op: Op
    value: int

    def mask_and_value(self) -> tuple[int, int]:
        """The (mask, value) pair of a masked comparison (``low32`` and ``bits``)."""
        if self.op == "low32":
            return LOW32, self.value
        if self.op == "masked":
            return SHARED_FUTEX_MASK, self.value
        return self.value, self.value


@dataclass(frozen=True)
class Rule:
    """Refuse ``syscall`` with ``errno`` (0: report success without doing anything)."""

    syscall: str
    errno: int
    when: Cmp | None = None
    why: str = ""
    bwrap_only: bool = False
    """Left out of the Docker profile: the engine's runtime itself needs the call after it
    loaded the profile (runc checks ``/proc`` with ``fstatfs`` just before starting the bot)."""


def _each(names: tuple[str, ...], err: int, why: str) -> list[Rule]:
    return [Rule(name, err, None, why) for name in names]


AF_UNIX_ONLY = Cmp(0, "ne", AF_UNIX)
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
LOCK_COMMANDS = {"F_SETLK": 6, "F_SETLKW": 7, "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38}
"""Commands that take or drop a lock. The queries (F_GETLK 5, F_OFD_GETLK 36) stay allowed:
with no lock ever taken by a bot, a query only ever sees locks of processes outside every
sandbox, and SQLite's WAL mode fails without them."""
NOTICE_COMMANDS = {"F_SETLEASE": 1024, "F_GETLEASE": 1025, "F_NOTIFY": 1026}
SHARED_FUTEX_WAITS = {"FUTEX_WAIT": 0, "FUTEX_WAIT_BITSET": 9, "FUTEX_WAIT_REQUEUE_PI": 11}
SHARED_FUTEX_WAKES = {
    "FUTEX_WAKE": 1,
    "FUTEX_REQUEUE": 3,
    "FUTEX_CMP_REQUEUE": 4,
    "FUTEX_WAKE_OP": 5,
    "FUTEX_WAKE_BITSET": 10,
    "FUTEX_CMP_REQUEUE_PI": 12,
}
"""Futex commands without FUTEX_PRIVATE_FLAG (128). A shared futex on a page of a file is
keyed by the file, so two bots that map one read-only file (libc, the interpreter, a kit) could
wait and wake each other across every namespace. Waits are answered EAGAIN ("the value moved":
callers check again, so a wait becomes a spin) and wakes as done for nobody. Private futexes,
which threads of one process use, are untouched; ``pthread_join`` (a shared wait on the
thread's own memory) still works, spinning until the thread has gone."""
RWF_NOWAIT = 0x08
MADV_MERGEABLE = 12
POSIX_FADV_DONTNEED = 4
PR_SET_MEMORY_MERGE = 67
"""Kernel same-page merging would share a page between bots that opt in: a write to a merged
page is slower, which one bot can time after another chose the page's content."""

KERNEL_SURFACE = (
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "swapon",
    "swapoff",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "open_by_handle_at",
    "name_to_handle_at",
    "iopl",
    "ioperm",
    "vhangup",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "nfsservctl",
)

RULES: tuple[Rule, ...] = (
    Rule("socket", errno.EAFNOSUPPORT, AF_UNIX_ONLY, "socket families: AF_UNIX only"),
    Rule("socketpair", errno.EAFNOSUPPORT, AF_UNIX_ONLY, "socket families: AF_UNIX only"),
    *[
        Rule("clone", errno.EPERM, Cmp(0, "bits", flag), f"no new namespaces ({name})")
        for name, flag in CLONE_NEW.items()
    ],
    # clone3 passes its flags in memory, where a filter cannot look: ENOSYS makes the C
    # library fall back to clone, whose flags are checked above.
    Rule("clone3", errno.ENOSYS, None, "flags out of a filter's reach; libc falls back to clone"),
    *_each(("unshare", "setns"), errno.EPERM, "no new or foreign namespaces"),
    *_each(
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
        errno.ENOSYS,
        "io_uring works behind the filter's back",
    ),
    *_each(
        ("io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents"),
        errno.ENOSYS,
        "AIO contexts come from a host-wide pool (aio-nr): filling it signals to other bots",
    ),
    *_each(("userfaultfd",), errno.ENOSYS, "kernel-exploit helper"),
    *_each(("perf_event_open",), errno.ENOSYS, "hardware counters: a side channel"),
    *_each(("bpf",), errno.EPERM, "kernel programs"),
    # POSIX timers and itimers stay (bounded by RLIMIT_SIGPENDING and the process limit): a
    # timerfd holds no pending signal, so only open_files would bound it.
    *_each(
        ("timerfd_create",),
        errno.ENOSYS,
        "timers that fire while the bot is frozen, bounded by nothing but open files",
    ),
    *_each(
        (
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "process_madvise",
            "process_mrelease",
            "kcmp",
            "pidfd_getfd",
        ),
        errno.EPERM,
        "no access to another process",
    ),
    *_each(
        ("keyctl", "add_key", "request_key"),
        errno.ENOSYS,
        "keyrings outlive the bot and are shared by its uid",
    ),
    *[
        Rule("fcntl", 0, Cmp(1, "low32", cmd), f"file locks cannot signal ({name})")
        for name, cmd in LOCK_COMMANDS.items()
    ],
    Rule("flock", 0, None, "file locks cannot signal (flock)"),
    *[
        Rule("fcntl", errno.EINVAL, Cmp(1, "low32", cmd), f"no notice of others' opens ({name})")
        for name, cmd in NOTICE_COMMANDS.items()
    ],
    *_each(
        ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark"),
        errno.ENOSYS,
        "no notice of others' reads of shared files",
    ),
    *[
        Rule(name, errno.EOPNOTSUPP, Cmp(5, "bits", RWF_NOWAIT), "no page-cache probing")
        for name in ("preadv2", "pwritev2")
    ],
    *_each(("cachestat",), errno.ENOSYS, "no page-cache probing"),
    *[
        Rule("futex", err, Cmp(1, "masked", cmd), f"no futex shared through a file ({name})")
        for commands, err in ((SHARED_FUTEX_WAITS, errno.EAGAIN), (SHARED_FUTEX_WAKES, 0))
        for name, cmd in commands.items()
    ],
    *_each(
        ("futex_waitv", "futex_wait", "futex_wake", "futex_requeue"),
        errno.ENOSYS,
        "futex flags out of a filter's reach (the C library does not use these)",
    ),
    *_each(("sysinfo",), errno.ENOSYS, "host-wide counts of processes, memory and load"),
    *[
        Rule(name, errno.ENOSYS, None, "the host disks' free blocks move with others' writes", True)
        for name in ("statfs", "fstatfs", "ustat")
    ],
    Rule("madvise", errno.EINVAL, Cmp(2, "low32", MADV_MERGEABLE), "no page merging with others"),
    # Answered as done: a bot could otherwise empty the page cache of shared files (the kits,
    # /usr) at will, making the cache a channel it can reset every move.
    Rule("fadvise64", 0, Cmp(3, "low32", POSIX_FADV_DONTNEED), "no evicting shared pages"),
    Rule("prctl", errno.EINVAL, Cmp(0, "low32", PR_SET_MEMORY_MERGE), "no page merging"),
    *_each(KERNEL_SURFACE, errno.EPERM, "administration: needs capabilities a bot lacks"),
)
"""Every refusal, in both backends. Anything not listed is allowed."""


# -- libseccomp (bwrap) ----------------------------------------------------------------------


def _binding() -> Any | None:
    for name in ("seccomp", "pyseccomp"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _arg(lib: Any, cmp: Cmp) -> Any:
    if cmp.op == "ne":
        return lib.Arg(cmp.index, lib.NE, cmp.value)
    mask, value = cmp.mask_and_value()
    return lib.Arg(cmp.index, lib.MASKED_EQ, mask, value)


def _known(lib: Any, name: str) -> bool:
    try:
        lib.resolve_syscall(lib.Arch.NATIVE, name)
    except (ValueError, RuntimeError, OSError):
        return False
    return True


def _build(lib: Any) -> bytes:
    """The BPF program, built with the binding ``lib``.

    A name this libseccomp does not know is a syscall this kernel generation may lack; it is
    skipped. Syscalls of a foreign ABI (i386 ``int 0x80``, x32) meet libseccomp's bad-arch
    action, which kills the caller.
    """
    flt = lib.SyscallFilter(defaction=lib.ALLOW)
    for rule in RULES:
        if not _known(lib, rule.syscall):
            continue
        args = [_arg(lib, rule.when)] if rule.when is not None else []
        flt.add_rule(lib.ERRNO(rule.errno), rule.syscall, *args)
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def filter_program() -> bytes | None:
    """The BPF program for ``bwrap --seccomp``, or None if libseccomp is not usable here."""
    lib = _binding()
    if lib is not None:
        try:
            return _build(lib)
        except (OSError, RuntimeError, ValueError):
            return None
    return _build_with_system_python()


def _build_with_system_python() -> bytes | None:
    if not os.path.exists(SYSTEM_PYTHON) or os.path.realpath(sys.executable) == SYSTEM_PYTHON:
        return None
    try:
        done = subprocess.run(
            [SYSTEM_PYTHON, "-I", __file__], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    # A BPF program is a whole number of 8-byte instructions.
    if done.returncode != 0 or not done.stdout or len(done.stdout) % 8:
        return None
    return done.stdout


# -- Docker / OCI profile --------------------------------------------------------------------

ARCHES = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}


def _docker_arg(cmp: Cmp) -> dict[str, Any]:
    if cmp.op == "ne":
        return {"index": cmp.index, "value": cmp.value, "valueTwo": 0, "op": "SCMP_CMP_NE"}
    mask, value = cmp.mask_and_value()
    return {"index": cmp.index, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}


def docker_profile(machine: str | None = None) -> dict[str, Any]:
    """The rules as a Docker/OCI seccomp profile for ``machine`` (default: this one).

    Only the native architecture is listed, so a call through a foreign ABI (``int 0x80``) is
    not judged by rules written for native syscall numbers: the engine refuses it.
    """
    arch = ARCHES.get(machine or platform.machine())
    entries = []
    for rule in (r for r in RULES if not r.bwrap_only):
        entry: dict[str, Any] = {
            "names": [rule.syscall],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": rule.errno,
            "args": [_docker_arg(rule.when)] if rule.when is not None else [],
            "comment": rule.why,
        }
        entries.append(entry)
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": [arch] if arch else [],
        "syscalls": entries,
    }


@functools.cache
def docker_profile_json(machine: str | None = None) -> str:
    """``docker_profile`` as the text ``security_opt=["seccomp=..."]`` takes."""
    return json.dumps(docker_profile(machine), indent=1) + "\n"


def main(argv: list[str]) -> int:
    """Write the BPF program (or, with ``--docker``, the profile) to stdout."""
    if "--docker" in argv:
        sys.stdout.write(docker_profile_json("x86_64"))
        return 0
    lib = _binding()
    if lib is None:
        return 1
    sys.stdout.buffer.write(_build(lib))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
