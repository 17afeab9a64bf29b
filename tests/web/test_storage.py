"""The storage's two backends: a local folder and a real S3-compatible server (moto's).

Both keep the same keys and compress finished replays; the object store's bot trees reach a
worker through a bounded cache keyed by their hash, never damaged and never evicted in use.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import socket
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import s3_config
from web.storage import MissingObject, Storage, StorageUnavailable
from web.storage.cache import TreeCache, pack
from web.storage.folder import FolderStorage
from web.storage.objects import ObjectSettings, ObjectStorage


def object_storage(endpoint: str, cache: Path, max_bytes: int = 2**30) -> ObjectStorage:
    config = s3_config(endpoint, cache, CACHE_MAX_BYTES=max_bytes)
    storage = ObjectStorage(ObjectSettings.from_config(config))
    storage.prepare()
    return storage


@pytest.fixture(params=["folder", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "folder":
        yield FolderStorage(tmp_path / "storage")
    else:
        yield object_storage(request.getfixturevalue("s3_endpoint"), tmp_path / "cache")


def a_bot(folder: Path, text: str) -> Path:
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{text}"\n')
    (folder / "bot.py").write_text(f"print({text!r})\n")
    (folder / "bot.py").chmod(0o755)
    (folder / "lib" / "data.bin").write_bytes(os.urandom(5000))
    (folder / "python").symlink_to("/usr/bin/python3")  # as a built venv has
    return folder


def tree_of(folder: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file():
            found[name] = path.read_bytes()
    return found


def test_objects_round_trip_and_a_missing_key_is_named(storage: Storage) -> None:
    storage.put("archives/ab/abc", b"one")
    storage.put("archives/ab/abc", b"two")  # replaced whole
    assert storage.get("archives/ab/abc") == b"two" and storage.exists("archives/ab/abc")
    storage.delete("archives/ab/abc")
    storage.delete("archives/ab/abc")  # removing nothing is fine
    assert not storage.exists("archives/ab/abc")
    with pytest.raises(MissingObject) as missing:
        storage.get("archives/ab/abc")
    assert "archives/ab/abc is missing from " + storage.where() == str(missing.value)
    assert storage.answers()


def test_a_replay_is_stored_compressed_and_read_back_whole(storage: Storage) -> None:
    replay = b'{"steps": [' + b", ".join(b'{"seat": 0, "action": "pass"}' for _ in range(2000))
    replay += b"]}"
    key = storage.put_replay(replay)
    digest = hashlib.sha256(replay).hexdigest()
    assert key == f"replays/{digest[:2]}/{digest}.json.gz"
    stored = storage.get(key)
    assert gzip.decompress(stored) == replay and len(stored) < len(replay) / 20
    assert storage.read(key) == replay
    storage.put(key, stored[: len(stored) // 2])  # a damaged object is refused, not half read
    with pytest.raises(ValueError, match="damaged"):
        storage.read(key)


def test_an_uncompressed_replay_of_an_earlier_release_still_reads(tmp_path: Path) -> None:
    storage = FolderStorage(tmp_path)
    old = tmp_path / "replays" / "ab" / "abcd.json"
    old.parent.mkdir(parents=True)
    old.write_bytes(b'{"steps": []}')
    assert storage.read("replays/ab/abcd.json") == b'{"steps": []}'


def test_a_bot_tree_installed_is_checked_out_whole_and_replaced_whole(
    storage: Storage, tmp_path: Path
) -> None:
    first = a_bot(tmp_path / "first", "upload")
    expected = tree_of(first)
    storage.install_bot(first, 7)
    assert not first.exists()  # consumed
    with storage.checkout(7) as folder:
        assert tree_of(folder) == expected
        assert os.access(folder / "bot.py", os.X_OK)
        assert folder.stat().st_mode & 0o755 == 0o755  # readable by the sandbox's users
    built = a_bot(tmp_path / "built", "built")
    (built / "out").write_text("built")
    storage.install_bot(built, 7)
    with storage.checkout(7) as folder:
        assert (folder / "out").read_text() == "built"
        assert (folder / "bot.toml").read_text() == 'name = "built"\n'
    storage.remove_bot(7)
    if isinstance(storage, ObjectStorage):
        with pytest.raises(MissingObject, match="bots/7 is missing"), storage.checkout(7):
            pass


def test_a_damaged_tree_is_never_used_and_a_good_one_is_fetched_after(
    s3_endpoint: str, tmp_path: Path
) -> None:
    storage = object_storage(s3_endpoint, tmp_path / "cache")
    storage.install_bot(a_bot(tmp_path / "bot", "damaged"), 3)
    digest = storage.tree_of(3)
    good = storage.get(f"trees/{digest}.tar.gz")
    storage.put(f"trees/{digest}.tar.gz", good[: len(good) - 100])  # a partial object
    damaged = pytest.raises(StorageUnavailable, match=r"damaged or partial.*not used")
    with damaged, storage.checkout(3):
        pass
    assert not storage.cache.path(digest).exists()
    assert storage.cache.size() == 0
    storage.put(f"trees/{digest}.tar.gz", good)
    with storage.checkout(3) as folder:
        assert (folder / "bot.toml").read_text() == 'name = "damaged"\n'


def test_an_unreachable_store_says_which_and_why(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings = ObjectSettings.from_config(
        s3_config(f"http://127.0.0.1:{port}", tmp_path, S3_TIMEOUT=2.0)
    )
    storage = ObjectStorage(settings)
    assert not storage.answers()
    with pytest.raises(StorageUnavailable) as gone:
        storage.put_replay(b"{}")
    assert str(gone.value).startswith(f"the object store {settings.url} at http://127.0.0.1:")
    assert "could not store replays/" in str(gone.value)
    with pytest.raises(StorageUnavailable, match="could not read bots/1"), storage.checkout(1):
        pass


def packed(text: str, tmp_path: Path) -> tuple[str, bytes]:
    data = pack(a_bot(tmp_path / text, text))
    return hashlib.sha256(data).hexdigest(), data


def test_the_cache_evicts_the_least_recently_used_trees_but_never_one_in_use(
    tmp_path: Path,
) -> None:
    cache = TreeCache(tmp_path / "cache", max_bytes=12_000)  # room for two trees of 5 KB
    trees = [packed(name, tmp_path) for name in ("a", "b", "c", "d")]
    (a, a_data), (b, b_data), (c, c_data), (d, d_data) = trees
    with cache.use(a, lambda: a_data):
        with cache.use(b, lambda: b_data):
            pass
        os.utime(cache.trees / f"{b}.use", (1, 1))  # b used long ago, a in use
        with cache.use(c, lambda: c_data):  # over the bound: b goes, a is in use and stays
            assert cache.path(a).is_dir() and not cache.path(b).exists()
    assert cache.size() <= 12_000
    with cache.use(d, lambda: d_data):  # now a (least recently used, not in use) goes
        assert not cache.path(a).exists() and cache.path(c).is_dir()
    assert sorted(p.name for p in cache.trees.iterdir() if p.is_dir()) == sorted([c, d])


def test_concurrent_fetches_of_one_tree_fetch_it_once(tmp_path: Path) -> None:
    cache = TreeCache(tmp_path / "cache", max_bytes=2**30)
    digest, data = packed("shared", tmp_path)
    fetches: list[int] = []
    seen: list[dict[str, bytes | str]] = []
    start = threading.Barrier(6)

    def fetch() -> bytes:
        fetches.append(1)
        return data

    def worker() -> None:
        start.wait()
        with cache.use(digest, fetch) as folder:
            seen.append(tree_of(folder))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(fetches) == 1 and len(seen) == 6
    assert all(tree == seen[0] for tree in seen) and "bot.toml" in seen[0]


def tar_of(*members: tuple[tarfile.TarInfo, bytes]) -> tuple[bytes, str]:
    """A gzipped tar of ``members`` (each with its contents) and its digest."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for member, payload in members:
            member.size = len(payload) if member.isfile() else 0
            tar.addfile(member, io.BytesIO(payload) if member.isfile() else None)
    data = buf.getvalue()
    return data, hashlib.sha256(data).hexdigest()


def entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname, member.mode = kind, link, 0o6777
    return member


@pytest.fixture(params=["filters", "no-filters"])
def python_filters(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Unpack with Python's extraction filters, and as on a Python without them (3.11.2, the
    platform image's Debian one), where the cache checks the members itself."""
    if request.param == "no-filters":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no extraction filters")
    return str(request.param)


def test_a_tree_unpacks_whole_with_or_without_pythons_filters(
    tmp_path: Path, python_filters: str
) -> None:
    data, digest = tar_of(
        (entry("bot", tarfile.DIRTYPE), b""),
        (entry("bot/bot.toml"), b"name = 'x'\n"),
        (entry("bot/python", tarfile.SYMTYPE, "/usr/bin/python3"), b""),
        (entry("bot/same.toml", tarfile.LNKTYPE, "bot/bot.toml"), b""),
    )
    cache = TreeCache(tmp_path / "cache", max_bytes=2**30)
    with cache.use(digest, lambda: data) as tree:
        assert (tree / "bot" / "bot.toml").read_text() == "name = 'x'\n"
        assert os.readlink(tree / "bot" / "python") == "/usr/bin/python3"
        assert (tree / "bot" / "same.toml").read_text() == "name = 'x'\n"
        mode = (tree / "bot" / "bot.toml").stat().st_mode
        assert not mode & 0o7022, oct(mode)  # no set-id bits, no write for others


def test_a_tree_cannot_write_outside_its_folder(tmp_path: Path, python_filters: str) -> None:
    payload = b"written through a link"
    data, digest = tar_of(
        (entry("escape", tarfile.SYMTYPE, str(tmp_path)), b""),
        (entry("escape/outside.txt"), payload),
    )
    cache = TreeCache(tmp_path / "cache", max_bytes=2**30)
    with pytest.raises(tarfile.TarError), cache.use(digest, lambda: data):
        pass
    assert not (tmp_path / "outside.txt").exists() and not cache.path(digest).exists()


@pytest.mark.parametrize(
    "member",
    [
        entry("../outside.txt"),
        entry("fifo", tarfile.FIFOTYPE),
        entry("null", tarfile.CHRTYPE),
        entry("hard", tarfile.LNKTYPE, "../../etc/passwd"),
    ],
    ids=["dot-dot", "fifo", "device", "hard-link-out"],
)
def test_a_bad_member_is_refused_whole(
    tmp_path: Path, python_filters: str, member: tarfile.TarInfo
) -> None:
    data, digest = tar_of((entry("bot.toml"), b"x"), (member, b"x"))
    cache = TreeCache(tmp_path / "cache", max_bytes=2**30)
    with pytest.raises(tarfile.TarError), cache.use(digest, lambda: data):
        pass
    assert not cache.path(digest).exists()


def test_an_absolute_name_stays_inside_the_folder(tmp_path: Path, python_filters: str) -> None:
    """Python's filter unpacks ``/x`` as ``x``; without it the cache refuses the tree."""
    outside = tmp_path / "outside.txt"
    data, digest = tar_of((entry(str(outside)), b"x"))
    cache = TreeCache(tmp_path / "cache", max_bytes=2**30)
    try:
        with cache.use(digest, lambda: data) as tree:
            assert (tree / str(outside).lstrip("/")).read_bytes() == b"x"
    except tarfile.TarError:
        assert python_filters == "no-filters"
    assert not outside.exists()
