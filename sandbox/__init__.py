"""Bot process isolation behind one interface (``sandbox.base``).

Backends: ``bwrap`` (bubblewrap + cgroups + rlimits, the default where available), ``docker``
(production), and ``none`` (a plain subprocess, only for one's own bots on one's own machine).
Nothing here imports flask, sqlalchemy, celery or ``web``.
"""

from __future__ import annotations

import importlib

from sandbox.base import Limits, Sandbox, SandboxError, SandboxUnavailable

__all__ = [
    "BACKENDS",
    "Limits",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "default_sandbox_name",
    "describe_backends",
    "get_sandbox",
]

BACKENDS: dict[str, str] = {
    "none": "sandbox.plain:PlainSandbox",
    "bwrap": "sandbox.bwrap:BwrapSandbox",
    "docker": "sandbox.docker:DockerSandbox",
}


def backend_class(name: str) -> type[Sandbox]:
    try:
        target = BACKENDS[name]
    except KeyError:
        raise SandboxError(f"no sandbox {name!r}; sandboxes: {', '.join(BACKENDS)}") from None
    module, _, attr = target.partition(":")
    cls: type[Sandbox] = getattr(importlib.import_module(module), attr)
    return cls


def get_sandbox(name: str) -> Sandbox:
    """The sandbox backend ``name``; or ``SandboxUnavailable`` saying why not."""
    cls = backend_class(name)
    reason = cls.available()
    if reason is not None:
        raise SandboxUnavailable(f"sandbox {name!r} is not available here: {reason}")
    return cls()


def default_sandbox_name() -> str | None:
    """The isolating backend to use when none is named: ``bwrap`` if it runs here, else None.

    None means no untrusted bot may run on this machine; ``none`` is never a default.
    """
    return "bwrap" if backend_class("bwrap").available() is None else None


def describe_backends() -> list[dict[str, str | bool | None]]:
    """Every backend with whether it isolates and why it is unavailable here (None if usable)."""
    rows: list[dict[str, str | bool | None]] = []
    for name in BACKENDS:
        cls = backend_class(name)
        rows.append({"name": name, "isolates": cls.isolates, "unavailable": cls.available()})
    return rows
