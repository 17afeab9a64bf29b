"""The ``docker`` backend: one hardened container per bot, through the Docker engine API.

Each bot runs in a fresh container of the runner image (``sandbox/runner.Dockerfile``; name from
``ARENA_DOCKER_IMAGE``): no network, a read-only root, a size-capped tmpfs ``/tmp``, memory with
no extra swap, a process count, one CPU, no capabilities, no privilege gain, a small init as PID 1
(so SIGXCPU reaches the bot), an unprivileged uid, the seccomp profile built from
``sandbox.seccomp.RULES``, masked host-wide ``/proc`` tables and ``/sys``, and a private cgroup
namespace. The engine is found the usual way
(``DOCKER_HOST``); the same code runs against Podman's Docker-compatible API.

Files: the bot folder and the kits are bind-mounted read-only at ``/bot`` and ``/kit``. Copying
them in is impossible with a read-only root, and a mount costs nothing per start; so the engine
must see the bot folder under the same path as the referee (the referee runs on the engine's host,
or both share the volume at the same path).

The bot's stdin, stdout and stderr are kernel pipes, not the engine's attach socket: each
container gets a private folder of three named pipes (``PipeFolder``), mounted read-only at
``/pipes``, and its command is a two-line shell shim that opens them as fds 0, 1 and 2 and
becomes the bot. A message then costs what it costs over plain pipes, and the runner gets raw
file descriptors as with every other backend.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import os
import select
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.base import (
    KIT_DIR,
    KIT_MOUNT,
    PENDING_SIGNALS,
    BotCommandError,
    BotProcess,
    Exit,
    Limits,
    Sandbox,
    SandboxError,
    Usage,
    bot_folder,
    isolated_env,
)
from sandbox.cgroups import Freezer, find_hierarchies, sweep_stale
from sandbox.docker_account import ROOT_NAME as ACCOUNT_ROOT
from sandbox.docker_account import ContainerAccount
from sandbox.languages import packages_tag
from sandbox.walls import docker_host_walls, docker_security_opt, engine_has_seccomp

IMAGE_REPOSITORY = "kozyri-arena-runner"
"""The runner image's name; its tag is a hash of its package list (``packages_tag``)."""
IMAGE_ENV = "ARENA_DOCKER_IMAGE"
LABEL = "org.kozyri-arena.bot"
"""Every bot container carries this label (value: the slot), so strays can be found."""
UID_BASE = 30000
"""Host uid of slot 0's container; slot N runs as ``UID_BASE + N``. The process rlimit counts
per uid across the whole host (containers have no user namespace), so one shared uid would let
a fork bomb in one container stop every other container from starting. Distinct from the
``bwrap`` backend's uids."""
API_VERSION = "1.41"
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
CPU_SHARE = 1.0
STOP_TIMEOUT_S = 10.0
ENDING_GRACE_S = 5.0
"""How long a bot whose stdout is closed may take to end on its own before it is killed."""


def image_name() -> str:
    """The runner image to start bots from: ``ARENA_DOCKER_IMAGE``, else the one
    ``scripts/ci-docker.sh`` builds from today's package list."""
    return os.environ.get(IMAGE_ENV) or f"{IMAGE_REPOSITORY}:{packages_tag()}"


def api_client() -> Any:
    """A low-level Docker API client configured from the environment (``DOCKER_HOST``...)."""
    # Imported by name: only this backend needs the SDK, and a top-level ``docker/`` folder of
    # deployment files would otherwise shadow it for the type checker.
    docker: Any = importlib.import_module("docker")

    # A fixed API version (1.41: Docker 20.10, Podman 4) skips a probe that leaks its socket
    # when the engine is down; every call used here exists in it.
    return docker.APIClient(version=API_VERSION, timeout=60, **docker.utils.kwargs_from_env())


def bot_user(slot: int) -> str:
    """The ``uid:gid`` a slot's container runs as."""
    return f"{UID_BASE + slot}:{UID_BASE + slot}"


