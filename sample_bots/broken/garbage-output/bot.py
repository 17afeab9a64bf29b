"""Misbehaving fixture: answers every request with text that is not JSON."""

import json
import sys

sys.stdin.readline()
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
for line in sys.stdin:
    if json.loads(line)["type"] == "request":
        print("I play the ace of spades!", flush=True)
