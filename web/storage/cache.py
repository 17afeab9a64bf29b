"""A bounded local cache of bot trees, keyed by the SHA-256 of their packed form.

A worker that plays or builds a version fetched from an object store needs its files in a local
folder (the sandbox mounts it read-only). ``TreeCache.use(digest, fetch)`` gives that folder:

- **never a damaged tree**: the packed bytes must hash to ``digest``, and are unpacked into a
  temporary folder that is renamed into place only when whole; a tree's folder exists only
  complete;
- **concurrent fetches are safe**: processes and threads fetching one tree take turns on its
  ``<digest>.fetch`` lock; the second finds it there and fetches nothing;
- **bounded**: after a fetch, trees are removed, least recently used first, until the sizes add
  up to at most ``max_bytes``. A tree in use is never removed: every user holds a shared lock on
  its ``<digest>.use`` file for as long as it uses it, and eviction only takes a tree whose lock
  it gets exclusively at once. Lock files are kept (removing one would let two processes lock
  different files of the same name).

Layout under the cache root: ``trees/<digest>/`` (the files), ``trees/<digest>.size`` (bytes, in
the accounting), ``trees/<digest>.use`` and ``.fetch`` (locks; the ``.use`` file's time is the
last use), ``tmp/`` (unpacking in progress).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from web.storage import StorageUnavailable

STALE_TMP = 3600.0
"""Seconds after which a leftover of an interrupted unpacking is removed."""


def pack(folder: Path) -> bytes:
    """The tree ``folder`` as gzip-compressed tar bytes (what ``TreeCache`` unpacks)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for child in sorted(folder.iterdir()):
            tar.add(child, arcname=child.name)
    return buf.getvalue()


def _member_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """Unpack as the ``data`` filter does (nothing outside the folder, no special files, no
    owners), except that a symbolic link may point anywhere: a built tree may link to the
    sandbox's own interpreter (``venv/bin/python -> /usr/bin/python3``). A link is never
    followed by a later member: the ``data`` check resolves every member's real path."""
    if member.issym():
        checked = tarfile.tar_filter(member, dest)
        unowned: dict[str, Any] = dict.fromkeys(("uid", "gid", "uname", "gname", "mode"))
        return checked.replace(**unowned, deep=False)
    return tarfile.data_filter(member, dest)


def _extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack ``tar`` into ``dest`` through ``_member_filter``; where Python has no extraction
    filters (before 3.11.4, e.g. Debian 12's 3.11.2, the platform image's), through
    ``_checked_members`` instead."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter=_member_filter)
    else:
        tar.extractall(dest, members=_checked_members(tar))


class UnsafeMember(tarfile.TarError):
    """A member that would land outside the folder, behind a link, or is a special file."""


