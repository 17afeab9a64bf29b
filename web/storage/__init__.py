"""Where uploads, bot versions and replays live, behind one small interface with two backends.

- ``FolderStorage`` (``web.storage.folder``): one local folder, the embedded default. Every
  write goes to a temporary file in the destination folder and is renamed into place, so a
  reader never sees half a file and a crash leaves at most a stray temporary file.
- ``ObjectStorage`` (``web.storage.objects``): an S3-compatible object store (MinIO, AWS S3 and
  the like), for workers on hosts that share no folder with the site. A version's files are
  fetched on first use into a bounded local cache keyed by their content hash
  (``web.storage.cache``).

``get_storage()`` picks one from the settings (``STORAGE_URL``); nothing else in the code knows
which. Objects are named by keys such as ``archives/ab/ab12...`` or ``replays/ab/ab12....json.gz``;
the key of a match's replay is what ``Match.replay_path`` holds. Finished replays are stored
gzip-compressed and read back as plain JSON; replays stored uncompressed (``.json``) by earlier
releases still read.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import current_app

COMPRESSED = ".gz"
"""The suffix of a key whose object is gzip-compressed (read back uncompressed)."""


class StorageUnavailable(OSError):
    """The storage could not be reached or answered with an error; nothing was lost.

    An ``OSError`` with ``EIO``, so every caller that treats a failing disk as a fault of the
    platform (tried again once the storage answers) treats it the same way. ``reason`` says
    which storage and what went wrong.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EIO, reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class MissingObject(FileNotFoundError):
    """A key the storage should hold is not there; the message names the key and the storage."""

    def __init__(self, key: str, where: str) -> None:
        super().__init__(errno.ENOENT, f"{key} is missing from {where}")
        self.key = key

    def __str__(self) -> str:
        return str(self.strerror)


class Storage(ABC):
    """The storage of the platform: archives, bot versions' files, replays.

    Subclasses provide the primitives (``put``, ``get``, ``exists``, ``delete``, ``answers``,
    ``where``) and the handling of bot trees; the naming of keys and the compression of
    replays are the same for every backend and live here.
    """

    # --- primitives ----------------------------------------------------------------------

    @abstractmethod
    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key`` whole (a reader sees the old object or the new one)."""

    @abstractmethod
    def get(self, key: str) -> bytes:
        """The bytes stored under ``key``; ``MissingObject`` if there are none."""

    @abstractmethod
    def exists(self, key: str) -> bool:
        """Whether ``key`` holds an object."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing happens if it holds nothing)."""

    @abstractmethod
    def answers(self) -> bool:
        """Whether the storage takes a small write now (and its removal)."""

    @abstractmethod
    def where(self) -> str:
        """The storage in words, for errors: ``the storage folder /var/...``."""

    @abstractmethod
    def prepare(self) -> None:
        """Create the storage where it is missing (``flask --app web storage init``)."""

    # --- bot versions' files --------------------------------------------------------------

    @abstractmethod
    def scratch_dir(self) -> Path:
        """A fresh empty local folder, for unpacking or building before ``install_bot``."""

    @abstractmethod
    def install_bot(self, folder: Path, version_id: int) -> None:
        """Make the tree ``folder`` (consumed) the files of version ``version_id``, whole.

        Replaces what the version had (an upload replaced by its build): a reader sees the old
        tree or the new one, never a mixture.
        """

    @abstractmethod
    def remove_bot(self, version_id: int) -> None:
        """Remove the files of version ``version_id`` (an upload that was not kept)."""

    @abstractmethod
    @contextmanager
    def checkout(self, version_id: int) -> Iterator[Path]:
        """A local folder holding the files of version ``version_id``, for as long as the
        ``with`` block lasts: read it, mount it read-only in a sandbox, never write to it."""

    # --- archives and replays, the same for every backend ---------------------------------

    @staticmethod
    def archive_key(sha256: str) -> str:
        return f"archives/{sha256[:2]}/{sha256}"

    def put_archive(self, data: bytes) -> str:
        """Store an uploaded archive under its SHA-256 and return the hash."""
        digest = hashlib.sha256(data).hexdigest()
        self.put(self.archive_key(digest), data)
        return digest

    def put_replay(self, data: bytes) -> str:
        """Store a finished replay's JSON, gzip-compressed, under its SHA-256; returns its key."""
        digest = hashlib.sha256(data).hexdigest()
        key = f"replays/{digest[:2]}/{digest}.json{COMPRESSED}"
        self.write(key, data)
        return key

    def write(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, compressed if the key says so (what ``read`` undoes)."""
        if key.endswith(COMPRESSED):
            data = gzip.compress(data, compresslevel=6, mtime=0)
        self.put(key, data)

    def read(self, key: str) -> bytes:
        """The bytes stored under ``key``, uncompressed if the key says it was compressed."""
        data = self.get(key)
        if not key.endswith(COMPRESSED):
            return data
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:  # a damaged object: say which, never half of it
            raise ValueError(f"{key} in {self.where()} is damaged: {exc}") from exc


def describe(exc: OSError) -> str:
    """An ``OSError`` of the storage in words: the storage's own reason, or the system's
    wording in lower case and the code (``no space left on device (ENOSPC)``)."""
    if isinstance(exc, (StorageUnavailable, MissingObject)):
        return str(exc)
    if exc.errno is None:
        return str(exc)
    return f"{os.strerror(exc.errno).lower()} ({errno.errorcode.get(exc.errno, exc.errno)})"


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


_made: dict[tuple[object, ...], Storage] = {}
_made_lock = threading.Lock()


def get_storage() -> Storage:
    """The storage of the current app: an object store if ``STORAGE_URL`` names one
    (``s3://bucket/prefix``), else the folder ``STORAGE_DIR``."""
    config = current_app.config
    url = str(config.get("STORAGE_URL") or "")
    if not url:
        from web.storage.folder import FolderStorage

        return FolderStorage(config["STORAGE_DIR"])
    from web.storage.objects import ObjectSettings, ObjectStorage

    settings = ObjectSettings.from_config(config)
    # One client per process and settings: making one costs tens of milliseconds, and a
    # client made before a fork must not be shared with the child.
    key = (os.getpid(), settings)
    with _made_lock:
        made = _made.get(key)
        if made is None:
            made = _made[key] = ObjectStorage(settings)
    return made
