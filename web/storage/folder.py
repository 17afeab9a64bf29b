"""The storage as one local folder (the embedded default): keys are paths under its root.

``archives/`` holds uploads by SHA-256, ``bots/<version id>/`` the unpacked (and built) files
of each version, used in place, ``replays/`` the replays, ``tmp/`` scratch folders.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from web.storage import MissingObject, Storage, write_atomic


class FolderStorage(Storage):
    """A storage folder: ``archives/``, ``bots/`` (unpacked versions), ``replays/``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()

    def _area(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def resolve(self, key: str) -> Path:
        """The absolute path of a stored file; refuses anything outside the root."""
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root):
            raise ValueError(f"{key!r} is outside the storage folder")
        return path

    def put(self, key: str, data: bytes) -> None:
        write_atomic(self.resolve(key), data)

    def get(self, key: str) -> bytes:
        try:
            return self.resolve(key).read_bytes()
        except FileNotFoundError as exc:
            raise MissingObject(key, self.where()) from exc

    def exists(self, key: str) -> bool:
        return self.resolve(key).is_file()

    def delete(self, key: str) -> None:
        self.resolve(key).unlink(missing_ok=True)

    def answers(self) -> bool:
        """Whether a small file can be written to the folder (and removed)."""
        probe = self.root / f".probe-{os.getpid()}-{threading.get_ident()}"
        try:
            with probe.open("wb") as fh:
                fh.write(b"\0" * 4096)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError:
            return False
        finally:
            probe.unlink(missing_ok=True)
        return True

    def where(self) -> str:
        return f"the storage folder {self.root}"

    def prepare(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def archive_path(self, sha256: str) -> Path:
        return self._area("archives") / sha256[:2] / sha256

    def bot_dir(self, version_id: int) -> Path:
        """The unpacked (and built) files of one bot version, in place."""
        return self._area("bots") / str(version_id)

    def scratch_dir(self) -> Path:
        """A fresh empty folder inside the storage root, so that installing it is a rename."""
        return Path(tempfile.mkdtemp(prefix="unpack-", dir=self._area("tmp")))

    def install_bot(self, folder: Path, version_id: int) -> None:
        """Two renames: the old tree aside, ``folder`` in its place; then the old one removed."""
        target = self.bot_dir(version_id)
        aside = None
        if target.exists():
            aside = Path(tempfile.mkdtemp(prefix="replaced-", dir=self._area("tmp"))) / "old"
            os.replace(target, aside)
        os.replace(folder, target)
        # The sandbox runs bots as unprivileged users: they must be able to read their folder.
        target.chmod(0o755)
        if aside is not None:
            shutil.rmtree(aside.parent, ignore_errors=True)

    def remove_bot(self, version_id: int) -> None:
        shutil.rmtree(self.bot_dir(version_id), ignore_errors=True)

    @contextmanager
    def checkout(self, version_id: int) -> Iterator[Path]:
        yield self.bot_dir(version_id)
