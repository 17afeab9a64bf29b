"""Toolchains whose files lie partly outside ``/usr``, and the folders each needs in a sandbox.

An isolating sandbox shows a bot the host's ``/usr`` and an almost empty ``/etc``. Three
toolchains of a Debian host need more, and each is found by asking the toolchain itself where
it lives (never by trusting a manifest):

- **Java** (OpenJDK): the JDK's ``conf/`` and ``lib/`` files are links into
  ``/etc/java-<N>-openjdk`` (``java.security``, ``jvm.cfg``); without it ``javac`` dies with
  ``Error loading java.security file``. The links of the JDK that ``java`` resolves to are read
  and each ``/etc/java*`` folder they lead into is bound read-only at its own path.
- **Mono**: the runtime reads ``/etc/mono`` (``config``, ``4.5/machine.config``) when ``mono``
  is the system's (under ``/usr``); that folder is bound read-only at its own path.
- **Debian alternatives**: ``/usr/bin/javac``, ``/usr/bin/java`` and ``/usr/bin/cc`` (the
  linker ``rustc`` calls) are links through ``/etc/alternatives`` to the chosen program under
  ``/usr``. Where a toolchain command of ``ALTERNATIVES_PROBED`` leads through it, that folder
  of links is bound read-only at its own path (it names only programs already visible in
  ``/usr``), so a build's ``sh -c "javac ..."`` finds its compiler as on the host.
- **Rust** (rustup): ``rustc`` on ``PATH`` (or in ``~/.cargo/bin``) is usually a rustup proxy
  in a home folder. ``rustc --print sysroot`` names the real toolchain; its ``bin`` and ``lib``
  (the compiler, its libraries, the standard library, the bundled linker) are bound read-only
  at ``/opt/rust``, whose ``bin`` goes on the bot's ``PATH``. Nothing else of the home folder
  is seen. A sandbox uid that cannot walk to the toolchain (``/root`` is ``0700``) gets a
  world-readable tree of hard links to those files instead (a copy across file systems),
  made once per process and removed at exit.

A Debian ``rustc`` (under ``/usr``) needs nothing. Nothing here imports flask, sqlalchemy,
celery or ``web``.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

RUST_MOUNT = "/opt/rust"
"""Where a Rust toolchain from outside ``/usr`` appears inside a sandbox."""

RUST_PARTS = ("bin", "lib")
"""The folders of a Rust sysroot a build needs (``share`` holds only documentation)."""

PROBE_TIMEOUT_S = 20.0

ALTERNATIVES = "/etc/alternatives"
ALTERNATIVES_PROBED = ("java", "javac", "cc", "c++", "mcs", "go")
"""Toolchain commands whose links may pass through ``ALTERNATIVES``."""


@dataclass(frozen=True)
class Toolchains:
    """What a sandbox adds for the toolchains found: read-only binds and ``PATH`` folders."""

    binds: tuple[tuple[str, str], ...] = ()
    """(host folder, folder inside the sandbox) pairs, each bound read-only."""
    path: tuple[str, ...] = ()
    """Folders inside the sandbox appended to the bot's ``PATH``."""


def java_config_dirs(java: str | None = None) -> list[str]:
    """The ``/etc/java*`` folders the JDK of ``java`` (default: the one on ``PATH``) links into."""
    found = java or shutil.which("java")
    if found is None:
        return []
    home = Path(os.path.realpath(found)).parent.parent
    dirs: set[str] = set()
    for part in ("conf", "lib"):
        for link in _links_below(home / part):
            target = Path(os.path.normpath(link.parent / os.readlink(link)))
            parts = target.parts
            if len(parts) > 2 and parts[1] == "etc" and parts[2].startswith("java"):
                dirs.add(f"/etc/{parts[2]}")
    return sorted(d for d in dirs if os.path.isdir(d))


def _links_below(folder: Path) -> list[Path]:
    """Every symbolic link below ``folder`` (a JDK holds a few hundred files: no depth bound)."""
    links: list[Path] = []
    for root, subdirs, files in os.walk(folder):
        for name in [*subdirs, *files]:
            path = Path(root) / name
            if path.is_symlink():
                links.append(path)
    return links


