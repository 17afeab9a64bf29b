"""Unpacking uploads lives in ``arena.uploads``, shared with ``arena check``."""

from __future__ import annotations

from arena.uploads import (
    MANIFEST,
    MAX_MANIFEST_BYTES,
    UnpackLimits,
    UploadError,
    detect_kind,
    read_manifest,
    safe_member_path,
    unpack,
    walk,
    write_single,
)

__all__ = [
    "MANIFEST",
    "MAX_MANIFEST_BYTES",
    "UnpackLimits",
    "UploadError",
    "detect_kind",
    "read_manifest",
    "safe_member_path",
    "unpack",
    "walk",
    "write_single",
]
