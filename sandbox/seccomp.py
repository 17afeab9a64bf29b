"""An optional seccomp filter for sandboxed bots: no Internet sockets, no io_uring.

The network namespace already leaves a bot with only a dead loopback; this filter is a second
wall: ``socket(AF_INET|AF_INET6|AF_PACKET, ...)`` fails with EACCES and ``io_uring_setup`` with
ENOSYS (so it cannot open sockets behind the filter's back). Unix sockets stay allowed.

The filter is built with libseccomp's Python binding (Debian's ``python3-seccomp`` or PyPI's
``pyseccomp``) and exported as a BPF program for ``bwrap --seccomp FD``. When the referee's
interpreter cannot import either binding, the program is built by running this file with the
system ``/usr/bin/python3``. Without libseccomp no filter is used, and ``filter_program`` says so
by returning None.

Run as a script, it writes the BPF program to stdout.
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
import subprocess
import sys
import tempfile
from typing import Any

SYSTEM_PYTHON = "/usr/bin/python3"
DENIED_FAMILIES = (2, 10, 17)  # AF_INET, AF_INET6, AF_PACKET


def _binding() -> Any | None:
    for name in ("seccomp", "pyseccomp"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _build(lib: Any) -> bytes:
    """The BPF program, built with the binding ``lib``."""
    flt = lib.SyscallFilter(defaction=lib.ALLOW)
    for family in DENIED_FAMILIES:
        flt.add_rule(lib.ERRNO(errno.EACCES), "socket", lib.Arg(0, lib.EQ, family))
    flt.add_rule(lib.ERRNO(errno.ENOSYS), "io_uring_setup")
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def filter_program() -> bytes | None:
    """The BPF program for ``bwrap --seccomp``, or None if libseccomp is not usable here."""
    lib = _binding()
    if lib is not None:
        try:
            return _build(lib)
        except (OSError, RuntimeError, ValueError):
            return None
    return _build_with_system_python()


def _build_with_system_python() -> bytes | None:
    if not os.path.exists(SYSTEM_PYTHON) or os.path.realpath(sys.executable) == SYSTEM_PYTHON:
        return None
    try:
        done = subprocess.run(
            [SYSTEM_PYTHON, "-I", __file__], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    # A BPF program is a whole number of 8-byte instructions.
    if done.returncode != 0 or not done.stdout or len(done.stdout) % 8:
        return None
    return done.stdout


def main() -> int:
    """Write the program to stdout; exit 1 if no libseccomp binding is importable."""
    lib = _binding()
    if lib is None:
        return 1
    sys.stdout.buffer.write(_build(lib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
