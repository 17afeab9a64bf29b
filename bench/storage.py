"""The storage's costs: an object store (a local S3 server, moto's) against the local folder.

Side by side in one run, on the same bot and the same replays:

- **checkout**: a bot version's files ready for a match. Anchor: the folder backend (the
  folder itself). Against it: the object store with the tree in the worker's cache (warm: one
  small read of the version's pointer) and with an empty cache (cold: pointer, tree object,
  hash check, unpacking);
- **replay**: a finished replay stored and read back (compressed either way). Anchor: the folder;
- **size**: a real replay's bytes as JSON and as stored (gzip), the median over several deals.

The S3 server runs on this machine, so the object store's figures are a floor: a real one
adds its network's round trips. The last line:

    checkout_warm_x=.. checkout_cold_x=.. replay_x=.. replay_kb_json=.. replay_kb_stored=..

(ratios against the folder backend; sizes in KB, medians).

    .venv/bin/python bench/storage.py [--rounds 30] [--deals 9]
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from web.storage import Storage  # noqa: E402
from web.storage.folder import FolderStorage  # noqa: E402
from web.storage.objects import ObjectSettings, ObjectStorage  # noqa: E402

BOT = ROOT / "sample_bots" / "python" / "svoi-kozyri-heuristic"


@contextmanager
def s3_server() -> Iterator[str]:
    """moto's S3 server on a free port of 127.0.0.1, stopped at the end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    binary = Path(sys.executable).parent / "moto_server"
    server = subprocess.Popen(
        [str(binary), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def timed(action: Callable[[], object], rounds: int) -> float:
    """Median seconds of ``action`` over ``rounds`` runs."""
    spans = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        spans.append(time.perf_counter() - start)
    return statistics.median(spans)


def checkout(storage: Storage) -> None:
    with storage.checkout(1) as folder:
        assert (folder / "bot.toml").is_file()


def replays(deals: int) -> list[bytes]:
    """Real replays of built-in agents, as the worker serialises them."""
    from arena.agents import greedy_agent, random_agent
    from arena.games import make_game
    from arena.replay import record_builtin_match

    found = []
    for seed in range(deals):
        state = make_game("svoi-kozyri", players=3).new_state(seed)
        agents = [greedy_agent, random_agent, greedy_agent]
        replay = record_builtin_match(
            state, agents, ["a", "b", "c"], random.Random(seed), timed=False
        )
        found.append(orjson.dumps(replay, option=orjson.OPT_SORT_KEYS))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--deals", type=int, default=9)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-storage-"))
    try:
        with s3_server() as endpoint:
            run(work, endpoint, args.rounds, args.deals)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, endpoint: str, rounds: int, deals: int) -> None:
    folder = FolderStorage(work / "folder")
    settings = ObjectSettings(
        url="s3://bench-storage/arena",
        endpoint=endpoint,
        region="us-east-1",
        access_key="bench",
        secret_key="bench-secret",
        cache_dir=str(work / "cache"),
    )
    objects = ObjectStorage(settings)
    objects.prepare()
    for storage in (folder, objects):
        copy = work / "copy"
        shutil.copytree(BOT, copy)
        storage.install_bot(copy, 1)

    def cold() -> None:
        shutil.rmtree(objects.cache.trees)
        objects.cache.trees.mkdir()
        checkout(objects)

    anchor = timed(lambda: checkout(folder), rounds)
    warm = timed(lambda: checkout(objects), rounds)
    cold_s = timed(cold, rounds)
    print(f"checkout: folder {anchor * 1e3:.3f} ms, object store warm {warm * 1e3:.2f} ms, "
          f"cold {cold_s * 1e3:.2f} ms")  # fmt: skip

    docs = replays(deals)
    for storage in (folder, objects):  # once each before timing: folders and connections made
        storage.read(storage.put_replay(docs[0]))

    def store_and_read(storage: Storage) -> Callable[[], None]:
        def both() -> None:
            for doc in docs:
                assert storage.read(storage.put_replay(doc)) == doc

        return both

    replay_anchor = timed(store_and_read(folder), max(3, rounds // 5))
    replay_objects = timed(store_and_read(objects), max(3, rounds // 5))
    per = len(docs)
    print(f"replay stored and read: folder {replay_anchor / per * 1e3:.2f} ms, "
          f"object store {replay_objects / per * 1e3:.2f} ms")  # fmt: skip
    json_kb = statistics.median(len(doc) for doc in docs) / 1024
    stored_kb = statistics.median(len(gzip.compress(doc, 6, mtime=0)) for doc in docs) / 1024
    print(f"replay size: {json_kb:.1f} KB as JSON, {stored_kb:.1f} KB stored (median)")
    print(
        f"checkout_warm_x={warm / anchor:.1f} checkout_cold_x={cold_s / anchor:.1f} "
        f"replay_x={replay_objects / replay_anchor:.2f} "
        f"replay_kb_json={json_kb:.1f} replay_kb_stored={stored_kb:.1f}"
    )


if __name__ == "__main__":
    main()
