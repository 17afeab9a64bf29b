"""The bubblewrap backend: the world a bot sees, its limits, and the messages when it cannot run."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

import sandbox
from sandbox import SandboxUnavailable, get_sandbox
from sandbox.base import Limits, Sandbox
from sandbox.bwrap import MISSING, UID_BASE, BwrapSandbox, reachable, resolve_interpreter
from sandbox.cgroups import ROOT_NAME, find_hierarchies
from sandbox.mountns import unneeded_mounts
from tests.sandbox.conftest import BotMaker
from tests.sandbox.driver import drive, fresh_slot, host_uid_processes, start, survivors

PROBE = r"""
import json, os, socket, sys
out = {"uid": os.getuid(), "env": dict(os.environ), "root": sorted(os.listdir("/")),
       "cwd": os.getcwd(), "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
       "hostname": socket.gethostname(), "etc": sorted(os.listdir("/etc")),
       "dev": sorted(os.listdir("/dev")), "sys_fs": os.listdir("/proc/sys/fs")}
out["devices"] = [len(open(f"/dev/{n}", "rb").read(4)) for n in ("zero", "urandom", "random")]
out["dev_writable"] = os.access("/dev", os.W_OK)
lines = open("/proc/self/status").read().splitlines()
status = dict(l.split(":\t", 1) for l in lines if ":\t" in l)
out["cap_eff"] = status["CapEff"].strip()
out["seccomp"] = status["Seccomp"].strip()
out["bot_writable"] = os.access("/bot", os.W_OK)
for family in ("AF_INET", "AF_UNIX"):
    try:
        socket.socket(getattr(socket, family)).close()
        out[family] = "ok"
    except OSError as exc:
        out[family] = exc.errno
with open("/tmp/x", "wb") as f:
    try:
        f.write(b"\0" * (9 << 20)); f.flush(); out["big_file"] = "ok"
    except OSError as exc:
        out["big_file"] = exc.errno
files = []
try:
    while True:
        files.append(open("/dev/null"))
except OSError as exc:
    out["open_files"] = len(files)
