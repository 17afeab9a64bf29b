"""Misbehaving fixture: takes 30 s to get ready (far beyond any init time)."""

import json
import sys
import time

sys.stdin.readline()
time.sleep(30)
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
for _line in sys.stdin:
    pass
