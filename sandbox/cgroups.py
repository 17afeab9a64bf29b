"""Per-bot control groups: memory, process count and CPU share, on cgroup v1 or v2.

The hierarchies are found at run time from ``/proc/self/mounts``. Each controller is taken from
wherever it is really available (a hybrid host has ``memory``/``pids``/``cpu`` on v1 and only a
bare v2 tree), and a controller that cannot be written is skipped: ``Cgroup.enforced`` says what
holds. The bot joins its groups itself, from ``preexec_fn``, before it drops root and execs.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT_NAME = "kozyri-arena"
"""The directory, in every hierarchy, that holds the per-bot groups."""

CPU_PERIOD_US = 100_000

_names = itertools.count()

Writes = list[tuple[str, str]]
"""Files of a group and the values to write to them, in order."""


@dataclass(frozen=True)
class Hierarchies:
    """Mount points of the cgroup hierarchies seen by this process."""

    v1: dict[str, Path] = field(default_factory=dict)
    """Controller name -> mount point, for v1 hierarchies."""
    v2: Path | None = None
    v2_controllers: frozenset[str] = frozenset()


def find_hierarchies(mounts: str = "/proc/self/mounts") -> Hierarchies:
    """Read the cgroup mounts of this machine."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    try:
        lines = Path(mounts).read_text().splitlines()
    except OSError:
        return Hierarchies()
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        if parts[2] == "cgroup2" and v2 is None:
            v2 = Path(parts[1])
        elif parts[2] == "cgroup":
            for option in parts[3].split(","):
                v1.setdefault(option, Path(parts[1]))
    return Hierarchies(v1, v2, _v2_controllers(v2))


def _v2_controllers(v2: Path | None) -> frozenset[str]:
    if v2 is None:
        return frozenset()
    try:
        return frozenset((v2 / "cgroup.controllers").read_text().split())
    except OSError:
        return frozenset()


@dataclass(frozen=True)
class CgroupLimits:
    """What a group should enforce; ``None`` means "leave unlimited"."""

    memory_bytes: int | None = None
    pids: int | None = None
    cpus: float | None = None
    freezer: bool = False
    """Whether the group should be able to stop every member at once (``Cgroup.freezer``)."""
    core: int | None = None
    """The one CPU core every member must run on (a cpuset: the bot cannot move itself off it)."""


