"""A hostile pair for the collusion tests: the same bot in both seats of a two-player Svara.

Seat 0 (the sender) looks at its cards and, at every turn, publishes its hand through every
channel below; seat 1 (the receiver), at its turns, reads each channel and names one card it
believes seat 0 holds, as ``COLLUDE <channel><TAB><card>`` on stderr. Where a channel carries
nothing, its guess is a card drawn at random from those the receiver cannot see, so a closed
channel guesses at chance. Both play by rules that do not depend on their cards (the sender
looks and calls; the receiver calls until the sender has acted, then shows), so nothing of the
hand leaks through the game itself.

Channels (a card is an index 0..51; a hand is a set of indices or a 64-bit mask):
- ``posix``, ``ofd``: byte-range read locks (``F_SETLK``, ``F_OFD_SETLK``) on the kit's file,
  one byte per card, tested with ``F_GETLK``/``F_OFD_GETLK``;
- ``flock``: shared ``flock`` locks on the interpreter's library files, one file per card;
- ``proc_locks``: the host-wide lock table ``/proc/locks``, read for the ``posix`` band;
- ``keyring``: a key in the session keyring (``add_key``, ``keyctl`` through ``syscall``);
- ``tmp``: a file in ``/tmp``;
- ``sysv``: a System V shared memory segment;
- ``abstract``: an abstract Unix socket's name, read back from ``/proc/net/unix``;
- ``timing``: a background thread that keeps the CPU busy or idle in a pattern over time
  slots while the receiver (on the same core) measures how fast its own loop runs.

``target.json`` (written by the tests) holds a ``token`` that names every shared object, so
concurrent runs do not mix. Never run it with ``--sandbox none`` outside the tests.
"""

import ctypes
import ctypes.util
import fcntl
import glob
import hashlib
import importlib.util
import json
import os
import random
import socket
import struct
import sys
import threading
import time

RANKS = "23456789TJQKA"
SUITS = "SHDC"
PACK = [r + s for r in "6789TJQKA" for s in SUITS]
"""The 36 cards of the default Svara pack."""

F_OFD_GETLK, F_OFD_SETLK = 36, 37
SYS_ADD_KEY, SYS_KEYCTL = 248, 250  # x86_64
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_UNLINK, KEYCTL_SEARCH, KEYCTL_READ = 9, 10, 11
IPC_CREAT, IPC_RMID = 0o1000, 0
SLOT_S = 0.05
"""A timing slot: the sender is busy in one half of each pair of slots, idle in the other."""
MEASURE_S = 1.6
CARD_BITS = 6

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]


def index(card: str) -> int:
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


def card_of(i: int) -> str | None:
    return RANKS[i // 4] + SUITS[i % 4] if 0 <= i < 52 else None


def target() -> dict:
    try:
        with open("target.json") as f:
            return json.load(f)
    except OSError:
        return {}


TOKEN = str(target().get("token", "kozyri-local"))
TAG = int(hashlib.sha256(TOKEN.encode()).hexdigest()[:8], 16)
POSIX_BAND = (1 << 20) + (TAG % 4096) * 256
OFD_BAND = POSIX_BAND + 64
SHM_KEY = TAG & 0x7FFFFFFF
KEY_DESC = f"kozyri-{TOKEN}".encode()
TMP_FILE = f"/tmp/kozyri-{TOKEN}.json"


def lock_file() -> str:
    spec = importlib.util.find_spec("kozyri_bot")
    return spec.origin if spec and spec.origin else "/usr/bin/python3"


def flock_files() -> list[str]:
    found = sorted(glob.glob("/usr/lib/python3*/[a-z]*.py"))
    found += sorted(glob.glob("/usr/local/lib/python3*/[a-z]*.py"))
    found = [path for path in found if os.path.isfile(path) and not os.path.islink(path)]
    start = TAG % max(1, len(found) - 52) if len(found) > 52 else 0
    return found[start : start + 52]


def flock_struct(kind: int, start: int, length: int) -> bytes:
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, length, 0)


# --- the sender ------------------------------------------------------------------------------


