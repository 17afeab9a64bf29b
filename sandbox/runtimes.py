"""What a bot's ``run`` and ``build`` commands can call in each sandbox backend.

``list_runtimes(backend)`` probes the interpreters and compilers a backend offers: the host's
own (under ``none`` and under ``bwrap``, whose bots see the host's ``/usr`` read-only) or the
runner image's (under ``docker``). ``arena runtimes`` prints it; the web's upload page shows it.
Nothing here imports flask, sqlalchemy, celery or ``web``.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sandbox.languages import LanguageStatus, language_status

PROBE_TIMEOUT_S = 60.0
PROBE_SLOT = 999
"""The sandbox slot the probes run in (apart from the low slots of matches)."""


@dataclass(frozen=True)
class Runtime:
    """One program a bot may name first in ``run`` (or ``build``)."""

    command: str
    language: str
    kind: str  # "interpreter" or "compiler"
    version_args: tuple[str, ...] = ("--version",)


RUNTIMES = (
    Runtime("python3", "Python 3", "interpreter"),
    Runtime("node", "JavaScript (Node.js)", "interpreter"),
    Runtime("tsc", "TypeScript", "compiler"),
    Runtime("perl", "Perl", "interpreter", ("-e", 'print "perl $^V\\n"')),
    Runtime("ruby", "Ruby", "interpreter"),
    Runtime("php", "PHP", "interpreter"),
    Runtime("lua", "Lua", "interpreter", ("-v",)),
    Runtime("java", "Java", "interpreter", ("-version",)),
    Runtime("mono", "C# (Mono)", "interpreter"),
    Runtime("bash", "Bash", "interpreter"),
    Runtime("sh", "POSIX shell", "interpreter", ("-c", "echo sh")),
    Runtime("gcc", "C", "compiler"),
    Runtime("cc", "C", "compiler"),
    Runtime("g++", "C++", "compiler"),
    Runtime("clang", "C / C++", "compiler"),
    Runtime("rustc", "Rust", "compiler"),
    Runtime("cargo", "Rust", "compiler"),
    Runtime("go", "Go", "compiler", ("version",)),
    Runtime("javac", "Java", "compiler", ("-version",)),
    Runtime("mcs", "C# (Mono)", "compiler"),
    Runtime("make", "make (for build)", "compiler"),
)
"""The programs asked about, in the order shown."""


@dataclass(frozen=True)
class Found:
    """A runtime present in a backend: where, and the first line of its version."""

    command: str
    language: str
    kind: str
    path: str
    version: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def probe_script() -> str:
    """A POSIX shell script printing ``command<TAB>path<TAB>version`` per runtime present."""
    lines = []
    for runtime in RUNTIMES:
        args = " ".join(_quote(a) for a in runtime.version_args)
        lines.append(
            f"p=$(command -v {runtime.command}) && printf '%s\\t%s\\t%s\\n' {runtime.command} "
            f'"$p" "$({runtime.command} {args} 2>&1 </dev/null | grep -m1 .)"'
        )
    return "\n".join(lines) + "\nexit 0\n"


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def parse_probe(output: str) -> list[Found]:
    """The runtimes listed by ``probe_script``'s output, in ``RUNTIMES`` order."""
    by_command = {r.command: r for r in RUNTIMES}
    found = []
    for line in output.splitlines():
        command, _, rest = line.partition("\t")
        path, _, version = rest.partition("\t")
        runtime = by_command.get(command)
        if runtime is not None and path:
            found.append(Found(command, runtime.language, runtime.kind, path, version.strip()))
    return found


def host_path() -> str:
    """``PATH`` as a bot's command is looked up in, without this Python's virtualenv (a bot's
    ``python3`` is the system's, never the referee's)."""
    venv_bin = os.path.join(sys.prefix, "bin") if sys.prefix != sys.base_prefix else None
    parts = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(p for p in parts if p and os.path.realpath(p) != _real(venv_bin))


def _real(path: str | None) -> str | None:
    return os.path.realpath(path) if path else None


def _host_probe() -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", probe_script()],
        env={**os.environ, "PATH": host_path()},
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
        check=False,
    )
    return done.stdout


