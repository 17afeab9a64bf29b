"""Sandbox overhead: bot start time and per-move round trip, plain vs bubblewrap vs Docker.

Start time is from ``spawn`` to the bot's first line on stdout (a Python bot that prints at
once), so it includes the interpreter's own start. Start CPU is the CPU time that start and the
bot's end cost: the referee's own (in ``spawn``) plus what the bot's process tree used, as its
``Usage`` reports it; unlike wall time it hardly depends on how busy the machine is. The
per-move figure is one JSON line (about 230 bytes) to the bot and its echo back, over the raw
file descriptors the runner uses. The referee and the bots share one core, as in a real match.
Medians; runs are interleaved so that a noisy machine affects every backend alike. Docker is
measured only if an engine is reachable.

Freezing: for each backend that freezes, the same bot also answers moves where, as in a match,
it is thawed before the request and frozen again once its answer is read; frozen and plain
moves alternate on one bot, so both see the same load. The second table gives both medians, the
freezer used and their ratio (the cost of freezing per move).

    .venv/bin/python bench/sandbox.py [--starts 30] [--moves 3000] [--docker-starts 10]

``bwrap-before`` is the anchor: the full ``bwrap`` stack as it was before the start was made
cheaper, side by side. Its bot's world is built with the old arguments (``--dev``, and one bind
per table of ``/proc/sys/fs`` and over ``/dev/ptmx``); all its groups, the CPU group too, sit
below one common parent of their own (so that together its bots weigh one process); the cgroup
mounts are read at every start; bubblewrap leaves the freezer group at the start rather than
at the first freeze; bubblewrap starts in the referee's own mount namespace, with every host
mount in it (not in a held copy without those no bind needs).

The last lines are ``mount_ops=<mount operations of a start> before=<the anchor's>`` (the
binds of this host's toolchains included; bubblewrap adds four of its own over ``/proc``),
``before_ratio=<anchor start / plain start> before_cpu_ratio=<the same for start CPU>``,
``ratio=<bwrap start / plain start> cpu_ratio=<the same for start CPU>``,
``freeze_ratio=<bwrap move with freezing / without>`` and, when Docker was measured,
``docker_move_ratio=<Docker move / plain move> docker_start_ratio=<Docker start / plain start>``
(the goals: a bwrap start at most 1.5x plain, a Docker move at most 2x plain).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sandbox.bwrap
from sandbox import backend_class, get_sandbox
from sandbox.base import BotProcess, Limits, Sandbox
from sandbox.bwrap import UID_BASE, BwrapSandbox
from sandbox.bwrap_world import base_args, toolchain_world
from sandbox.cgroups import ROOT_NAME, Cgroup, sweep_stale
from sandbox.walls import MASKED_DEV, MASKED_PROC, MASKED_PROC_DIRS

ECHO_BOT = """\
import sys
sys.stdout.write("ready\\n")
sys.stdout.flush()
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""
MESSAGE = (
    b'{"type":"request","id":17,"deal":0,"observation":{"hand":["6S","9H","TD","QC","AS","7D"],'
    b'"trumps":["H"],"to_move":1,"table":[["9C",null]],"hand_counts":[6,5,6]},'
    b'"legal_actions":[{"type":"take"},{"type":"beat","card":"TD"}],"time_left_ms":29500}\n'
)
LIMITS = Limits(memory_mb=256, processes=32)
BEFORE_ROOT = f"{ROOT_NAME}-bench-before"


def read_line(process: BotProcess) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(process.stdout_fd, 65536)
        if not chunk:
            raise RuntimeError(f"bot ended early: {os.read(process.stderr_fd, 4096)!r}")
        data += chunk
    return data


def start_ms(box: Sandbox, folder: Path, cpu: int) -> tuple[float, float]:
    """Milliseconds from spawn to the bot's first line, and CPU milliseconds of the start."""
    began, began_cpu = time.perf_counter(), time.thread_time()
    process = box.spawn(folder, ["python3", "bot.py"], LIMITS, cpu=cpu)
    spawn_cpu = time.thread_time() - began_cpu
    read_line(process)
    elapsed = (time.perf_counter() - began) * 1000
    process.close()
    return elapsed, (spawn_cpu + process.usage().cpu_seconds) * 1000


