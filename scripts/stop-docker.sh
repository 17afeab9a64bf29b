#!/usr/bin/env bash
# Stop the private Docker engine started by scripts/ci-docker.sh (images stay cached).
set -euo pipefail

STATE="${ARENA_DOCKER_STATE:-/var/tmp/arena-docker}"
PIDFILE="$STATE/dockerd.pid"

if [[ ! -s $PIDFILE ]]; then
    echo "stop-docker: no engine running under $STATE" >&2
    exit 0
fi
pid="$(cat "$PIDFILE")"
if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
fi
rm -f "$PIDFILE"
echo "stop-docker: engine stopped" >&2
