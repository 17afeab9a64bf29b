"""A hostile bot for the sandbox tests.

Tries to reach a server on the host's loopback, then crashes. Also asks for sockets of other
families through the raw system call, each with the high 32 bits of the family set too (the
kernel reads only the low 32), and tries the loopback through any it gets.
"""

import ctypes
import json
import socket
import sys

SYS_SOCKET = 41  # x86_64
FAMILIES = {"inet": 2, "inet6": 10, "netlink": 16, "packet": 17, "vsock": 40}


def attack() -> None:
    port = int(target().get("port", 8080))
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect((host, port))
                s.sendall(b"escaped\n")
                report(f"connect {host}", "CONNECTED")
        except OSError as exc:
            report(f"connect {host}", f"{type(exc).__name__}:{exc.errno}")
    raw_sockets(port)
    sys.exit(3)


def raw_sockets(port: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    for name, family in FAMILIES.items():
        for label, value in ((name, family), (f"{name}|1<<32", family | 1 << 32)):
            fd = libc.syscall(SYS_SOCKET, ctypes.c_long(value), socket.SOCK_STREAM, 0)
            if fd < 0:
                report(f"socket {label}", f"refused:{ctypes.get_errno()}")
                continue
            report(f"socket {label}", "made")
            if family == socket.AF_INET:
                try_loopback(fd, port)


def try_loopback(fd: int, port: int) -> None:
    with socket.socket(fileno=fd) as s:
        try:
            s.settimeout(2)
            s.connect(("127.0.0.1", port))
            report("connect raw", "CONNECTED")
        except OSError as exc:
            report("connect raw", f"{type(exc).__name__}:{exc.errno}")


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
