"""The hostile-bot suite, over every isolating backend: each attack is contained, the bot ends
the way the runner needs to know, nothing survives and nothing is written or leaked on the host.

The bots are first started through ``Sandbox.spawn`` and driven by hand; ``test_hostile_match``
then plays each of them in a real match through the runner.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from arena.bots import load_bot
from arena.games import make_game
from arena.runner import BuiltinBot, SeatStatus, TimeControl, run_match
from sandbox.base import Exit, Limits, Sandbox
from tests.sandbox.conftest import BotMaker, Loopback, Scene
from tests.sandbox.driver import Run, drive, fresh_slot, start, survivors

LIMITS = Limits(
    memory_mb=128, cpu_seconds=30, processes=32, file_size_mb=8, open_files=64, tmp_mb=16
)


def attack(sandbox: Sandbox, bot: Path, limits: Limits = LIMITS, timeout: float = 10.0) -> Run:
    """Run ``bot`` through one turn, then check that nothing of it is left alive."""
    slot = fresh_slot()
    run = drive(start(sandbox, bot, limits, slot), timeout=timeout)
    assert survivors(sandbox, slot) == [], "a process of the bot outlived it"
    return run


def leaked(run: Run, scene: Scene) -> bool:
    return scene.secret.encode() in run.stderr + run.stdout


def test_fork_bomb_stops_at_the_process_limit(any_sandbox: Sandbox, hostile: BotMaker) -> None:
    run = attack(any_sandbox, hostile("fork-bomb"), timeout=3.0)
    forks = int(run.findings["fork_failed_after"])
    assert forks < LIMITS.processes
    assert run.usage.exit is Exit.KILLED  # it never answers; the referee killed it


@pytest.mark.parametrize("bot", ["memory-hog", "memory-hog-js"])
def test_memory_hog_is_killed_for_memory(any_sandbox: Sandbox, hostile: BotMaker, bot: str) -> None:
    # A hog reaches its ceiling within a second even on a loaded machine, and the kernel kills
    # it there: the interpreter's code pages are charged to whoever cached them first, so the
    # bot's group has almost nothing of its own to evict (no thrashing: no major faults).
    run = attack(any_sandbox, hostile(bot), timeout=20.0)
    allocated = int(run.findings["allocated_mb"])
    assert LIMITS.memory_mb - 64 <= allocated <= LIMITS.memory_mb
    if thrash_possible(any_sandbox, bot):
        # Held at its ceiling, never above it, until the kernel or the referee ended it.
        assert run.usage.exit in (Exit.OOM, Exit.KILLED), (run.usage, run.stderr[-500:])
        assert run.usage.max_rss_mb <= LIMITS.memory_mb + 1, run.usage
        return
    assert run.usage.exit is Exit.OOM, (run.usage, run.stderr[-500:])
    assert run.seconds < 10


def thrash_possible(sandbox: Sandbox, bot: str) -> bool:
    """Whether the kernel may reclaim the bot's own code pages at its ceiling instead of killing.

    A container reads its interpreter from its image layer, so those pages are charged to the
    container's own memory group: at the limit the kernel can keep evicting and re-reading them
    (slow, never above the limit) rather than OOM-kill at once. Seen with Node; Python's smaller
    interpreter is exposed the same way. Under bubblewrap the pages are the host's.
    """
    return sandbox.name == "docker" and bot.startswith("memory-hog")


def test_cpu_spin_hits_the_cpu_limit(any_sandbox: Sandbox, hostile: BotMaker) -> None:
    limits = Limits(memory_mb=128, cpu_seconds=1, processes=32, tmp_mb=16)
    # One CPU second may take many wall seconds on a busy machine: the deadline is generous.
    run = attack(any_sandbox, hostile("cpu-spin"), limits, timeout=30.0)
    assert run.usage.exit is Exit.CPU_LIMIT, run.usage


def test_disk_filler_is_capped_and_writes_nothing_on_the_host(
    any_sandbox: Sandbox, hostile: BotMaker, scene: Scene
) -> None:
    bot = hostile("disk-filler")
    before = scene.host_files()
    run = attack(any_sandbox, bot, timeout=20.0)
    assert run.returncode == 3, run.stderr[-500:]
    written_tmp = int(run.findings["fill /tmp"].split("MB")[0])
    assert written_tmp <= min(LIMITS.tmp_mb, LIMITS.file_size_mb)
    for place in ("/bot", "/kit", "/usr", "/", str(scene.host_dir)):
        assert run.findings[f"fill {place}"].startswith("0MB"), place
    assert scene.host_files() == before
    assert not list(Path("/tmp").glob(f"{scene.token}*"))


def test_network_is_unreachable(
    any_sandbox: Sandbox, hostile: BotMaker, loopback: Loopback
) -> None:
    run = attack(any_sandbox, hostile("network"))
    assert run.returncode == 3, run.stderr[-500:]
    assert "CONNECTED" not in run.findings.values()
    sockets = {k: v for k, v in run.findings.items() if k.startswith("socket ")}
    assert len(sockets) == 10, run.findings  # five families, each also with high bits set
    if any_sandbox.enforced(LIMITS)["socket_families"]:
        assert set(sockets.values()) == {"refused:97"}, sockets  # EAFNOSUPPORT
    time.sleep(0.3)  # the server thread would record a late connection
    assert loopback.connections == []


def test_snoop_reads_no_secret(any_sandbox: Sandbox, hostile: BotMaker, scene: Scene) -> None:
    run = attack(any_sandbox, hostile("snoop"))
    assert run.returncode == 3, run.stderr[-500:]
    assert "read /etc/shadow" in run.findings  # it really tried
    assert not leaked(run, scene)
    assert "ARENA_SECRET" not in run.findings["env"]
    # bubblewrap shows no /etc/passwd; a container shows its image's, never the host's.
    host_passwd = Path("/etc/passwd").read_bytes()[:4096].decode(errors="replace")
    assert run.findings.get("read /etc/passwd") != host_passwd


def test_escape_write_creates_nothing(
    any_sandbox: Sandbox, hostile: BotMaker, scene: Scene
) -> None:
    bot = hostile("escape-write")
    before = scene.host_files()
    run = attack(any_sandbox, bot)
    assert run.returncode == 3, run.stderr[-500:]
    assert "WROTE" not in run.findings.values(), run.findings
    assert scene.host_files() == before
    for place in ("/usr", "/etc", "/", "/var", "/home", "/usr/bin"):
        assert not (Path(place) / scene.token).exists()


def test_orphan_dies_with_the_bot(any_sandbox: Sandbox, hostile: BotMaker) -> None:
    run = attack(any_sandbox, hostile("orphan"))
    assert run.findings.get("orphan_started") == "1"
    assert run.returncode == 3


def test_stdout_flood_is_only_a_flood(any_sandbox: Sandbox, hostile: BotMaker) -> None:
    run = attack(any_sandbox, hostile("stdout-flood"), timeout=1.0)
    assert run.stdout_total > 256 * 1024
    assert run.usage.exit is Exit.KILLED


def test_sleeper_is_killed(any_sandbox: Sandbox, hostile: BotMaker) -> None:
    run = attack(any_sandbox, hostile("sleeper"), timeout=0.5)
    assert run.findings.get("sleeping") == "1"
    assert run.usage.exit is Exit.KILLED


# --- the same bots in real matches --------------------------------------------------------

MATCH_TIME = TimeControl(init_s=20.0, move_s=0.5, bank_s=0.0, max_strikes=2)
EXPECTED = {
    "fork-bomb": {SeatStatus.TIMEOUT},
    # OOM-killed is a crash (the kernel kills it within its move, see SLOW_MOVES).
    "memory-hog": {SeatStatus.CRASH},
    "memory-hog-js": {SeatStatus.CRASH},
    "cpu-spin": {SeatStatus.TIMEOUT},
    "disk-filler": {SeatStatus.CRASH},
    "network": {SeatStatus.CRASH},
    "snoop": {SeatStatus.CRASH},
    "escape-write": {SeatStatus.CRASH},
    "orphan": {SeatStatus.CRASH},
    "stdout-flood": {SeatStatus.OUTPUT_FLOOD},
    "sleeper": {SeatStatus.TIMEOUT},
}

# Filling 128 MB page by page takes a hog 0.2-0.9 s on a loaded two-core machine: with the
# usual half-second move it would sometimes time out before the kernel kills it.
SLOW_MOVES = {"memory-hog": 10.0, "memory-hog-js": 10.0}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_match(
    any_sandbox: Sandbox, hostile: BotMaker, scene: Scene, loopback: Loopback, name: str
) -> None:
    bot = load_bot(hostile(name))
    before = scene.host_files()
    slot = fresh_slot()
    game = make_game("svoi-kozyri", players=2, params={"deals": 1})
    outcome = run_match(
        game,
        [bot, BuiltinBot("greedy")],
        7,
        sandbox=any_sandbox,
        time_control=replace(MATCH_TIME, move_s=SLOW_MOVES.get(name, MATCH_TIME.move_s)),
        limits=LIMITS,
        slot_base=slot,
    )
    hostile_seat, other = outcome.seats
    assert hostile_seat.forfeited, hostile_seat
    expected = EXPECTED[name]
    if thrash_possible(any_sandbox, name):
        expected = expected | {SeatStatus.TIMEOUT}
    assert hostile_seat.status in expected, hostile_seat.message
    assert other.status is SeatStatus.OK
    assert outcome.result.ranking == (2, 1)
    assert survivors(any_sandbox, slot) == []
    assert scene.secret not in hostile_seat.stderr
    assert scene.host_files() == before
    assert loopback.connections == []