NOT_RUNNABLE = ("executable file not found", "no such file or directory", "permission denied")
"""What the engine says when the bot's own command cannot be run in the image."""


def _start_error(exc: Exception) -> SandboxError:
    """The error for a container that did not start: the bot's if its command cannot run."""
    text = str(exc)
    is_bot = any(words in text.lower() for words in NOT_RUNNABLE)
    return (BotCommandError if is_bot else SandboxError)(f"could not start the container: {text}")


def container_command(command: Sequence[str]) -> list[str]:
    """The bot's run command as it runs in the image (interpreters are on the image's PATH)."""
    if not command:
        raise BotCommandError("empty run command")
    head, rest = command[0], list(command[1:])
    if head == "python":
        head = "python3"
    elif "/" in head and not head.startswith("/"):
        head = f"/bot/{head.removeprefix('./')}"
    return [head, *rest]


def host_config(
    api: Any,
    bot_dir: Path,
    limits: Limits,
    cpu: int | None,
    cgroup_parent: str | None = None,
    writable: bool = False,
    pipe_dir: Path | None = None,
) -> Any:
    """Every isolation and limit setting of a bot container (``writable``: a build step's;
    ``pipe_dir``: its private folder of named pipes, mounted read-only at ``PIPE_MOUNT``)."""
    ulimit: Any = importlib.import_module("docker.types").Ulimit

    memory = limits.memory_mb << 20
    ulimits = [
        ulimit(name="fsize", soft=limits.file_size_mb << 20, hard=limits.file_size_mb << 20),
        ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
        ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 1),
        # Always explicit: on Podman any ulimit replaces the defaults, and its nproc default is
        # above the hard limit a root without CAP_SYS_RESOURCE may set.
        ulimit(name="nproc", soft=4 * limits.processes, hard=4 * limits.processes),
        ulimit(name="sigpending", soft=PENDING_SIGNALS, hard=PENDING_SIGNALS),
    ]
    binds = {
        str(bot_dir): {"bind": "/bot", "mode": "rw" if writable else "ro"},
        str(KIT_DIR): {"bind": KIT_MOUNT, "mode": "ro"},
    }
    if pipe_dir is not None:
        # Read-only is enough: opening a named pipe for writing never writes to the folder.
        binds[str(pipe_dir)] = {"bind": PIPE_MOUNT, "mode": "ro"}
    config: Any = api.create_host_config(
        binds=binds,
        network_mode="none",
        read_only=True,
        tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
        # No /dev/shm (the engine's default is a writable 64 MiB tmpfs beside /tmp): a bot's
        # only writable space is /tmp, within tmp_mb, as under bwrap. System V IPC stays,
        # private to the container.
        ipc_mode="none",
        mem_limit=memory,
        memswap_limit=memory,
        pids_limit=limits.processes,
        nano_cpus=int(CPU_SHARE * 1e9),
        cpuset_cpus=str(cpu) if cpu is not None else None,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges", *docker_security_opt()],
        init=True,
        ulimits=ulimits,
        cgroup_parent=cgroup_parent,
    )
    config.update(docker_host_walls())
    return config


PIPE_MOUNT = "/pipes"
"""Where a container sees its private folder of named pipes."""
PIPE_DIR_ENV = "ARENA_PIPE_DIR"
"""The host folder under which each container's folder of pipes is made (default: the
temporary folder). The engine must see it under the same path, as with the bot folder."""
CONNECT_TIMEOUT_S = 60.0
"""How long a started container has to open its pipes before the start counts as failed."""
SHIM = (
    'case $1 in */*) [ -f "$1" ] && [ -x "$1" ] || exit 127 ;; '
    '*) command -v "$1" >/dev/null || exit 127 ;; esac; '
    f'exec "$@" >{PIPE_MOUNT}/out 2>{PIPE_MOUNT}/err <{PIPE_MOUNT}/in'
)
"""The container's command: the shell opens the pipes as the bot's stdout, stderr and stdin
(in that order) and becomes the bot. A command that cannot run exits 127 before any pipe is
opened, so the referee can tell it from a bot that ended."""
NOT_FOUND_STATUS = (126, 127)


