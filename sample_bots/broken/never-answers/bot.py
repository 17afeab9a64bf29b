"""Misbehaving fixture: ready, then silence (with a child process that must be killed too)."""

import json
import subprocess
import sys

sys.stdin.readline()
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
# A child in the same process tree: the referee must kill it along with the bot.
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
for _line in sys.stdin:
    pass  # read every request, answer none
