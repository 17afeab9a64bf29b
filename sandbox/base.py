"""One interface for running a bot process, whatever isolates it.

The runner asks a ``Sandbox`` to ``spawn`` a bot folder with ``Limits`` and gets a ``BotProcess``:
three raw pipe file descriptors (stdin to write, stdout and stderr to read without blocking), a way
to kill the whole process tree, and the resource use at the end. The per-move wall clock is not a
sandbox matter: the runner enforces it.
"""

from __future__ import annotations

import enum
import errno
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

KIT_DIR = Path(__file__).resolve().parents[1] / "sample_bots" / "kit"
"""The bot kits (helper libraries a bot may import); every backend exposes them read-only."""

KIT_MOUNT = "/kit"
"""Where the kits appear inside an isolating sandbox."""


def kit_env(root: str) -> dict[str, str]:
    """Environment that lets a bot find the kit found at ``root``, in every backend.

    ``KOZYRI_KIT`` is the kits' root (``/kit`` inside an isolating sandbox, the checkout's
    ``sample_bots/kit`` in a plain local run): build and run commands of compiled languages name
    their kit through it. Interpreters that read a search path from the environment get theirs.
    """
    return {
        "KOZYRI_KIT": root,
        "PYTHONPATH": f"{root}/python",
        "NODE_PATH": f"{root}/js",
        "RUBYLIB": f"{root}/ruby",
    }


def isolated_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The whole environment of a bot in an isolating backend (nothing comes from the referee)."""
    out = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    out.update(kit_env(KIT_MOUNT))
    out.update(env or {})
    return out


class SandboxError(Exception):
    """The sandbox could not start the bot (not a bot failure: an infrastructure one)."""


class BotCommandError(SandboxError):
    """The bot's own command cannot be started: empty, not found, not executable. The bot's
    fault, not the platform's (a build or self-test that meets it rejects the version)."""


BOT_START_ERRNOS = frozenset(
    {errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.ENOTDIR, errno.EISDIR, errno.ELOOP}
)
"""What starting a program can fail with because of the program itself (its path or file)."""


def start_failure(exc: OSError, program: str) -> SandboxError:
    """The error for ``program`` failing to start with ``exc``: the bot's (a missing or
    unrunnable file) or the platform's (out of processes, memory, ...)."""
    is_bot = exc.errno in BOT_START_ERRNOS
    return (BotCommandError if is_bot else SandboxError)(f"could not start {program}: {exc}")


class SandboxUnavailable(SandboxError):
    """This kind of sandbox cannot run on this machine; the message says why."""


def bot_folder(bot_dir: Path) -> Path:
    """``bot_dir`` made absolute; ``SandboxError`` if it is not a folder."""
    folder = Path(bot_dir).resolve()
    if not folder.is_dir():
        raise SandboxError(f"no bot folder {folder}")
    return folder


PENDING_SIGNALS = 4
"""RLIMIT_SIGPENDING of every bot: queued real-time signals and POSIX timers (each timer holds
one pending signal), at most this many together.

A timer armed before an answer still fires while the bot is frozen, as an interrupt on the core
it last ran on; this bounds how many a bot can arm. Python, Node, Java and C bots arm none
(checked with strace); Go's runtime arms one per thread only while it profiles, and falls back
to ``setitimer`` when it cannot. Ordinary signals (``kill``, ``alarm``) are never refused by the
limit. Timerfds are refused (``sandbox.seccomp``); itimers (three per process) and sleeping
threads (one timeout each) are bounded by ``processes``.
"""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one bot process tree."""

    memory_mb: int = 512
    cpu_seconds: int = 600
    processes: int = 64
    file_size_mb: int = 16
    open_files: int = 256
    tmp_mb: int = 64

    def to_json(self) -> dict[str, int]:
        return asdict(self)


class Exit(enum.StrEnum):
    """How a bot process ended, as far as the sandbox can tell."""

    RUNNING = "running"
    EXITED = "exited"
    KILLED = "killed"
    OOM = "oom"
    CPU_LIMIT = "cpu_limit"


@dataclass
class Usage:
    """Resources a bot used, collected after it ended (or so far)."""

    cpu_seconds: float = 0.0
    max_rss_mb: float = 0.0
    exit: Exit = Exit.RUNNING
    returncode: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


class BotProcess(ABC):
    """A running bot. File descriptors are raw, blocking unless the caller makes them not."""

    stdin_fd: int
    stdout_fd: int
    stderr_fd: int

    freezer: str = "none"
    """How ``freeze`` stops the bot: ``cgroup``, ``signals``, ``engine`` or ``none``."""

    @property
    @abstractmethod
    def pid(self) -> int | None:
        """A host pid of the process (or of its supervisor), if there is one."""

    @abstractmethod
    def poll(self) -> int | None:
        """The return code if the process has ended, else None."""

    @abstractmethod
    def kill(self) -> None:
        """Kill the bot's whole process tree at once; safe to call more than once."""

    @abstractmethod
    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the end; return the return code, or None on timeout."""

    @abstractmethod
    def usage(self) -> Usage:
        """Resources used; call after ``kill``/``wait`` for final figures."""

    def close(self) -> None:
        """Kill if still running and release every resource (fds, cgroups, containers)."""
        self.kill()

    def freeze(self) -> None:
        """Stop every process and thread of the bot until ``thaw`` (it is not its turn).

        The runner freezes a bot as soon as its answer arrives and thaws it just before its
        next request is written, so a bot uses no CPU and learns nothing on other bots' time.
        A frozen bot can still be killed (``kill``/``close`` see to it). Never raises; the
        base class does nothing (``freezer`` says ``none``).
        """

    def thaw(self) -> None:
        """Let a frozen bot run again; nothing if it is not frozen or has ended."""

    def is_frozen(self) -> bool:
        """True once every process and thread of a frozen bot has really stopped.

        ``freeze`` returns before that: a task stops only on its way back to user mode, so one
        inside a long system call (kernel work begun just before the answer) keeps running on
        its core until the call returns. The runner waits for this before the next seat moves.
        True when nothing is frozen (``freezer`` is ``none``) or the bot has ended.
        """
        return True


class Sandbox(ABC):
    """A way of running untrusted bot processes."""

    name: str = "abstract"
    isolates: bool = True
    """False only for ``none``: it must never run untrusted bots."""

    @abstractmethod
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
        """Start ``command`` inside ``bot_dir`` (read-only) with ``limits``.

        ``command`` is the bot's run command as written in its manifest (e.g. ``["python3",
        "bot.py"]``); the backend resolves interpreters to absolute paths that exist inside the
        sandbox. ``slot`` distinguishes concurrent bots (per-slot uid, cgroup); ``cpu`` pins the
        process to one core where possible.

        ``writable_bot_dir`` mounts ``bot_dir`` read-write, for build steps only (see
        ``sandbox.build``): it must then be a private copy that ``writer_uid(slot)`` can write,
        and nothing else changes (same limits, no network, the rest of the world read-only).
        """

    def writer_uid(self, slot: int) -> int | None:
        """The host uid whose files a process in ``slot`` creates, if not the referee's own."""
        return None

    @abstractmethod
    def enforced(self, limits: Limits) -> dict[str, bool]:
        """Which of ``limits`` (and isolation properties) this backend really enforces here.

        ``freeze`` is true when ``BotProcess.freeze`` stops every process of a bot, whatever
        it forks or however it detaches, so that nothing of it runs between its turns.
        """

    @classmethod
    def available(cls) -> str | None:
        """None if usable here, else the reason it is not."""
        return None