def move_us(box: Sandbox, folder: Path, cpu: int, moves: int) -> tuple[float, float, str]:
    """Median microseconds for one request line and its echo, without and with freezing
    (thaw, request, answer, freeze), on two bots of ``box`` by turns; and the freezer used."""
    running = box.spawn(folder, ["python3", "bot.py"], LIMITS, cpu=cpu, slot=0)
    frozen = box.spawn(folder, ["python3", "bot.py"], LIMITS, cpu=cpu, slot=1)
    try:
        read_line(running)
        read_line(frozen)
        frozen.freeze()
        plain_us: list[float] = []
        frozen_us: list[float] = []
        for _ in range(moves):
            began = time.perf_counter()
            os.write(running.stdin_fd, MESSAGE)
            read_line(running)
            plain_us.append((time.perf_counter() - began) * 1e6)
            began = time.perf_counter()
            frozen.thaw()
            os.write(frozen.stdin_fd, MESSAGE)
            read_line(frozen)
            frozen.freeze()
            frozen_us.append((time.perf_counter() - began) * 1e6)
    finally:
        running.close()
        frozen.close()
    return statistics.median(plain_us), statistics.median(frozen_us), frozen.freezer


def anchor_args(
    bot_dir: Path,
    limits: Limits,
    extra: Sequence[str],
    kit: Path,
    writable: bool = False,
    tool_binds: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The anchor: the bot's world as it was built before (``--dev``, a bind of ``/dev/null``
    over ``/dev/ptmx`` and over each table of ``/proc/sys/fs``), the rest as now."""
    args = base_args(bot_dir, limits, extra, kit, writable, tool_binds)
    dev = args.index("--tmpfs", args.index("--proc")) - 2  # the own /dev starts with --perms
    masks = args.index("--size")  # the /proc masks end before /tmp
    before = ["--dev", "/dev"]
    for name in MASKED_PROC:
        if os.path.exists(f"/proc/{name}") and os.stat(f"/proc/{name}").st_mode & 0o004:
            before += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in MASKED_PROC_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            before += ["--perms", "0555", "--tmpfs", f"/proc/{name}"]
            before += ["--remount-ro", f"/proc/{name}"]
    for path in MASKED_DEV:
        before += ["--ro-bind", "/dev/null", path]
    return [*args[:dev], *before, *args[masks:]]


class BeforeCgroup(Cgroup):
    """The anchor's groups: every one below one common parent of its own (the CPU group
    too, so that all its bots weigh one process, as every bot did before)."""

    root_name = BEFORE_ROOT
    cpu_on_top = False


class LeanBwrap(BwrapSandbox):
    """Today's ``bwrap``, started in the lean mount namespace (``ARENA_LEAN_MOUNTS=1``)."""

    lean_mounts = True


class AnchorBwrap(BwrapSandbox):
    """The full ``bwrap`` stack as it was before: the bot's world built the old way, its
    groups (CPU too) below one common parent, the cgroup mounts read at every start,
    bubblewrap moved out of the freezer at the start (waiting for its fork) and started
    among all the host's mounts."""

    cgroup_class = BeforeCgroup
    lean_mounts = False

    def spawn(self, *args: Any, **kwargs: Any) -> BotProcess:
        self._found = None
        sandbox.bwrap.base_args = anchor_args  # type: ignore[assignment]
        try:
            process = super().spawn(*args, **kwargs)
        finally:
            sandbox.bwrap.base_args = base_args
        group = process._cgroup  # type: ignore[attr-defined]
        if self.use_freeze and group is not None and process.pid is not None:
            sandbox.bwrap._leave_freezer(process.pid, group)
            process._left_freezer = True  # type: ignore[attr-defined]
        return process


def mounts(args: list[str]) -> int:
    """How many mount operations that read the mount table an argument list asks for."""
    reading = {"--ro-bind", "--bind", "--dev-bind", "--remount-ro"}
    return sum(arg in reading for arg in args) + 6 * args.count("--dev")


