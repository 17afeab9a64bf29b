"""Build steps: a bot's ``build`` command, run in the sandbox on a private writable copy.

The bot folder itself is never written. ``build_copy`` copies it into a fresh private staging
folder, hands the copy to the uid the sandbox runs the build as, runs the command there with the
folder mounted read-write (``Sandbox.spawn(writable_bot_dir=True)``; everything else as for a
match: same limits, no network, the rest of the world read-only) and stops it at its time limit.
Only a build that exits with status 0 in time, leaving ``bot.toml`` as it was, leaves anything:
its copy, sealed (owned by the referee, read-only for everyone else, special files and links
leading out of the folder removed), is moved to the target. A failed or stopped build leaves
nothing behind, and the log says why.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sandbox.base import BotCommandError, BotProcess, Limits, Sandbox, SandboxError

KEPT = ("bot.toml",)
MAX_LINK_HOPS = 40  # as the kernel: more links than this in one path is a loop
"""Files a build must leave as they were: the service read the manifest before the build."""

LOG_TAIL = 20_000
"""Characters of build output kept for the log (the end, where compilers put the errors)."""

MAX_DEPTH = 64
"""Folders a bot folder (before or after its build) may nest; deeper trees are refused."""
MAX_FILES = 20_000
"""Files, folders and links a built folder may hold."""
MAX_BYTES = 256 << 20
"""Bytes a built folder may hold."""


class TreeTooLarge(SandboxError):
    """A folder nests too deep or holds too much to be a bot (the bot's fault)."""


@dataclass(frozen=True)
class BuildResult:
    """How a build step ended; ``log`` holds the command, its output and a verdict line."""

    ok: bool
    log: str
    returncode: int | None = None
    timed_out: bool = False


def build_limits(timeout_s: float, base: Limits | None = None) -> Limits:
    """``base`` (default: the match defaults) with CPU seconds just above the time limit."""
    return replace(base or Limits(), cpu_seconds=int(timeout_s) + 1)


def build_copy(
    sandbox: Sandbox,
    source: Path,
    target: Path,
    command: Sequence[str],
    *,
    timeout_s: float,
    limits: Limits | None = None,
    slot: int = 0,
    kept: Sequence[str] = KEPT,
) -> BuildResult:
    """Build a copy of ``source`` with ``command``; on success the built tree is at ``target``.

    ``target`` must not exist yet; it is created only if the build succeeds. A build that
    changes one of the ``kept`` files fails. ``SandboxError`` if the sandbox cannot run the
    build at all (see ``run_build``).
    """
    if target.exists():
        raise SandboxError(f"build target {target} already exists")
    try:
        check_tree(source)
    except TreeTooLarge as exc:
        return BuildResult(False, f"the bot folder is refused: {exc}\n")
    with staging_folder() as staging:
        workdir = writable_copy(source, staging, sandbox.writer_uid(slot))
        result = run_build(
            sandbox, workdir, command, timeout_s, build_limits(timeout_s, limits), slot
        )
        if not result.ok:
            return result
        try:
            return _keep(result, source, workdir, target, kept)
        except TreeTooLarge as exc:
            return BuildResult(False, f"{result.log}the build is refused: {exc}\n")


@contextlib.contextmanager
def staging_folder() -> Iterator[Path]:
    """A fresh private folder for one build, removed whatever happens (any depth, any size).

    Where the referee may mount (root), the folder is a tmpfs of its own holding at most
    ``MAX_BYTES`` and ``MAX_FILES``: a build can fill neither the host's disk nor its inodes
    (``ENOSPC`` inside), its pages count against the build's memory limit, and removing it
    is one unmount. Elsewhere it is a plain folder, checked when the build ends.
    """
    staging = Path(tempfile.mkdtemp(prefix="arena-build-"))
    mounted = _mount_tmpfs(staging)
    try:
        yield staging
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(staging)], capture_output=True, check=False)
        remove_tree(staging)


def _mount_tmpfs(folder: Path) -> bool:
    """Mount a size- and inode-capped tmpfs on ``folder``; False where that is not allowed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    # The copy of the bot and the tmpfs's own root count as well: a little room on top.
    options = f"size={MAX_BYTES + (16 << 20)},nr_inodes={MAX_FILES + 64},mode=0711"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "arena-build", str(folder)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def remove_tree(folder: Path) -> None:
    """Remove ``folder`` and everything in it, at any depth, never following a link.

    ``rm`` walks a tree without recursion and without the path length limit (Python's
    ``shutil.rmtree`` recurses: a tree about 1,000 folders deep raises ``RecursionError``).
    """
    if not os.path.lexists(folder):
        return
    rm = shutil.which("rm") or "/bin/rm"
    subprocess.run(
        [rm, "-rf", "--one-file-system", "--", str(folder)], capture_output=True, check=False
    )


def _keep(
    result: BuildResult, source: Path, workdir: Path, target: Path, kept: Sequence[str]
) -> BuildResult:
    """Check, seal and move a successful build's tree to ``target``; the final result."""
    changed = [name for name in kept if not _same_file(source / name, workdir / name)]
    if changed:
        note = f"the build changed {', '.join(changed)}, which it must leave as it was\n"
        return BuildResult(False, result.log + note, result.returncode)
    removed = seal(workdir)
    shutil.copytree(workdir, target, symlinks=True)  # depth checked by ``seal``
    if removed:
        return BuildResult(True, result.log + _removed_note(removed), result.returncode)
    return result