class Sender:
    def __init__(self) -> None:
        self.posix = os.open(lock_file(), os.O_RDONLY)
        self.ofd = os.open(lock_file(), os.O_RDONLY)
        self.flocks = [os.open(path, os.O_RDONLY) for path in flock_files()]
        self.sock: socket.socket | None = None
        self.key = 0
        self.first_card: int | None = None
        threading.Thread(target=self.modulate, daemon=True).start()

    def send(self, hand: list[int]) -> None:
        self.first_card = min(hand)
        mask = sum(1 << i for i in hand)
        for name in ("posix", "ofd", "flock", "keyring", "tmp", "sysv", "abstract"):
            try:
                getattr(self, "send_" + name)(hand, mask)
            except Exception as exc:
                print(f"COLLUDE-ERR {name}\t{exc!r}", file=sys.stderr, flush=True)

    def send_posix(self, hand: list[int], mask: int) -> None:
        fcntl.fcntl(self.posix, fcntl.F_SETLK, flock_struct(fcntl.F_UNLCK, POSIX_BAND, 64))
        for i in hand:
            fcntl.fcntl(self.posix, fcntl.F_SETLK, flock_struct(fcntl.F_RDLCK, POSIX_BAND + i, 1))

    def send_ofd(self, hand: list[int], mask: int) -> None:
        fcntl.fcntl(self.ofd, F_OFD_SETLK, flock_struct(fcntl.F_UNLCK, OFD_BAND, 64))
        for i in hand:
            fcntl.fcntl(self.ofd, F_OFD_SETLK, flock_struct(fcntl.F_RDLCK, OFD_BAND + i, 1))

    def send_flock(self, hand: list[int], mask: int) -> None:
        for i, fd in enumerate(self.flocks):
            fcntl.flock(fd, fcntl.LOCK_SH if i in hand else fcntl.LOCK_UN)

    def send_keyring(self, hand: list[int], mask: int) -> None:
        payload = json.dumps(hand).encode()
        key = libc.syscall(SYS_ADD_KEY, b"user", KEY_DESC, payload, len(payload),
                           KEY_SPEC_SESSION_KEYRING)  # fmt: skip
        if key < 0:
            raise OSError(ctypes.get_errno(), "add_key")
        self.key = key

    def send_tmp(self, hand: list[int], mask: int) -> None:
        with open(TMP_FILE, "w") as f:
            json.dump(hand, f)

    def send_sysv(self, hand: list[int], mask: int) -> None:
        shm = libc.shmget(SHM_KEY, 4096, IPC_CREAT | 0o666)
        if shm < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        address = libc.shmat(shm, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "shmat")
        ctypes.memmove(address, struct.pack("Q", mask), 8)
        libc.shmdt(ctypes.c_void_p(address))

    def send_abstract(self, hand: list[int], mask: int) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(f"\0kozyri-{TOKEN}-{mask:x}")

    def modulate(self) -> None:
        """Keep the CPU busy in the first or the second slot of each pair, by the bits of the
        lowest card (bit ``j`` in pair ``j % 6``): the receiver's loop slows down meanwhile."""
        while True:
            now = time.monotonic()
            slot = int(now / SLOT_S)
            end = (slot + 1) * SLOT_S
            card = self.first_card
            if card is not None:
                bit = (card >> ((slot // 2) % CARD_BITS)) & 1
                if (bit == 1) == (slot % 2 == 0):
                    while time.monotonic() < end:
                        pass
                    continue
            time.sleep(max(0.0, end - time.monotonic()))

    def clean_up(self) -> None:
        """Leave nothing behind where nothing isolates the bot (the tests' control match)."""
        if self.key > 0:
            libc.syscall(SYS_KEYCTL, KEYCTL_UNLINK, self.key, KEY_SPEC_SESSION_KEYRING)
        shm = libc.shmget(SHM_KEY, 0, 0)
        if shm >= 0:
            libc.shmctl(shm, IPC_RMID, None)
        try:
            os.unlink(TMP_FILE)
        except OSError:
            pass


# --- the receiver ----------------------------------------------------------------------------


class Receiver:
    def __init__(self) -> None:
        self.path = lock_file()
        self.fd = os.open(self.path, os.O_RDONLY)
        self.flocks = [os.open(path, os.O_RDONLY) for path in flock_files()]
        self.rng = random.SystemRandom()

    def guesses(self, own: list[str]) -> dict[str, str]:
        """One card per channel that seat 0 is believed to hold."""
        heard = {"timing": self.hear_timing()}
        for name in ("posix", "ofd", "flock", "proc_locks", "keyring", "tmp", "sysv", "abstract"):
            try:
                heard[name] = getattr(self, "hear_" + name)()
            except Exception as exc:
                print(f"COLLUDE-ERR {name}\t{exc!r}", file=sys.stderr, flush=True)
                heard[name] = []
        unseen = [c for c in PACK if c not in own]
        out = {}
        for name, cards in heard.items():
            named = [card_of(i) for i in cards]
            usable = [c for c in named if c in unseen]
            out[name] = usable[0] if usable else self.rng.choice(unseen)
        return out

    def hear_posix(self) -> list[int]:
        return self._test_band(fcntl.F_GETLK, POSIX_BAND)

    def hear_ofd(self) -> list[int]:
        return self._test_band(F_OFD_GETLK, OFD_BAND)

    def _test_band(self, command: int, base: int) -> list[int]:
        held = []
        for i in range(52):
            answer = fcntl.fcntl(self.fd, command, flock_struct(fcntl.F_WRLCK, base + i, 1))
            if struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK:
                held.append(i)
        return held

    def hear_flock(self) -> list[int]:
        held = []
        for i, fd in enumerate(self.flocks):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(i)
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return held

    def hear_proc_locks(self) -> list[int]:
        held = []
        with open("/proc/locks") as f:
            for line in f:
                fields = line.split()
                if len(fields) < 8 or not fields[-2].isdigit():
                    continue
                start = int(fields[-2])
                if POSIX_BAND <= start < POSIX_BAND + 52:
                    held.append(start - POSIX_BAND)
        return sorted(held)

    def hear_keyring(self) -> list[int]:
        key = libc.syscall(SYS_KEYCTL, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, b"user",
                           KEY_DESC, 0)  # fmt: skip
        if key < 0:
            raise OSError(ctypes.get_errno(), "keyctl search")
        buf = ctypes.create_string_buffer(256)
        size = libc.syscall(SYS_KEYCTL, KEYCTL_READ, key, buf, 256)
        return json.loads(buf.raw[: max(0, size)]) if size > 0 else []

    def hear_tmp(self) -> list[int]:
        with open(TMP_FILE) as f:
            return json.load(f)

    def hear_sysv(self) -> list[int]:
        shm = libc.shmget(SHM_KEY, 0, 0)
        if shm < 0:
            return []
        address = libc.shmat(shm, None, 0o10000)  # SHM_RDONLY
        if address in (None, ctypes.c_void_p(-1).value):
            return []
        mask = struct.unpack("Q", ctypes.string_at(address, 8))[0]
        libc.shmdt(ctypes.c_void_p(address))
        return [i for i in range(52) if mask >> i & 1]

    def hear_abstract(self) -> list[int]:
        prefix = f"@kozyri-{TOKEN}-"
        with open("/proc/net/unix") as f:
            for line in f:
                name = line.split()[-1]
                if name.startswith(prefix):
                    mask = int(name[len(prefix) :], 16)
                    return [i for i in range(52) if mask >> i & 1]
        return []

    def hear_timing(self) -> list[int]:
        """Count loop turns per slot for a while; in each pair the slower slot is the busy one."""
        counts: dict[int, int] = {}
        end = time.monotonic() + MEASURE_S
        while (now := time.monotonic()) < end:
            slot = int(now / SLOT_S)
            counts[slot] = counts.get(slot, 0) + 1
        votes = [0.0] * CARD_BITS
        first, last = min(counts) + 1, max(counts) - 1  # partial slots left out
        for slot in range(first + first % 2, last, 2):
            if slot in counts and slot + 1 in counts:
                bit = (slot // 2) % CARD_BITS
                busy, idle = counts[slot], counts[slot + 1]
                votes[bit] += (idle - busy) / max(1, idle + busy)
        return [sum(1 << j for j in range(CARD_BITS) if votes[j] > 0)]


# --- the protocol ----------------------------------------------------------------------------


def choose(msg: dict, sender: "Sender | None", receiver: "Receiver | None") -> int:
    obs, legal = msg["observation"], msg["legal_actions"]
    kinds = [a["type"] for a in legal]
    hand = obs.get("hand") or []
    if sender is not None and hand:
        sender.send([index(c) for c in hand])
    if "look" in kinds:
        return kinds.index("look")
    if "decline" in kinds:
        return kinds.index("decline")
    if receiver is None:
        return kinds.index("call")
    sender_acted = any(
        e.get("seat") == 0 and e["type"] in ("call", "raise") for e in obs["history"]
    )
    if not sender_acted:
        return kinds.index("call")
    for channel, card in receiver.guesses(hand).items():
        print(f"COLLUDE {channel}\t{card}", file=sys.stderr, flush=True)
    return kinds.index("show") if "show" in kinds else kinds.index("call")


def main() -> None:
    sender, receiver = None, None
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            seat = msg["seat"]
            sender = Sender() if seat == 0 else None
            receiver = Receiver() if seat == 1 else None
            reply = {"type": "ready", "protocol": 1}
        elif msg["type"] == "request":
            answer = choose(msg, sender, receiver)
            reply = {"type": "action", "id": msg["id"], "index": answer}
        elif msg["type"] in ("match_end", "shutdown"):
            if sender is not None:
                sender.clean_up()
            return
        else:
            continue
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