def _docker_probe() -> str:
    from sandbox.docker import api_client, image_name

    api = api_client()
    container = api.create_container(
        image_name(), ["sh", "-c", probe_script()], network_disabled=True
    )
    try:
        api.start(container)
        api.wait(container, timeout=PROBE_TIMEOUT_S)
        logs: bytes = api.logs(container, stdout=True, stderr=False)
        return logs.decode("utf-8", "replace")
    finally:
        api.remove_container(container, force=True)


@functools.cache
def list_runtimes(backend: str) -> tuple[Found, ...]:
    """The interpreters and compilers a bot finds in ``backend`` (``none``, ``bwrap`` or
    ``docker``). Raises ``SandboxError`` for an unknown backend or one that cannot run here."""
    from sandbox import backend_class
    from sandbox.base import SandboxUnavailable

    reason = backend_class(backend).available()
    if reason is not None:
        raise SandboxUnavailable(f"sandbox {backend!r} is not available here: {reason}")
    found = parse_probe(_docker_probe() if backend == "docker" else _host_probe())
    if backend == "bwrap":
        found = _running_under_bwrap([_system_python(item) for item in found])
    return tuple(found)


def _system_python(item: Found) -> Found:
    """Under bubblewrap ``python3`` is always ``/usr/bin/python3`` (see ``bwrap_world``)."""
    system = "/usr/bin/python3"
    if item.command != "python3" or not os.path.exists(system) or item.path == system:
        return item
    done = subprocess.run(
        [system, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
    )
    return Found(item.command, item.language, item.kind, system, done.stdout.strip())


def _running_under_bwrap(found: list[Found]) -> list[Found]:
    """The runtimes that do start inside bubblewrap: one installed outside ``/usr`` (a
    toolchain under a home folder, say) may need files the sandbox does not show."""
    from sandbox import get_sandbox
    from sandbox.base import Limits
    from sandbox.build import run_build

    box = get_sandbox("bwrap")
    limits = Limits(memory_mb=1024, processes=64, cpu_seconds=30)
    args = {runtime.command: runtime.version_args for runtime in RUNTIMES}
    kept = []
    with tempfile.TemporaryDirectory(prefix="arena-runtimes-") as scratch:
        Path(scratch).chmod(0o777)
        for item in found:
            command = [item.command, *args[item.command]]
            if run_build(box, Path(scratch), command, PROBE_TIMEOUT_S, limits, PROBE_SLOT).ok:
                kept.append(item)
    return kept


def list_languages(backend: str) -> list[LanguageStatus]:
    """Every language of ``sandbox.languages`` in ``backend``: its version, or what is missing.
    Raises ``SandboxError`` as ``list_runtimes`` does."""
    return language_status(_versions(list_runtimes(backend)), backend, _host_versions(backend))


def _versions(found: tuple[Found, ...]) -> dict[str, str]:
    return {item.command: item.version for item in found}


def _host_versions(backend: str) -> dict[str, str] | None:
    """The machine's own programs, for a backend that shows them (bwrap), else None."""
    return _versions(list_runtimes("none")) if backend == "bwrap" else None


def runtimes_json(backends: tuple[str, ...] = ("bwrap", "docker")) -> dict[str, Any]:
    """For each backend: its languages and runtimes, or why it cannot be asked here (for web
    pages)."""
    from sandbox.base import SandboxError

    answer: dict[str, Any] = {}
    for backend in backends:
        try:
            found = list_runtimes(backend)
        except SandboxError as exc:
            answer[backend] = unavailable_json(str(exc))
        else:
            runtimes = [f.to_json() for f in found]
            statuses = language_status(_versions(found), backend, _host_versions(backend))
            languages = [s.to_json() for s in statuses]
            answer[backend] = {
                "available": True,
                "reason": None,
                "languages": languages,
                "runtimes": runtimes,
            }
    return answer


def unavailable_json(reason: str) -> dict[str, Any]:
    """What ``runtimes_json`` says of a backend that cannot be asked: nothing is there."""
    return {"available": False, "reason": reason, "languages": [], "runtimes": []}
