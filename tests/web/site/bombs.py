"""Hostile archives for the upload tests, made in memory without compressing gigabytes.

A deflate stream that is fully flushed after every mebibyte of zeros repeats one identical
block, so a gzip member that unpacks to gibibytes is a few megabytes of copies of it; its CRC
is computed the same way, by repeating the (affine) effect of a mebibyte of zeros on a CRC.
"""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib

MIB = 1024 * 1024
MANIFEST = (
    b'name = "bomb"\ngames = ["svoi-kozyri"]\nlanguage = "python"\nrun = ["python3", "b.py"]\n'
)


def _crc_after_zeros(crc: int, mebibytes: int) -> int:
    """``zlib.crc32(bytes(mebibytes * MIB), crc)`` in a few milliseconds."""
    zeros = bytes(MIB)
    offset = zlib.crc32(zeros, 0)
    columns = [zlib.crc32(zeros, 1 << bit) ^ offset for bit in range(32)]
    for _ in range(mebibytes):
        mixed = offset
        for bit in range(32):
            if crc >> bit & 1:
                mixed ^= columns[bit]
        crc = mixed
    return crc


def _tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def gzip_bomb(mebibytes: int = 3 * 1024, manifest: bytes = MANIFEST) -> bytes:
    """A valid tar.gz: ``zeros`` (``mebibytes`` MiB of zero bytes), then ``bot.toml``."""
    head = _tar_header("zeros", mebibytes * MIB)
    padding = b"\0" * (-len(manifest) % 512)
    rest = _tar_header("bot.toml", len(manifest)) + manifest + padding + b"\0" * 1024
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = packer.compress(head) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(bytes(MIB)) + packer.flush(zlib.Z_FULL_FLUSH)
    end = packer.compress(rest) + packer.flush()
    crc = zlib.crc32(rest, _crc_after_zeros(zlib.crc32(head), mebibytes))
    size = (len(head) + mebibytes * MIB + len(rest)) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x00" + b"\0" * 4 + b"\x02\xff"
    body = start + block * mebibytes + end
    return header + body + struct.pack("<II", crc, size)


def zip_bomb(mebibytes: int = 512) -> bytes:
    """A zip with ``bot.toml`` and one member of ``mebibytes`` MiB of zeros."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bot.toml", MANIFEST)
        with archive.open("zeros", "w", force_zip64=True) as member:
            chunk = bytes(MIB)
            for _ in range(mebibytes):
                member.write(chunk)
    return buffer.getvalue()


def many_members(count: int) -> bytes:
    """A tar.gz of ``bot.toml`` and ``count`` empty files."""
    return tar_gz([("bot.toml", MANIFEST)] + [(f"f/{i}", b"") for i in range(count)])


def deep_nesting(depth: int) -> bytes:
    """A zip whose one file sits ``depth`` folders down."""
    path = "/".join(["d"] * depth) + "/x.py"
    return make_zip([("bot.toml", MANIFEST), (path, b"pass\n")])


def long_name(length: int) -> bytes:
    """A tar.gz whose second member's name is ``length`` characters long."""
    return tar_gz([("bot.toml", MANIFEST), ("n" * length, b"x")])


def tar_gz(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.GNU_FORMAT) as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def make_zip(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            archive.writestr(name, data)
    return buffer.getvalue()


def corrupt_zip() -> bytes:
    """A zip whose ``b.py`` has its deflate data overwritten with garbage."""
    data = bytearray(make_zip([("bot.toml", MANIFEST), ("b.py", bytes(range(256)) * 40)]))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo("b.py")
    offset = info.header_offset
    name_length, extra_length = struct.unpack("<HH", data[offset + 26 : offset + 30])
    start = offset + 30 + name_length + extra_length
    data[start + 2 : start + info.compress_size - 2] = b"\xff" * (info.compress_size - 4)
    return bytes(data)
