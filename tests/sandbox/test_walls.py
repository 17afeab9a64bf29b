"""The walls, tried by a hostile probe in a real sandbox under both backends.

``tests/fixtures/walls_probe/probe.c`` (compiled here, statically) calls every refused syscall
with raw arguments, once as written and once with the high 32 bits of the checked argument set
(the kernel reads an ``int`` as 32 bits; a filter that compares 64 would let it through). It
also takes every kind of file lock on a kit file and a file under ``/usr`` and keeps them while
the referee's side looks for them on the very same inodes. A run without the seccomp filter
shows that the probe's calls and the lock check really detect what they test for.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import mmap
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox.base import PENDING_SIGNALS, BotProcess, Limits, Sandbox
from sandbox.bwrap import BwrapSandbox
from sandbox.bwrap_world import userns_lock
from sandbox.seccomp import docker_profile_json
from sandbox.walls import MASKED_PROC
from tests.sandbox.conftest import REPO, REQUIRE_ENV
from tests.sandbox.driver import fresh_slot

PROBE_SOURCE = REPO / "tests" / "fixtures" / "walls_probe" / "probe.c"
FUTEX_SOURCE = PROBE_SOURCE.with_name("futex.c")
KIT_FILE = "/kit/python/kozyri_bot.py"
USR_FILE = "/usr/bin/true"
LIMITS = Limits(memory_mb=256, processes=32, open_files=128, tmp_mb=16)
WAIT_S = 120.0

SOCKET_FAMILIES = (0, 2, 3, 4, 5, 9, 10, 15, 16, 17, 29, 30, 31, 36, 38, 40, 42, 43, 44, 45)
NAMESPACES = ("newns", "newcgroup", "newuts", "newipc", "newuser", "newpid", "newnet")
REFUSED: dict[str, int] = {
    **{f"socket_{f}{h}": errno.EAFNOSUPPORT for f in SOCKET_FAMILIES for h in ("", "_high")},
    "socketpair_2_high": errno.EAFNOSUPPORT,
    **{
        f"{call}_{ns}{h}": errno.EPERM
        for call in ("clone", "unshare")
        for ns in NAMESPACES
        for h in ("", "_high")
    },
    "clone3": errno.ENOSYS,
    "setns": errno.EPERM,
    "setns_high": errno.EPERM,
    "io_uring_setup": errno.ENOSYS,
    "io_uring_setup_high": errno.ENOSYS,
    "io_uring_enter": errno.ENOSYS,
    "io_uring_register": errno.ENOSYS,
    "io_setup": errno.ENOSYS,
    "userfaultfd": errno.ENOSYS,
    "userfaultfd_high": errno.ENOSYS,
    "perf_event_open": errno.ENOSYS,
    "timerfd_create": errno.ENOSYS,
    "bpf": errno.EPERM,
    "bpf_high": errno.EPERM,
    "ptrace_attach": errno.EPERM,
    "ptrace_seize": errno.EPERM,
    "ptrace_traceme": errno.EPERM,
    "process_vm_readv": errno.EPERM,
    "keyctl_session": errno.ENOSYS,
    "keyctl_join": errno.ENOSYS,
    "keyctl_read_session": errno.ENOSYS,
    "add_key": errno.ENOSYS,
    "request_key": errno.ENOSYS,
    "inotify_init1": errno.ENOSYS,
    "fanotify_init": errno.ENOSYS,
    "sysinfo": errno.ENOSYS,
    "madvise_mergeable": errno.EINVAL,
    "madvise_mergeable_high": errno.EINVAL,
    "prctl_memory_merge": errno.EINVAL,
    "prctl_memory_merge_high": errno.EINVAL,
    "mount": errno.EPERM,
    "chroot": errno.EPERM,
    "preadv2_nowait": errno.EOPNOTSUPP,
    "cachestat": errno.ENOSYS,
    "fcntl_setlease": errno.EINVAL,
    "fcntl_setlease_high": errno.EINVAL,
    "fcntl_notify": errno.EINVAL,
}
"""Every attempt the filter must refuse, with the errno it answers."""

LOCK_KINDS = ("setlk", "setlkw", "ofd_setlk", "ofd_setlkw", "flock")


def required(name: str) -> bool:
    return os.environ.get(REQUIRE_ENV[name]) == "1"


@pytest.fixture(scope="session")
def probe_dir() -> Iterator[Path]:
    """A bot folder holding the compiled probe (static, so the runner image needs no libc)."""
    if os.uname().machine != "x86_64":
        pytest.skip("the walls probe is written for x86_64 (system call numbers, int 0x80)")
    gcc = shutil.which("gcc")
    if gcc is None:
        if required("bwrap") or required("docker"):
            pytest.fail("gcc is needed to build the walls probe")
        pytest.skip("no gcc to build the walls probe")
    folder = Path(tempfile.mkdtemp(prefix="arena-walls-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        for source, name in ((PROBE_SOURCE, "probe"), (FUTEX_SOURCE, "futex")):
            cmd = [gcc, "-O1", "-static", "-pthread", "-o", str(folder / name), str(source)]
            subprocess.run(cmd, check=True, capture_output=True, timeout=WAIT_S)
            (folder / name).chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class ProbeRun:
    """What the probe answered, and which of its locks the referee's side could see."""

    results: dict[str, tuple[int, int]]
    locks_seen: dict[str, dict[str, bool]]