PIPE_PREFIX = "arena-pipes-"


def pipe_root() -> Path:
    """The host folder the pipe folders go under."""
    return Path(os.environ.get(PIPE_DIR_ENV) or tempfile.gettempdir())


def referee_tag() -> str:
    """The start of this referee's pipe folders' names: its pid namespace and pid."""
    return f"{PIPE_PREFIX}{os.stat('/proc/self/ns/pid').st_ino}-{os.getpid()}"


def sweep_stale_pipes() -> list[Path]:
    """Remove the pipe folders of referees that died without closing their bots; returns what
    was removed. Only folders of this pid namespace are judged (the name holds the namespace
    and the pid): a referee elsewhere may share the folder."""
    ours = f"{PIPE_PREFIX}{os.stat('/proc/self/ns/pid').st_ino}-"
    removed: list[Path] = []
    for folder in pipe_root().glob(f"{ours}*-*"):
        pid = folder.name.removeprefix(ours).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def shim_command(command: Sequence[str]) -> list[str]:
    """The container's command: the shim, then the bot's command as it runs in the image."""
    return ["/bin/sh", "-c", SHIM, "sh", *container_command(command)]


class PipeFolder:
    """A container's private folder holding three named pipes: ``in``, ``out`` and ``err``.

    The folder and its pipes belong to the container's uid (mode 0700 and 0600), so on the
    host only that uid and root reach them; the container sees only its own folder. A referee
    that is not root cannot give them away: then the folder is 0711 (not listable, its name
    random) and the pipes 0666. The
    referee opens ``out`` and ``err`` for reading before the container starts (so the bot's
    opens never wait) and ``in`` for writing once the bot has opened it (see ``connect``).
    """

    def __init__(self, uid: int) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=f"{referee_tag()}-", dir=pipe_root()))
        self.stdin_fd = -1
        self.stdout_fd = -1
        self.stderr_fd = -1
        owned = os.geteuid() == 0
        try:
            for name in ("in", "out", "err"):
                os.mkfifo(self.path / name, 0o600)
                if owned:
                    os.chown(self.path / name, uid, uid)
                else:
                    os.chmod(self.path / name, 0o666)
            if owned:
                os.chown(self.path, uid, uid)
            else:
                self.path.chmod(0o711)
            nonblocking = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
            self.stdout_fd = os.open(self.path / "out", nonblocking)
            self.stderr_fd = os.open(self.path / "err", nonblocking)
        except OSError as exc:
            self.remove()
            raise SandboxError(f"could not make the pipes for a container: {exc}") from exc

    def connect(self, ended: threading.Event, timeout: float | None = None) -> bool:
        """Wait until the bot has opened its pipes; False if the container ended first.

        Opening ``in`` for writing without blocking fails until a reader opens it, and the
        shim opens it last, so success means all three are open on the bot's side.
        """
        timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
        deadline = time.monotonic() + timeout
        pause = 0.0005
        while True:
            try:
                fd = os.open(self.path / "in", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise SandboxError(f"could not open a container's stdin: {exc}") from exc
            else:
                self.stdin_fd = fd
                for each in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
                    os.set_blocking(each, True)  # as the other backends hand them over
                return True
            if ended.is_set():
                return False
            if time.monotonic() > deadline:
                raise SandboxError(f"the container did not open its pipes within {timeout:.0f} s")
            ended.wait(pause)
            pause = min(pause * 2, 0.01)

    def remove(self) -> None:
        """Remove the folder (the referee's descriptors stay open until closed)."""
        shutil.rmtree(self.path, ignore_errors=True)


class DockerProcess(BotProcess):
    """A bot running in a container, its stdin, stdout and stderr on named pipes."""

    def __init__(
        self,
        api: Any,
        container: str,
        pipes: PipeFolder,
        account: ContainerAccount | None = None,
    ) -> None:
        self._api = api
        self.container = container
        self._account = account
        self._pipes = pipes
        self.stdin_fd = -1
        self.stdout_fd, self.stderr_fd = pipes.stdout_fd, pipes.stderr_fd
        self._watch_fd = os.dup(pipes.stdout_fd)  # the runner may close its own at any time
        self._returncode: int | None = None
        self._ended = threading.Event()
        self._killed = False
        self._final: Usage | None = None
        self._freezer: Freezer | None = None
        self._waiter = threading.Thread(target=self._await_exit, daemon=True)

    def start(self) -> None:
        """Start the container, follow it, and wait until the bot has opened its pipes."""
        self._api.start(self.container)
        self._waiter.start()
        if self._account is not None and not self._account.local():
            self._account = None  # a remote engine, or one that put the group elsewhere
        if not self._pipes.connect(self._ended):
            status = self._returncode
            if status in NOT_FOUND_STATUS:
                raise BotCommandError(f"the bot's command cannot run in the image ({status})")
            raise SandboxError(f"the container ended before opening its pipes ({status})")
        self.stdin_fd = self._pipes.stdin_fd

    # -- threads -----------------------------------------------------------------------------
    def _await_exit(self) -> None:
        try:
            status = self._api.wait(self.container, timeout=None)
            self._returncode = int(status.get("StatusCode", -1))
        except Exception:  # the engine went away: treat as killed
            self._returncode = -9
        self._ended.set()

    # -- BotProcess --------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return None

    def poll(self) -> int | None:
        return self._returncode if self._ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int | None:
        self._ended.wait(timeout)
        return self.poll()

    def kill(self) -> None:
        if self._ended.is_set():
            return
        # A bot that has just ended (its stdout has no writer left) is not killed: its end
        # reaches the referee through the pipe before the engine reports it, and a kill in
        # between would hide how it ended (a CPU limit, a crash) behind "killed".
        if self._stdout_hung_up() and self._ended.wait(ENDING_GRACE_S):
            return
        self._kill_frozen()
        self._killed = True
        with contextlib.suppress(Exception):
            self._api.kill(self.container)
        self._ended.wait(STOP_TIMEOUT_S)

    def _stdout_hung_up(self) -> bool:
        """True if nothing in the container holds the bot's stdout open any more."""
        if self._watch_fd < 0:
            return False
        watcher = select.poll()
        watcher.register(self._watch_fd, select.POLLIN)
        return any(events & select.POLLHUP for _, events in watcher.poll(0))

    def usage(self) -> Usage:
        if self._final is not None:
            return self._final
        rc = self.poll()
        state = self._inspect_state()
        u = Usage(returncode=rc, exit=self._exit(rc, bool(state.get("OOMKilled"))))
        u.detail = {"container": self.container[:12], "oom_killed": bool(state.get("OOMKilled"))}
        if self._account is not None:
            u.cpu_seconds = self._account.cpu_seconds() or 0.0
            u.max_rss_mb = self._account.peak_memory_mb() or 0.0
        u.detail["cpu_measured"] = self._account is not None
        return u

    def _inspect_state(self) -> dict[str, Any]:
        try:
            state: dict[str, Any] = self._api.inspect_container(self.container)["State"]
        except Exception:
            return {}
        return state

    def _exit(self, rc: int | None, oom_flag: bool) -> Exit:
        """Classify an end; the init reports a bot killed by signal N as 128 + N."""
        if rc is None:
            return Exit.RUNNING
        if oom_flag or (rc == 137 and not self._killed):
            return Exit.OOM  # Podman kills at the limit but reports OOMKilled false
        if rc == 128 + 24:
            return Exit.CPU_LIMIT
        if self._killed or rc == 137:
            return Exit.KILLED
        return Exit.EXITED

    # -- freezing (between the bot's turns) --------------------------------------------------
    def attach_freezer(self) -> None:
        """Freeze through the parent cgroup made for the container, if it is on this host.

        The engine's own pause goes through the container runtime (a process started per call,
        and it fails outright on some kernels with a v1 freezer), so it is not used: the
        parent group's freezer holds the container's group and everything in it.
        """
        account = self._account
        if account is None:
            return
        found = account.found
        if "freezer" in found.v1:
            self._freezer = Freezer.open(found.v1["freezer"] / account.relative, v2=False)
        elif not found.v1 and found.v2 is not None:
            self._freezer = Freezer.open(found.v2 / account.relative, v2=True)
        if self._freezer is not None:
            self.freezer = "cgroup"

    def freeze(self) -> None:
        if self._freezer is not None:
            self._freezer.freeze()

    def thaw(self) -> None:
        if self._freezer is not None and self._freezer.frozen:
            self._freezer.thaw()

    def is_frozen(self) -> bool:
        # The parent group of a v1 freezer reads FROZEN only once every group below it is.
        if self._freezer is None or not self._freezer.frozen or self._ended.is_set():
            return True
        return self._freezer.settled()

    def _kill_frozen(self) -> None:
        """Kill a frozen container's processes where they stand (a v1 freezer holds a killed
        process until it thaws, and the engine does not know the container is frozen)."""
        if self._freezer is not None and self._freezer.frozen:
            self._freezer.kill_members()

    def close(self) -> None:
        if self._final is not None:
            return
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.kill()
        os.close(self._watch_fd)
        self._watch_fd = -1
        self._final = self.usage()
        with contextlib.suppress(Exception):
            self._api.remove_container(self.container, force=True, v=True)
        if self._freezer is not None:
            self._freezer.close()
        if self._account is not None:
            self._account.remove()
        self._pipes.remove()


@dataclass(frozen=True)
class _Placement:
    """Where a container goes: its slot, core, CPU account and whether ``/bot`` is writable."""

    slot: int
    cpu: int | None
    account: ContainerAccount | None
    writable: bool = False


class DockerSandbox(Sandbox):
    """A container per bot (production)."""

    name = "docker"
    isolates = True

    def __init__(self, image: str | None = None, *, freeze: bool = True) -> None:
        self.image = image or image_name()
        self.use_freeze = freeze
        """False only to measure what freezing costs: bots then run between their turns."""
        try:
            self.api = api_client()
        except Exception as exc:
            raise SandboxError(f"no Docker engine: {exc}") from exc
        self.accounts = _accounting_works(self.api)
        """True if each container gets a parent cgroup that measures its CPU time here."""
        if self.accounts:
            sweep_stale(root_name=ACCOUNT_ROOT)  # parents of containers of referees that died
        sweep_stale_pipes()

    @classmethod
    def available(cls) -> str | None:
        problem = _socket_problem(os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET)
        if problem is not None:
            return problem
        try:
            api = api_client()
        except ImportError:
            return "the docker Python package is not installed (pip install docker)"
        except Exception as exc:
            return f"no Docker engine configured ({exc}); set DOCKER_HOST (scripts/ci-docker.sh)"
        try:
            return _engine_problem(api)
        finally:
            api.close()

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
        pipes = PipeFolder(UID_BASE + slot)
        account = ContainerAccount() if self.accounts else None
        placement = _Placement(slot, cpu, account, writable_bot_dir)
        try:
            container = self._create(bot_dir, command, limits, env, placement, pipes.path)
        except Exception as exc:
            for fd in (pipes.stdout_fd, pipes.stderr_fd):
                os.close(fd)
            pipes.remove()
            if account is not None:
                account.remove()
            if isinstance(exc, SandboxError):
                raise
            raise SandboxError(f"could not create a container: {exc}") from exc
        process = DockerProcess(self.api, container, pipes, account)
        try:
            process.start()
            if self.use_freeze:
                process.attach_freezer()
        except Exception as exc:
            process.close()
            if isinstance(exc, SandboxError):
                raise
            raise _start_error(exc) from exc
        return process

    def _create(
        self,
        bot_dir: Path,
        command: Sequence[str],
        limits: Limits,
        env: Mapping[str, str] | None,
        placement: _Placement,
        pipe_dir: Path,
    ) -> str:
        slot, cpu, account = placement.slot, placement.cpu, placement.account
        parent = account.cgroup_parent if account is not None else None
        created = self.api.create_container(
            self.image,
            command=shim_command(command),
            stdin_open=False,
            tty=False,
            user=bot_user(slot),
            working_dir="/bot",
            environment=isolated_env(env),
            labels={LABEL: str(slot)},
            network_disabled=True,
            host_config=host_config(
                self.api, bot_dir, limits, cpu, parent, placement.writable, pipe_dir
            ),
        )
        container: str = created["Id"]
        return container

    def writer_uid(self, slot: int) -> int | None:
        return UID_BASE + slot

    def enforced(self, limits: Limits) -> dict[str, bool]:
        return {
            "network": True,
            "filesystem": True,
            "memory": True,
            "cpu_time": True,
            "processes": True,
            "file_size": True,
            "open_files": True,
            "tmp_space": True,
            "cpu_share": True,
            "kill_tree": True,
            "separate_uid": True,
            "freeze": self.use_freeze and self.accounts and _freezer_mounted(),
            **self.walls(),
        }

    @functools.cached_property
    def engine_seccomp(self) -> bool:
        """True if the engine applies seccomp profiles (it says so in ``docker info``)."""
        return engine_has_seccomp(self.api)

    def walls(self) -> dict[str, bool]:
        """Which walls hold: the profile needs an engine built with seccomp."""
        filtered = self.engine_seccomp
        return {
            "seccomp": filtered,
            "socket_families": filtered,
            "nested_userns": filtered,
            "file_locks": filtered,
            "keyrings": filtered,
            "proc_masked": True,
        }


def _accounting_works(api: Any) -> bool:
    """True if the engine makes cgroups by path (``cgroupfs``) in hierarchies we can manage."""
    try:
        driver = api.info().get("CgroupDriver")
    except Exception:
        return False
    found = find_hierarchies()
    mount = found.v1.get("cpuacct") or found.v2
    return driver == "cgroupfs" and mount is not None and os.access(mount, os.W_OK)


def _freezer_mounted() -> bool:
    """True if the engine's cgroups here have a freezer (v1 hierarchy, or a pure v2 tree)."""
    found = find_hierarchies()
    return "freezer" in found.v1 if found.v1 else found.v2 is not None


def _socket_problem(host: str) -> str | None:
    """Why a local engine socket cannot be reached (checked here: the SDK leaks the socket of
    a failed connection)."""
    if not host.startswith("unix://"):
        return None
    path = host.removeprefix("unix://")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        try:
            probe.connect(path)
        except OSError as exc:
            return (
                f"no Docker engine at {path} ({exc.strerror or exc}); "
                "set DOCKER_HOST (scripts/ci-docker.sh starts a private engine)"
            )
    return None


def _engine_problem(api: Any) -> str | None:
    """None if the engine answers and has the runner image, else what is wrong."""
    try:
        api.ping()
    except Exception as exc:
        return f"no Docker engine reachable ({exc}); set DOCKER_HOST (scripts/ci-docker.sh)"
    try:
        api.inspect_image(image_name())
    except Exception:
        return (
            f"image {image_name()!r} not found: build it with scripts/ci-docker.sh or "
            f"docker build -t {image_name()} -f sandbox/runner.Dockerfile sandbox"
        )
    return None


def stray_containers(api: Any | None = None) -> list[str]:
    """Ids of bot containers that still exist (there should be none outside a match)."""
    client = api or api_client()
    found = client.containers(all=True, filters={"label": LABEL})
    return [c["Id"] for c in found]
