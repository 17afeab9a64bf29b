"""The ``none`` backend: a plain subprocess with rlimits, and no isolation at all.

Only for one's own bots on one's own machine: the bot can read and write anything the user can,
and reach the network.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox.base import (
    KIT_DIR,
    BotCommandError,
    BotProcess,
    Exit,
    Limits,
    Sandbox,
    Usage,
    bot_folder,
    kit_env,
    start_failure,
)


def resolve_command(command: Sequence[str], bot_dir: Path) -> list[str]:
    """Resolve the interpreter of ``command`` to an absolute path (never a pyenv shim)."""
    if not command:
        raise BotCommandError("empty run command")
    head = command[0]
    if head in ("python", "python3"):
        exe = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
    elif "/" in head:
        exe = str((bot_dir / head).resolve()) if not os.path.isabs(head) else head
    else:
        exe = shutil.which(head)
    if exe is None:
        raise BotCommandError(f"command not found: {head!r}")
    return [exe, *command[1:]]


class PlainProcess(BotProcess):
    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        assert popen.stdin and popen.stdout and popen.stderr
        self.stdin_fd = popen.stdin.fileno()
        self.stdout_fd = popen.stdout.fileno()
        self.stderr_fd = popen.stderr.fileno()
        self._killed = False
        self._rusage: resource.struct_rusage | None = None

    @property
    def pid(self) -> int | None:
        return self._popen.pid

    def poll(self) -> int | None:
        return self._popen.poll()

    def kill(self) -> None:
        if self._rusage is None and not self._exited():
            self._killed = True
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._reap()

    def _exited(self) -> bool:
        """True if the child has ended; unlike ``Popen.poll`` it does not reap (keeps rusage)."""
        if self._popen.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self._popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _reap(self) -> None:
        if self._rusage is not None:
            return
        try:
            _, status, rusage = os.wait4(self._popen.pid, 0)
            self._popen.returncode = os.waitstatus_to_exitcode(status)
            self._rusage = rusage
        except ChildProcessError:
            self._popen.wait()

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def usage(self) -> Usage:
        rc = self._popen.poll()
        u = Usage(returncode=rc)
        if self._rusage is not None:
            u.cpu_seconds = self._rusage.ru_utime + self._rusage.ru_stime
            u.max_rss_mb = self._rusage.ru_maxrss / 1024
        if rc is None:
            u.exit = Exit.RUNNING
        elif rc == -signal.SIGXCPU:
            u.exit = Exit.CPU_LIMIT
        elif self._killed or rc < 0:
            u.exit = Exit.KILLED
        else:
            u.exit = Exit.EXITED
        return u

    def close(self) -> None:
        self.kill()
        for f in (self._popen.stdin, self._popen.stdout, self._popen.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


class PlainSandbox(Sandbox):
    """No isolation; rlimits only. Never for untrusted bots.

    Bots are not frozen between their turns either: a stop signal would miss whatever leaves
    the process group, and would leave the bots stopped for good if the referee died.
    """

    name = "none"
    isolates = False

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
        # Nothing to do for ``writable_bot_dir``: this backend never protects the folder.
        bot_dir = bot_folder(bot_dir)
        argv = resolve_command(command, bot_dir)

        base_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(bot_dir), "LANG": "C.UTF-8"}
        base_env.update(kit_env(str(KIT_DIR)))
        base_env.update(env or {})
        try:
            popen = subprocess.Popen(
                argv,
                cwd=bot_dir,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=base_env,
                preexec_fn=lambda: _child_setup(limits, cpu),
                close_fds=True,
            )
        except OSError as exc:
            raise start_failure(exc, argv[0]) from exc
        return PlainProcess(popen)

    def enforced(self, limits: Limits) -> dict[str, bool]:
        return {
            "network": False,
            "filesystem": False,
            "memory": False,
            "cpu_time": True,
            "processes": False,
            "file_size": True,
            "open_files": True,
            "tmp_space": False,
            "freeze": False,
        }


def _child_setup(limits: Limits, cpu: int | None) -> None:
    """In the child before exec: a session of its own (a kill takes its tree), a core, rlimits."""
    os.setsid()
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    # SIGXCPU at the soft limit tells a CPU overrun from a kill; SIGKILL a second later.
    _lower(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1)
    _lower(resource.RLIMIT_FSIZE, limits.file_size_mb << 20)
    _lower(resource.RLIMIT_NOFILE, limits.open_files)
    _lower(resource.RLIMIT_CORE, 0)


def _lower(which: int, value: int, hard_value: int | None = None) -> None:
    """Lower a soft rlimit to ``value`` and the hard one to ``hard_value`` (default: the same).

    Raising is impossible here anyway: a limit already lower stays as it is.
    """
    wanted = value if hard_value is None else hard_value
    _soft, hard = resource.getrlimit(which)
    new_hard = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    resource.setrlimit(which, (min(value, new_hard), new_hard))