def bot_root(sandbox: Sandbox, process: BotProcess) -> Path:
    """The bot's root as the host reaches it (``/proc/<pid>/root``): the same inodes."""
    if sandbox.name == "docker":
        from sandbox.docker import DockerProcess

        assert isinstance(process, DockerProcess)
        pid = int(sandbox.api.inspect_container(process.container)["State"]["Pid"])  # type: ignore[attr-defined]
    else:
        assert process.pid is not None
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        pid = int(children[0])  # the bot, pid 1 of its namespace
    return Path(f"/proc/{pid}/root")


def locks_on(path: Path) -> dict[str, bool]:
    """Whether any process holds a POSIX/OFD lock or a flock on ``path``'s inode."""
    fd = os.open(path, os.O_RDONLY)
    try:
        query = struct.pack("hhxxxxqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, query)
        posix = struct.unpack("hhxxxxqqi4x", answer)[0] != fcntl.F_UNLCK
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            flocked = False
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            flocked = True
        return {"posix": posix, "flock": flocked}
    finally:
        os.close(fd)


def read_until(fd: int, marker: bytes, timeout: float = WAIT_S) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while marker not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            data = os.read(fd, 65536)
            if not data:
                break
            out += data
    return out


def run_probe(sandbox: Sandbox, folder: Path) -> ProbeRun:
    process = sandbox.spawn(folder, ["./probe", KIT_FILE, USR_FILE], LIMITS, slot=fresh_slot())
    try:
        out = read_until(process.stdout_fd, b"LOCKED\n")
        assert out.endswith(b"LOCKED\n"), (out[-300:], process.poll())
        root = bot_root(sandbox, process)
        seen = {path: locks_on(root / path.lstrip("/")) for path in (KIT_FILE, USR_FILE)}
    finally:
        process.close()
    results = {}
    for line in out.decode().splitlines()[:-1]:
        name, ret, err = line.split("\t")
        results[name] = (int(ret), int(err))
    return ProbeRun(results, seen)


@pytest.fixture(scope="module", params=["bwrap", "docker"])
def walled(request: pytest.FixtureRequest, probe_dir: Path) -> ProbeRun:
    """The probe's run in each backend, with every wall up."""
    sandbox: Sandbox = request.getfixturevalue(f"{request.param}_sandbox")
    require_filter(sandbox)
    return run_probe(sandbox, probe_dir)


def require_filter(sandbox: Sandbox) -> None:
    """Skip (fail where the backend is required) if ``sandbox`` cannot load the rules here."""
    if sandbox.enforced(LIMITS)["seccomp"]:
        return
    why = "no libseccomp (python3-seccomp)" if sandbox.name == "bwrap" else "no seccomp engine"
    if required(sandbox.name):
        pytest.fail(f"{REQUIRE_ENV[sandbox.name]}=1 but the walls cannot be built: {why}")
    pytest.skip(why)


def test_every_refusal_holds_also_with_high_bits_set(walled: ProbeRun) -> None:
    wrong = {
        name: walled.results.get(name)
        for name, err in REFUSED.items()
        if walled.results.get(name) != (-1, err)
    }
    assert wrong == {}


def test_timers_a_frozen_bot_can_leave_armed_are_bounded(walled: ProbeRun) -> None:
    # Each fires while its bot is frozen, on the core the bot last ran on (docs/sandbox.md).
    assert walled.results["timerfd_create"] == (-1, errno.ENOSYS)  # in REFUSED too
    assert walled.results["timer_create_count"] == (PENDING_SIGNALS, errno.EAGAIN)
    assert walled.results["sigqueue_count"] == (PENDING_SIGNALS, errno.EAGAIN)
    # Three itimers per process, and no more processes than the limit allows (the probe
    # itself is one of them); each of them could arm all three, as a C bot's alarm() needs.
    forked, err = walled.results["itimer_processes"]
    assert 0 < forked <= LIMITS.processes and err == errno.EAGAIN
    assert walled.results["itimer_armed"] == (forked, 0)


def test_unix_sockets_threads_and_fork_still_work(walled: ProbeRun) -> None:
    assert walled.results["socket_unix"][0] >= 0
    assert walled.results["socketpair_unix"] == (0, 0)
    assert walled.results["clone_plain"][0] > 0
    assert walled.results["preadv2_plain"][0] >= 0


def test_no_nested_user_namespace_from_the_unshare_command(walled: ProbeRun) -> None:
    status = walled.results["unshare_command"][0]
    assert status not in (0, 127), "0: a namespace was made; 127: no unshare command to try"


def test_a_foreign_abi_cannot_make_an_inet_socket(walled: ProbeRun) -> None:
    assert walled.results["int80_socket"][0] == -1
    assert walled.results["x32_socket"][0] == -1


def test_locks_are_answered_but_never_taken(walled: ProbeRun) -> None:
    for index in (1, 2):
        for kind in LOCK_KINDS:
            for suffix in ("", "_high"):
                assert walled.results[f"lock_{index}_{kind}{suffix}"] == (0, 0)
        assert walled.results[f"lock_{index}_getlk"] == (fcntl.F_UNLCK, 0)
    assert walled.locks_seen == {
        KIT_FILE: {"posix": False, "flock": False},
        USR_FILE: {"posix": False, "flock": False},
    }


SYS_ADD_KEY, SYS_KEYCTL, KEYCTL_REVOKE = 248, 250, 3  # x86_64, like the probe


@pytest.fixture
def referee_key() -> Iterator[bytes]:
    """A key in the referee's own session keyring, as a secret a bot must not reach."""
    secret = os.urandom(8).hex().encode()
    libc = ctypes.CDLL(None, use_errno=True)
    key = libc.syscall(SYS_ADD_KEY, b"user", b"arena-referee", secret, len(secret), -3)
    if key < 0:
        pytest.skip(f"no keyrings here (errno {ctypes.get_errno()})")
    yield secret
    libc.syscall(SYS_KEYCTL, KEYCTL_REVOKE, key)


def test_without_the_filter_the_probe_gets_through(
    bwrap_sandbox: Sandbox, probe_dir: Path, referee_key: bytes
) -> None:
    """The probe detects what it tests for: without seccomp the bypasses work, locks hold;
    what does not depend on the filter (no nested user namespace, a fresh keyring) still holds."""
    run = run_probe(BwrapSandbox(seccomp=False), probe_dir)
    assert run.results["socket_2"][0] >= 0  # an inet socket (in an empty network namespace)
    assert run.results["socket_2_high"][0] >= 0  # the width bypass makes one too
    assert run.locks_seen[KIT_FILE] == {"posix": True, "flock": True}
    assert run.results["io_uring_setup"][0] >= 0
    assert run.results["timerfd_create"][0] >= 0
    assert run.results["io_setup"][0] == 0  # an AIO context from the host-wide pool
    if i386_entry_enabled():
        assert run.results["int80_socket"][0] == 0  # the i386 entry works where not filtered
    assert run.results["request_key"] == (-1, errno.ENOKEY)  # the referee's key is not found
    if userns_lock():
        assert run.results["unshare_newuser"][0] == -1
        assert run.results["unshare_command"][0] not in (0, 127)


def i386_entry_enabled() -> bool:
    """Whether this kernel runs i386 system calls (``int 0x80``) from 64-bit processes."""
    cmdline = Path("/proc/cmdline").read_text()
    off = any(f"ia32_emulation={v}" in cmdline for v in ("0", "false", "off", "n"))
    return os.uname().machine == "x86_64" and Path("/proc/sys/abi/vsyscall32").exists() and not off


PROC_PROBE = r"""
import json, os
out = {}
for name in json.loads(os.environ["ARENA_PROC_NAMES"]):
    try:
        with open("/proc/" + name, "rb") as f:
            out[name] = f.read().decode(errors="replace")
    except OSError as exc:
        out[name] = exc.errno
out["sys"] = os.listdir("/sys") if os.path.isdir("/sys") else []
print(json.dumps(out), flush=True)
"""


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_host_wide_proc_tables_are_hidden(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    held = open_dir / "held.lock"
    held.write_text("x")
    (open_dir / "probe.py").write_text(PROC_PROBE)
    names = [*MASKED_PROC, "self/mountinfo", "self/cgroup"]
    with open(held) as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        inode = str(os.stat(held).st_ino)
        assert inode in Path("/proc/locks").read_text()  # the host table shows it
        env = {"ARENA_PROC_NAMES": json.dumps(names)}
        process = sandbox.spawn(
            open_dir, ["python3", "probe.py"], LIMITS, env=env, slot=fresh_slot()
        )
        try:
            out = read_until(process.stdout_fd, b"\n")
        finally:
            process.close()
    seen = json.loads(out)
    shown = {
        name: value
        for name, value in seen.items()
        if name in MASKED_PROC and value not in ("", errno.EACCES, errno.ENOENT)
    }
    assert shown == {}
    assert seen["sys"] == []  # no /sys (bwrap) or an empty one (docker): no device counters
    mountinfo, cgroups = seen["self/mountinfo"], seen["self/cgroup"]
    assert isinstance(mountinfo, str) and "/bot" in mountinfo
    assert str(held) not in mountinfo
    # The host's cgroup paths (naming the referee's pid and counting its bots) stay hidden.
    assert isinstance(cgroups, str) and cgroups.strip()
    assert all(line.endswith(":/") for line in cgroups.splitlines()), cgroups
    assert "kozyri-arena" not in mountinfo


PROC_SCAN_BOT = r"""
import json, os, sys
PER_PROCESS = {"self", "thread-self", "kmsg", "kcore"}
def snapshot(base):
    seen = {}
    try:
        names = os.listdir(base)
    except OSError:
        return seen
    for name in names:
        path = base + "/" + name
        if base == "/proc" and (name.isdigit() or name in PER_PROCESS) or os.path.islink(path):
            continue
        if os.path.isdir(path):
            seen.update(snapshot(path))
            continue
        try:
            with open(path, "rb") as f:
                seen[path] = f.read(65536).hex()
        except OSError:
            pass
    return seen
before = snapshot("/proc")
print("ready", flush=True)
sys.stdin.readline()
after = snapshot("/proc")
changed = sorted(p for p in before if before[p] != after.get(p))
print(json.dumps({"files": len(before), "changed": changed}), flush=True)
"""

NOISE_BOT = r"""
import ctypes, mmap, os, socket, threading, time
libc = ctypes.CDLL(None, use_errno=True)
done = {}
context = ctypes.c_ulong(0)
done["io_setup"] = libc.syscall(206, 512, ctypes.byref(context)), ctypes.get_errno()
ptys = []
try:
    for _ in range(8):
        ptys.append(os.openpty())
except OSError as exc:
    done["pty"] = exc.errno
pipes = [os.pipe() for _ in range(40)]
sockets = [socket.socketpair() for _ in range(20)]
for _ in range(3):
    if os.fork() == 0:
        time.sleep(2.0)
        os._exit(0)
threads = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(8)]
for thread in threads:
    thread.start()
memory = mmap.mmap(-1, 64 << 20)
memory.write(b"x" * (64 << 20))
end = time.monotonic() + 1.0
while time.monotonic() < end:
    pass
for folder in ("/usr/lib/python3", "/usr/share"):
    for root, _, files in os.walk(folder):
        for name in files[:5]:
            try:
                with open(os.path.join(root, name), "rb") as f:
                    f.read(4096)
            except OSError:
                pass
print("noisy", len(ptys), done, flush=True)
"""

RANDOM_BY_DESIGN = {"/proc/sys/kernel/random/uuid"}
"""A fresh random value on every read: it carries nothing from another process."""


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_nothing_in_proc_moves_when_another_bot_acts(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """Every file a bot can read under ``/proc`` (outside the process folders) is read before
    and after another bot makes AIO contexts, terminals, pipes, memory, CPU and disk activity:
    none changes (host-wide counters such as ``aio-nr``, ``pty/nr`` and the pressure stall
    totals did, in both backends), and the AIO and terminal pools are out of reach."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    require_filter(sandbox)
    (open_dir / "scan.py").write_text(PROC_SCAN_BOT)
    (open_dir / "noise.py").write_text(NOISE_BOT)
    scanner = sandbox.spawn(open_dir, ["python3", "scan.py"], LIMITS, slot=fresh_slot())
    try:
        assert read_until(scanner.stdout_fd, b"ready\n") == b"ready\n"
        noisy = sandbox.spawn(open_dir, ["python3", "noise.py"], LIMITS, slot=fresh_slot())
        try:
            noise = read_until(noisy.stdout_fd, b"\n")
        finally:
            noisy.close()
        os.write(scanner.stdin_fd, b"go\n")
        seen = json.loads(read_until(scanner.stdout_fd, b"}\n"))
    finally:
        scanner.close()
    assert noise.startswith(b"noisy 0 "), noise  # no terminal could be opened
    assert f"'io_setup': (-1, {errno.ENOSYS})".encode() in noise, noise
    assert seen["files"] > 100  # the scan really read /proc
    assert set(seen["changed"]) <= RANDOM_BY_DESIGN, seen["changed"]


EVICT_BOT = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
print("evicted", flush=True)
sys.stdin.readline()
"""


def cached_share(path: Path) -> float:
    """The share of ``path``'s pages in the host's page cache (``mincore`` on a mapping)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vector = ctypes.create_string_buffer(pages)
    with open(path, "rb") as f:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
        assert address not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        try:
            assert libc.mincore(address, size, vector) == 0, ctypes.get_errno()
        finally:
            libc.munmap(address, size)
    return sum(b & 1 for b in vector.raw) / pages


def evicted_by_bot(sandbox: Sandbox, folder: Path) -> float:
    """Cache a shared file on the host, let a bot ask to evict it: the share still cached."""
    shared = folder / "shared.bin"
    with open(shared, "wb") as out:
        out.write(os.urandom(1 << 20))
        os.fsync(out.fileno())  # clean pages: the kernel drops only those
    shared.chmod(0o644)
    (folder / "evict.py").write_text(EVICT_BOT)
    shared.read_bytes()
    assert cached_share(shared) == 1.0
    process = sandbox.spawn(
        folder, ["python3", "evict.py", "/bot/shared.bin"], LIMITS, slot=fresh_slot()
    )
    try:
        assert read_until(process.stdout_fd, b"evicted\n") == b"evicted\n"
        return cached_share(shared)
    finally:
        process.close()


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_a_bot_cannot_evict_shared_pages(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """``posix_fadvise(DONTNEED)`` on a shared read-only file is answered but does nothing:
    a bot cannot reset the page cache of the kits or ``/usr`` to signal again every move."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    require_filter(sandbox)
    assert evicted_by_bot(sandbox, open_dir) == 1.0


def test_without_the_filter_a_bot_evicts_shared_pages(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    """The check above detects eviction: without the filter the file leaves the cache."""
    assert evicted_by_bot(BwrapSandbox(seccomp=False), open_dir) < 0.5


READ_BOT = r"""
import os, sys
with open(sys.argv[1], "rb") as f:
    f.read()
os.listdir(os.path.dirname(sys.argv[1]))
print("read", flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_reading_a_shared_file_leaves_no_access_time(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """Shared files are mounted read-only, and a read-only mount never updates access times:
    another bot cannot learn from ``stat`` which shared files a bot has read."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    (open_dir / "read.py").write_text(READ_BOT)
    shared = open_dir / "shared.txt"
    shared.write_text("kit data")
    for path in (shared, open_dir):
        os.utime(path, (0, path.stat().st_mtime))  # stale: relatime would update it
    process = sandbox.spawn(
        open_dir, ["python3", "read.py", "/bot/shared.txt"], LIMITS, slot=fresh_slot()
    )
    try:
        assert read_until(process.stdout_fd, b"read\n") == b"read\n"
        assert (shared.stat().st_atime, open_dir.stat().st_atime) == (0, 0)
    finally:
        process.close()


DISK_BOT = r"""
import os, sys
def free():
    try:
        found = os.statvfs("/bot")
    except OSError as exc:
        return "refused %d" % exc.errno
    return "%d %d" % (found.f_bfree, found.f_ffree)
print(free(), flush=True)
sys.stdin.readline()
print(free(), flush=True)
"""


def disk_counters_seen(sandbox: Sandbox, folder: Path) -> tuple[bytes, bytes]:
    """What a bot reads of its disk's free blocks before and after the host writes 8 MiB."""
    (folder / "disk.py").write_text(DISK_BOT)
    process = sandbox.spawn(folder, ["python3", "disk.py"], LIMITS, slot=fresh_slot())
    try:
        before = read_until(process.stdout_fd, b"\n")
        with open(folder / "written.bin", "wb") as out:
            out.write(os.urandom(8 << 20))
            out.flush()
            os.fsync(out.fileno())
        os.write(process.stdin_fd, b"go\n")
        return before, read_until(process.stdout_fd, b"\n")
    finally:
        process.close()


def test_the_host_disks_free_space_is_hidden_under_bwrap(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    """``statfs`` of a shared mount gives the host disk's free blocks and inodes, which move
    with every write on the host (the referee's replays carry a bot's debug text): refused."""
    require_filter(bwrap_sandbox)
    refused = f"refused {errno.ENOSYS}\n".encode()
    assert disk_counters_seen(bwrap_sandbox, open_dir) == (refused, refused)


def test_without_the_filter_the_disks_free_space_moves(
    bwrap_sandbox: Sandbox, open_dir: Path
) -> None:
    """The check above detects the counter: without the filter, 8 MiB written show. Other jobs
    on a busy host free space too, so one of three tries must show it."""
    seen = []
    for _ in range(3):
        (open_dir / "written.bin").unlink(missing_ok=True)
        before, after = disk_counters_seen(BwrapSandbox(seccomp=False), open_dir)
        seen.append((before, after))
        if int(before.split()[0]) - int(after.split()[0]) >= 1024:  # 4 MiB of 4 KiB blocks
            return
    pytest.fail(f"8 MiB written never showed in the free blocks: {seen}")


PIPE_BOT = r"""
import fcntl, os, sys
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
if sys.argv[1] == "fill":
    held = []
    try:
        for _ in range(100):
            r, w = os.pipe()
            held.append((r, w))
            fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass
    print("filled", len(held), flush=True)
    sys.stdin.readline()
else:
    r, w = os.pipe()
    print("size", fcntl.fcntl(w, F_GETPIPE_SZ), flush=True)
"""


def new_pipe_size(sandbox: Sandbox, folder: Path, slot: int) -> bytes:
    process = sandbox.spawn(folder, ["python3", "pipes.py", "probe"], LIMITS, slot=slot)
    try:
        return read_until(process.stdout_fd, b"\n")
    finally:
        process.close()


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_one_bots_pipe_quota_does_not_shrink_anothers_pipes(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """The kernel counts pipe buffers per uid: past ``pipe-user-pages-soft`` that uid's new
    pipes get one or two pages. A bot that fills its quota (1 MiB pipes) must leave another
    bot's new pipes as they were: each slot runs as a uid of its own."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    if sandbox.writer_uid(0) is None:
        pytest.skip("bots share the referee's uid when it is not root (see docs/sandbox.md)")
    (open_dir / "pipes.py").write_text(PIPE_BOT)
    full = f"size {1 << 16}\n".encode()
    assert new_pipe_size(sandbox, open_dir, fresh_slot()) == full
    filler = sandbox.spawn(open_dir, ["python3", "pipes.py", "fill"], LIMITS, slot=fresh_slot())
    try:
        assert read_until(filler.stdout_fd, b"\n").startswith(b"filled")
        assert new_pipe_size(sandbox, open_dir, fresh_slot()) == full
    finally:
        filler.close()


MAPPING_BOT = r"""
import mmap, os, sys
path = sys.argv[2]
with open(path, "rb") as f:
    mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
for page in range(0, len(mapped), mmap.PAGESIZE):
    mapped[page]
def pss():
    lines = open("/proc/self/smaps").read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith(path))
    return next(l.split()[1] for l in lines[start:] if l.startswith("Pss:"))
print("pss", pss(), flush=True)
sys.stdin.readline()
if sys.argv[1] == "look":
    print("pss", pss(), flush=True)
"""


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_known_open_channel_the_mapcount_of_shared_pages(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """What docs/sandbox.md states as the widest open channel, measured: a bot's ``Pss`` of a
    shared file falls when another bot maps the same pages. If this fails, the channel closed
    (a kernel change, or private copies per bot): update the threat model."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    (open_dir / "maps.py").write_text(MAPPING_BOT)
    (open_dir / "shared.bin").write_bytes(os.urandom(16 * mmap.PAGESIZE))
    argv = ["python3", "maps.py", "look", "/bot/shared.bin"]
    looker = sandbox.spawn(open_dir, argv, LIMITS, slot=fresh_slot())
    try:
        alone = read_until(looker.stdout_fd, b"\n")
        argv = ["python3", "maps.py", "hold", "/bot/shared.bin"]
        holder = sandbox.spawn(open_dir, argv, LIMITS, slot=fresh_slot())
        try:
            assert read_until(holder.stdout_fd, b"\n").startswith(b"pss ")
            os.write(looker.stdin_fd, b"go\n")
            shared = read_until(looker.stdout_fd, b"\n")
        finally:
            holder.close()
    finally:
        looker.close()
    assert alone == b"pss 64\n", alone  # 16 pages of 4 kB, mapped by this bot alone
    assert int(shared.split()[1]) < 64, shared  # measured: 32, each page counted half


SQLITE_BOT = r"""
import fcntl, sqlite3
db = sqlite3.connect("/tmp/book.db")
db.execute("pragma journal_mode=wal")
db.execute("create table t(x)")
db.executemany("insert into t values (?)", [(i,) for i in range(50)])
db.commit()
other = sqlite3.connect("/tmp/book.db")
count = other.execute("select count(*) from t").fetchone()[0]
with open("/tmp/lockfile", "w") as f:
    fcntl.lockf(f, fcntl.LOCK_EX)
    fcntl.flock(f, fcntl.LOCK_EX)
print("sqlite", count, flush=True)
"""


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_a_bot_using_sqlite_and_locks_still_works(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """Locks answered as done keep SQLite (also in WAL mode) and lockf/flock users working."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    (open_dir / "bot.py").write_text(SQLITE_BOT)
    process = sandbox.spawn(open_dir, ["python3", "bot.py"], LIMITS, slot=fresh_slot())
    try:
        out = read_until(process.stdout_fd, b"\n")
        err = read_until(process.stderr_fd, b"\n", timeout=0.5) if not out else b""
    finally:
        process.close()
    assert out == b"sqlite 50\n", err


def test_enforced_says_what_holds(bwrap_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    walls = ("seccomp", "socket_families", "file_locks", "keyrings")
    require_filter(bwrap_sandbox)
    full = bwrap_sandbox.enforced(LIMITS)
    assert all(full[key] for key in (*walls, "nested_userns", "proc_masked"))
    bare = BwrapSandbox(seccomp=False).enforced(LIMITS)
    assert not any(bare[key] for key in walls)
    assert bare["nested_userns"] is bool(userns_lock())
    monkeypatch.setattr("sandbox.bwrap.filter_program", lambda: None)  # no libseccomp here
    missing = bwrap_sandbox.enforced(LIMITS)
    assert not any(missing[key] for key in walls)


def test_docker_enforced_follows_the_engine(docker_sandbox: Sandbox) -> None:
    info = docker_sandbox.api.info()  # type: ignore[attr-defined]
    has_seccomp = any("name=seccomp" in str(o) for o in info.get("SecurityOptions") or [])
    walls = docker_sandbox.enforced(LIMITS)
    assert walls["seccomp"] is has_seccomp
    assert walls["file_locks"] is has_seccomp


def test_the_shipped_docker_profile_is_the_rule_table() -> None:
    shipped = (REPO / "sandbox" / "seccomp.json").read_text()
    assert shipped == docker_profile_json("x86_64"), "run: python -m sandbox.seccomp --docker"


PAIR_BOT = r"""
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
KEY, NAME = 0x4172656E, b"\0arena-walls-" + os.environ["ARENA_PAIR"].encode()
if sys.argv[1] == "listen":
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(NAME)
    server.listen(1)
    segment = libc.shmget(KEY, 4096, 0o1666)  # IPC_CREAT, readable by all
    queue = libc.msgget(KEY, 0o1666)
    print("ready", segment >= 0, queue >= 0, flush=True)
    sys.stdin.read()
else:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(NAME)
        reached = "connected"
    except OSError as exc:
        reached = str(exc.errno)
    segment = libc.shmget(KEY, 0, 0)
    queue = libc.msgget(KEY, 0)
    print("seen", reached, segment >= 0, queue >= 0, flush=True)
"""


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_unix_sockets_and_ipc_do_not_reach_another_bot(
    request: pytest.FixtureRequest, backend: str, open_dir: Path
) -> None:
    """AF_UNIX is allowed; its abstract names, like SysV IPC keys, are per bot (namespaces)."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    (open_dir / "pair.py").write_text(PAIR_BOT)
    env = {"ARENA_PAIR": os.urandom(4).hex()}
    listener = sandbox.spawn(
        open_dir, ["python3", "pair.py", "listen"], LIMITS, env=env, slot=fresh_slot()
    )
    try:
        ready = read_until(listener.stdout_fd, b"\n")
        assert ready == b"ready True True\n", ready
        other = sandbox.spawn(
            open_dir, ["python3", "pair.py", "connect"], LIMITS, env=env, slot=fresh_slot()
        )
        try:
            seen = read_until(other.stdout_fd, b"\n")
        finally:
            other.close()
    finally:
        listener.close()
    assert seen == f"seen {errno.ECONNREFUSED} False False\n".encode()


def futex_pair(sandbox: Sandbox, folder: Path, shared_file: str) -> tuple[bytes, bytes]:
    """One bot waits on a futex in a page of ``shared_file``, another wakes it: their outputs."""
    waiter = sandbox.spawn(folder, ["./futex", "wait", shared_file], LIMITS, slot=fresh_slot())
    try:
        waited = read_until(waiter.stdout_fd, b"waiting\n")
        assert waited.startswith(b"waiting\n"), waited
        waker = sandbox.spawn(folder, ["./futex", "wake", shared_file], LIMITS, slot=fresh_slot())
        try:
            woke = read_until(waker.stdout_fd, b"\n")
        finally:
            waker.close()
        waited = (waited + read_until(waiter.stdout_fd, b"\n")).removeprefix(b"waiting\n")
    finally:
        waiter.close()
    return waited, woke


@pytest.mark.parametrize("shared_file", [USR_FILE, KIT_FILE])
@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_no_futex_between_bots(
    request: pytest.FixtureRequest, backend: str, shared_file: str, probe_dir: Path
) -> None:
    """A futex in a page of a file is keyed by the file: without the wall, one bot wakes another
    (see the next test). With it, a shared wait returns at once and a shared wake wakes nobody."""
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    require_filter(sandbox)
    waited, woke = futex_pair(sandbox, probe_dir, shared_file)
    assert waited == f"wait -1 {errno.EAGAIN}\n".encode()
    assert woke == b"wake 0 0\n"


def test_without_the_filter_a_futex_signals(bwrap_sandbox: Sandbox, probe_dir: Path) -> None:
    waited, woke = futex_pair(BwrapSandbox(seccomp=False), probe_dir, USR_FILE)
    assert (waited, woke) == (b"wait 0 0\n", b"wake 1 0\n")


@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_threads_join_and_private_futexes_work(
    request: pytest.FixtureRequest, backend: str, probe_dir: Path
) -> None:
    sandbox: Sandbox = request.getfixturevalue(f"{backend}_sandbox")
    process = sandbox.spawn(probe_dir, ["./futex", "join"], LIMITS, slot=fresh_slot())
    try:
        out = read_until(process.stdout_fd, b"private")
        out += read_until(process.stdout_fd, b"\n")
    finally:
        process.close()
    assert out == f"join 0\nprivate -1 {errno.ETIMEDOUT}\n".encode()