class Cgroup:
    """One bot's groups across the hierarchies (possibly none)."""

    root_name = ROOT_NAME
    """The directory, in every hierarchy, that holds these groups (the bench gives its anchor
    one of its own)."""
    cpu_on_top = True
    """Whether the CPU group (v1) and the v2 group sit at the top of their hierarchy, named
    ``<root_name>.<name>``, rather than below one common ``root_name`` parent.

    The kernel's scheduler weighs a group as one entity: below a common parent of the default
    weight, all the bots of the host together got the CPU share of one process against every
    other busy process there (on a loaded host, a bot started and thought several times slower
    than the same program outside its groups). At the top, each bot that runs weighs one
    process, no more, and a frozen or idle one nothing; its quota still caps it at one CPU.
    """

    def __init__(
        self,
        name: str,
        limits: CgroupLimits,
        found: Hierarchies | None = None,
        *,
        lease: int | None = None,
    ) -> None:
        self.name = name
        self.found = found if found is not None else find_hierarchies()
        self.dirs: list[Path] = []
        self.memory: Path | None = None
        self.pids: Path | None = None
        self.cpu: Path | None = None
        self.cpuset: Path | None = None
        self.unified: Path | None = None
        self.freezer: Freezer | None = None
        self._lease = lease
        self._oom_kills_before = 0
        self._setup(limits)
        self._attach_files = [self._attach_file(d) for d in self.dirs]
        if lease is not None:
            self._clear()

    @classmethod
    def for_slot(cls, slot: int, limits: CgroupLimits, found: Hierarchies | None = None) -> Cgroup:
        """The groups of ``slot``: lasting ones, reused from bot to bot, when this process can
        hold the slot's lease (a lock on its memory group); else a fresh set of its own.

        Reuse spares making and deleting three groups per bot (and the kernel's background
        freeing of dead memory groups). The lease keeps two bots from ever sharing a group
        (closing one would kill the other): the same slot in use twice, in this process or
        another, gets a fresh set for the second bot.
        """
        found = found if found is not None else find_hierarchies()
        name = f"slot{slot}"
        lease = _lease(found, name, cls.root_name)
        if lease is None:
            return cls(f"{os.getpid()}-{next(_names)}-{name}", limits, found)
        return cls(name, limits, found, lease=lease)

    def _clear(self) -> None:
        """Make a reused group look new: nothing left in it, its counters at zero."""
        self.kill_all()
        if self.memory is not None and "memory" in self.found.v1:
            for counter in ("memory.failcnt", "memory.max_usage_in_bytes"):
                with contextlib.suppress(OSError):
                    _put(self.memory / counter, "0")
            # The kill count cannot be reset: remember where it stood.
            self._oom_kills_before = _keyed(self.memory / "memory.oom_control").get("oom_kill", 0)

    # -- setup -------------------------------------------------------------------------------
    def _setup(self, limits: CgroupLimits) -> None:
        if limits.memory_bytes is not None:
            self.memory = self._controller("memory", self._memory_writes(limits.memory_bytes))
        if limits.pids is not None:
            self.pids = self._controller("pids", [("pids.max", str(limits.pids))])
        if limits.cpus is not None:
            self.cpu = self._controller("cpu", self._cpu_writes(limits.cpus))
        if limits.freezer:
            self.freezer = self._freezer_group()
        if limits.core is not None:
            self.cpuset = self._cpuset_group(limits.core)
        # Every extra hierarchy costs an attach at each start (several ms on a busy host), so
        # a bare v2 tree is joined only when nothing else can list (and kill) the bot's tree.
        if not self.dirs and self.found.v2 is not None:
            self._v2_group([])

    def _freezer_group(self) -> Freezer | None:
        """A freezer for the group: the v1 ``freezer`` hierarchy, else the v2 tree's own.

        A reused group may have been left frozen by a referee that died: it starts thawed.
        """
        if "freezer" in self.found.v1:
            path = self._v1_group("freezer", [(V1_STATE, V1_THAWED.decode())])
            return Freezer.open(path, v2=False) if path is not None else None
        if self.found.v2 is None:
            return None
        path = self._v2_group([(V2_FREEZE, V2_THAWED.decode())])
        return Freezer.open(path, v2=True) if path is not None else None

    def _cpuset_group(self, core: int) -> Path | None:
        """A cpuset holding only ``core`` (v1 ``cpuset`` hierarchy, or the v2 controller)."""
        if "cpuset" in self.found.v1:
            mount = self.found.v1["cpuset"]
            # A v1 cpuset starts empty and takes no task until it has CPUs and memory nodes:
            # the common parent gets the root's, each bot's group its one core.
            mems = _first_line(mount / "cpuset.mems")
            parent = [("cpuset.cpus", _first_line(mount / "cpuset.cpus")), ("cpuset.mems", mems)]
            if not _ensure_group(mount / self.root_name, parent):
                return None
            return self._v1_group("cpuset", [("cpuset.mems", mems), ("cpuset.cpus", str(core))])
        if "cpuset" in self.found.v2_controllers:
            return self._v2_group([("cpuset.cpus", str(core))], "cpuset")
        return None

    def _memory_writes(self, limit: int) -> Writes:
        if "memory" in self.found.v1:
            # memsw may never be below the plain limit, whatever a reused group held before:
            # lift it, set the limit, then bring it down to the limit (absent without swap).
            memsw = "memory.memsw.limit_in_bytes"
            return [(memsw, "-1"), ("memory.limit_in_bytes", str(limit)), (memsw, str(limit))]
        return [("memory.max", str(limit)), ("memory.swap.max", "0")]

    def _cpu_writes(self, cpus: float) -> Writes:
        quota = max(1000, int(cpus * CPU_PERIOD_US))
        if "cpu" in self.found.v1:
            return [("cpu.cfs_period_us", str(CPU_PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
        return [("cpu.max", f"{quota} {CPU_PERIOD_US}")]

    def _controller(self, controller: str, writes: Writes) -> Path | None:
        if controller in self.found.v1:
            return self._v1_group(controller, writes)
        if controller in self.found.v2_controllers:
            return self._v2_group(writes, controller)
        return None

    def _v1_group(self, controller: str, writes: Writes) -> Path | None:
        mount = self.found.v1.get(controller)
        if mount is None:
            return None
        if controller == "cpu" and self.cpu_on_top:
            return self._make(mount / self.top_name, writes)
        return self._make(mount / self.root_name / self.name, writes)

    @property
    def top_name(self) -> str:
        """The group's name at the top of a hierarchy (see ``cpu_on_top``)."""
        return f"{self.root_name}.{self.name}"

    def _v2_group(self, writes: Writes, controller: str | None = None) -> Path | None:
        assert self.found.v2 is not None
        top = self.cpu_on_top
        parent = self.found.v2 if top else self.found.v2 / self.root_name
        if controller is not None and not _enable_v2(self.found.v2, parent, controller):
            return None
        path = self._make(parent / (self.top_name if top else self.name), writes)
        if path is not None:
            self.unified = path
        return path

    def _make(self, path: Path, writes: Writes) -> Path | None:
        """Create ``path`` and write its limits; None (and nothing left behind) if we cannot."""
        if path in self.dirs:
            return path if _write_all(path, writes) else None
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        if not _write_all(path, writes):
            remove_group_dir(path)
            return None
        self.dirs.append(path)
        return path

    # -- use ---------------------------------------------------------------------------------
    def enforced(self) -> dict[str, bool]:
        """Which limits really hold for this group."""
        return {
            "memory": self.memory is not None,
            "processes": self.pids is not None,
            "cpu_share": self.cpu is not None,
            "kill_tree": bool(self.dirs),
            "own_core": self.cpuset is not None,
        }

    def _attach_file(self, group: Path) -> bytes:
        """The file through which a process joins ``group`` by writing ``0`` (itself)."""
        # On v1, writing to ``tasks`` moves only the calling thread, and the kernel skips its
        # global threadgroup lock for that case (a write to ``cgroup.procs`` waits for an RCU
        # grace period per hierarchy, several ms). A child between fork and exec has a single
        # thread, so the whole process moves, before its first instruction of the bot.
        name = "cgroup.procs" if group == self.unified else "tasks"
        return str(group / name).encode()

    def attach_self(self) -> None:
        """Move the calling single-threaded process into every group (in the child, before
        exec)."""
        for target in self._attach_files:
            fd = os.open(target, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def members(self) -> set[int]:
        """Host pids currently in any of the groups."""
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in _get(d / "cgroup.procs").split())
        return found

    def kill_all(self, rounds: int = 50) -> None:
        """SIGKILL every member; repeat until none is left (a member may fork meanwhile)."""
        if self.unified is not None:
            with contextlib.suppress(OSError):
                (self.unified / "cgroup.kill").write_text("1")
        for _ in range(rounds):
            pids = self.members()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if self.freezer is not None:
                self.freezer.thaw()  # a v1 freezer holds a killed member until it thaws
            time.sleep(0.005)

    def oom_killed(self) -> bool:
        """True if the memory limit made the kernel kill (or refuse memory to) a member."""
        if self.memory is None:
            return False
        if "memory" in self.found.v1:
            oom = _keyed(self.memory / "memory.oom_control").get("oom_kill", 0)
            return oom > self._oom_kills_before or _int(self.memory / "memory.failcnt") > 0
        return _keyed(self.memory / "memory.events").get("oom_kill", 0) > 0

    def cpu_seconds(self) -> float | None:
        """CPU time used by all members so far, if the group counts it (v2 only)."""
        if self.cpu is not None and "cpu" not in self.found.v1:
            return _keyed(self.cpu / "cpu.stat").get("usage_usec", 0) / 1e6
        return None

    def peak_memory_mb(self) -> float | None:
        """Peak memory of the group, if known."""
        if self.memory is None:
            return None
        name = "memory.max_usage_in_bytes" if "memory" in self.found.v1 else "memory.peak"
        value = _int(self.memory / name)
        return value / (1 << 20) if value else None

    def remove(self) -> None:
        """Kill what is left, then delete the groups (or hand a slot's lasting ones back)."""
        if self.dirs:
            self.kill_all()
        if self.freezer is not None:
            self.freezer.close()
            self.freezer = None
        if self._lease is not None:
            os.close(self._lease)  # the groups stay for the slot's next bot
            self._lease = None
            self.dirs.clear()
            return
        for d in reversed(self.dirs):
            for _ in range(40):
                if remove_group_dir(d):
                    break
                time.sleep(0.005)
        self.dirs.clear()


class Freezer:
    """The freezer of one cgroup: stops (and resumes) every process in it and below, at once.

    v1: ``freezer.state`` (``FROZEN``/``THAWED``); v2: ``cgroup.freeze`` (``1``/``0``). Both
    are hierarchical, cover every thread and every process forked later, and cannot be left by
    a member. The state file stays open: a change is one ``write`` (the kernel stops the members
    as they next leave the kernel, without waiting for them). A v1 freezer holds a killed
    member until it thaws: ``kill_members`` thaws after killing.
    """

    def __init__(self, path: Path, fd: int, *, v2: bool) -> None:
        self.path = path
        self.v2 = v2
        self.frozen = False
        self._fd: int | None = fd
        self._words = (V2_FROZEN, V2_THAWED) if v2 else (V1_FROZEN, V1_THAWED)
        self._state_fd: int | None = None

    @classmethod
    def open(cls, path: Path, *, v2: bool) -> Freezer | None:
        """The freezer of the group at ``path``, or None if it has none we may write."""
        try:
            fd = os.open(path / (V2_FREEZE if v2 else V1_STATE), os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            return None
        if not v2:
            _hold_v1_freezer_on(os.getpid())
        return cls(path, fd, v2=v2)

    def freeze(self) -> None:
        self._write(self._words[0])
        self.frozen = True

    def thaw(self) -> None:
        self._write(self._words[1])
        self.frozen = False

    def _write(self, word: bytes) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # the group is gone: so are its members
            os.write(self._fd, word)

    def settled(self) -> bool:
        """True once every member is really stopped (a freeze takes effect asynchronously).

        A task stops only on its way back to user mode: one inside a long system call keeps
        its core until the call returns, and the group reads ``FREEZING`` (v2: ``frozen 0``)
        until then. The state file stays open, so a check is one ``pread`` (about 1 µs).
        """
        try:
            if self._state_fd is None:
                name = "cgroup.events" if self.v2 else V1_STATE
                self._state_fd = os.open(self.path / name, os.O_RDONLY | os.O_CLOEXEC)
            text = os.pread(self._state_fd, 256, 0)
        except OSError:
            return False
        if self.v2:
            return b"frozen 1" in text
        return text.strip() == V1_FROZEN

    def members(self) -> set[int]:
        """Host pids in the group and every group below it."""
        found: set[int] = set()
        for procs in self.path.rglob("cgroup.procs"):
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in procs.read_text().split())
        return found

    def kill_members(self) -> None:
        """SIGKILL every member, then thaw so that frozen ones really die."""
        for pid in self.members():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.thaw()

    def close(self) -> None:
        for fd in (self._fd, self._state_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._state_fd = None


V1_STATE, V1_FROZEN, V1_THAWED = "freezer.state", b"FROZEN", b"THAWED"
V2_FREEZE, V2_FROZEN, V2_THAWED = "cgroup.freeze", b"1", b"0"


PILOT = "freezer-pilot"


@functools.cache
def _hold_v1_freezer_on(pid: int) -> None:
    """Keep one empty group of this process frozen, for as long as it runs.

    The kernel switches its v1 freezer code on when a first group anywhere freezes and off when
    the last one thaws, and each switch patches kernel code (about 80 µs). With a group that
    always stays frozen, freezing and thawing a bot is a mere state change (about 10 µs).
    The group is named after ``pid``, so a referee that dies leaves it to ``sweep_stale``.
    """
    mount = find_hierarchies().v1.get("freezer")
    if mount is None:
        return
    path = mount / ROOT_NAME / f"{pid}-{PILOT}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        (path / V1_STATE).write_bytes(V1_FROZEN)
    except OSError:
        remove_group_dir(path)
        return
    atexit.register(_drop_pilot, path, pid)


def _drop_pilot(path: Path, pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child that inherited the exit handler
        thaw_group(path)
        remove_group_dir(path)


def thaw_group(path: Path) -> None:
    """Thaw the group at ``path`` if it has a freezer (before deleting what is left of it)."""
    for name, word in ((V1_STATE, V1_THAWED), (V2_FREEZE, V2_THAWED)):
        with contextlib.suppress(OSError):
            (path / name).write_bytes(word)


def _lease(found: Hierarchies, name: str, root_name: str = ROOT_NAME) -> int | None:
    """A lock on the v1 memory group ``name`` (made if missing), or None if another holds it.

    Only v1 groups are reused: there every counter a bot's end is judged by can be reset.
    """
    mount = found.v1.get("memory")
    if mount is None:
        return None
    path = mount / root_name / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    fd = _lock(path)
    if fd is not None and not _same_file(path, fd):
        os.close(fd)  # swept away between our open and our lock: a new group is not ours
        return None
    return fd


def _same_file(path: Path, fd: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False


def _lock(path: Path) -> int | None:
    """An fd holding an exclusive lock on the directory ``path``, or None if it is taken."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def sweep_stale(found: Hierarchies | None = None, root_name: str = ROOT_NAME) -> int:
    """Delete empty groups nobody uses; return how many went.

    Per-bot groups are named after their referee's pid (``<pid>-...``): those of pids that are
    gone go. A slot's lasting groups (``slot<N>``) go when no referee holds their lease, so
    they do not pile up over the slots tests and past matches used.
    """
    found = found if found is not None else find_hierarchies()
    mounts = {*found.v1.values(), *([found.v2] if found.v2 else [])}
    memory = found.v1.get("memory")
    removed = 0
    top = f"{root_name}."
    # The memory group carries a slot's lease, so it goes last.
    for mount in sorted(mounts, key=lambda m: m == memory):
        with contextlib.suppress(OSError):
            for group in (mount / root_name).iterdir():
                removed += group.is_dir() and _remove_unused(group, found, root_name)
        with contextlib.suppress(OSError):
            for group in mount.iterdir():  # the groups at the top (``Cgroup.cpu_on_top``)
                if group.name.startswith(top) and group.is_dir():
                    name = group.name.removeprefix(top)
                    removed += _remove_unused(group, found, root_name, name)
    return removed


def _remove_unused(group: Path, found: Hierarchies, root_name: str, name: str = "") -> bool:
    """Remove ``group`` (named ``name`` below ``root_name``) if no living referee uses it."""
    name = name or group.name
    owner = name.partition("-")[0]
    if owner.isdigit():
        if _alive(int(owner)):
            return False
        thaw_group(group)  # members a dead referee left frozen can die and go
        return remove_group_dir(group)
    if not name.startswith("slot"):
        return False
    memory = found.v1.get("memory")
    lease = _lock(memory / root_name / name) if memory is not None else None
    if lease is None:
        return False  # in use (or not ours to judge)
    try:
        thaw_group(group)
        return remove_group_dir(group)
    finally:
        os.close(lease)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _enable_v2(root: Path, parent: Path, controller: str) -> bool:
    """Delegate ``controller`` from the v2 root down to ``parent`` (which holds no processes)."""
    try:
        parent.mkdir(exist_ok=True)
        for d in (root, parent):
            if controller not in (d / "cgroup.subtree_control").read_text().split():
                (d / "cgroup.subtree_control").write_text(f"+{controller}")
    except OSError:
        return False
    return True


def _get(path: Path) -> str:
    """The text of a cgroup file (at most 64 KiB, which every file read here fits)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 65536).decode()
    finally:
        os.close(fd)


def _put(path: Path, value: str) -> None:
    """Write ``value`` to a cgroup file in one write (raises OSError as the kernel refuses)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _first_line(path: Path) -> str:
    try:
        return _get(path).strip()
    except OSError:
        return ""


def _ensure_group(path: Path, writes: Writes) -> bool:
    """Make the group ``path`` if missing and write ``writes`` where they differ."""
    try:
        path.mkdir(exist_ok=True)
        for name, value in writes:
            if _first_line(path / name) != value:
                _put(path / name, value)
    except OSError:
        return False
    return True


def _write_all(path: Path, writes: Writes) -> bool:
    for name, value in writes:
        try:
            _put(path / name, value)
        except FileNotFoundError:
            if name.startswith(("memory.memsw", "memory.swap")):
                continue  # no swap accounting: the plain limit already caps memory
            return False
        except OSError:
            return False
    return True


def remove_group_dir(path: Path) -> bool:
    """Remove one cgroup folder; True when it is gone (or never existed)."""
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _int(path: Path) -> int:
    try:
        return int(_get(path).split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _keyed(path: Path) -> dict[str, int]:
    """A flat-keyed cgroup file (``name value`` per line) as a dict."""
    out: dict[str, int] = {}
    try:
        for line in _get(path).splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
    except OSError:
        pass
    return out