print(json.dumps(out), flush=True)
sys.stdin.read()
"""

LIMITS = Limits(memory_mb=256, processes=32, file_size_mb=8, open_files=32, tmp_mb=32)


def run_probe(box: Sandbox, folder: Path, slot: int, **env: str) -> dict[str, object]:
    (folder / "probe.py").write_text(PROBE)
    (folder / "probe.py").chmod(0o644)
    process = box.spawn(folder, ["python3", "probe.py"], LIMITS, env=env, slot=slot)
    try:
        line = os.read(process.stdout_fd, 1 << 20) if process.wait(0) is None else b""
        while line and not line.endswith(b"\n"):
            line += os.read(process.stdout_fd, 1 << 20)
        if os.geteuid() == 0:
            assert host_uid_processes(UID_BASE + slot), "the bot runs as its slot's host uid"
    finally:
        process.close()
    assert line, "no output from the probe"
    result: dict[str, object] = json.loads(line)
    return result


@pytest.fixture
def probe(bwrap_sandbox: Sandbox, open_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("ARENA_SECRET", "referee-only")
    return run_probe(bwrap_sandbox, open_dir, fresh_slot(), ARENA_SEAT="2")


def test_bot_sees_only_its_own_world(probe: dict) -> None:
    assert probe["cwd"] == "/bot"
    assert set(probe["root"]) <= {"bin", "bot", "dev", "etc", "kit", "lib", "lib32", "lib64"} | {
        "opt",  # /opt/rust where the host's Rust comes from rustup (sandbox.toolchains)
        "proc",
        "sbin",
        "tmp",
        "usr",
    }
    assert "passwd" not in probe["etc"]
    # Four devices that work and the links to the bot's descriptors: no terminal of any kind.
    links = ["fd", "stderr", "stdin", "stdout"]
    assert probe["dev"] == sorted(["null", "random", "shm", "urandom", "zero", *links])
    assert probe["devices"] == [4, 4, 4] and probe["dev_writable"] is False
    assert probe["sys_fs"] == []  # its host-wide counters, under one empty folder
    assert probe["pids"] == [1]  # no other process is visible, not even bubblewrap
    assert probe["bot_writable"] is False
    assert probe["uid"] == 1000
    assert probe["cap_eff"] == "0000000000000000"
    assert probe["hostname"] == "arena"


def test_environment_is_rebuilt(probe: dict) -> None:
    env = probe["env"]
    assert "ARENA_SECRET" not in env
    assert env["ARENA_SEAT"] == "2"
    assert env["PYTHONPATH"] == "/kit/python"
    assert env["NODE_PATH"] == "/kit/js"
    assert env["HOME"] == "/tmp"


def test_rlimits_hold(probe: dict) -> None:
    assert probe["big_file"] == 27  # EFBIG at file_size_mb
    assert isinstance(probe["open_files"], int)
    assert probe["open_files"] < LIMITS.open_files


def test_seccomp_refuses_internet_sockets(probe: dict, bwrap_sandbox: Sandbox) -> None:
    if not bwrap_sandbox.enforced(LIMITS)["seccomp"]:
        pytest.skip("libseccomp is not usable here")
    assert probe["seccomp"] == "2"
    assert probe["AF_INET"] == 97  # EAFNOSUPPORT from the filter (the empty netns would allow it)
    assert probe["AF_UNIX"] == "ok"


def test_without_seccomp_only_the_namespace_blocks(open_dir: Path, bwrap_sandbox: Sandbox) -> None:
    probe = run_probe(BwrapSandbox(seccomp=False), open_dir, fresh_slot())
    assert probe["AF_INET"] == "ok"
    assert probe["seccomp"] == "0"


def test_node_runs_with_kit_path(bwrap_sandbox: Sandbox, open_dir: Path) -> None:
    (open_dir / "bot.js").write_text("console.log(process.env.NODE_PATH + ' ' + process.version)")
    (open_dir / "bot.js").chmod(0o644)
    process = bwrap_sandbox.spawn(open_dir, ["node", "bot.js"], LIMITS, slot=fresh_slot())
    assert process.wait(20) == 0
    out = os.read(process.stdout_fd, 4096).decode()
    process.close()
    assert out.startswith("/kit/js v")


def test_a_slot_reuses_its_cgroups_emptied(bwrap_sandbox: Sandbox, open_dir: Path) -> None:
    enforced = bwrap_sandbox.enforced(LIMITS)
    if not enforced["memory"]:
        pytest.skip("no writable memory cgroup here")
    slot = fresh_slot()
    (open_dir / "idle.py").write_text("import sys; sys.stdin.read()")
    memory_root = find_hierarchies().v1.get("memory")
    seen = []
    for memory_mb in (256, 128):
        limits = replace(LIMITS, memory_mb=memory_mb)
        process = bwrap_sandbox.spawn(open_dir, ["python3", "idle.py"], limits, slot=slot)
        groups = list((memory_root / ROOT_NAME).glob(f"*slot{slot}")) if memory_root else []
        limit = int((groups[0] / "memory.limit_in_bytes").read_text()) if groups else None
        process.close()
        if memory_root is not None:
            assert [g.name for g in groups] == [f"slot{slot}"]
            assert limit == memory_mb << 20
            assert (groups[0] / "cgroup.procs").read_text() == ""  # nothing of the bot is left
            seen.append(groups[0])
        assert process.usage().detail["enforced"]["processes"] is True
    assert len(set(seen)) <= 1


def test_interpreters_resolve_to_paths_inside_the_sandbox() -> None:
    assert resolve_interpreter(["python", "bot.py"]) == (["/usr/bin/python3", "bot.py"], [])
    assert resolve_interpreter(["./bot", "-v"]) == (["/bot/bot", "-v"], [])
    argv, _extra = resolve_interpreter(["node", "bot.js"])
    assert os.path.isabs(argv[0]) and argv[1:] == ["bot.js"]
    with pytest.raises(sandbox.SandboxError):
        resolve_interpreter(["no-such-interpreter-here"])


def test_a_manifest_cannot_have_a_host_folder_mounted(
    bwrap_sandbox: Sandbox, open_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool on the worker's PATH outside ``/usr`` (here a home-like folder that also holds a
    secret) is not run, so its folder is never bound into the bot's world; only the offered
    interpreters may bring their install prefix."""
    home = open_dir / "home"
    (home / "bin").mkdir(parents=True)
    tool = home / "bin" / "sometool"
    tool.write_text("#!/bin/sh\ncat " + str(home / "secret.txt") + "\n")
    tool.chmod(0o755)
    (home / "secret.txt").write_text("HOST-SECRET")
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(sandbox.SandboxError, match="only node, nodejs"):
        resolve_interpreter(["sometool"])
    with pytest.raises(sandbox.SandboxError):
        bwrap_sandbox.spawn(open_dir, ["sometool"], Limits(), slot=fresh_slot())
    (home / "bin" / "node").symlink_to(tool)
    argv, extra = resolve_interpreter(["node"])
    assert (argv, extra) == ([str(tool)], [str(home)])  # an offered interpreter: its prefix


def test_missing_bubblewrap_says_how_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_BWRAP", "/nonexistent/bwrap")
    assert BwrapSandbox.available() == MISSING
    assert "apt-get install bubblewrap" in MISSING and "--sandbox none" in MISSING
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        get_sandbox("bwrap")
    assert sandbox.default_sandbox_name() is None


