"""Freezing: a bot that is not to move runs nothing, under every isolating backend.

The ``ponder`` hostile bot keeps a thread and a detached process (a session of its own, outside
the bot's process group) counting at all times. Frozen, none of its processes may use any CPU
(checked on the host, in ``/proc``) and its counters may not move between its answer and its
next request (checked by the bot itself); a frozen bot is still killed whole; and in a match the
referee freezes it during the other seat's turns. Each check is paired with the same bot left
running, which shows that the check sees a bot that ponders.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import sandbox.bwrap
from arena.bots import load_bot
from arena.games import make_game
from arena.runner import TimeControl, run_match
from sandbox import get_sandbox
from sandbox.base import BotProcess, Exit, Limits, Sandbox
from sandbox.bwrap import UID_BASE as BWRAP_UID_BASE
from sandbox.bwrap import BwrapSandbox
from sandbox.cgroups import PILOT, ROOT_NAME, Cgroup, CgroupLimits, find_hierarchies, sweep_stale
from sandbox.docker import UID_BASE as DOCKER_UID_BASE
from sandbox.docker import DockerSandbox
from tests.sandbox.conftest import REPO, BotMaker, Scene
from tests.sandbox.driver import HELLO, REQUEST, fresh_slot, host_uid_processes, start, survivors

LIMITS = Limits(memory_mb=256, cpu_seconds=120, processes=32, tmp_mb=16)
WAIT_S = 90.0
"""Bound on every wait for a condition (the machine may be very busy)."""
IDLE_S = 1.5
"""How long a bot is left alone between an answer and the next request."""


@pytest.fixture(params=["bwrap", "bwrap-signals", "docker"])
def freezing(request: pytest.FixtureRequest) -> Sandbox:
    """Each way a bot is frozen: bwrap's cgroup freezer, bwrap's stop signals (no cgroups),
    and Docker's cgroup freezer."""
    if request.param == "docker":
        sandbox: Sandbox = request.getfixturevalue("docker_sandbox")
        return sandbox
    request.getfixturevalue("bwrap_sandbox")  # skips (or fails) where bwrap cannot run
    return BwrapSandbox(cgroups=request.param == "bwrap")


def unfrozen(sandbox: Sandbox) -> Sandbox:
    """The same backend with freezing off (what the control runs use)."""
    if sandbox.name == "docker":
        return DockerSandbox(freeze=False)
    assert isinstance(sandbox, BwrapSandbox)
    return BwrapSandbox(cgroups=sandbox.use_cgroups, freeze=False)


@dataclass
class Talk:
    """A bot driven by hand: messages in, answer lines and stderr findings out."""

    process: BotProcess
    stderr: bytearray = field(default_factory=bytearray)
    stdout: bytearray = field(default_factory=bytearray)

    def send(self, message: dict[str, object]) -> None:
        os.write(self.process.stdin_fd, json.dumps(message).encode() + b"\n")

    def answer(self) -> dict[str, object]:
        """The bot's next stdout line (stderr is collected meanwhile)."""
        deadline = time.monotonic() + WAIT_S
        while b"\n" not in self.stdout:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer; stderr: {bytes(self.stderr[-2000:])!r}"
            fds = [self.process.stdout_fd, self.process.stderr_fd]
            for fd in select.select(fds, [], [], left)[0]:
                data = os.read(fd, 65536)
                assert data or fd == self.process.stderr_fd, "the bot ended"
                (self.stdout if fd == self.process.stdout_fd else self.stderr).extend(data)
        line, _, rest = bytes(self.stdout).partition(b"\n")
        self.stdout[:] = rest
        answer: dict[str, object] = json.loads(line)
        return answer

    def idle_reports(self) -> list[tuple[int, int]]:
        """Every ``idle`` finding so far: how far the thread and the process counted."""
        found = []
        for line in self.stderr.decode(errors="replace").splitlines():
            if line.startswith("HOSTILE idle\t"):
                thread, process, _wall = line.partition("\t")[2].split()
                found.append((int(thread), int(process)))
        return found

    def turn(self, request_id: int) -> None:
        self.send(dict(REQUEST, id=request_id))
        assert self.answer()["id"] == request_id


def bot_uid(sandbox: Sandbox, slot: int) -> int:
    return (BWRAP_UID_BASE if sandbox.name == "bwrap" else DOCKER_UID_BASE) + slot