def backends() -> dict[str, Callable[[], Sandbox]]:
    """The backends to measure; those that cannot run here are left out (and said so)."""
    found: dict[str, Callable[[], Sandbox]] = {"plain": lambda: get_sandbox("none")}
    if BwrapSandbox.available() is None:
        found["bwrap"] = LeanBwrap
        found["bwrap-before"] = AnchorBwrap
        found["bwrap-no-cgroups"] = lambda: BwrapSandbox(cgroups=False)
    else:
        print(f"# bwrap skipped: {BwrapSandbox.available()}")
    reason = backend_class("docker").available()
    if reason is None:
        found["docker"] = lambda: get_sandbox("docker")
    else:
        print(f"# docker skipped: {reason}")
    return found


Figures = tuple[float, float, tuple[float, float, str]]


def measure(args: argparse.Namespace, folder: Path, cpu: int) -> dict[str, Figures]:
    """Per backend: median start ms, median start CPU ms, median move µs (without and with
    freezing) and the freezer."""
    boxes = {name: make() for name, make in backends().items()}
    starts: dict[str, list[tuple[float, float]]] = {name: [] for name in boxes}
    for round_ in range(args.starts):
        for name, box in boxes.items():
            if name == "docker" and round_ >= args.docker_starts:
                continue
            starts[name].append(start_ms(box, folder, cpu))
    moves = {name: move_us(box, folder, cpu, args.moves) for name, box in boxes.items()}
    return {
        name: (
            statistics.median(wall for wall, _ in starts[name]),
            statistics.median(cpu_ms for _, cpu_ms in starts[name]),
            moves[name],
        )
        for name in boxes
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=30)
    parser.add_argument("--docker-starts", type=int, default=10)
    parser.add_argument("--moves", type=int, default=3000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-", dir="/tmp"))
    folder.chmod(0o755)
    (folder / "bot.py").write_text(ECHO_BOT)
    (folder / "bot.py").chmod(0o644)
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        results = measure(args, folder, cpu)
    finally:
        os.sched_setaffinity(0, before)
        shutil.rmtree(folder, ignore_errors=True)
        sweep_stale(root_name=BEFORE_ROOT)
    plain_start, plain_cpu, (plain_move, _, _) = results["plain"]
    print(
        f"{'backend':<18} {'start ms':>9} {'x plain':>8} {'cpu ms':>8} {'x plain':>8} "
        f"{'move us':>9} {'x plain':>8}"
    )
    for name, (start, cpu_ms, (move, _, _)) in results.items():
        print(
            f"{name:<18} {start:9.1f} {start / plain_start:8.2f} {cpu_ms:8.1f} "
            f"{cpu_ms / plain_cpu:8.2f} {move:9.1f} {move / plain_move:8.2f}"
        )
    print_freezing(results)
    if "bwrap" in results:
        bwrap_start, bwrap_cpu, (move, frozen, _) = results["bwrap"]
        tools = toolchain_world(UID_BASE if os.geteuid() == 0 else None).binds
        world = (Path("/bot"), LIMITS, [], Path("/kit"), False, tools)
        print(f"mount_ops={mounts(base_args(*world))} before={mounts(anchor_args(*world))}")
        before_start, before_cpu, _ = results["bwrap-before"]
        print(
            f"before_ratio={before_start / plain_start:.2f} "
            f"before_cpu_ratio={before_cpu / plain_cpu:.2f}"
        )
        print(f"ratio={bwrap_start / plain_start:.2f} cpu_ratio={bwrap_cpu / plain_cpu:.2f}")
        print(f"freeze_ratio={frozen / move:.2f}")
    if "docker" in results:
        docker_start, _, (docker_move, _, _) = results["docker"]
        print(
            f"docker_move_ratio={docker_move / plain_move:.2f} "
            f"docker_start_ratio={docker_start / plain_start:.2f}"
        )
    return 0


def print_freezing(results: dict[str, Figures]) -> None:
    """Per-move cost with freezing next to the same moves without, per backend."""
    print()
    print(f"{'backend':<18} {'freezer':>8} {'move us':>9} {'frozen us':>10} {'ratio':>6}")
    for name, (_, _, (move, frozen, freezer)) in results.items():
        print(f"{name:<18} {freezer:>8} {move:9.1f} {frozen:10.1f} {frozen / move:6.2f}")


if __name__ == "__main__":
    sys.exit(main())