def test_backends_are_described(bwrap_sandbox: Sandbox) -> None:
    rows = {row["name"]: row for row in sandbox.describe_backends()}
    assert rows["none"]["isolates"] is False
    assert rows["bwrap"]["unavailable"] is None
    assert sandbox.default_sandbox_name() == "bwrap"


def test_unreachable_bot_folder_is_staged(bwrap_sandbox: Sandbox, tmp_path: Path) -> None:
    """pytest's tmp_path sits under 0700 folders: the slot's uid cannot walk to it."""
    if os.geteuid() != 0:
        pytest.skip("the uid switch happens only when the referee is root")
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_text("import os; print(os.listdir('.'))")
    slot = fresh_slot()
    assert not reachable(folder, UID_BASE + slot)
    process = bwrap_sandbox.spawn(folder, ["python3", "bot.py"], LIMITS, slot=slot)
    staged = vars(process)["_staged"]
    assert staged is not None and staged.is_dir()
    assert process.wait(20) == 0
    out = os.read(process.stdout_fd, 4096)
    process.close()
    assert out == b"['bot.py']\n"
    assert not staged.exists()


@pytest.mark.parametrize("name", ["sleeper", "orphan"])
def test_without_cgroups_nothing_survives(
    bwrap_sandbox: Sandbox, hostile: BotMaker, name: str
) -> None:
    """Even a zombie would count against the slot's process limit in the next match."""
    box = BwrapSandbox(cgroups=False)
    slot = fresh_slot()
    run = drive(start(box, hostile(name), LIMITS, slot), timeout=1.0)
    assert run.findings, run.stderr
    assert survivors(box, slot) == []


def test_only_mounts_unrelated_to_every_source_are_dropped() -> None:
    points = ("/", "/proc", "/sys", "/sys/fs/cgroup", "/dev", "/dev/pts", "/srv", "/srv/bots")
    sources = ("/usr", "/dev/null", "/srv/bots/seat1")
    # /sys goes with its cgroup mounts (one detach); /srv stays above a bot's folder.
    assert unneeded_mounts(points, sources) == ("/dev/pts", "/sys")


def _mount_points(pid: int | str) -> list[str]:
    return [line.split()[4] for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines()]


def _ready(box: Sandbox, folder: Path) -> list[str]:
    """Start a bot in ``folder``; the mount points of the namespace bubblewrap started in."""
    (folder / "bot.py").write_text("import sys; print('ready', flush=True); sys.stdin.read()")
    (folder / "bot.py").chmod(0o644)
    process = box.spawn(folder, ["python3", "bot.py"], LIMITS, slot=fresh_slot())
    try:
        assert os.read(process.stdout_fd, 100) == b"ready\n", os.read(process.stderr_fd, 4096)
        assert process.pid is not None
        return _mount_points(process.pid)
    finally:
        process.close()


class LeanBwrap(BwrapSandbox):
    """Bubblewrap started in the lean mount namespace, whatever ``ARENA_LEAN_MOUNTS`` says."""

    lean_mounts = True


@pytest.fixture
def lean_sandbox(bwrap_sandbox: Sandbox) -> Sandbox:
    return LeanBwrap()


def test_bubblewrap_starts_without_the_host_mounts_no_bot_sees(
    lean_sandbox: Sandbox, open_dir: Path
) -> None:
    """The host's own table is left as it was; bubblewrap's starting one lacks ``/sys``."""
    if os.geteuid() != 0:
        pytest.skip("only root starts bubblewrap in a lean copy of its mount namespace")
    before = Path("/proc/self/mountinfo").read_text()
    seen = _ready(lean_sandbox, open_dir)
    assert "/sys" not in seen and "/sys/fs/cgroup" not in seen
    assert {"/", "/proc", "/dev"} <= set(seen)
    assert Path("/proc/self/mountinfo").read_text() == before


def test_a_bot_folder_on_a_new_mount_still_reaches_the_bot(
    lean_sandbox: Sandbox, open_dir: Path
) -> None:
    """A mount made after the lean copy: the copy is made again, keeping the mount that holds
    the bot's folder."""
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    _ready(lean_sandbox, open_dir)
    tmpfs = ["mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "arena", str(open_dir)]
    subprocess.run(tmpfs, check=True)
    try:
        seen = _ready(lean_sandbox, open_dir)
        assert str(open_dir) in seen and "/sys" not in seen
    finally:
        subprocess.run(["umount", str(open_dir)], check=True)
    assert "/sys" not in _ready(lean_sandbox, open_dir)