def cpu_ticks(pids: list[int]) -> int:
    """User and system time of ``pids`` so far, in clock ticks (those that ended count 0)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.1)


def still_for(pids: list[int], seconds: float) -> bool:
    """True if ``pids`` used no CPU at all over ``seconds``."""
    before = cpu_ticks(pids)
    time.sleep(seconds)
    return cpu_ticks(pids) == before


@pytest.fixture
def ponder(freezing: Sandbox, hostile: BotMaker) -> Iterator[tuple[Talk, int]]:
    """The ``ponder`` bot under ``freezing``, past its hello; its slot."""
    if os.geteuid() != 0:
        pytest.skip("the bot's processes are found on the host by their uid (needs root)")
    slot = fresh_slot()
    talk = Talk(start(freezing, hostile("ponder"), LIMITS, slot))
    try:
        talk.send(HELLO)
        assert talk.answer()["type"] == "ready"
        yield talk, slot
    finally:
        talk.process.close()


def test_a_frozen_bot_uses_no_cpu_and_counts_nothing(
    freezing: Sandbox, ponder: tuple[Talk, int]
) -> None:
    talk, slot = ponder
    pids = host_uid_processes(bot_uid(freezing, slot))
    assert len(pids) >= 2  # the bot and its detached counting process at least
    assert not still_for(pids, 0.5), "the bot should be counting while it runs"
    talk.turn(1)
    talk.process.freeze()
    wait_for(lambda: still_for(pids, 0.3), "the frozen bot to stop using CPU")
    assert still_for(pids, IDLE_S)
    talk.process.thaw()
    talk.turn(2)
    frozen = talk.idle_reports()[-1]
    # The same wait with the bot left running: its counters move.
    talk.turn(3)
    time.sleep(IDLE_S + 0.3)
    talk.turn(4)
    running = talk.idle_reports()[-1]
    # Frozen, it counts only in the instants around the freeze and the thaw.
    assert frozen[0] * 4 < running[0], (frozen, running)
    assert frozen[1] * 4 < running[1], (frozen, running)


def test_a_frozen_bot_reads_stopped_only_once_it_has_stopped(
    freezing: Sandbox, ponder: tuple[Talk, int]
) -> None:
    talk, slot = ponder
    pids = host_uid_processes(bot_uid(freezing, slot))
    talk.turn(1)
    assert talk.process.is_frozen()  # not frozen at all: nothing to wait for
    talk.process.freeze()
    wait_for(talk.process.is_frozen, "the frozen bot to read stopped")
    assert still_for(pids, IDLE_S)  # reads stopped: uses no CPU at all
    talk.process.thaw()
    talk.turn(2)


def context_switches(pid: int) -> int:
    """How often ``pid``'s main thread has left its core so far."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return sum(int(line.split()[1]) for line in lines if "ctxt_switches:" in line)


