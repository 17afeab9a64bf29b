"""A hostile bot for the sandbox tests.

Reads everything it should not and prints it to stderr, then crashes.
"""

import json
import os
import sys


def show(path: str) -> None:
    try:
        if os.path.isdir(path):
            for name in os.listdir(path):
                show(os.path.join(path, name))
            return
        with open(path, "rb") as f:
            report(f"read {path}", f.read(4096).decode(errors="replace"))
    except OSError as exc:
        report(f"read {path}", f"{type(exc).__name__}:{exc.errno}")


def attack() -> None:
    want = target()
    report("env", dict(os.environ))
    for path in ("/etc/passwd", "/etc/shadow", "/root", "/proc/1/environ", "/proc/self/environ"):
        show(path)
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        show(f"/proc/{pid}/environ")
        show(f"/proc/{pid}/cmdline")
    for key in ("secret_file", "other_bot"):
        if key in want:
            show(want[key])
    sys.exit(3)


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            reply = {"type": "ready", "protocol": 1}
        elif msg["type"] == "request":
            attack()
            reply = {"type": "action", "id": msg["id"], "index": 0}
        elif msg["type"] in ("match_end", "shutdown"):
            return
        else:
            continue
        print(json.dumps(reply), flush=True)


def report(key: str, value: object) -> None:
    """One finding for the referee's side of the test: ``HOSTILE <key><TAB><value>`` on stderr."""
    print(f"HOSTILE {key}\t{value}", file=sys.stderr, flush=True)


def target() -> dict:
    """What the test wants attacked (ports, paths); absent when played outside the tests."""
    try:
        with open("target.json") as f:
            return json.load(f)
    except OSError:
        return {}


if __name__ == "__main__":
    main()
