"""Drive a sandboxed bot by hand (hello, requests) and look for what it left behind."""

from __future__ import annotations

import itertools
import json
import os
import select
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.base import BotProcess, Limits, Sandbox, Usage
from sandbox.bwrap import UID_BASE

HELLO = {
    "type": "hello",
    "protocol": 1,
    "game": "svoi-kozyri",
    "players": 2,
    "seat": 0,
    "params": {},
    "variant": None,
    "time": {"init_ms": 5000, "move_ms": 1000, "bank_ms": 0, "timeouts": True},
    "name": "hostile",
}
REQUEST = {
    "type": "request",
    "id": 1,
    "deal": 0,
    "observation": {},
    "legal_actions": [{"type": "pass"}],
    "time_left_ms": 1000,
    "move_ms": 1000,
}
KEEP_BYTES = 1 << 20

_slots = itertools.count()


def fresh_slot() -> int:
    """A slot no other test of this run uses (so uids and labels do not mix).

    Slots from 1000 up, 200 per pytest-xdist worker: matches elsewhere use low slots (the web
    worker up to 64 times the seats).
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    base = 1000 + 200 * (int(worker) if worker.isdigit() else 0)
    return base + next(_slots) % 200


@dataclass
class Run:
    """What came out of a bot that was driven until it ended (or was killed)."""

    stdout: bytes
    stderr: bytes
    stdout_total: int
    returncode: int | None
    usage: Usage
    seconds: float
    findings: dict[str, str] = field(default_factory=dict)


def findings(stderr: bytes) -> dict[str, str]:
    """The ``HOSTILE <key><TAB><value>`` lines a hostile bot reported on stderr."""
    out: dict[str, str] = {}
    for line in stderr.decode(errors="replace").splitlines():
        if line.startswith("HOSTILE ") and "\t" in line:
            key, _, value = line.removeprefix("HOSTILE ").partition("\t")
            out[key] = value
    return out


def start(sandbox: Sandbox, bot: Path, limits: Limits, slot: int) -> BotProcess:
    manifest = (bot / "bot.toml").read_text()
    run_line = next(line for line in manifest.splitlines() if line.startswith("run"))
    command = json.loads(run_line.partition("=")[2].strip())
    return sandbox.spawn(bot, command, limits, slot=slot)


def drive(process: BotProcess, *, timeout: float = 10.0, requests: int = 1) -> Run:
    """Send hello and ``requests`` requests, collect output until exit or ``timeout``; close."""
    began = time.monotonic()
    lines = [HELLO] + [dict(REQUEST, id=i + 1) for i in range(requests)]
    os.write(process.stdin_fd, b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    out, err = bytearray(), bytearray()
    total = _collect(process, out, err, began + timeout)
    process.close()
    rc = process.poll()
    return Run(
        bytes(out), bytes(err), total, rc, process.usage(), time.monotonic() - began, findings(err)
    )


def _collect(process: BotProcess, out: bytearray, err: bytearray, deadline: float) -> int:
    open_fds = {process.stdout_fd: out, process.stderr_fd: err}
    total = 0
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_fds), [], [], max(0.0, deadline - time.monotonic()))
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                del open_fds[fd]
                continue
            if fd == process.stdout_fd:
                total += len(data)
            if len(open_fds[fd]) < KEEP_BYTES:
                open_fds[fd] += data
    return total


def host_uid_processes(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uid_line = next((x for x in status.splitlines() if x.startswith("Uid:")), "")
        if uid_line.split()[1:2] == [str(uid)]:
            found.append(int(entry.name))
    return found


def survivors(sandbox: Sandbox, slot: int) -> list[str]:
    """Anything of ``slot``'s bot still alive on the host after it was closed."""
    if sandbox.name == "bwrap":
        if os.geteuid() != 0:
            return []
        return [str(pid) for pid in host_uid_processes(UID_BASE + slot)]
    from sandbox.docker import LABEL, api_client

    api = api_client()
    try:
        found = api.containers(all=True, filters={"label": f"{LABEL}={slot}"})
    finally:
        api.close()
    return [c["Id"] for c in found]