def _checked_members(tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The members of ``tar`` held to what ``_member_filter`` allows, checked before any is
    unpacked: no absolute name and no ``..``, nothing under a symbolic link of the archive
    (a link is never followed), hard links to members only, no special files; no owners, no
    set-id bits and no write bits for others."""
    links: set[tuple[str, ...]] = set()
    members = tar.getmembers()
    for member in members:
        parts = _safe_parts(member.name)
        if member.islnk():
            _safe_parts(member.linkname, links)
        if any(parts[:i] in links for i in range(1, len(parts) + 1)):
            raise UnsafeMember(f"{member.name!r} lies behind a link of the archive")
        if member.issym():
            links.add(parts)
        elif not (member.isfile() or member.isdir() or member.islnk()):
            raise UnsafeMember(f"{member.name!r} is a special file")
        member.uid, member.gid, member.uname, member.gname = os.geteuid(), os.getegid(), "", ""
        member.mode = (member.mode & 0o755) | (0o700 if member.isdir() else 0o600)
    return members


def _safe_parts(name: str, links: Collection[tuple[str, ...]] = ()) -> tuple[str, ...]:
    """The parts of a member's path, refused if it leaves the folder or passes a link."""
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if name.startswith("/") or ".." in parts or not parts:
        raise UnsafeMember(f"{name!r} would land outside the folder")
    if any(parts[:i] in links for i in range(1, len(parts))):
        raise UnsafeMember(f"{name!r} lies behind a link of the archive")
    return parts


class TreeCache:
    """Bot trees by content hash under ``root``, at most ``max_bytes`` of them (see module)."""

    def __init__(self, root: Path | str, max_bytes: int) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.trees = self.root / "trees"
        self.tmp = self.root / "tmp"
        for folder in (self.root, self.trees, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        # Sandboxed bots run as other users: they must be able to reach their folder.
        for folder in (self.root, self.trees):
            folder.chmod(0o755)

    def path(self, digest: str) -> Path:
        return self.trees / digest

    @contextmanager
    def use(self, digest: str, fetch: Callable[[], bytes]) -> Iterator[Path]:
        """The folder of tree ``digest``, fetched with ``fetch()`` (its packed bytes) if it is
        not here; it stays while the ``with`` block lasts."""
        with _locked(self.trees / f"{digest}.use", fcntl.LOCK_SH) as use:
            fetched = False
            with _locked(self.trees / f"{digest}.fetch", fcntl.LOCK_EX):
                if not self.path(digest).is_dir():
                    self._add(digest, fetch())
                    fetched = True
            os.utime(use.name)
            if fetched:
                self.evict(keep=digest)
            yield self.path(digest)

    def _add(self, digest: str, data: bytes) -> None:
        """Unpack ``data`` (checked against ``digest``) into the tree's folder, whole or not."""
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest:
            raise StorageUnavailable(
                f"the bot files {digest} came damaged or partial ({len(data)} bytes hashing to "
                f"{actual}); they were not used"
            )
        work = Path(tempfile.mkdtemp(prefix=f"{digest[:12]}-", dir=self.tmp))
        try:
            tree = work / "tree"
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                _extract(tar, tree)
            size = _readable(tree)
            (self.trees / f"{digest}.size").write_text(str(size))
            os.replace(tree, self.path(digest))
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def size(self) -> int:
        """Bytes of the trees in the cache, as accounted."""
        return sum(size for _digest, size, _last in self._entries())

    def evict(self, keep: str = "") -> list[str]:
        """Remove trees, least recently used first, until at most ``max_bytes`` remain;
        never ``keep`` or a tree in use. Returns the digests removed."""
        self._sweep_tmp()
        entries = sorted(self._entries(), key=lambda entry: entry[2])
        total = sum(size for _digest, size, _last in entries)
        removed = []
        for digest, size, _last in entries:
            if total <= self.max_bytes:
                break
            if digest != keep and self._remove_unused(digest):
                total -= size
                removed.append(digest)
        return removed

    def _entries(self) -> list[tuple[str, int, float]]:
        """(digest, bytes, last use) of every tree accounted for."""
        found = []
        for size_file in self.trees.glob("*.size"):
            digest = size_file.name.removesuffix(".size")
            try:
                size = int(size_file.read_text() or 0)
                last = (self.trees / f"{digest}.use").stat().st_mtime
            except (OSError, ValueError):
                size, last = 0, 0.0
            found.append((digest, size, last))
        return found

    def _remove_unused(self, digest: str) -> bool:
        """Remove tree ``digest`` if no one uses it now; whether it was removed."""
        try:
            with _locked(self.trees / f"{digest}.use", fcntl.LOCK_EX | fcntl.LOCK_NB):
                gone = Path(tempfile.mkdtemp(prefix=f"evicted-{digest[:12]}-", dir=self.tmp))
                if self.path(digest).exists():
                    os.replace(self.path(digest), gone / "tree")
                (self.trees / f"{digest}.size").unlink(missing_ok=True)
                shutil.rmtree(gone, ignore_errors=True)
                return True
        except BlockingIOError:
            return False

    def _sweep_tmp(self) -> None:
        """Remove what interrupted unpackings left behind long ago."""
        now = time.time()
        for entry in self.tmp.iterdir():
            try:
                if now - entry.stat().st_mtime > STALE_TMP:
                    shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                continue


@contextmanager
def _locked(path: Path, how: int) -> Iterator[IO[bytes]]:
    """``path`` opened (created if need be) and ``flock``-ed with ``how`` until the block ends."""
    with path.open("a+b") as fh:
        fcntl.flock(fh, how)
        yield fh


def _readable(tree: Path) -> int:
    """Open the tree's folders to every user (the sandbox's bots read it); its size in bytes."""
    size = 0
    tree.chmod(0o755)
    for folder, dirs, files in os.walk(tree):
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
        for name in files:
            size += os.lstat(os.path.join(folder, name)).st_size
    return size