def mono_config_dirs(mono: str | None = None) -> list[str]:
    """``/etc/mono`` when the ``mono`` on ``PATH`` is the system's, else nothing."""
    found = mono or shutil.which("mono")
    if found is None or not os.path.realpath(found).startswith("/usr/"):
        return []
    return ["/etc/mono"] if os.path.isdir("/etc/mono") else []


def alternatives_dirs(commands: tuple[str, ...] = ALTERNATIVES_PROBED) -> list[str]:
    """``/etc/alternatives`` if a command of ``commands`` on ``PATH`` links through it."""
    for command in commands:
        found = shutil.which(command)
        if found is not None and _links_through(found, ALTERNATIVES):
            return [ALTERNATIVES]
    return []


def _links_through(path: str, folder: str) -> bool:
    """True if following the links of ``path`` passes through a file directly in ``folder``."""
    current = path
    for _ in range(40):  # as the kernel: more links than this is a loop
        if not os.path.islink(current):
            return False
        current = os.path.join(os.path.dirname(current), os.readlink(current))
        if os.path.dirname(os.path.normpath(current)) == folder:
            return True
    return False


def rust_sysroot(rustc: str | None = None) -> str | None:
    """The sysroot of a ``rustc`` outside ``/usr``, found by asking it; None if there is none."""
    found = rustc or shutil.which("rustc") or cargo_rustc()
    if found is None or os.path.realpath(found).startswith("/usr/"):
        return None
    try:
        done = subprocess.run(
            [found, "--print", "sysroot"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sysroot = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not os.path.isfile(os.path.join(sysroot, "bin", "rustc")):
        return None
    return sysroot


def cargo_rustc() -> str | None:
    """``rustc`` in rustup's default place, for a referee whose ``PATH`` leaves it out."""
    home = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")
    path = os.path.join(home, "bin", "rustc")
    return path if os.access(path, os.X_OK) else None


def rust_binds(sysroot: str, readable: Callable[[Path], bool]) -> list[tuple[str, str]]:
    """Binds that show the toolchain at ``sysroot`` at ``RUST_MOUNT``.

    ``readable(path)`` tells whether the sandbox's mounting uid can walk to a folder; when it
    cannot, the world-readable linked tree (``staged_rust``) is shown instead, with one bind:
    it holds nothing but those folders (each bind is a mount operation at every start).
    """
    source = Path(sysroot)
    if not all(readable(source / part) for part in RUST_PARTS):
        return [(str(staged_rust(sysroot)), RUST_MOUNT)]
    return [(str(source / part), f"{RUST_MOUNT}/{part}") for part in RUST_PARTS]


@functools.cache
def staged_rust(sysroot: str) -> Path:
    """A world-readable tree of hard links to the ``bin/rustc`` and ``lib`` of ``sysroot``.

    Links cost no space and keep each file's own mode (the toolchain's files are ``0644`` and
    ``0755``); across file systems the files are copied. Removed when the process exits.
    """
    root = Path(tempfile.mkdtemp(prefix="arena-rust-"))
    atexit.register(shutil.rmtree, root, True)
    source = Path(sysroot)
    for part in RUST_PARTS:
        shutil.copytree(source / part, root / part, symlinks=True, copy_function=_link_or_copy)
    for path in [root, *root.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    return root


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def toolchain_command(name: str) -> str | None:
    """Where a bot finds the program ``name`` of a toolchain shown at a neutral mount (rustup's
    ``rustc`` at ``RUST_MOUNT``), for a command that names it directly; None for others."""
    sysroot = _found()[3]
    if sysroot is None or not os.path.isfile(os.path.join(sysroot, "bin", name)):
        return None
    return f"{RUST_MOUNT}/bin/{name}"


def toolchains(readable: Callable[[Path], bool]) -> Toolchains:
    """The binds and ``PATH`` folders of every toolchain found on this host.

    ``readable`` is as for ``rust_binds``. The probes run once per process (``_found``).
    """
    alternatives, java, mono, sysroot = _found()
    binds = [(d, d) for d in [*alternatives, *java, *mono]]
    path: list[str] = []
    if sysroot is not None:
        binds += rust_binds(sysroot, readable)
        path.append(f"{RUST_MOUNT}/bin")
    return Toolchains(tuple(binds), tuple(path))


@functools.cache
def _found() -> tuple[list[str], list[str], list[str], str | None]:
    return alternatives_dirs(), java_config_dirs(), mono_config_dirs(), rust_sysroot()
