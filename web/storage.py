"""Where uploads, unpacked bots and replays live: one folder, content-addressed paths.

Every write goes to a temporary file in the destination folder and is renamed into place, so a
reader never sees half a file and a crash leaves at most a stray temporary file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from flask import current_app


class Storage:
    """A storage folder: ``archives/``, ``bots/`` (unpacked versions), ``replays/``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def _area(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def archive_path(self, sha256: str) -> Path:
        return self._area("archives") / sha256[:2] / sha256

    def bot_dir(self, version_id: int) -> Path:
        """The unpacked (and built) files of one bot version."""
        return self._area("bots") / str(version_id)

    def scratch_dir(self) -> Path:
        """A fresh empty folder inside the storage root, for unpacking before moving into place."""
        return Path(tempfile.mkdtemp(prefix="unpack-", dir=self._area("tmp")))

    def replay_path(self, sha256: str) -> Path:
        return self._area("replays") / sha256[:2] / f"{sha256}.json"

    def put_archive(self, data: bytes) -> str:
        """Store an uploaded archive under its SHA-256 and return the hash."""
        digest = hashlib.sha256(data).hexdigest()
        write_atomic(self.archive_path(digest), data)
        return digest

    def put_replay(self, data: bytes) -> Path:
        """Store a replay's bytes under their SHA-256; returns the final path."""
        path = self.replay_path(hashlib.sha256(data).hexdigest())
        write_atomic(path, data)
        return path

    def install_dir(self, scratch: Path, version_id: int) -> Path:
        """Move an unpacked scratch folder to the version's place (replacing a previous try)."""
        target = self.bot_dir(version_id)
        if target.exists():
            shutil.rmtree(target)
        os.replace(scratch, target)
        # The sandbox runs bots as unprivileged users: they must be able to read their folder.
        target.chmod(0o755)
        return target

    def relative(self, path: Path) -> str:
        return str(path.resolve().relative_to(self.root))

    def resolve(self, relative: str) -> Path:
        """The absolute path of a stored file; refuses anything outside the root."""
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root):
            raise ValueError(f"{relative!r} is outside the storage folder")
        return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` by way of a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def get_storage() -> Storage:
    """The storage of the current app."""
    return Storage(current_app.config["STORAGE_DIR"])
