"""The mount namespace a bubblewrap start begins in: the referee's, less the host mounts that no
bot is shown.

Bubblewrap copies the namespace it starts in and, after each of its binds, reads its whole mount
table again (as text the kernel formats, line by line) to remount the new mount read-only.
Every host mount counts in each of those reads, including those the bot never sees: ``/sys`` and
its cgroup hierarchies, terminal and shared-memory mounts, other services' folders. When the
referee is root, a lean copy of its namespace without them is made once and held open; each
start's child joins it (``setns``) before bubblewrap runs. Making the copy per start would cost
a grace period of the kernel's RCU for every unmount, on the start's path.

The copy follows the host: a change of the referee's mount table (``poll`` on its
``mountinfo``) has the next start make a new one, and so does a start whose folder lies on a
mount the copy lacks (that mount is kept from then on). Where no copy can be made, starts begin
in the referee's namespace, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import select
import subprocess
import threading
from collections.abc import Iterable, Sequence

BIND_OPTIONS = frozenset({"--ro-bind", "--bind", "--dev-bind"})
"""bubblewrap options whose next argument is a host path that the sandbox shows."""

ALWAYS_KEPT = ("/proc",)
"""Host mounts bubblewrap needs besides its binds' sources: it reads its namespaces through
``/proc``."""

_CLONE_NEWNS = 0x00020000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def bind_sources(world: Sequence[str]) -> list[str]:
    """The host paths that the bubblewrap arguments ``world`` bind into the sandbox."""
    return [world[i + 1] for i, arg in enumerate(world[:-1]) if arg in BIND_OPTIONS]


def _unescape(field: str) -> str:
    """A mount point as ``mountinfo`` writes it (space, tab, newline, backslash as octal)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def host_mount_points() -> tuple[str, ...]:
    """The mount points of the referee's mount namespace, in the kernel's order."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
            rows = [line.split() for line in table]
    except OSError:
        return ()
    return tuple(_unescape(row[4]) for row in rows if len(row) > 4)


def _below(path: str, other: str) -> bool:
    """True if ``path`` lies strictly below ``other``."""
    return path != other and path.startswith(other.rstrip("/") + "/")


def _related(path: str, other: str) -> bool:
    """True if either path is the other or lies below it."""
    return path == other or _below(path, other) or _below(other, path)


def unneeded_mounts(points: Sequence[str], sources: Iterable[str]) -> tuple[str, ...]:
    """Which of the mount ``points`` a start that binds ``sources`` can do without: every mount
    neither above, at nor below a source (nor ``ALWAYS_KEPT``), deepest first, and only the
    highest of each subtree (detaching a mount takes those below it along), once per mount
    stacked at that point."""
    needed = {os.path.realpath(path) for path in (*sources, *ALWAYS_KEPT)}
    dropped = [p for p in points if not any(_related(p, n) for n in needed)]
    highest = [p for p in dropped if not any(_below(p, q) for q in dropped)]
    return tuple(reversed(highest))


@functools.lru_cache(maxsize=1024)
def _reaches(dropped: tuple[str, ...], source: str) -> bool:
    """True if ``source`` lies at, above or below one of the ``dropped`` mounts."""
    real = os.path.realpath(source)
    return any(_related(real, point) for point in dropped)


def leave_host_mounts(points: Sequence[str]) -> None:
    """In a child, as root: move to a private copy of the mount namespace and detach
    ``points`` from it. The copy is made private first, so that no unmount reaches the host's
    namespace; if either step is refused, nothing is detached."""
    if not points or _libc.unshare(_CLONE_NEWNS) != 0:
        return
    if _libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return
    for point in points:
        _libc.umount2(os.fsencode(point), _MNT_DETACH)


def join_namespace(fd: int | None) -> None:
    """In the child, as root, before bubblewrap: join the mount namespace held by ``fd``
    (staying in the referee's if the kernel refuses)."""
    if fd is not None:
        _libc.setns(fd, _CLONE_NEWNS)


class LeanNamespace:
    """A lean copy of the referee's mount namespace, held open by a file descriptor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[str, ...] | None = None
        self._extra: set[str] = set()
        """Bots' folders that lay on a mount a copy lacked: kept in every later copy."""
        self._dropped: tuple[str, ...] = ()
        self._fd: int | None = None
        self._watch: select.poll | None = None
        self._watch_fd: int | None = None

    def fd_for(self, kept: Sequence[str], own: Sequence[str]) -> int | None:
        """The namespace for a start that binds ``kept`` (the same at every start: bubblewrap,
        ``/usr``, the kits, the toolchains) and ``own`` (its folder), or None to start in the
        referee's namespace."""
        with self._lock:
            wanted = tuple(kept)
            if wanted != self._kept or self._host_changed():
                self._remake(wanted)
            if any(_reaches(self._dropped, path) for path in own):
                # A folder on a mount the copy lacks: that mount is kept from now on.
                self._extra.update(own)
                self._remake(wanted)
                if any(_reaches(self._dropped, path) for path in own):
                    return None
            return self._fd

    def _host_changed(self) -> bool:
        """True once the referee's mount table has changed since the copy was made."""
        return self._watch is not None and bool(self._watch.poll(0))

    def _remake(self, kept: tuple[str, ...]) -> None:
        self.close()
        self._kept = kept
        # Watched before the table is read: a change in between makes the next start remake.
        with contextlib.suppress(OSError):
            self._watch_fd = os.open("/proc/self/mountinfo", os.O_RDONLY)
            self._watch = select.poll()
            self._watch.register(self._watch_fd, select.POLLPRI | select.POLLERR)
        dropped = unneeded_mounts(host_mount_points(), [*kept, *sorted(self._extra)])
        if dropped:
            self._fd = _held_copy(dropped)
            self._dropped = dropped if self._fd is not None else ()

    def close(self) -> None:
        for fd in (self._fd, self._watch_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd = self._watch_fd = None
        self._watch = None
        self._dropped = ()


def _held_copy(dropped: Sequence[str]) -> int | None:
    """A descriptor of a new mount namespace: the referee's without ``dropped`` (made by a
    short-lived child), or None if it could not be made."""
    try:
        holder = subprocess.Popen(
            ["/bin/cat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            cwd="/",
            env={},
            preexec_fn=lambda: leave_host_mounts(dropped),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    fd: int | None = None
    try:
        ns = f"/proc/{holder.pid}/ns/mnt"
        if os.stat(ns).st_ino != os.stat("/proc/self/ns/mnt").st_ino:
            fd = os.open(ns, os.O_RDONLY)
    except OSError:
        fd = None
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait()
    return fd