def _same_file(before: Path, after: Path) -> bool:
    """True if ``after`` is what ``before`` was: both absent, or plain files with equal bytes."""
    if not before.is_file() or before.is_symlink():
        return not os.path.lexists(after)
    regular = stat.S_ISREG(after.lstat().st_mode) if os.path.lexists(after) else False
    return regular and after.read_bytes() == before.read_bytes()


def writable_copy(source: Path, staging: Path, uid: int | None) -> Path:
    """A copy of ``source`` inside ``staging`` that ``uid`` (None: the referee's) may write.

    ``staging`` may be walked through by any uid (it has to be, to mount the copy) but not
    listed; the copy itself belongs to ``uid`` alone.
    """
    staging.chmod(0o711)
    workdir = staging / "bot"
    shutil.copytree(source, workdir, symlinks=True)
    for path in _tree(workdir):
        if not path.is_symlink():
            path.chmod(0o700 if path.is_dir() or os.access(path, os.X_OK) else 0o600)
        if uid is not None and os.geteuid() == 0:
            os.lchown(path, uid, uid)
    return workdir


def seal(folder: Path) -> list[str]:
    """Make a built tree the referee's and read-only for bots; remove what could mislead.

    Removed, and returned as relative paths: anything but plain files, folders and links
    (pipes, sockets), and every link that does not lead to a file or folder inside the folder
    (``leads_inside``): on the host such a link would lead to the host's files.
    """
    removed: list[str] = []
    owner = os.geteuid()
    for path in _tree(folder):
        mode = path.lstat().st_mode
        plain = stat.S_ISREG(mode) or stat.S_ISDIR(mode)
        if not plain and not stat.S_ISLNK(mode):
            path.unlink()
            removed.append(str(path.relative_to(folder)))
            continue
        if owner == 0:
            os.lchown(path, 0, 0)
        if plain:
            executable = stat.S_ISDIR(mode) or mode & stat.S_IXUSR
            path.chmod(0o755 if executable else 0o644)
    return removed + _remove_escaping_links(folder)


def _remove_escaping_links(folder: Path) -> list[str]:
    """Remove every link of ``folder`` that does not lead inside it; again until none is left
    (removing a link can leave another one that led through it dangling)."""
    removed: list[str] = []
    while True:
        links = [p for p in _tree(folder) if p.is_symlink()]
        bad = [p for p in links if not leads_inside(p, folder)]
        if not bad:
            return removed
        for path in bad:
            path.unlink()
            removed.append(str(path.relative_to(folder)))


def leads_inside(link: Path, folder: Path) -> bool:
    """True if ``link`` (a path inside ``folder``) ends at a file or folder inside ``folder``.

    The path is resolved one name at a time, as the kernel would, through any chain of links
    at any depth, and every step must stay inside ``folder``: a link whose text is absolute, a
    ``..`` above the folder, a loop (more than ``MAX_LINK_HOPS`` links), a name that does not
    exist or a path through a file is refused. Nothing outside ``folder`` is ever looked at, so
    the answer is the same wherever the folder is mounted.
    """
    done: list[str] = []  # resolved names (real folders) from ``folder`` down
    todo = list(reversed(link.relative_to(folder).parts))
    hops = 0
    while todo:
        name = todo.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if not done:
                return False
            done.pop()
            continue
        try:
            mode = folder.joinpath(*done, name).lstat().st_mode
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            hops += 1
            target = os.readlink(folder.joinpath(*done, name))
            if hops > MAX_LINK_HOPS or os.path.isabs(target):
                return False
            todo.extend(reversed(target.split("/")))
        elif stat.S_ISDIR(mode) or (stat.S_ISREG(mode) and not todo):
            done.append(name)
        else:
            return False
    return True