def asleep(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "S"


@pytest.mark.parametrize("stdin_socket", [True, False], ids=["socket", "pipe"])
def test_a_bot_waiting_for_its_request_is_frozen_where_it_sleeps(
    bwrap_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, stdin_socket: bool
) -> None:
    """Under bwrap a bot asleep in ``read`` on its stdin (a Unix socket) is frozen and thawed
    without ever running: it reads stopped at the first check and leaves its sleep not once.
    The control gives it a stdin pipe, as before: then every freeze wakes it to stop."""
    if os.geteuid() != 0:
        pytest.skip("the bot's process is found on the host by its uid (needs root)")
    monkeypatch.setattr(sandbox.bwrap, "STDIN_SOCKET", stdin_socket)
    box, slot, cycles = BwrapSandbox(), fresh_slot(), 20
    talk = Talk(start(box, REPO / "sample_bots" / "python" / "any-game-random", LIMITS, slot))
    try:
        talk.send(HELLO)
        assert talk.answer()["type"] == "ready"
        talk.turn(1)
        (pid,) = set(host_uid_processes(bot_uid(box, slot))) - {talk.process.pid}  # the bot
        wait_for(lambda: asleep(pid), "the bot to wait for its next request")
        before, at_once = context_switches(pid), 0
        for _ in range(cycles):
            talk.process.freeze()
            at_once += talk.process.is_frozen()
            wait_for(talk.process.is_frozen, "the frozen bot to read stopped")
            talk.process.thaw()
        woken = context_switches(pid) - before
        talk.turn(2)  # and it still plays
    finally:
        talk.process.close()
    if stdin_socket:
        assert (woken, at_once) == (0, cycles)
    else:
        assert woken >= cycles  # woken to stop (and again by the thaw), every time


def test_a_frozen_bot_is_killed_whole(freezing: Sandbox, ponder: tuple[Talk, int]) -> None:
    talk, slot = ponder
    pids = host_uid_processes(bot_uid(freezing, slot))
    talk.turn(1)
    talk.process.freeze()
    wait_for(lambda: still_for(pids, 0.3), "the frozen bot to stop using CPU")
    talk.process.close()
    assert talk.process.usage().exit is Exit.KILLED
    assert survivors(freezing, slot) == []
    assert host_uid_processes(bot_uid(freezing, slot)) == []


def test_each_backend_reports_whether_it_freezes(freezing: Sandbox) -> None:
    assert freezing.enforced(LIMITS)["freeze"] is True
    assert unfrozen(freezing).enforced(LIMITS)["freeze"] is False
    assert get_sandbox("none").enforced(LIMITS)["freeze"] is False


def test_the_freezer_in_use_is_named(freezing: Sandbox, hostile: BotMaker) -> None:
    bot = hostile("ponder")
    process = start(freezing, bot, LIMITS, fresh_slot())
    try:
        expected = {"docker": {"cgroup"}, "bwrap": {"cgroup", "signals"}}[freezing.name]
        if isinstance(freezing, BwrapSandbox) and not freezing.use_cgroups:
            expected = {"signals"}
        assert process.freezer in expected
    finally:
        process.close()
    process = start(unfrozen(freezing), bot, LIMITS, fresh_slot())
    process.close()
    assert process.freezer == "none"


# --- in a match ---------------------------------------------------------------------------------

SLOW_BOT = """\
import json, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
    elif msg["type"] == "request":
        time.sleep(0.2)
        print(json.dumps({"type": "action", "id": msg["id"], "index": 0}), flush=True)
    elif msg["type"] == "shutdown":
        break
"""


def slow_bot(root: Path) -> Path:
    """A bot that thinks 0.2 s over every move (the seat whose turns the other waits out)."""
    folder = root / "bots" / "slow"
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(SLOW_BOT)
    (folder / "bot.toml").write_text(
        'name = "slow"\ngames = ["svara"]\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
    )
    for path in [folder, *folder.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def idle_counts(sandbox: Sandbox, ponder_bot: Path, slow: Path) -> tuple[int, int]:
    """Play Svara with ``ponder`` in seat 0; how far it counted between its turns."""
    game = make_game("svara", players=2, params={"deals": 8})
    slot = fresh_slot()
    fresh_slot()  # seat 1's slot
    tc = TimeControl(init_s=60, move_s=10, bank_s=60)
    seats = [load_bot(ponder_bot), load_bot(slow)]
    outcome = run_match(game, seats, 7, sandbox=sandbox, time_control=tc, slot_base=slot)
    assert [s.status.value for s in outcome.seats] == ["ok", "ok"], outcome.seats
    assert survivors(sandbox, slot) == [] and survivors(sandbox, slot + 1) == []
    idle = [line for line in outcome.seats[0].stderr.splitlines() if "HOSTILE idle" in line]
    assert len(idle) >= 3, outcome.seats[0].stderr[-2000:]
    counts = [line.partition("\t")[2].split() for line in idle]
    return sum(int(c[0]) for c in counts), sum(int(c[1]) for c in counts)


@pytest.mark.slow
def test_the_referee_freezes_a_bot_during_the_other_seats_turns(
    any_sandbox: Sandbox, hostile: BotMaker, scene: Scene
) -> None:
    ponder_bot, slow = hostile("ponder"), slow_bot(scene.root)
    frozen = idle_counts(any_sandbox, ponder_bot, slow)
    running = idle_counts(unfrozen(any_sandbox), ponder_bot, slow)
    assert frozen[0] * 4 < running[0], (frozen, running)
    assert frozen[1] * 4 < running[1], (frozen, running)


# --- the cgroup freezer itself ------------------------------------------------------------------


def freezer_hierarchy() -> Path:
    """The v1 freezer hierarchy's root of our groups, or a skip."""
    mount = find_hierarchies().v1.get("freezer")
    if mount is None or not os.access(mount, os.W_OK):
        pytest.skip("no writable v1 freezer hierarchy here")
    return mount / ROOT_NAME


def sleepers(group: Cgroup) -> subprocess.Popen[bytes]:
    """A shell with two sleeping children, all in ``group``; waits until all three are in."""
    child = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 600 & sleep 600 & wait"], preexec_fn=group.attach_self
    )
    wait_for(lambda: len(group.members()) >= 3, "the sleepers to start")
    return child


def test_killing_a_frozen_group_leaves_no_member() -> None:
    freezer_hierarchy()
    group = Cgroup(f"{os.getpid()}-freeze-test", CgroupLimits(freezer=True))
    assert group.freezer is not None
    child = sleepers(group)
    try:
        group.freezer.freeze()
        wait_for(group.freezer.settled, "the group to freeze")
        group.kill_all()
        assert group.members() == set()
        assert child.wait(WAIT_S) == -9
    finally:
        child.kill()
        child.wait()
        group.remove()


def test_a_group_left_frozen_by_a_dead_referee_is_swept() -> None:
    root = freezer_hierarchy()
    dead = subprocess.Popen(["true"])
    dead.wait()
    group = Cgroup(f"{dead.pid}-freeze-test", CgroupLimits(freezer=True))
    assert group.freezer is not None
    child = sleepers(group)
    try:
        group.freezer.freeze()
        wait_for(group.freezer.settled, "the group to freeze")
        for pid in group.members():
            os.kill(pid, signal.SIGKILL)  # what bubblewrap's die-with-parent sends: held
        assert len(group.members()) == 3  # a v1 freezer holds them until it thaws
        group.freezer.close()

        def swept() -> bool:
            sweep_stale()
            return not (root / group.name).exists()

        wait_for(swept, "the sweep to thaw and remove the group")
        assert child.wait(WAIT_S) == -9
    finally:
        child.kill()
        child.wait()


def test_one_empty_group_stays_frozen_while_the_referee_runs() -> None:
    root = freezer_hierarchy()
    group = Cgroup(f"{os.getpid()}-freeze-test", CgroupLimits(freezer=True))
    try:
        pilot = root / f"{os.getpid()}-{PILOT}"
        assert (pilot / "freezer.state").read_text().strip() == "FROZEN"
        assert (pilot / "cgroup.procs").read_text() == ""
    finally:
        group.remove()
