"""The storage as an S3-compatible object store (AWS S3, MinIO, ...), through boto3.

Keys are those of every backend, under the bucket and prefix of ``STORAGE_URL``
(``s3://bucket/prefix``). A bot version's files are one object, the gzip-compressed tar of the
tree, named by its SHA-256 (``trees/<sha256>.tar.gz``); ``bots/<version id>`` holds that hash.
Installing a new tree for a version (its build) writes the new tree object first and then the
small pointer, so a reader gets the old tree or the new one. Workers unpack trees into a local
``TreeCache`` on first use.

Every error of the store becomes ``StorageUnavailable`` (the store could not be reached or
refused the request) or ``MissingObject`` (a key holds nothing), naming the store.
"""

from __future__ import annotations

import re
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from web.storage import MissingObject, Storage, StorageUnavailable
from web.storage.cache import TreeCache, pack

T = TypeVar("T")

DIGEST = re.compile(r"[0-9a-f]{64}")
MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})


@dataclass(frozen=True)
class ObjectSettings:
    """Where the object store is and how to reach it; where the local cache lives."""

    url: str
    endpoint: str = ""
    region: str = ""
    access_key: str = ""
    secret_key: str = ""
    cache_dir: str = "var/cache"
    cache_max_bytes: int = 2 * 1024**3
    timeout: float = 30.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ObjectSettings:
        return cls(
            url=str(config["STORAGE_URL"]),
            endpoint=str(config.get("S3_ENDPOINT_URL") or ""),
            region=str(config.get("S3_REGION") or ""),
            access_key=str(config.get("S3_ACCESS_KEY_ID") or ""),
            secret_key=str(config.get("S3_SECRET_ACCESS_KEY") or ""),
            cache_dir=str(config["CACHE_DIR"]),
            cache_max_bytes=int(config.get("CACHE_MAX_BYTES", 2 * 1024**3)),
            timeout=float(config.get("S3_TIMEOUT", 30.0)),
        )

    @property
    def bucket(self) -> str:
        return self._parts()[0]

    @property
    def prefix(self) -> str:
        prefix = self._parts()[1].strip("/")
        return f"{prefix}/" if prefix else ""

    def _parts(self) -> tuple[str, str]:
        scheme, _, rest = self.url.partition("://")
        bucket, _, prefix = rest.partition("/")
        if scheme != "s3" or not bucket:
            raise ValueError(f"STORAGE_URL must read s3://bucket[/prefix], not {self.url!r}")
        return bucket, prefix


class ObjectStorage(Storage):
    """The platform's storage in a bucket of an S3-compatible object store."""

    def __init__(self, settings: ObjectSettings) -> None:
        import boto3
        from botocore.config import Config

        self.settings = settings
        self.bucket, self.prefix = settings.bucket, settings.prefix
        self.client = boto3.session.Session().client(
            "s3",
            endpoint_url=settings.endpoint or None,
            region_name=settings.region or None,
            aws_access_key_id=settings.access_key or None,
            aws_secret_access_key=settings.secret_key or None,
            config=Config(
                connect_timeout=min(settings.timeout, 10.0),
                read_timeout=settings.timeout,
                retries={"max_attempts": 3, "mode": "standard"},
                s3={"addressing_style": "path"},
            ),
        )
        self.cache = TreeCache(settings.cache_dir, settings.cache_max_bytes)

    def where(self) -> str:
        at = f" at {self.settings.endpoint}" if self.settings.endpoint else ""
        return f"the object store {self.settings.url}{at}"

    def prepare(self) -> None:
        """Create the bucket if it does not exist."""
        try:
            self._call(
                "", "look up the bucket", lambda: self.client.head_bucket(Bucket=self.bucket)
            )
        except MissingObject:
            where: dict[str, Any] = {}
            if self.settings.region not in ("", "us-east-1"):
                where["CreateBucketConfiguration"] = {"LocationConstraint": self.settings.region}
            self._call(
                "",
                "create the bucket",
                lambda: self.client.create_bucket(Bucket=self.bucket, **where),
            )

    def _call(self, key: str, doing: str, action: Callable[[], T]) -> T:
        """``action()``, its errors told as the storage's: missing ``key`` or unavailable."""
        from botocore.exceptions import BotoCoreError, ClientError

        what = f"{doing} {key}".rstrip()
        try:
            return action()
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in MISSING_CODES:
                raise MissingObject(key or self.bucket, self.where()) from exc
            raise StorageUnavailable(f"{self.where()} refused to {what}: {exc}") from exc
        except (BotoCoreError, OSError) as exc:
            raise StorageUnavailable(f"{self.where()} could not {what}: {exc}") from exc

    def put(self, key: str, data: bytes) -> None:
        name = self.prefix + key
        self._call(
            key, "store", lambda: self.client.put_object(Bucket=self.bucket, Key=name, Body=data)
        )

    def get(self, key: str) -> bytes:
        name = self.prefix + key

        def read() -> bytes:
            answer = self.client.get_object(Bucket=self.bucket, Key=name)
            data: bytes = answer["Body"].read()
            if len(data) != int(answer.get("ContentLength", len(data))):
                raise OSError(f"got {len(data)} of {answer['ContentLength']} bytes")
            return data

        return self._call(key, "read", read)

    def exists(self, key: str) -> bool:
        try:
            name = self.prefix + key
            self._call(
                key, "look up", lambda: self.client.head_object(Bucket=self.bucket, Key=name)
            )
        except MissingObject:
            return False
        return True

    def delete(self, key: str) -> None:
        name = self.prefix + key
        self._call(key, "remove", lambda: self.client.delete_object(Bucket=self.bucket, Key=name))

    def answers(self) -> bool:
        """Whether a small object can be stored in the bucket (and removed)."""
        key = f"probe/{socket.gethostname()}-{id(self)}"
        try:
            self.put(key, b"\0" * 4096)
            self.delete(key)
        except OSError:
            return False
        return True

    def scratch_dir(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="unpack-", dir=self.cache.tmp))

    def install_bot(self, folder: Path, version_id: int) -> None:
        """The tree packed and stored under its hash, then the version pointed at it."""
        data = pack(folder)
        from hashlib import sha256

        digest = sha256(data).hexdigest()
        self.put(f"trees/{digest}.tar.gz", data)
        self.put(f"bots/{version_id}", digest.encode())
        shutil.rmtree(folder, ignore_errors=True)

    def remove_bot(self, version_id: int) -> None:
        # Only the pointer: a tree object is named by its contents and could be another's.
        self.delete(f"bots/{version_id}")

    def tree_of(self, version_id: int) -> str:
        """The hash of the tree that version ``version_id``'s pointer names."""
        key = f"bots/{version_id}"
        digest = self.get(key).decode("ascii", "replace").strip()
        if not DIGEST.fullmatch(digest):
            raise StorageUnavailable(f"{key} in {self.where()} is damaged: {digest[:80]!r}")
        return digest

    @contextmanager
    def checkout(self, version_id: int) -> Iterator[Path]:
        digest = self.tree_of(version_id)
        with self.cache.use(digest, lambda: self.get(f"trees/{digest}.tar.gz")) as path:
            yield path