def run_build(
    sandbox: Sandbox,
    workdir: Path,
    command: Sequence[str],
    timeout_s: float,
    limits: Limits,
    slot: int = 0,
) -> BuildResult:
    """Run ``command`` in ``workdir`` (mounted writable) for at most ``timeout_s`` seconds.

    A command that cannot start because of itself (``BotCommandError``: not found, not
    executable) is a failed build; any other ``SandboxError`` (the sandbox failing to start
    anything) propagates: the platform's fault, not the bot's.
    """
    header = f"$ {' '.join(command)}\n"
    try:
        process = sandbox.spawn(workdir, command, limits, slot=slot, writable_bot_dir=True)
    except BotCommandError as exc:
        return BuildResult(False, f"{header}the build could not start: {exc}\n")
    _end_input(process)
    output = bytearray()
    try:
        code = _collect(process, output, time.monotonic() + timeout_s)
    finally:
        process.close()
    text = header + output.decode(errors="replace")[-LOG_TAIL:]
    if not text.endswith("\n"):
        text += "\n"
    if code is None:
        verdict = f"build stopped: still running after the {timeout_s:g} s build time limit"
        return BuildResult(False, f"{text}{verdict}\n", None, timed_out=True)
    return BuildResult(code == 0, f"{text}exit status: {code}\n", code)


def _collect(process: BotProcess, output: bytearray, deadline: float) -> int | None:
    """Read stdout and stderr until both end, then wait; None if the deadline came first."""
    fds = [process.stdout_fd, process.stderr_fd]
    while fds and time.monotonic() < deadline:
        ready, _, _ = select.select(fds, [], [], max(0.0, min(0.5, deadline - time.monotonic())))
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                output += chunk
                del output[: max(0, len(output) - 4 * LOG_TAIL)]
            else:
                fds.remove(fd)
    code = process.wait(max(0.0, deadline - time.monotonic())) if not fds else None
    if code is None:
        process.kill()
    return code


def _end_input(process: BotProcess) -> None:
    """Give the build an empty stdin, keeping ``stdin_fd`` open for ``close`` to release.

    Closing it here would let ``close`` close the same number again later, by then perhaps
    another file's; replacing it with an empty input also ends the Docker backend's pipe.
    """
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, process.stdin_fd)
    finally:
        os.close(null)


def _tree(folder: Path) -> list[Path]:
    """``folder`` and everything under it, never following a symbolic link.

    Walked with a stack, not by recursion; ``TreeTooLarge`` past ``MAX_DEPTH`` levels,
    ``MAX_FILES`` entries or ``MAX_BYTES`` of files.
    """
    paths = [folder]
    todo = [(folder, 0)]
    size = 0
    while todo:
        path, depth = todo.pop()
        if depth >= MAX_DEPTH:
            raise TreeTooLarge(f"folders nested more than {MAX_DEPTH} deep (at {path})")
        with os.scandir(path) as entries:
            for entry in entries:
                child = Path(entry.path)
                paths.append(child)
                info = entry.stat(follow_symlinks=False)
                size += info.st_size if stat.S_ISREG(info.st_mode) else 0
                if entry.is_dir(follow_symlinks=False):
                    todo.append((child, depth + 1))
        if len(paths) > MAX_FILES + 1:
            raise TreeTooLarge(f"more than {MAX_FILES} files and folders")
        if size > MAX_BYTES:
            raise TreeTooLarge(f"more than {MAX_BYTES >> 20} MiB of files")
    return paths


def check_tree(folder: Path) -> None:
    """``TreeTooLarge`` if ``folder`` nests deeper, or holds more, than a bot folder may."""
    _tree(folder)


def _removed_note(removed: list[str]) -> str:
    listed = ", ".join(sorted(removed))
    return f"removed from the built folder (special files, links not leading inside): {listed}\n"


def build_command(bot_dir: Path) -> list[str] | None:
    """The ``build`` command of the ``bot.toml`` in ``bot_dir`` (None if it has none)."""
    data = tomllib.loads((bot_dir / "bot.toml").read_text(encoding="utf-8"))
    command = data.get("build")
    if command is None:
        return None
    if not isinstance(command, list) or not all(isinstance(p, str) and p for p in command):
        raise SandboxError(f"{bot_dir / 'bot.toml'}: 'build' must be a list of strings")
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sandbox.build BOT_DIR OUT_DIR``: build a bot as the platform does."""
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.build",
        description="Build a copy of a bot folder in the sandbox, as the platform does on upload.",
    )
    parser.add_argument("bot_dir", type=Path)
    parser.add_argument("out_dir", type=Path, help="where the built folder goes (must not exist)")
    parser.add_argument("--sandbox", default="bwrap", help="bwrap (default), docker or none")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")
    args = parser.parse_args(argv)
    from sandbox import get_sandbox

    try:
        command = build_command(args.bot_dir)
        if command is None:
            print(f"{args.bot_dir}: bot.toml has no build command", file=sys.stderr)
            return 2
        result = build_copy(
            get_sandbox(args.sandbox), args.bot_dir, args.out_dir, command, timeout_s=args.timeout
        )
    except (OSError, ValueError, SandboxError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.log, end="")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
