"""How long refusing a hostile upload takes: the reading an upload passes before it is stored.

Each case is read by ``arena.uploads.read_manifest`` under the default limits, several
times; the median CPU seconds of this process are reported (a shared machine barely moves them).
Usage::

    python -m bench.uploads               # every case, 5 repetitions
    python -m bench.uploads --reps 9
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from arena.uploads import UnpackLimits, UploadError, read_manifest
from tests.web.site import bombs

CASES: dict[str, Callable[[], bytes]] = {
    "tar.gz, 3 GiB of zeros": bombs.gzip_bomb,
    "zip, 80 MiB of zeros": lambda: bombs.zip_bomb(80),
    "tar.gz, 2500 members": lambda: bombs.many_members(2500),
    "zip, 60000 entries": lambda: bombs.make_zip([(str(i), b"") for i in range(60_000)]),
}


def refuse(data: bytes) -> float:
    """CPU seconds to read ``data`` until it is refused."""
    start = time.process_time()
    try:
        read_manifest(data, UnpackLimits())
    except UploadError:
        return time.process_time() - start
    raise SystemExit("the hostile upload was accepted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    for name, build in CASES.items():
        data = build()
        seconds = statistics.median(refuse(data) for _ in range(args.reps))
        print(f"{name:28} {len(data) / 1e6:6.2f} MB upload   refused in {seconds:.3f} s CPU")


if __name__ == "__main__":
    main()
