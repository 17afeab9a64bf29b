"""A hostile bot for the terminal-safety tests.

Plays index 0, but every piece of text it controls carries terminal control sequences: its
self-reported name, the ``debug`` text of each answer, and a stderr line before each answer.
At its third turn it writes them to stderr once more and exits 3, so that ``arena match``
shows its stderr in the failure box.
"""

import json
import sys

SEQUENCES = {
    "osc52": "\x1b]52;c;aGFja2VkIQ==\x07",  # OSC 52: write to the clipboard
    "title": "\x1b]0;owned\x1b\\",  # OSC 0: window title, ended by ST
    "clear": "\x1b[2J\x1b[H",  # CSI: clear the screen, cursor home
    "hidden": "\x1b[8mhidden\x1b[0m",  # CSI: hidden text
    "dcs": "\x1bP+q544e\x1b\\",  # DCS: request a terminfo capability
    "csi8": "\x9b2J",  # the one-character C1 CSI
    "osc8": "\x9d0;c1 title\x9c",  # the one-character C1 OSC and ST
    "bel": "\x07",
    "bidi": "\u202eevil\u202c",  # a right-to-left override
    "markup": "[link=http://127.0.0.1/][bold red]x[/]",  # rich markup
}
ALL = " ".join(f"{key}={value}" for key, value in SEQUENCES.items())
NAME = "\x1b]0;t\x07\x1b[2J\x1b[8m\x1bPq\x1b\\\x9b2J\x9d0;t\x9c\u202e[bold]n"  # within 64 chars
CRASH_AT = 3


def main() -> None:
    turns = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            reply = {"type": "ready", "protocol": 1, "name": NAME}
        elif msg["type"] == "request":
            turns += 1
            say(f"turn {turns}: {ALL}")
            if turns >= CRASH_AT:
                sys.stderr.buffer.write(b"raw bytes: \x9b2J \x1b]52;c;eA==\x07\n")
                sys.stderr.flush()
                sys.exit(3)
            reply = {"type": "action", "id": msg["id"], "index": 0, "debug": ALL}
        elif msg["type"] in ("match_end", "shutdown"):
            return
        else:
            continue
        print(json.dumps(reply), flush=True)


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
